//! Per-target rank summaries (`docs/cluster-summary.md` §1–2) from the store's
//! analysis results: the targets of an inventory ([`inventory_targets`], what `proflens
//! targets` lists and `proflens summarize` summarises), and one [`RankSummary`] per target
//! ([`rank_summary`]) whose values are those of the exports — steps through
//! `report::anomaly_json::step_json` (the anomaly JSON's own builder), the row inputs through
//! `cross_rank::row_of`, the memory peak through `memory_summary::summarize`, snapshot points
//! through the snapshot JSON's names — then [`bound`] keeps it ≤ 64 KiB.

use crate::analysis::anomaly::cross_rank::row_of;
use crate::analysis::memory_result::RankStatus as MemoryStatus;
use crate::base::units::ns_to_ms;
use crate::base::{Problem, Problems, Severity};
use crate::engine::contract::Target;
use crate::engine::read::RankAnalysis;
use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::ingest::rank::CaptureKind;
use crate::protocol::cluster::{
    AnomalySummary, BubbleSummary, MemorySummary, PeakSummary, ProblemCounts, ProblemSeverity,
    ProblemSummary, RankStatus, RankSummary, SiteKb, SnapshotSummary, StepSummary, TargetKind,
    MAX_BUBBLES, MAX_MESSAGE_CHARS, MAX_PEAKS, MAX_PROBLEMS, MAX_RANK_SUMMARY_BYTES, MAX_SITES,
    MAX_SNAPSHOTS, MAX_STEPS,
};
use crate::report::float::ns_to_us;

/// Problem codes of the summary.
pub mod codes {
    /// No analysis of the target produced a result.
    pub const NOTHING: &str = "CLUSTER-RANK-001";
    /// The anomaly analysis of the target was cancelled.
    pub const CANCELLED: &str = "CLUSTER-RANK-002";
}

/// One analysis target of an inventory (`docs/cluster-summary.md` §1).
#[derive(Clone, Debug, PartialEq)]
pub struct InvTarget {
    /// The store's target.
    pub target: Target,
    /// What it is.
    pub kind: TargetKind,
    /// Rank id, when known.
    pub rank_id: Option<i64>,
    /// Role, when known (the anomaly JSON's `role`).
    pub role: Option<String>,
    /// Inventory path of the rank folder, trace or pickle (relative to the walk's base).
    pub path: String,
    /// Σ size of the target's known input files, bytes.
    pub bytes: u64,
}

/// The targets of `inv`: every rank folder (Ascend, or one Kineto trace) in inventory order,
/// then every snapshot pickle.
pub fn inventory_targets(inv: &Inventory) -> Vec<InvTarget> {
    let mut out: Vec<InvTarget> = inv
        .ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let kineto = r.kind == CaptureKind::Kineto;
            InvTarget {
                target: Target::Rank(i as u32),
                kind: if kineto {
                    TargetKind::Kineto
                } else {
                    TargetKind::Ascend
                },
                rank_id: r.rank_id,
                role: Some(r.role.clone()).filter(|s| !s.is_empty()),
                path: match r.files.first() {
                    Some(f) if kineto => f.path.clone(),
                    _ => r.dir.clone(),
                },
                bytes: r.files.iter().map(|f| f.size).sum(),
            }
        })
        .collect();
    out.extend(inv.snapshots.iter().enumerate().map(|(i, f)| InvTarget {
        target: Target::Snapshot(i as u32),
        kind: TargetKind::Snapshot,
        rank_id: None,
        role: None,
        path: f.path.clone(),
        bytes: f.size,
    }));
    out
}

/// What the caller measured or named for one target.
pub struct Ident {
    /// The target id (`docs/cluster-summary.md` §1).
    pub target: String,
    /// The rank folder or file on disk.
    pub rank_dir: String,
    /// Bytes the analyses read.
    pub bytes_read: u64,
    /// Wall time of the analyses, s.
    pub analysis_s: f64,
}

