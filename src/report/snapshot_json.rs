//! JSON output of the snapshot analysis (torch-snapshot.md §7.9 content).
//!
//! Top-level `devices`: one object per device slot with a trace (`device` = its
//! index), each with `in_window_replay` and `memoryviz_like` named exactly as in
//! `EXPECTED.json` (§8). Addresses are strings (`b'<hex>_<ver>`), never numbers.
//! Formatting only: every number comes from `analysis::snapshot`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::snapshot::attribution::Contributor;
use crate::analysis::snapshot::device::{DeviceAnalysis, PointReport};
use crate::analysis::snapshot::labels::{
    origin_name, percent_of_point, point_kind_name, site_kind_name, top_level_name, Labeler,
};
use crate::analysis::snapshot::reference::{segments_summary, InWindowReplay, MemoryVizLike};
use crate::base::Problems;
use crate::model::snapshot::Snapshot;

use crate::analysis::snapshot::links::LinkOptions;

/// The note every report carries (§4 item 9); the text is in [`crate::analysis::snapshot::labels`].
pub use crate::analysis::snapshot::labels::INVISIBLE_MEMORY_NOTE;

/// Report options: how many contributors, links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReportOptions {
    /// Contributors listed per point (`--top-contributors`).
    pub top_contributors: usize,
    /// Links and display paths.
    pub links: LinkOptions,
}

impl ReportOptions {
    /// Reference analyzer defaults (15 contributors, vscode links).
    pub fn spec_defaults() -> Self {
        ReportOptions {
            top_contributors: 15,
            links: LinkOptions::default(),
        }
    }
}

/// The whole JSON document.
#[derive(Serialize, Debug)]
pub struct SnapshotJson {
    /// Input file name.
    pub file: String,
    /// Input size in bytes.
    pub bytes: u64,
    /// Format features.
    pub format: FormatJson,
    /// `allocator_settings` (key → value text), in file order.
    pub allocator_settings: Option<Vec<(String, String)>>,
    /// End-state segment summary.
    pub segments: SegmentsJson,
    /// One object per device slot with a trace.
    pub devices: Vec<DeviceJson>,
    /// Devices with end-state segments but no trace (attribution of live blocks only).
    pub end_state_only: Vec<DeviceJson>,
    /// Problems found while decoding and analysing.
    pub problems: Vec<ProblemJson>,
    /// The invisible-memory note.
    pub note: &'static str,
}

/// Detected format (§3.10, §5.3).
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct FormatJson {
    /// `pickle` or `json` (torch-snapshot.md §2.6).
    pub encoding: &'static str,
    /// Pickle protocol; 0 for JSON.
    pub protocol: u8,
    pub top_level: &'static str,
    pub top_keys: Vec<String>,
    pub opcodes: Vec<&'static str>,
    pub has_time_us: bool,
    pub has_history: bool,
    pub has_annotations: bool,
    pub has_compile_context: bool,
    pub has_user_metadata: bool,
    pub has_fx_frames: bool,
    pub device_slots: usize,
    pub other_fields: Vec<(String, String)>,
}

/// End-state summary (EXPECTED.json `segments`).
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct SegmentsJson {
    pub count: usize,
    pub devices: Vec<i64>,
    pub total_size_sum: u64,
    pub allocated_size_sum: u64,
    pub block_states: BTreeMap<String, u64>,
    pub legacy_history_blocks: u64,
    pub expandable: usize,
    pub private_pools: usize,
}

/// One device.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct DeviceJson {
    pub device: u32,
    pub entries: usize,
    pub actions: BTreeMap<String, u64>,
    pub streams: usize,
    pub first_time_us: Option<i64>,
    pub in_window_replay: InWindowJson,
    pub memoryviz_like: MemoryVizJson,
    pub baseline_allocated_bytes: i64,
    pub baseline_active_bytes: i64,
    pub baseline_reserved_bytes: i64,
    pub max_allocated: LevelJson,
    pub max_active: LevelJson,
    pub max_reserved: LevelJson,
    pub records: usize,
    pub pre_records: usize,
    pub unmatched_free_completed: u64,
    pub peak_candidates: usize,
    pub points: Vec<PointJson>,
    pub leaks: Vec<ContributorJson>,
    pub delayed_frees: Vec<DelayJson>,
    pub warnings: Vec<NoteJson>,
}

