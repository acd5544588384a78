//! How the tables of one rank's files are combined before the anomaly rules run, and the
//! cross-check after (anomaly.md §1.2.3, §1.2.4, §13.1): kernels from the trace's device lanes
//! when there is no kernel CSV, the time-base check between the kernel table and the trace, the
//! Level0 stream join, and the `step_trace_time.csv` comparison. Pure functions of the model
//! tables; the engine's rank read calls them in this order.

use rustc_hash::FxHashMap as HashMap;

use super::AnomalyResult;
use crate::base::units::ns_to_us;
use crate::base::{Position, Problem, Problems, Severity};
use crate::model::kernels::{KernelRow, KernelTable, KernelTableBuilder};
use crate::model::side_tables::StepTraceRow;
use crate::model::trace_events::HostEventTable;

/// Problem codes of the joins.
pub mod codes {
    /// Timestamps of the kernel table and the trace are in different bases: trace not combined.
    pub const TIME_BASE: &str = "ANOM-TB-001";
    /// Level0 stream join result.
    pub const STREAM_JOIN: &str = "ANOM-KD-010";
    /// `step_trace_time.csv` cross-check disagreement.
    pub const CROSS_CHECK: &str = "ANOM-ST-002";
    /// A `step_trace_time.csv` row that names no marker step (info: not cross-checked).
    pub const UNMATCHED_ROW: &str = "ANOM-ST-004";
}

/// More than this between the first kernel and the first trace event (ns): the two files are
/// on different clocks (epoch vs monotonic) and are not combined.
pub const TIME_BASE_GAP_NS: i64 = 86_400 * 1_000_000_000;

/// §1.2.3: one kernel row per device-lane event of trace `t` (HCCL lane events as `HCCL`
/// rows without a stream), pushed to `builder`.
pub fn kernels_from_trace(t: &HostEventTable, builder: &mut KernelTableBuilder) {
    let mut row = KernelRow::default();
    for d in &t.device_events {
        row.name = t.text(d.name).to_string();
        row.core_raw = if d.hccl_lane {
            "HCCL".into()
        } else {
            String::new()
        };
        row.start_ns = d.ts_ns;
        row.dur_ns = d.dur_ns;
        row.stream = if d.hccl_lane {
            String::new()
        } else {
            t.text(d.stream).to_string()
        };
        builder.push(&row);
    }
}

/// The time-base check: an error problem at `trace_path` when the first kernel of `builder`
/// (else the first device-lane event of `t`) and the first event of `t` lie more than
/// [`TIME_BASE_GAP_NS`] apart; the caller then drops the trace (no markers, no host evidence).
pub fn time_base_conflict(
    builder: &KernelTableBuilder,
    t: &HostEventTable,
    trace_path: &str,
) -> Option<Problem> {
    let (k0, t0) = (builder_min_start(builder, t)?, trace_min(t)?);
    if (k0 - t0).abs() <= TIME_BASE_GAP_NS {
        return None;
    }
    Some(Problem::new(
        Severity::Error,
        codes::TIME_BASE,
        Position::file(trace_path),
        format!(
            "timestamps in different bases: kernels start at {} µs, trace events at {} µs (more than a day apart: epoch vs monotonic clock); trace_view.json is not combined (no markers, no host evidence)",
            k0 / 1000,
            t0 / 1000
        ),
    ))
}

/// §1.2.4 Level0 stream join: kernel rows without a stream (no `Stream ID` column) take the
/// stream of the trace's device-lane event with the same name and start. Returns the info
/// problem (at `kernel_file`) that says how many rows were joined.
pub fn join_streams(
    builder: &mut KernelTableBuilder,
    t: &HostEventTable,
    kernel_file: &str,
) -> Problem {
    let missing = builder.missing_streams();
    let mut map: HashMap<(u32, i64), u32> = HashMap::default();
    for d in t.device_events.iter().filter(|d| !d.hccl_lane) {
        map.insert((d.name, d.ts_ns), d.stream);
    }
    let mut by_name: HashMap<&str, u32> = HashMap::default();
    for id in 0..t.text_count() as u32 {
        by_name.insert(t.text(id), id);
    }
    let joined = builder.join_streams(|name, ts| {
        let id = by_name.get(name)?;
        map.get(&(*id, ts)).map(|s| t.text(*s).to_string())
    });
    Problem::new(
        Severity::Info,
        codes::STREAM_JOIN,
        Position::file(kernel_file),
        format!("no Stream ID column: {joined} of {missing} non-communication rows joined to trace device lanes by (name, ts)"),
    )
}