/// Collects problems: every warning and error counted, the first [`MAX_PROBLEMS`] kept.
#[derive(Default)]
struct ProblemList {
    kept: Vec<ProblemSummary>,
    dropped: u64,
    counts: ProblemCounts,
}

impl ProblemList {
    fn push(&mut self, p: &Problem) {
        let severity = match p.severity {
            Severity::Error => ProblemSeverity::Error,
            Severity::Warning => ProblemSeverity::Warning,
            Severity::Info => return,
        };
        match severity {
            ProblemSeverity::Error => self.counts.errors += 1,
            ProblemSeverity::Warning => self.counts.warnings += 1,
        }
        if self.kept.len() >= MAX_PROBLEMS {
            self.dropped += 1;
            return;
        }
        let mut location = Vec::new();
        if let Some(l) = p.at.line {
            location.push(format!("line {l}"));
        }
        if let Some(b) = p.at.byte {
            location.push(format!("byte {b}"));
        }
        if let Some(c) = &p.at.column {
            location.push(format!("column '{c}'"));
        }
        self.kept.push(ProblemSummary {
            severity,
            code: p.code.to_string(),
            file: p.at.file.to_string(),
            location: location.join(", "),
            message: cut(&p.message, MAX_MESSAGE_CHARS),
        });
    }

    /// Every problem of `ps`; those past its kept list count as warnings (severity unknown).
    fn extend(&mut self, ps: &Problems) {
        for p in ps.kept() {
            self.push(p);
        }
        let extra = ps.total() - ps.kept().len() as u64;
        self.counts.warnings += extra;
        self.dropped += extra;
    }
}

/// `s` cut to at most `max` characters, `…` ending a cut text.
fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max.saturating_sub(1)) {
        Some((i, _)) if s.chars().count() > max => format!("{}…", &s[..i]),
        _ => s.to_string(),
    }
}

fn step_summary(s: &crate::analysis::anomaly::StepResult) -> StepSummary {
    let j = crate::report::anomaly_json::step_json(s);
    StepSummary {
        step_id: j.step_id,
        service_ms: j.service_ms,
        device_busy_union_ms: j.device_busy_union_ms,
        underfeed_ms: j.underfeed_ms,
        underfeed_ratio: j.underfeed_ratio,
        prelaunch_gap_ms: j.prelaunch_gap_ms,
        tail_gap_ms: j.tail_gap_ms,
        internal_bubble_total_ms: j.internal_bubble_total_ms,
        largest_internal_bubble_ms: j.largest_internal_bubble_ms,
        bubble_count: j.bubble_count as u64,
        total_kernel_count: j.total_kernel_count as u64,
        kernel_duration_sum_ms: j.kernel_duration_sum_ms,
        tags: j.tags.iter().map(|t| t.to_string()).collect(),
        labels: j.labels.iter().map(|t| t.to_string()).collect(),
    }
}