/// EXPECTED.json `in_window_replay`.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct InWindowJson {
    pub peak_bytes: u64,
    pub peak_event_index: i64,
    pub end_bytes: u64,
    pub live_at_end: u64,
    pub unmatched_free_completed: u64,
}

/// EXPECTED.json `memoryviz_like`.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct MemoryVizJson {
    pub baseline_bytes: u64,
    pub max_bytes: u64,
    pub end_bytes: u64,
    pub elements: u64,
    pub initially_allocated: u64,
}

/// A level with its first index and time.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct LevelJson {
    pub bytes: i64,
    pub index: Option<usize>,
    pub time_us: Option<i64>,
}

/// One reported point.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct PointJson {
    pub kind: &'static str,
    pub index: usize,
    pub time_us: Option<i64>,
    pub height_bytes: i64,
    pub allocated_bytes: i64,
    pub active_bytes: i64,
    pub reserved_bytes: i64,
    pub fragmentation_bytes: i64,
    pub prominence_bytes: Option<i64>,
    pub recurring: Option<RecurringJson>,
    pub annotations: Vec<String>,
    pub compile_context: Option<String>,
    pub user_metadata: Option<String>,
    pub live_bytes: u64,
    pub live_tensors: u64,
    pub contributors: Vec<ContributorJson>,
    pub more_sites: usize,
    pub more_sites_bytes: u64,
    pub top_tensors: Vec<TensorJson>,
    pub largest_inactive_block_bytes: Option<u64>,
    pub oom_requested_bytes: Option<u64>,
    pub oom_device_free_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oom_explanation: Option<OomJson>,
    pub tree: Vec<TreeNodeJson>,
}

/// Why an OOM happened (`analysis::snapshot::allocator::oom`).
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct OomJson {
    /// `fragmentation`, `memory_full` or `other_process`.
    pub cause: &'static str,
    pub sentence: String,
    pub requested_bytes: u64,
    pub device_free_bytes: Option<u64>,
    pub stream: i64,
    pub reserved_bytes: u64,
    pub allocated_bytes: u64,
    pub active_bytes: u64,
    pub cached_free_bytes: u64,
    pub largest_free_bytes: u64,
    pub peak_reserved_bytes: u64,
    /// Per segment (address order): the largest contiguous free block.
    pub segments: Vec<OomSegmentJson>,
}

/// One segment of an OOM explanation.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct OomSegmentJson {
    pub address: String,
    pub size_bytes: u64,
    pub stream: i64,
    pub free_bytes: u64,
    pub largest_free_bytes: u64,
}

/// The JSON of one OOM explanation.
pub fn oom_json(e: &crate::analysis::snapshot::allocator::oom::OomExplanation) -> OomJson {
    OomJson {
        cause: e.cause.name(),
        sentence: e.sentence.clone(),
        requested_bytes: e.requested,
        device_free_bytes: e.device_free,
        stream: e.stream,
        reserved_bytes: e.reserved,
        allocated_bytes: e.allocated,
        active_bytes: e.active,
        cached_free_bytes: e.cached_free,
        largest_free_bytes: e.largest_free,
        peak_reserved_bytes: e.peak_reserved,
        segments: e
            .segments
            .iter()
            .map(|s| OomSegmentJson {
                address: format!("0x{:x}", s.address),
                size_bytes: s.size,
                stream: s.stream,
                free_bytes: s.free,
                largest_free_bytes: s.largest_free,
            })
            .collect(),
    }
}

/// A recurring-peak cluster.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct RecurringJson {
    pub count: usize,
    pub min_bytes: i64,
    pub median_bytes: i64,
    pub max_bytes: i64,
    pub indices: Vec<usize>,
}

/// One contributor group.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct ContributorJson {
    pub site: String,
    pub file: Option<String>,
    pub line: Option<u32>,
    pub function: Option<String>,
    pub link: Option<String>,
    pub site_kind: &'static str,
    pub origin: &'static str,
    pub bytes: u64,
    pub percent_of_point: f64,
    pub tensors: u64,
    pub first_alloc_index: Option<u32>,
    pub chain: Vec<String>,
}

/// One large tensor.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct TensorJson {
    pub bytes: u64,
    pub addr: String,
    pub alloc_index: Option<u32>,
    pub site: String,
    pub link: Option<String>,
}

/// One prefix-tree node (node 0 is the root).
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct TreeNodeJson {
    pub parent: u32,
    pub label: String,
    pub bytes: u64,
    pub tensors: u64,
}

