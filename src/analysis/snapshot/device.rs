//! The whole per-device analysis: lifetimes → curves → peaks → live sets → attribution
//! (torch-snapshot.md §7.2–§7.9). Pure: no I/O; the report formats its output.

use rustc_hash::FxHashMap as HashMap;

use crate::model::snapshot::{Action, BlockState, DeviceTrace, Snapshot, StackId, Stage, StrId};

use super::allocator::oom::{explain, OomExplanation};
use super::allocator::{AllocatorHistory, DEFAULT_K};
use super::attribution::{contributors, prefix_tree, Attributor, Contributor, TreeNode};
use super::curves::{self, CurveKind, Curves};
use super::frame_filter::ProjectRule;
use super::lifetimes::{self, Lifetimes, Semantics};
use super::live::{bytes_of, live_sets};
use super::peaks::{self, PeakOptions};
use super::quality::{self, DelayedFrees, Note};
use super::reference::{self, InWindowReplay, MemoryVizLike};

/// Options of the analysis (defaults of the reference analyzer, §7.4, §7.9, §7.12).
#[derive(Clone, Debug, PartialEq)]
pub struct AnalysisOptions {
    /// Peak selection.
    pub peaks: PeakOptions,
    /// Curve the peaks are found on (default active).
    pub curve: CurveKind,
    /// Contributors listed per peak (`--top-contributors 15`).
    pub top_contributors: usize,
    /// Group contributors by the first k project frames (0 = by site).
    pub frame_depth: usize,
    /// The project rule.
    pub rule: ProjectRule,
    /// `--project-root`: when set, only frames under it (and passing the rule) are project frames.
    pub project_root: Option<String>,
    /// Largest single tensors listed per peak.
    pub top_tensors: usize,
    /// A free is "delayed" when free_completed comes more than this many entries after free_requested.
    pub delay_min_gap_entries: u32,
    /// Peak candidates considered for recurring-peak clustering.
    pub max_cluster_candidates: usize,
}

impl AnalysisOptions {
    /// Spec defaults.
    pub fn spec_defaults() -> Self {
        AnalysisOptions {
            peaks: PeakOptions::spec_defaults(),
            curve: CurveKind::Active,
            top_contributors: 15,
            frame_depth: 0,
            rule: ProjectRule::default(),
            project_root: None,
            top_tensors: 10,
            delay_min_gap_entries: 1,
            max_cluster_candidates: 64,
        }
    }
}

/// Why a point is reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointKind {
    /// The global maximum of the peak curve (first index reaching it).
    GlobalPeak,
    /// A prominent local peak.
    Peak,
    /// An `oom` entry.
    Oom,
    /// The last entry (end state).
    End,
}

/// A recurring peak: a cluster of peaks with the same live-set composition (§7.4).
#[derive(Clone, Debug, PartialEq)]
pub struct Recurrence {
    /// Number of peaks in the cluster.
    pub count: usize,
    /// Heights: min, median, max (bytes).
    pub min: i64,
    /// Median height.
    pub median: i64,
    /// Max height.
    pub max: i64,
    /// Entry indices of the members, ascending.
    pub indices: Vec<usize>,
}

/// One tensor (record) live at a point.
#[derive(Clone, Debug, PartialEq)]
pub struct Tensor {
    /// Record id in [`Lifetimes`].
    pub record: u32,
    /// Requested bytes.
    pub bytes: u64,
    /// Address.
    pub addr: u64,
    /// Address version (`b'<hex>_<ver>`).
    pub version: u32,
    /// Alloc index (None: allocated before the window).
    pub alloc_idx: Option<u32>,
    /// Its site.
    pub site: Contributor,
}

/// One reported point (peak, OOM or end state) with its live set analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct PointReport {
    /// Why it is reported.
    pub kind: PointKind,
    /// Entry index.
    pub index: usize,
    /// `time_us` of that entry.
    pub time_us: Option<i64>,
    /// Height on the peak curve (bytes).
    pub height: i64,
    /// Allocated / active / reserved at that index (bytes).
    pub allocated: i64,
    /// Active bytes.
    pub active: i64,
    /// Reserved bytes.
    pub reserved: i64,
    /// Topographic prominence (peaks only).
    pub prominence: Option<i64>,
    /// Recurring cluster, when more than one peak shares this composition.
    pub recurring: Option<Recurrence>,
    /// Annotations open at the point, outermost first.
    pub annotations: Vec<String>,
    /// `compile_context` of the entry (if not default).
    pub compile_context: Option<String>,
    /// `user_metadata` of the entry (if not empty).
    pub user_metadata: Option<String>,
    /// Live bytes (active semantics) and records.
    pub live_bytes: u64,
    /// Live records.
    pub live_tensors: u64,
    /// All contributor groups, sorted by bytes (the report shows the top N).
    pub contributors: Vec<Contributor>,
    /// Largest single tensors.
    pub top_tensors: Vec<Tensor>,
    /// Largest inactive block (bytes), known for the end state only.
    pub largest_inactive_block: Option<u64>,
    /// OOM: requested bytes and `device_free`.
    pub oom: Option<(u64, Option<u64>)>,
    /// OOM: the explanation from the allocator state at the entry (§4 item 8).
    pub oom_explanation: Option<OomExplanation>,
    /// Prefix tree of live bytes (global peak and end state only).
    pub tree: Vec<TreeNode>,
}

