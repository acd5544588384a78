//! HTA's breakdown tables of every GPU rank (gpu-traces.md §2–§3; docs/frames.md §3.7), as
//! lines of [`Cell`]s for the CSV and the frame (`report::table_csv`): the values of each rank's
//! `gpu` block of `proflens anomaly --out` ([`GpuJson`]), one table per HTA shape, with the rank
//! in front. Formatting only: every number is the block's.
//!
//! * [`TEMPORAL_COLUMNS`]: one line per GPU rank, HTA's temporal breakdown (integral µs) with
//!   the window it used;
//! * [`IDLE_COLUMNS`]: one line per (rank, stream), HTA's idle time breakdown (µs; null where
//!   the category is absent);
//! * [`KERNEL_TYPE_COLUMNS`]: one line per (rank, category) over the whole capture (count, Σ
//!   duration and busy union in ms);
//! * [`STEP_COLUMNS`]: one line per (rank, step): the categories side by side, the
//!   communication / compute overlap and the exposed communication (ms).

use std::borrow::Cow;

use super::anomaly_json::gpu::{CategoryJson, GpuJson};
use super::frame::{Cell, Kind};

/// One GPU rank's `gpu` block with the rank.
pub struct GpuRank<'a> {
    /// Rank id (null when unknown).
    pub rank_id: Option<i64>,
    /// Rank folder or trace path.
    pub rank_dir: &'a str,
    /// Its `gpu` block.
    pub gpu: &'a GpuJson,
}

/// The lines of a table, one `Vec` of cells per line.
pub type Lines<'a> = Vec<Vec<Cell<'a>>>;

/// The temporal breakdown: `hta_window` and `gpu_time_breakdown` (null when no kept event has
/// a stream).
pub const TEMPORAL_COLUMNS: &[(&str, Kind)] = &[
    ("rank_id", Kind::I64),
    ("rank_dir", Kind::Text),
    ("window", Kind::Text),
    ("profiler_steps", Kind::I64),
    ("last_step_start_us", Kind::I64),
    ("gpu_events_kept", Kind::I64),
    ("gpu_events_dropped", Kind::I64),
    ("span_us", Kind::I64),
    ("idle_us", Kind::I64),
    ("compute_us", Kind::I64),
    ("non_compute_us", Kind::I64),
];

/// The idle time breakdown per stream (`idle_by_stream`).
pub const IDLE_COLUMNS: &[(&str, Kind)] = &[
    ("rank_id", Kind::I64),
    ("rank_dir", Kind::Text),
    ("stream", Kind::I64),
    ("host_wait_us", Kind::I64),
    ("kernel_wait_us", Kind::I64),
    ("other_us", Kind::I64),
];

/// The kernel types over the whole capture (`kernel_categories`).
pub const KERNEL_TYPE_COLUMNS: &[(&str, Kind)] = &[
    ("rank_id", Kind::I64),
    ("rank_dir", Kind::Text),
    ("category", Kind::Text),
    ("count", Kind::I64),
    ("sum_ms", Kind::F64),
    ("busy_ms", Kind::F64),
];

/// The kernel types per step (`steps[]`), the three categories side by side.
pub const STEP_COLUMNS: &[(&str, Kind)] = &[
    ("rank_id", Kind::I64),
    ("rank_dir", Kind::Text),
    ("step_id", Kind::Text),
    ("compute_count", Kind::I64),
    ("compute_sum_ms", Kind::F64),
    ("compute_busy_ms", Kind::F64),
    ("communication_count", Kind::I64),
    ("communication_sum_ms", Kind::F64),
    ("communication_busy_ms", Kind::F64),
    ("memory_count", Kind::I64),
    ("memory_sum_ms", Kind::F64),
    ("memory_busy_ms", Kind::F64),
    ("comm_compute_overlap_ms", Kind::F64),
    ("exposed_comm_ms", Kind::F64),
];

fn opt(v: Option<i64>) -> Cell<'static> {
    v.map_or(Cell::Null, Cell::I64)
}

fn count(n: impl TryInto<i64>) -> Cell<'static> {
    n.try_into().map_or(Cell::Null, Cell::I64)
}

fn rank<'a>(r: &GpuRank<'a>) -> Vec<Cell<'a>> {
    vec![opt(r.rank_id), Cell::Str(Cow::Borrowed(r.rank_dir))]
}

