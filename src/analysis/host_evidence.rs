//! Host evidence per bubble window (anomaly.md §5.7–5.8): the three host
//! classes (and the rulebook's input class, the DataLoader's spans), hygiene (rulebook
//! mode), the overlap ratios, the parallelism hint, the `h2d_flow_count`, and the
//! soft-attribution labels.

use super::anomaly_config::{AnomalyConfig, Compat};
use super::intervals::{merge, total_len, Interval};
use super::step_annotations::annotation_family;
use super::steps::is_step_marker_name;
use crate::model::trace_events::{HostEvent, HostEventTable, Lane};

/// Soft-attribution label (§5.8). Never a unique root cause.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Label {
    /// Rule 1: sync/copy markers overlap the bubble.
    SyncOrH2d,
    /// Rule 2: comm markers overlap the bubble.
    CommWait,
    /// Rule 3: almost no host event covers the bubble.
    UntracedHostBlocking,
    /// Rule 4: host events cover the bubble.
    HostLaunchLag,
    /// Rule 5: host events run one at a time.
    PythonSerializationOrLock,
    /// Rule 6: nothing else applies.
    InsufficientEvidence,
}

impl Label {
    /// The spec spelling (`possible_sync_or_h2d`, …, `insufficient_evidence`).
    pub fn as_str(self) -> &'static str {
        match self {
            Label::SyncOrH2d => "possible_sync_or_h2d",
            Label::CommWait => "possible_comm_wait",
            Label::UntracedHostBlocking => "possible_untraced_host_blocking",
            Label::HostLaunchLag => "possible_host_launch_lag",
            Label::PythonSerializationOrLock => "possible_python_serialization_or_lock",
            Label::InsufficientEvidence => "insufficient_evidence",
        }
    }
}

/// Host events split into the classes of §5.7.1, each sorted by start with a running max of
/// ends. The classes hold the indices of the table's events (borrowed), not copies of them.
#[derive(Clone, Debug, Default)]
pub struct HostIndex<'a> {
    /// The table's events (`HostEventTable::events`).
    events: &'a [HostEvent],
    /// Per event: no other event of its thread strictly inside (§5.7.3).
    leaf: Vec<bool>,
    general: ClassIndex,
    sync: ClassIndex,
    comm: ClassIndex,
    /// The DataLoader's iteration spans (`enumerate(DataLoader)#…`; rulebook only, §5.7.1).
    input: ClassIndex,
    /// The table's flow points (`HostEventTable::h2d_flow_ends_ns`), borrowed.
    flows: &'a [i64],
    compat: Compat,
    /// Start times (ns, ascending) of the host events kept in a class but not in the general
    /// one (none in the rulebook, whose general class holds the other two); with the general
    /// class's, those of every kept event, for the §9 density.
    extra_starts: Vec<i64>,
    /// Number of host events kept in any class (density, §9).
    pub kept_events: usize,
    /// Number of step-marker events excluded by hygiene.
    pub excluded_markers: usize,
}

/// One class: indices into the table's events, sorted by start, and the running max of ends
/// at the end of every block of [`BLOCK`] indices (one per block, not one per event: a scan
/// stops at the first block whose running max is at or before the window, so it reads at most
/// one block more than a per-event max would, and only events that end before the window).
#[derive(Clone, Debug, Default)]
struct ClassIndex {
    /// Indices into the table's events (`u32`: [`build_index`] indexes only the first
    /// 2^32 − 1 events of a longer table, never a wrapped index).
    ev: Vec<u32>,
    block_max_end: Vec<i64>,
}

/// Events per running-max entry of a [`ClassIndex`].
const BLOCK: usize = 32;

impl ClassIndex {
    fn finish(mut ev: Vec<u32>, events: &[HostEvent]) -> Self {
        ev.shrink_to_fit();
        // The table's events come sorted by start (`HostEventTable::finish`); the order among
        // equal starts does not matter (every reader of `clipped` sums or merges).
        if !ev
            .windows(2)
            .all(|p| events[p[0] as usize].start_ns <= events[p[1] as usize].start_ns)
        {
            ev.sort_by_key(|&i| (events[i as usize].start_ns, events[i as usize].end_ns()));
        }
        let mut m = i64::MIN;
        let block_max_end = ev
            .chunks(BLOCK)
            .map(|b| {
                m = b.iter().fold(m, |m, &i| m.max(events[i as usize].end_ns()));
                m
            })
            .collect();
        ClassIndex { ev, block_max_end }
    }