/// A delayed-free group.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct DelayJson {
    pub site: String,
    pub bytes: u64,
    pub tensors: u64,
    pub max_gap_entries: u32,
    pub max_gap_us: Option<i64>,
}

/// A data-quality warning.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct NoteJson {
    pub code: &'static str,
    pub message: String,
}

/// A decode/analysis problem.
#[allow(missing_docs)]
#[derive(Serialize, Debug)]
pub struct ProblemJson {
    pub severity: crate::base::Severity,
    pub code: &'static str,
    pub byte: Option<u64>,
    pub message: String,
}

/// A contributor as JSON; `height` is the point's height (for the percentage).
pub fn contributor_json(l: &Labeler<'_>, c: &Contributor, height: i64) -> ContributorJson {
    let (file, line, function) = l.site_parts(c);
    ContributorJson {
        site: l.site(c),
        file,
        line,
        function,
        link: l.link(c),
        site_kind: site_kind_name(c.kind),
        origin: origin_name(c.origin),
        bytes: c.bytes,
        percent_of_point: percent_of_point(c, height),
        tensors: c.tensors,
        first_alloc_index: c.first_alloc_idx,
        chain: c.chain.iter().map(|f| l.frame(*f)).collect(),
    }
}

fn iw(r: &InWindowReplay) -> InWindowJson {
    InWindowJson {
        peak_bytes: r.peak_bytes,
        peak_event_index: r.peak_event_index,
        end_bytes: r.end_bytes,
        live_at_end: r.live_at_end,
        unmatched_free_completed: r.unmatched_free_completed,
    }
}

fn mv(r: &MemoryVizLike) -> MemoryVizJson {
    MemoryVizJson {
        baseline_bytes: r.baseline_bytes,
        max_bytes: r.max_bytes,
        end_bytes: r.end_bytes,
        elements: r.elements,
        initially_allocated: r.initially_allocated,
    }
}

fn point(l: &Labeler<'_>, p: &PointReport, top: usize) -> PointJson {
    let shown: Vec<&Contributor> = p.contributors.iter().take(top).collect();
    let rest = &p.contributors[shown.len()..];
    PointJson {
        kind: point_kind_name(p.kind),
        index: p.index,
        time_us: p.time_us,
        height_bytes: p.height,
        allocated_bytes: p.allocated,
        active_bytes: p.active,
        reserved_bytes: p.reserved,
        fragmentation_bytes: p.reserved - p.active,
        prominence_bytes: p.prominence,
        recurring: p.recurring.as_ref().map(|r| RecurringJson {
            count: r.count,
            min_bytes: r.min,
            median_bytes: r.median,
            max_bytes: r.max,
            indices: r.indices.clone(),
        }),
        annotations: p.annotations.clone(),
        compile_context: p.compile_context.clone(),
        user_metadata: p.user_metadata.clone(),
        live_bytes: p.live_bytes,
        live_tensors: p.live_tensors,
        contributors: shown
            .iter()
            .map(|c| contributor_json(l, c, p.height))
            .collect(),
        more_sites: rest.len(),
        more_sites_bytes: rest.iter().map(|c| c.bytes).sum(),
        top_tensors: p
            .top_tensors
            .iter()
            .map(|t| TensorJson {
                bytes: t.bytes,
                addr: format!("b'{:x}_{}", t.addr, t.version),
                alloc_index: t.alloc_idx,
                site: l.site(&t.site),
                link: l.link(&t.site),
            })
            .collect(),
        largest_inactive_block_bytes: p.largest_inactive_block,
        oom_requested_bytes: p.oom.map(|o| o.0),
        oom_device_free_bytes: p.oom.and_then(|o| o.1),
        oom_explanation: p.oom_explanation.as_ref().map(oom_json),
        tree: p
            .tree
            .iter()
            .map(|n| TreeNodeJson {
                parent: n.parent,
                label: l.tree_node(n.depth, n.frame),
                bytes: n.bytes,
                tensors: n.tensors,
            })
            .collect(),
    }
}