/// Everything computed for one device.
pub struct DeviceAnalysis {
    /// Device ordinal.
    pub device: u32,
    /// Entries.
    pub n_entries: usize,
    /// Lifetime table.
    pub lifetimes: Lifetimes,
    /// Curves.
    pub curves: Curves,
    /// §8 reference quantities.
    pub in_window_replay: InWindowReplay,
    /// §8 MemoryViz-like quantities.
    pub memoryviz_like: MemoryVizLike,
    /// `(max, first index)` of allocated, active, reserved.
    pub max: [(i64, Option<usize>); 3],
    /// Reported points: global peak and other peaks (by height), OOMs, end state.
    pub points: Vec<PointReport>,
    /// Prominent peak candidates (before selection), for charts.
    pub n_candidates: usize,
    /// Leaks grouped by site.
    pub leaks: Vec<Contributor>,
    /// Delayed frees.
    pub delayed: DelayedFrees,
    /// Data-quality notes.
    pub notes: Vec<Note>,
}

/// Runs the full analysis of device slot `dev` of `snap`.
///
/// Cost: O(entries + records × log points + Σ live) time; memory dominated by
/// the curves (3 × 8 bytes per entry) and the lifetime table (≈ 45 bytes per record).
pub fn analyze(snap: &Snapshot, dev: &DeviceTrace, opts: &AnalysisOptions) -> DeviceAnalysis {
    let lt = lifetimes::build(snap, dev);
    let curves = curves::build(snap, dev, &lt);
    let n = dev.entries.len();
    let t = &dev.entries;
    let mut attr = Attributor::new(&snap.pools, &opts.rule).with_root(opts.project_root.as_deref());
    if n == 0 {
        return end_state_only(snap, dev, opts, lt, curves, attr);
    }
    let curve = curves.get(opts.curve);
    let (gmax, gidx) = curves.max(opts.curve);
    let cands = peaks::candidates(curve, curves.baseline(opts.curve));
    let prominent = peaks::prominent(&cands, gmax, &opts.peaks);
    let pool: Vec<peaks::Candidate> = prominent
        .iter()
        .copied()
        .take(opts.max_cluster_candidates)
        .collect();
    let pool_idx: Vec<usize> = pool.iter().map(|c| c.index).collect();
    let comps: Vec<HashMap<StackId, u64>> = live_sets(&lt, &pool_idx, Semantics::Active)
        .iter()
        .map(|live| composition(&lt, live))
        .collect();
    // Cluster by composition (Jaccard on bytes by stack ≥ 0.8), in height order.
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    for k in 0..pool.len() {
        match clusters
            .iter_mut()
            .find(|c| jaccard(&comps[c[0]], &comps[k]) >= 0.8)
        {
            Some(c) => c.push(k),
            None => clusters.push(vec![k]),
        }
    }
    // Select representatives.
    let time = |i: usize| t.time_us(i);
    let mut chosen: Vec<(usize, Option<Recurrence>)> = Vec::new();
    for c in &clusters {
        if chosen.len() >= opts.peaks.top_n {
            break;
        }
        let rep = c[0];
        let ok = chosen.iter().all(|&(o, _)| {
            let sep = peaks::separated(pool[o].index, pool[rep].index, &time, &opts.peaks);
            let close = (pool[o].height - pool[rep].height).abs() as f64
                <= pool[o].height.abs() as f64 * opts.peaks.dedup_pct / 100.0;
            sep && !(close && jaccard(&comps[o], &comps[rep]) >= 0.5)
        });
        if !ok {
            continue;
        }
        let rec = (c.len() > 1).then(|| {
            let mut hs: Vec<i64> = c.iter().map(|&k| pool[k].height).collect();
            hs.sort_unstable();
            let mut idx: Vec<usize> = c.iter().map(|&k| pool[k].index).collect();
            idx.sort_unstable();
            Recurrence {
                count: c.len(),
                min: hs[0],
                median: hs[hs.len() / 2],
                max: hs[hs.len() - 1],
                indices: idx,
            }
        });
        chosen.push((rep, rec));
    }
    // Points: global peak first, then chosen peaks, OOMs, end.
    let mut points: Vec<(PointKind, usize, Option<i64>, Option<Recurrence>)> = Vec::new();
    if let Some(g) = gidx {
        let rec = chosen
            .iter()
            .find(|(k, _)| pool[*k].index == g)
            .and_then(|(_, r)| r.clone());
        let prom = cands.iter().find(|c| c.index == g).map(|c| c.prominence);
        points.push((PointKind::GlobalPeak, g, prom, rec));
    }
    for (k, rec) in &chosen {
        if Some(pool[*k].index) != gidx {
            points.push((
                PointKind::Peak,
                pool[*k].index,
                Some(pool[*k].prominence),
                rec.clone(),
            ));
        }
    }
    for (i, a) in t.action().iter().enumerate() {
        if *a == Action::Oom {
            points.push((PointKind::Oom, i, None, None));
        }
    }
    if n > 0 {
        points.push((PointKind::End, n - 1, None, None));
    }
    let idx: Vec<usize> = points.iter().map(|p| p.1).collect();
    let lives = live_sets(&lt, &idx, Semantics::Active);
    let spans = annotation_spans(snap, dev.device);
    let history = t
        .action()
        .contains(&Action::Oom)
        .then(|| AllocatorHistory::build(snap, dev, &lt, DEFAULT_K));
    let mut reports = Vec::new();
    for ((kind, i, prom, rec), live) in points.into_iter().zip(lives) {
        let s = |id: StrId| (id != StrId(0)).then(|| snap.pools.strings.get(id).to_string());
        let oom = (kind == PointKind::Oom).then(|| {
            let free = t
                .device_free()
                .iter()
                .find(|(j, _)| *j as usize == i)
                .map(|(_, f)| *f);
            (t.size()[i], free)
        });
        let oom_explanation = history
            .as_ref()
            .filter(|_| kind == PointKind::Oom)
            .map(|h| {
                let map = h.state_after(dev, Some(i)).segment_map();
                let peak = curves.reserved[..=i]
                    .iter()
                    .copied()
                    .fold(curves.baseline_reserved, i64::max);
                explain(dev, i, &map, peak.max(0) as u64)
            });
        let top_tensors = largest(&lt, &live, &mut attr, opts.top_tensors);
        let with_tree = matches!(kind, PointKind::GlobalPeak | PointKind::End);
        reports.push(PointReport {
            kind,
            index: i,
            time_us: t.time_us(i),
            height: curve[i],
            allocated: curves.allocated[i],
            active: curves.active[i],
            reserved: curves.reserved[i],
            prominence: prom,
            recurring: rec,
            annotations: t
                .time_us(i)
                .map(|tu| open_at(&spans, tu, snap))
                .unwrap_or_default(),
            compile_context: s(t.compile_ctx(i)).filter(|c| c != "N/A"),
            user_metadata: s(t.user_meta(i)),
            live_bytes: bytes_of(&lt, &live),
            live_tensors: live.len() as u64,
            contributors: contributors(&lt, &live, &mut attr, opts.frame_depth),
            top_tensors,
            largest_inactive_block: (kind == PointKind::End)
                .then(|| largest_inactive(snap, dev.device)),
            oom,
            oom_explanation,
            tree: if with_tree {
                prefix_tree(&lt, &live, &snap.pools)
            } else {
                Vec::new()
            },
        });
    }
    let leaks = quality::leaks(&lt, &mut attr);
    let delayed = quality::delayed_frees(dev, &lt, &mut attr, opts.delay_min_gap_entries);
    let notes = quality::checks(snap, dev, &lt, &curves);
    DeviceAnalysis {
        device: dev.device,
        n_entries: n,
        in_window_replay: reference::in_window_replay(dev),
        memoryviz_like: reference::memoryviz_like(snap, dev),
        max: [
            curves.max(CurveKind::Allocated),
            curves.max(CurveKind::Active),
            curves.max(CurveKind::Reserved),
        ],
        points: reports,
        n_candidates: prominent.len(),
        leaks,
        delayed,
        notes,
        lifetimes: lt,
        curves,
    }
}