/// Steps, the row inputs and the top bubbles of one rank's anomaly result.
fn anomaly_parts(a: &RankAnalysis, out: &mut RankSummary) {
    let r = &a.result;
    out.steps = r.steps.iter().take(MAX_STEPS).map(step_summary).collect();
    out.steps_dropped = r.steps.len().saturating_sub(MAX_STEPS) as u64;
    let row = row_of(a.meta.rank_id.unwrap_or(0), r);
    out.anomaly = Some(AnomalySummary {
        step_count: r.steps.len() as u64,
        service_ms_avg: row.service_ms_avg,
        busy_union_ms_avg: row.busy_union_ms_avg,
        underfeed_ratio_avg: row.underfeed_ratio_avg,
        comm_total_ms: row.comm_total_ms,
        comm_wait_ratio_weighted: row.comm_wait_ratio_weighted,
        bubble_count_avg: row.bubble_count_avg,
        dominant_idle_pattern: row.dominant_idle_pattern.to_string(),
        dominant_anomaly_tags: r
            .groups
            .first()
            .map(|g| {
                g.dominant_anomaly_tags
                    .iter()
                    .map(|t| t.as_str().to_string())
                    .collect()
            })
            .unwrap_or_default(),
    });
    let mut order: Vec<usize> = (0..r.bubbles.len()).collect();
    // Longest first; ties keep the JSON order (stable sort).
    crate::base::sort::sort_by_key(&mut order, |&i| {
        std::cmp::Reverse(r.bubbles[i].window.interval.len_ns())
    });
    out.top_bubbles = order
        .iter()
        .take(MAX_BUBBLES)
        .map(|&i| {
            let b = &r.bubbles[i];
            let w = &b.window;
            BubbleSummary {
                step_id: w
                    .step
                    .and_then(|s| r.steps.get(s))
                    .map(|s| s.step_id.clone())
                    .unwrap_or_else(|| "global".into()),
                scope: w.scope.as_str().to_string(),
                start_us: ns_to_us(w.interval.start_ns),
                end_us: ns_to_us(w.interval.end_ns),
                duration_ms: ns_to_ms(w.interval.len_ns()),
                labels: b.labels.iter().map(|l| l.as_str().to_string()).collect(),
            }
        })
        .collect();
    out.top_bubbles_dropped = r.bubbles.len().saturating_sub(MAX_BUBBLES) as u64;
}

fn memory_part(m: &crate::analysis::memory_result::RankMemory) -> Option<MemorySummary> {
    let s = crate::analysis::memory_summary::summarize(m);
    // The main pool: the first (PTA first) with a peak.
    let pool = s.pools.iter().find(|p| p.peak.is_some())?;
    let peak = pool.peak.as_ref()?;
    let sites = &peak.live_by_user_frame;
    Some(MemorySummary {
        component: pool.component.as_str().to_string(),
        peak_allocated_mb: peak.peak.peak_allocated_mb,
        peak_time_ns: peak.peak.peak_time_ns,
        reserved_at_peak_mb: peak.peak.reserved_at_peak_mb,
        max_reserved_mb: peak.peak.max_reserved_mb,
        live_kb: peak.peak.live_kb,
        live_at_peak_top_sites: sites
            .iter()
            .take(MAX_SITES)
            .map(|g| SiteKb {
                site: g.key.clone(),
                kb: g.kb,
                count: g.count,
            })
            .collect(),
        sites_dropped: sites.len().saturating_sub(MAX_SITES) as u64,
    })
}

fn snapshot_part(
    run: &crate::engine::read::snapshot::SnapshotRun,
    file: &str,
) -> Vec<SnapshotSummary> {
    run.devices
        .iter()
        .map(|d| SnapshotSummary {
            file: file.to_string(),
            device: d.device,
            peak_bytes: d.max[0].0,
            peaks: d
                .points
                .iter()
                .take(MAX_PEAKS)
                .map(|p| PeakSummary {
                    kind: crate::analysis::snapshot::labels::point_kind_name(p.kind).to_string(),
                    index: p.index as u64,
                    height_bytes: p.height,
                })
                .collect(),
            peaks_dropped: d.points.len().saturating_sub(MAX_PEAKS) as u64,
        })
        .collect()
}