/// The lines of [`TEMPORAL_COLUMNS`].
pub fn temporal_lines<'a>(ranks: &[GpuRank<'a>]) -> Lines<'a> {
    ranks
        .iter()
        .map(|r| {
            let (w, t) = (&r.gpu.hta_window, r.gpu.gpu_time_breakdown.as_ref());
            let mut c = rank(r);
            c.extend([
                Cell::Str(Cow::Borrowed(w.window)),
                count(w.profiler_steps),
                opt(w.last_step_start_us),
                count(w.gpu_events_kept),
                count(w.gpu_events_dropped),
                opt(t.map(|t| t.span_us)),
                opt(t.map(|t| t.idle_us)),
                opt(t.map(|t| t.compute_us)),
                opt(t.map(|t| t.non_compute_us)),
            ]);
            c
        })
        .collect()
}

/// The lines of [`IDLE_COLUMNS`].
pub fn idle_lines<'a>(ranks: &[GpuRank<'a>]) -> Lines<'a> {
    ranks
        .iter()
        .flat_map(|r| {
            r.gpu.idle_by_stream.iter().map(move |s| {
                let mut c = rank(r);
                c.extend([
                    Cell::I64(s.stream),
                    opt(s.host_wait_us),
                    opt(s.kernel_wait_us),
                    Cell::I64(s.other_us),
                ]);
                c
            })
        })
        .collect()
}

fn category_cells(c: &CategoryJson) -> [Cell<'static>; 3] {
    [count(c.count), Cell::F64(c.sum_ms), Cell::F64(c.busy_ms)]
}

/// The lines of [`KERNEL_TYPE_COLUMNS`].
pub fn kernel_type_lines<'a>(ranks: &[GpuRank<'a>]) -> Lines<'a> {
    ranks
        .iter()
        .flat_map(|r| {
            r.gpu.kernel_categories.iter().map(move |k| {
                let mut c = rank(r);
                c.push(Cell::Str(Cow::Borrowed(k.category)));
                c.extend(category_cells(k));
                c
            })
        })
        .collect()
}

/// The lines of [`STEP_COLUMNS`] (categories in the block's order: compute, communication,
/// memory).
pub fn step_lines<'a>(ranks: &[GpuRank<'a>]) -> Lines<'a> {
    ranks
        .iter()
        .flat_map(|r| {
            r.gpu.steps.iter().map(move |s| {
                let mut c = rank(r);
                c.push(Cell::Str(Cow::Borrowed(s.step_id.as_str())));
                for name in ["compute", "communication", "memory"] {
                    match s.categories.iter().find(|k| k.category == name) {
                        Some(k) => c.extend(category_cells(k)),
                        None => c.extend([Cell::Null, Cell::Null, Cell::Null]),
                    }
                }
                c.push(Cell::F64(s.comm_compute_overlap_ms));
                c.push(Cell::F64(s.exposed_comm_ms));
                c
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::anomaly_json::gpu::{HtaWindowJson, StreamIdleJson, TimeJson};
    use crate::report::table_csv::{names, write_csv};

    #[test]
    fn the_blocks_fields_become_lines_with_the_rank_in_front() {
        let gpu = GpuJson {
            hta_window: HtaWindowJson {
                window: "hta_parity",
                profiler_steps: 3,
                last_step_start_us: Some(1_700_000_000_000_001),
                gpu_events_kept: 10,
                gpu_events_dropped: 2,
            },
            gpu_time_breakdown: Some(TimeJson {
                span_us: 100,
                idle_us: 20,
                compute_us: 70,
                non_compute_us: 10,
            }),
            idle_by_stream: vec![StreamIdleJson {
                stream: 7,
                host_wait_us: None,
                kernel_wait_us: Some(3),
                other_us: 1,
            }],
            kernel_categories: Vec::new(),
            steps: Vec::new(),
            top_kernels: Vec::new(),
            memory: Vec::new(),
            straggler: None,
        };
        let ranks = [GpuRank {
            rank_id: Some(1),
            rank_dir: "r1",
            gpu: &gpu,
        }];
        let mut out = Vec::new();
        write_csv(
            &names(TEMPORAL_COLUMNS),
            temporal_lines(&ranks).into_iter(),
            &mut out,
        )
        .unwrap();
        write_csv(
            &names(IDLE_COLUMNS),
            idle_lines(&ranks).into_iter(),
            &mut out,
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "rank_id,rank_dir,window,profiler_steps,last_step_start_us,gpu_events_kept,\
             gpu_events_dropped,span_us,idle_us,compute_us,non_compute_us\n\
             1,r1,hta_parity,3,1700000000000001,10,2,100,20,70,10\n\
             rank_id,rank_dir,stream,host_wait_us,kernel_wait_us,other_us\n1,r1,7,,3,1\n"
        );
    }
}