    /// Events overlapping `t` with `dur ≤ long_ns` (and leaf-only when asked, `leaf` per
    /// event), clipped to `t`, in no particular order.
    fn clipped(
        &self,
        (events, leaf): (&[HostEvent], &[bool]),
        t: Interval,
        long_ns: Option<i64>,
        leaf_only: bool,
    ) -> Vec<Interval> {
        let hi = self
            .ev
            .partition_point(|&i| events[i as usize].start_ns < t.end_ns);
        let mut out = Vec::new();
        for k in (0..hi).rev() {
            // The running max of ends at the end of `k`'s block is at least that at `k`: when it
            // is at or before the window, no event up to `k` reaches into it.
            if self.block_max_end[k / BLOCK] <= t.start_ns {
                break;
            }
            let i = self.ev[k] as usize;
            let iv = Interval::new(events[i].start_ns, events[i].end_ns());
            if long_ns.is_some_and(|l| iv.len_ns() > l) || (leaf_only && !leaf[i]) {
                continue;
            }
            if let Some(c) = iv.clip(t) {
                out.push(c);
            }
        }
        out
    }
}

/// §5.7.1 "substring": a case-insensitive substring of the name.
fn contains_ci(hay: &str, needles: &[&str]) -> bool {
    let h = hay.to_ascii_lowercase();
    needles.iter().any(|n| h.contains(&n.to_ascii_lowercase()))
}

/// §5.7.1 "exact name", compared case-insensitively like every class match.
fn equals_ci(name: &str, names: &[&str]) -> bool {
    names.iter().any(|n| name.eq_ignore_ascii_case(n))
}

/// §5.7.1 prefix (`*` in the skill), compared case-insensitively.
fn starts_with_ci(name: &str, prefix: &str) -> bool {
    name.len() >= prefix.len()
        && name.as_bytes()[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())
}