/// The summary of target `t` from `store` (run with the plan of `t`'s inventory `inv`), with
/// the caller's `id`. `failed` when no analysis produced a result (a problem says why),
/// `partial` when one did with an error problem. Call [`bound`] before writing it.
pub fn rank_summary(inv: &Inventory, store: &Store, t: &InvTarget, id: Ident) -> RankSummary {
    let mut out = RankSummary::new(id.target, t.kind, id.rank_dir);
    out.rank_id = t.rank_id;
    out.role = t.role.clone();
    out.bytes_read = id.bytes_read;
    out.analysis_s = id.analysis_s;
    let mut problems = ProblemList::default();
    let mut analysed = false;
    let mut why: Vec<String> = Vec::new();
    match t.target {
        Target::Rank(i) => {
            let folder = &inv.ranks[i as usize];
            let entry = store.rank(i);
            match entry.and_then(|e| e.anomaly.as_ref()) {
                Some(Ok(a)) => {
                    anomaly_parts(a, &mut out);
                    problems.extend(&a.problems);
                    analysed = true;
                }
                Some(Err(_)) => why.push("the anomaly analysis was cancelled".into()),
                None => why.push(
                    "no kernel_details.csv, op_summary*.csv, trace_view.json or PyTorch profiler trace"
                        .into(),
                ),
            }
            if let Some(Ok(c)) = entry.and_then(|e| e.comm.as_ref()) {
                if c.tables.has_time {
                    let (n_ops, t, wait_ratio, sync_ratio) =
                        crate::analysis::comm::time::rank_totals(&c.tables);
                    out.comm = Some(crate::protocol::cluster::CommSummary {
                        n_ops,
                        elapse_ms: t[0],
                        transit_ms: t[1],
                        wait_ms: t[2],
                        sync_ms: t[3],
                        idle_ms: t[4],
                        wait_ratio,
                        sync_ratio,
                        ops: c
                            .tables
                            .ops
                            .iter()
                            .take(crate::protocol::cluster::MAX_COMM_OPS)
                            .map(|o| crate::protocol::cluster::CommOpTime {
                                group: o.group.clone(),
                                op: o.op.clone(),
                                start_us: o.start_us.unwrap_or(0.0),
                                elapse_ms: o.elapse_ms,
                                data_size: c.tables.op_bytes.get(&o.op).copied(),
                            })
                            .collect(),
                        ops_dropped: c
                            .tables
                            .ops
                            .len()
                            .saturating_sub(crate::protocol::cluster::MAX_COMM_OPS)
                            as u64,
                    });
                    analysed = true;
                }
            }
            if folder.has_memory_events() {
                if let Some(m) = entry.and_then(|e| e.memory.as_deref()) {
                    problems.extend(&m.problems);
                    match &m.status {
                        MemoryStatus::Analysed => {
                            out.memory = memory_part(m);
                            analysed = true;
                        }
                        MemoryStatus::Failed(w) => why.push(format!("memory: {w}")),
                        MemoryStatus::Cancelled => why.push("memory: cancelled".into()),
                    }
                }
            }
            if !analysed {
                for n in &folder.notes {
                    problems.push(&n.to_problem());
                }
            }
        }
        Target::Snapshot(i) => match store.snapshot(i) {
            Some(Ok(run)) => {
                let mut all = snapshot_part(run, &t.path);
                out.snapshots_dropped = all.len().saturating_sub(MAX_SNAPSHOTS) as u64;
                all.truncate(MAX_SNAPSHOTS);
                out.snapshots = all;
                problems.extend(&run.problems);
                analysed = true;
            }
            Some(Err(e)) => why.push(e.to_string()),
            None => why.push("the snapshot was not analysed".into()),
        },
        // never planned (`Plan::targets` lists rank folders and snapshots only)
        Target::Summary(_) => why.push("a cluster summary file is not a rank".into()),
    }
    if !analysed {
        let code = if why.iter().any(|w| w.contains("cancelled")) {
            codes::CANCELLED
        } else {
            codes::NOTHING
        };
        problems.push(&Problem::new(
            Severity::Error,
            code,
            crate::base::Position::file(t.path.as_str()),
            format!("nothing analysed: {}", why.join("; ")),
        ));
    }
    out.status = if !analysed {
        RankStatus::Failed
    } else if problems.counts.errors > 0 {
        RankStatus::Partial
    } else {
        RankStatus::Ok
    };
    out.problems = problems.kept;
    out.problems_dropped = problems.dropped;
    out.problem_counts = problems.counts;
    out
}

/// Serialised size of `s`, bytes.
pub fn size_of(s: &RankSummary) -> usize {
    serde_json::to_vec(s).map(|v| v.len()).unwrap_or(usize::MAX)
}