/// Segments-only device (no trace): one end-state point over the PRE records of the end blocks (§4 item 11).
fn end_state_only(
    snap: &Snapshot,
    dev: &DeviceTrace,
    opts: &AnalysisOptions,
    lt: Lifetimes,
    curves: Curves,
    mut attr: Attributor<'_>,
) -> DeviceAnalysis {
    let live: Vec<u32> = (0..lt.len() as u32).collect();
    let bytes = bytes_of(&lt, &live);
    let top_tensors = largest(&lt, &live, &mut attr, opts.top_tensors);
    let point = PointReport {
        kind: PointKind::End,
        index: 0,
        time_us: None,
        height: bytes as i64,
        allocated: curves.baseline_allocated,
        active: curves.baseline_active,
        reserved: curves.baseline_reserved,
        prominence: None,
        recurring: None,
        annotations: Vec::new(),
        compile_context: None,
        user_metadata: None,
        live_bytes: bytes,
        live_tensors: live.len() as u64,
        contributors: contributors(&lt, &live, &mut attr, opts.frame_depth),
        top_tensors,
        largest_inactive_block: Some(largest_inactive(snap, dev.device)),
        oom: None,
        oom_explanation: None,
        tree: prefix_tree(&lt, &live, &snap.pools),
    };
    DeviceAnalysis {
        device: dev.device,
        n_entries: 0,
        in_window_replay: reference::in_window_replay(dev),
        memoryviz_like: reference::memoryviz_like(snap, dev),
        max: [
            (curves.baseline_allocated, None),
            (curves.baseline_active, None),
            (curves.baseline_reserved, None),
        ],
        points: vec![point],
        n_candidates: 0,
        leaks: Vec::new(),
        delayed: DelayedFrees {
            by_site: Vec::new(),
            records: 0,
        },
        notes: quality::checks(snap, dev, &lt, &curves),
        lifetimes: lt,
        curves,
    }
}