/// Builds the class index of §5.7.1 from the trace's host events, applying the
/// mode-independent part of hygiene (marker exclusion, leaf flags; §5.7.3). `step_annotation`
/// is the family key of the user annotations that are the step markers (anomaly.md §3.1.1),
/// when they are: events of that family are markers too.
pub fn build_index<'a>(
    host: &'a HostEventTable,
    cfg: &AnomalyConfig,
    step_annotation: Option<&str>,
) -> HostIndex<'a> {
    let rule = cfg.compat == Compat::Rulebook;
    let n_text = host.text_count();
    // Per-name class flags, computed once per distinct name: (sync, comm, marker, input).
    let mut name_flags: Vec<Option<(bool, bool, bool, bool)>> = vec![None; n_text];
    // Event indices are held as `u32`, half a `usize` natively (wasm32's `usize` is one).
    // A table past 2^32 events would hold 96 GiB of them (`HostEvent` is 24 bytes), beyond
    // any memory this runs in: the index addresses the first 2^32 − 1, never a wrapped index
    // and never a panic on input.
    let all = host.events();
    let events = &all[..all.len().min(u32::MAX as usize)];
    // Leaf flags: no other event of the same thread strictly inside (events sorted by start, longer first).
    let mut leaf = vec![true; events.len()];
    let mut by_thread: rustc_hash::FxHashMap<u32, Vec<u32>> = Default::default();
    for (i, e) in events.iter().enumerate() {
        by_thread
            .entry(host.thread_of(e))
            .or_default()
            .push(i as u32);
    }
    for idx in by_thread.values() {
        for (p, &i) in idx.iter().enumerate() {
            let i = i as usize;
            let ei = events[i];
            for &j in &idx[p + 1..] {
                let ej = events[j as usize];
                if ej.start_ns >= ei.end_ns() {
                    break;
                }
                if ej.end_ns() <= ei.end_ns()
                    && (ej.start_ns, ej.dur_ns) != (ei.start_ns, ei.dur_ns)
                {
                    leaf[i] = false;
                    break;
                }
            }
        }
    }
    drop(by_thread);
    let (mut g, mut s, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut extra_starts = Vec::new();
    let mut excluded = 0;
    for (i, e) in events.iter().enumerate() {
        let name = host.text(e.name);
        let cat = host.text(host.cat_of(e));
        let lane = host.lane_of(e);
        let (is_sync, is_comm_name, is_marker, is_input) = *name_flags[e.name as usize]
            .get_or_insert_with(|| {
                let sync = if rule {
                    contains_ci(
                        name,
                        &[
                            "HostToDevice",
                            "torch_to_npu",
                            "aclrtMemcpy",
                            "aclrtSynchronize",
                            "memcpy",
                            "synchronize",
                        ],
                    ) || equals_ci(
                        name,
                        &[
                            "aten::to",
                            "aten::_to_copy",
                            "aten::copy_",
                            "aten::item",
                            "aten::_local_scalar_dense",
                        ],
                    )
                } else {
                    contains_ci(
                        name,
                        &[
                            "HostToDevice",
                            "torch_to_npu",
                            "aclrtMemcpy",
                            "aclrtSynchronize",
                        ],
                    ) || equals_ci(name, &["aten::to", "aten::_to_copy", "aten::copy_"])
                };
                let comm = if rule {
                    contains_ci(
                        name,
                        &[
                            "c10d",
                            "hccl",
                            "hcom",
                            "StreamWaitEvent",
                            "Notify_Wait",
                            "Notify Wait",
                        ],
                    )
                } else {
                    contains_ci(
                        name,
                        &["c10d", "Hccl", "hcom", "StreamWaitEvent", "Notify_Wait"],
                    )
                };
                let marker = is_step_marker_name(name, cfg)
                    || step_annotation.is_some_and(|f| annotation_family(name) == f);
                (
                    sync,
                    comm,
                    marker,
                    rule && starts_with_ci(name, INPUT_PREFIX),
                )
            });
        if rule && is_marker {
            excluded += 1;
            continue;
        }
        if is_input {
            d.push(i as u32);
        }
        // GPU traces: a `cuda_sync` event is a synchronisation, an `nccl:*` user
        // annotation a collective (neither cat occurs in Ascend traces).
        let sync = is_sync || (rule && cat == "HostToDevice") || cat == "cuda_sync";
        let comm = is_comm_name
            || (rule && lane == Lane::HcclDevice)
            || (cat == "user_annotation" && starts_with_ci(name, "nccl:"));
        let general = if rule {
            matches!(
                cat,
                "cpu_op" | "python_function" | "user_annotation" | "enqueue" | "dequeue"
            ) || lane == Lane::Cann
                || sync
                || comm
        } else {
            matches!(cat, "cpu_op" | "python_function" | "user_annotation")
                || starts_with_ci(name, "AscendCL@")
        };
        if !general && (sync || comm) {
            extra_starts.push(e.start_ns);
        }
        // `i < 2^32`: `events` is at most `u32::MAX` long.
        if general {
            g.push(i as u32);
        }
        if sync {
            s.push(i as u32);
        }
        if comm {
            c.push(i as u32);
        }
    }
    extra_starts.sort_unstable();
    // Grown by doubling while the classes were dealt: each keeps only its events.
    extra_starts.shrink_to_fit();
    let kept_events = g.len() + extra_starts.len();
    HostIndex {
        general: ClassIndex::finish(g, events),
        sync: ClassIndex::finish(s, events),
        comm: ClassIndex::finish(c, events),
        input: ClassIndex::finish(d, events),
        events,
        leaf,
        flows: &host.h2d_flow_ends_ns,
        compat: cfg.compat,
        kept_events,
        extra_starts,
        excluded_markers: excluded,
    }
}

impl HostIndex<'_> {
    /// Number of kept host events (any class) whose start lies in `w` (`start ≤ ts < end`),
    /// the per-window count behind §9's "host events per 100 kernels".
    pub fn events_starting_in(&self, w: Interval) -> usize {
        let a = self.extra_starts.partition_point(|&t| t < w.start_ns);
        let b = self.extra_starts.partition_point(|&t| t < w.end_ns);
        let ev = &self.general.ev;
        let ga = ev.partition_point(|&i| self.events[i as usize].start_ns < w.start_ns);
        let gb = ev.partition_point(|&i| self.events[i as usize].start_ns < w.end_ns);
        b.saturating_sub(a) + gb.saturating_sub(ga)
    }
}