fn builder_min_start(b: &KernelTableBuilder, t: &HostEventTable) -> Option<i64> {
    if b.is_empty() {
        return t.device_events.iter().map(|d| d.ts_ns).min();
    }
    b.min_start_ns()
}

fn trace_min(t: &HostEventTable) -> Option<i64> {
    let host = t.events().first().map(|e| e.start_ns);
    let mk = t.markers.iter().map(|m| m.ts_ns).min();
    match (host, mk) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// §13.1 cross-check of marker steps against `step_trace_time.csv` (`Preparing`, `Stage`, `Free`).
pub fn cross_check(
    r: &AnomalyResult,
    k: &KernelTable,
    rows: &[StepTraceRow],
    problems: &mut Problems,
) -> Vec<String> {
    let mut out = Vec::new();
    for (j, s) in r.steps.iter().enumerate() {
        let num = s.step_id.rsplit('#').next().unwrap_or("");
        // Preparing counts from the host marker (§3.2): under device lag that is the host
        // window start, not the device-side window start.
        let host_start = r
            .device_lag
            .as_ref()
            .filter(|d| d.applied)
            .and_then(|d| d.steps.get(j))
            .map_or(s.window.start_ns, |l| l.host_start_ns);
        let Some(row) = rows.iter().find(|x| x.step.trim() == num) else {
            continue;
        };
        let range = s.kernels.clone();
        if range.is_empty() {
            continue;
        }
        let first = k.start_ns()[range.start];
        let last_end = range.clone().map(|i| k.end_ns(i)).max().unwrap_or(first);
        if let Some(p) = row.preparing_ns {
            let ours = first - host_start;
            out.push(format!(
                "{}: Preparing {} µs vs prelaunch to first kernel {} µs",
                s.step_id,
                ns_to_us(p),
                ns_to_us(ours)
            ));
            if (p - ours).abs() > 1_000 {
                problems.push(Problem::new(
                    Severity::Warning,
                    codes::CROSS_CHECK,
                    Position::file("step_trace_time.csv").at_line(row.line),
                    format!(
                        "Preparing {} µs differs from the marker-to-first-kernel gap {} µs",
                        ns_to_us(p),
                        ns_to_us(ours)
                    ),
                ));
            }
        }
        if let Some(st) = row.stage_ns {
            out.push(format!(
                "{}: Stage {} µs vs first-to-last kernel {} µs",
                s.step_id,
                ns_to_us(st),
                ns_to_us(last_end - first)
            ));
        }
        if let Some(f) = row.free_ns {
            out.push(format!(
                "{}: Free {} µs vs internal bubbles {} µs",
                s.step_id,
                ns_to_us(f),
                ns_to_us(s.metrics.internal_total_ns())
            ));
        }
    }
    // A row no marker step took is said, not passed over (anomaly.md §13.1). Steps of
    // another method (`Step Id`, pseudo, macro) are not cross-checked row by row.
    if !r.step_method.as_str().starts_with("marker") {
        return out;
    }
    let numbers: Vec<&str> = r
        .steps
        .iter()
        .map(|s| s.step_id.rsplit('#').next().unwrap_or(""))
        .collect();
    for row in rows {
        if numbers.contains(&row.step.trim()) {
            continue;
        }
        let named = match row.step.trim() {
            "" => "an empty Step".to_string(),
            n => format!("Step {n:?}"),
        };
        problems.push(Problem::new(
            Severity::Info,
            codes::UNMATCHED_ROW,
            Position::file("step_trace_time.csv").at_line(row.line).in_column("Step"),
            format!(
                "row with {named} names no ProfilerStep marker of the trace ({}): not cross-checked",
                if numbers.is_empty() {
                    "it has none".to_string()
                } else {
                    format!("steps {}", numbers.join(", "))
                }
            ),
        ));
    }
    out
}