/// The `n` largest live records (ties by record id), with their sites.
fn largest(lt: &Lifetimes, live: &[u32], attr: &mut Attributor<'_>, n: usize) -> Vec<Tensor> {
    let mut tensors = live.to_vec();
    crate::base::sort::sort_by_i64_pair(&mut tensors, |r| {
        (!crate::base::sort::u64_key(lt.size[r as usize]), r as i64)
    });
    tensors
        .iter()
        .take(n)
        .map(|&r| {
            let ru = r as usize;
            Tensor {
                record: r,
                bytes: lt.size[ru],
                addr: lt.addr[ru],
                version: lt.version[ru],
                alloc_idx: (!lt.is_pre(ru)).then_some(lt.alloc_idx[ru]),
                site: contributors(lt, &[r], attr, 0).remove(0),
            }
        })
        .collect()
}

fn composition(lt: &Lifetimes, live: &[u32]) -> HashMap<StackId, u64> {
    let mut m = HashMap::default();
    for &r in live {
        *m.entry(lt.stack[r as usize]).or_insert(0) += lt.size[r as usize];
    }
    m
}

/// Weighted Jaccard of two compositions: Σ min / Σ max over stacks (1.0 for two empty sets).
pub fn jaccard(a: &HashMap<StackId, u64>, b: &HashMap<StackId, u64>) -> f64 {
    let (mut num, mut den) = (0u128, 0u128);
    for (k, &x) in a {
        let y = b.get(k).copied().unwrap_or(0);
        num += x.min(y) as u128;
        den += x.max(y) as u128;
    }
    for (k, &y) in b {
        if !a.contains_key(k) {
            den += y as u128;
        }
    }
    if den == 0 {
        1.0
    } else {
        num as f64 / den as f64
    }
}

/// Annotation ranges of `device`: (name, start_us, end_us or None), START/END matched by name.
pub fn annotation_spans(snap: &Snapshot, device: u32) -> Vec<(StrId, i64, Option<i64>)> {
    let mut spans = Vec::new();
    let mut open: HashMap<StrId, Vec<usize>> = HashMap::default();
    for a in snap.annotations.iter().flatten() {
        if a.device != device as i64 {
            continue;
        }
        let Some(tu) = a.time_us else { continue };
        match a.stage {
            Stage::Start => {
                spans.push((a.name, tu, None));
                open.entry(a.name).or_default().push(spans.len() - 1);
            }
            Stage::End => {
                if let Some(i) = open.get_mut(&a.name).and_then(|v| v.pop()) {
                    spans[i].2 = Some(tu);
                }
            }
            Stage::Other => {}
        }
    }
    spans
}

/// Names of the annotation ranges of `spans` open at `t` (µs), outermost first.
pub fn open_at(spans: &[(StrId, i64, Option<i64>)], t: i64, snap: &Snapshot) -> Vec<String> {
    spans
        .iter()
        .filter(|(_, s, e)| *s <= t && e.is_none_or(|e| t < e))
        .map(|(n, _, _)| snap.pools.strings.get(*n).to_string())
        .collect()
}

fn largest_inactive(snap: &Snapshot, device: u32) -> u64 {
    snap.segments
        .iter()
        .filter(|s| s.device == device as i64)
        .flat_map(|s| snap.blocks_of(s))
        .filter(|b| b.state == BlockState::Inactive)
        .map(|b| b.size)
        .max()
        .unwrap_or(0)
}