/// Host evidence of one window (§5.7.2, §5.8 hint, §5.6 `h2d_flow_count`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Evidence {
    /// `host_visible_coverage_ratio` (null for a zero-length window).
    pub host: Option<f64>,
    /// `sync_marker_overlap_ratio`.
    pub sync: Option<f64>,
    /// `comm_marker_overlap_ratio`.
    pub comm: Option<f64>,
    /// `host_parallelism_hint` (rulebook only; null without host events).
    pub hint: Option<f64>,
    /// `input_overlap_ratio`: the share of the window under the DataLoader's iteration spans
    /// (rulebook only; null in `script` mode and for a zero-length window).
    pub input: Option<f64>,
    /// Flow points inside the window (`start ≤ ts < end`): `HostToDevice` / `torch_to_npu`
    /// flow ends on Ascend, device-op launch starts on GPU ranks
    /// (`model::trace_events::HostEventTable::h2d_flow_ends_ns`).
    pub h2d_flow_count: usize,
}

fn ratio(t: Interval, pieces: Vec<Interval>) -> Option<f64> {
    if t.len_ns() <= 0 {
        return None;
    }
    Some(total_len(&merge(pieces)) as f64 / t.len_ns() as f64)
}

/// Evidence for window `t`; `service_ns` is the service of the step holding it
/// (capture span for global windows), used by the long-event hygiene rule.
pub fn evidence(ix: &HostIndex<'_>, t: Interval, service_ns: i64, cfg: &AnomalyConfig) -> Evidence {
    let rule = ix.compat == Compat::Rulebook;
    let long = rule.then(|| (cfg.host_long_event_frac * service_ns as f64) as i64);
    let table = (ix.events, ix.leaf.as_slice());
    let general = ix.general.clipped(table, t, long, rule);
    let hint = if rule && t.len_ns() > 0 {
        let sum: i64 = general.iter().map(Interval::len_ns).sum();
        let uni = total_len(&merge(general.clone()));
        (uni > 0).then(|| sum as f64 / uni as f64)
    } else {
        None
    };
    let a = ix.flows.partition_point(|&f| f < t.start_ns);
    let b = ix.flows.partition_point(|&f| f < t.end_ns);
    Evidence {
        host: ratio(t, general),
        sync: ratio(t, ix.sync.clipped(table, t, long, false)),
        comm: ratio(t, ix.comm.clipped(table, t, long, false)),
        hint,
        // Kept whatever their length: a data-loading span is itself the evidence (§5.7.3).
        input: if rule {
            ratio(t, ix.input.clipped(table, t, None, false))
        } else {
            None
        },
        h2d_flow_count: b.saturating_sub(a),
    }
}

/// The name prefix of the span PyTorch's DataLoader records around each `next()` on its
/// iterator (`enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__`, …; §5.7.1).
pub const INPUT_PREFIX: &str = "enumerate(DataLoader)#";

/// The input overlap at or above which a window's bubble detail and its soft root-cause
/// evidence name the DataLoader (§5.7.1). The labels stay §5.8's: the input class adds a
/// finding beside them, never a label.
pub const INPUT_OVERLAP_MIN: f64 = 0.5;

/// Soft attribution (§5.8) in the spec's order. A null ratio counts as 0.
/// `capture_boundary` windows have their host labels replaced by `insufficient_evidence`.
pub fn labels(ev: &Evidence, capture_boundary: bool, cfg: &AnomalyConfig) -> Vec<Label> {
    let host = ev.host.unwrap_or(0.0);
    let mut out = Vec::new();
    if ev.sync.unwrap_or(0.0) >= cfg.sync_overlap_min {
        out.push(Label::SyncOrH2d);
    }
    if ev.comm.unwrap_or(0.0) >= cfg.comm_overlap_min {
        out.push(Label::CommWait);
    }
    if host < cfg.host_untraced_max {
        out.push(Label::UntracedHostBlocking);
    }
    if out.is_empty() && host >= cfg.host_launch_lag_min {
        out.push(Label::HostLaunchLag);
    }
    if out.is_empty() && ev.hint.is_some_and(|h| h < cfg.host_parallelism_max) {
        out.push(Label::PythonSerializationOrLock);
    }
    if out.is_empty() {
        out.push(Label::InsufficientEvidence);
    }
    if capture_boundary {
        let mut replaced = false;
        out.retain(|l| {
            let host_label = matches!(
                l,
                Label::UntracedHostBlocking
                    | Label::HostLaunchLag
                    | Label::PythonSerializationOrLock
            );
            replaced |= host_label;
            !host_label
        });
        if replaced && !out.contains(&Label::InsufficientEvidence) {
            out.push(Label::InsufficientEvidence);
        }
    }
    out
}

#[cfg(test)]
#[path = "host_evidence_tests.rs"]
mod tests;