/// Keeps `s` within [`MAX_RANK_SUMMARY_BYTES`]: drops steps from the end, then problems, then
/// bubbles and snapshots, each counted in its `*_dropped`, until it fits (a tenth of what is
/// left of a list per round, at least one).
pub fn bound(s: &mut RankSummary) {
    loop {
        if size_of(s) <= MAX_RANK_SUMMARY_BYTES {
            return;
        }
        if !s.steps.is_empty() {
            let keep = s.steps.len() - (s.steps.len() / 10).max(1);
            s.steps_dropped += (s.steps.len() - keep) as u64;
            s.steps.truncate(keep);
        } else if !s.problems.is_empty() {
            let keep = s.problems.len() - (s.problems.len() / 10).max(1);
            s.problems_dropped += (s.problems.len() - keep) as u64;
            s.problems.truncate(keep);
        } else if !s.top_bubbles.is_empty() {
            s.top_bubbles_dropped += s.top_bubbles.len() as u64;
            s.top_bubbles.clear();
        } else if !s.snapshots.is_empty() {
            s.snapshots_dropped += s.snapshots.len() as u64;
            s.snapshots.clear();
        } else if let Some(c) = s.comm.as_mut().filter(|c| !c.ops.is_empty()) {
            c.ops_dropped += c.ops.len() as u64;
            c.ops.clear();
        } else {
            // Only the identity is left (a path, step ids and labels are bounded by the caps).
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big() -> RankSummary {
        let step = StepSummary {
            step_id: "ProfilerStep#123456".into(),
            service_ms: 123.456789,
            device_busy_union_ms: 100.123456,
            underfeed_ms: 23.333333,
            underfeed_ratio: 0.18900000000000001,
            prelaunch_gap_ms: 1.234567,
            tail_gap_ms: 0.5,
            internal_bubble_total_ms: 20.987654,
            largest_internal_bubble_ms: 3.14159,
            bubble_count: 1234,
            total_kernel_count: 123456,
            kernel_duration_sum_ms: 110.5,
            tags: vec!["DEVICE_IDLE_GAP_HEAVY".into(); 12],
            labels: vec!["possible_python_serialization_or_lock".into(); 12],
        };
        let problem = ProblemSummary {
            severity: ProblemSeverity::Warning,
            code: "ANOM-ST-002".into(),
            file: "x/".repeat(100),
            location: "line 123456, byte 123456789".into(),
            message: "m".repeat(MAX_MESSAGE_CHARS),
        };
        let mut s = RankSummary::new("t".into(), TargetKind::Ascend, "d".into());
        s.steps = vec![step; MAX_STEPS];
        s.steps_dropped = 7;
        s.problems = vec![problem; MAX_PROBLEMS];
        s.problems_dropped = 3;
        s
    }

    #[test]
    fn bound_keeps_a_full_summary_under_64_kib_and_counts_what_it_drops() {
        let mut s = big();
        assert!(size_of(&s) > MAX_RANK_SUMMARY_BYTES, "{}", size_of(&s));
        bound(&mut s);
        let n = size_of(&s);
        assert!(n <= MAX_RANK_SUMMARY_BYTES, "{n}");
        // Steps go first, a tenth of those left per round: 100 → 90 → 81 → … until it fits.
        assert!(s.steps.len() < MAX_STEPS && !s.steps.is_empty());
        assert_eq!(s.steps.len() as u64 + s.steps_dropped, MAX_STEPS as u64 + 7);
        assert_eq!(s.problems.len(), MAX_PROBLEMS);
        assert_eq!(s.problems_dropped, 3);
        // One step more would not fit (the bound drops no more than it must, to a tenth).
        let mut more = s.clone();
        more.steps.push(big().steps[0].clone());
        let step_bytes = size_of(&more) - n;
        assert!(n + step_bytes * (s.steps.len() / 9 + 1) > MAX_RANK_SUMMARY_BYTES);
    }

    #[test]
    fn messages_are_cut_to_the_cap_in_characters() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abcd", 4), "abcd");
        assert_eq!(cut("ééééé", 3), "éé…");
        assert_eq!(cut("", 3), "");
    }
}