/// JSON of one analysed device.
pub fn device_json(snap: &Snapshot, d: &DeviceAnalysis, opts: &ReportOptions) -> DeviceJson {
    let l = Labeler {
        snap,
        links: &opts.links,
    };
    let dev = snap.devices.get(d.device as usize);
    let level = |(bytes, index): (i64, Option<usize>)| LevelJson {
        bytes,
        index,
        time_us: index.and_then(|i| dev.and_then(|t| t.entries.time_us(i))),
    };
    DeviceJson {
        device: d.device,
        entries: d.n_entries,
        actions: dev
            .map(|t| t.action_counts().into_iter().collect())
            .unwrap_or_default(),
        streams: dev.map_or(0, |t| t.entries.stream_values().len()),
        first_time_us: dev.and_then(|t| t.entries.first_time_us()),
        in_window_replay: iw(&d.in_window_replay),
        memoryviz_like: mv(&d.memoryviz_like),
        baseline_allocated_bytes: d.curves.baseline_allocated,
        baseline_active_bytes: d.curves.baseline_active,
        baseline_reserved_bytes: d.curves.baseline_reserved,
        max_allocated: level(d.max[0]),
        max_active: level(d.max[1]),
        max_reserved: level(d.max[2]),
        records: d.lifetimes.len(),
        pre_records: d.lifetimes.pre_count(),
        unmatched_free_completed: d.lifetimes.unmatched_free_completed,
        peak_candidates: d.n_candidates,
        points: d
            .points
            .iter()
            .map(|p| point(&l, p, opts.top_contributors))
            .collect(),
        leaks: d
            .leaks
            .iter()
            .take(opts.top_contributors)
            .map(|c| contributor_json(&l, c, 0))
            .collect(),
        delayed_frees: d
            .delayed
            .by_site
            .iter()
            .take(opts.top_contributors)
            .map(|(c, gap, us)| DelayJson {
                site: l.site(c),
                bytes: c.bytes,
                tensors: c.tensors,
                max_gap_entries: *gap,
                max_gap_us: *us,
            })
            .collect(),
        warnings: d
            .notes
            .iter()
            .map(|n| NoteJson {
                code: n.code,
                message: n.message.clone(),
            })
            .collect(),
    }
}

/// Identity of the input: file name, size, opcode names present (from the decoder's histogram).
pub struct InputInfo<'a> {
    /// File name.
    pub file: &'a str,
    /// Size in bytes.
    pub bytes: u64,
    /// Opcode names present, sorted.
    pub opcodes: Vec<&'static str>,
}

/// The whole JSON document. Devices with entries go to `devices`, the others to `end_state_only`.
pub fn build(
    input: &InputInfo<'_>,
    snap: &Snapshot,
    analyses: &[DeviceAnalysis],
    problems: &Problems,
    opts: &ReportOptions,
) -> SnapshotJson {
    let f = &snap.features;
    let seg = segments_summary(snap);
    let (traced, rest): (Vec<&DeviceAnalysis>, Vec<&DeviceAnalysis>) =
        analyses.iter().partition(|d| d.n_entries > 0);
    SnapshotJson {
        file: input.file.to_string(),
        bytes: input.bytes,
        format: FormatJson {
            encoding: f.encoding.name(),
            protocol: f.protocol,
            top_level: top_level_name(f.top_level),
            top_keys: snap.top_keys.clone(),
            opcodes: input.opcodes.clone(),
            has_time_us: f.has_time_us,
            has_history: f.has_history,
            has_annotations: f.has_annotations,
            has_compile_context: f.has_compile_context,
            has_user_metadata: f.has_user_metadata,
            has_fx_frames: f.has_fx_frames,
            device_slots: snap.devices.len(),
            other_fields: snap.other_fields.clone(),
        },
        allocator_settings: snap
            .settings
            .as_ref()
            .map(|s| s.iter().map(|(k, v)| (k.clone(), v.to_string())).collect()),
        segments: SegmentsJson {
            count: seg.count,
            devices: seg.devices,
            total_size_sum: seg.total_size_sum,
            allocated_size_sum: seg.allocated_size_sum,
            block_states: seg.block_states,
            legacy_history_blocks: seg.legacy_history_blocks,
            expandable: seg.expandable,
            private_pools: seg.private_pools,
        },
        devices: traced.iter().map(|d| device_json(snap, d, opts)).collect(),
        end_state_only: rest.iter().map(|d| device_json(snap, d, opts)).collect(),
        problems: problems
            .kept()
            .iter()
            .map(|p| ProblemJson {
                severity: p.severity,
                code: p.code,
                byte: p.at.byte,
                message: p.message.clone(),
            })
            .collect(),
        note: INVISIBLE_MEMORY_NOTE,
    }
}
