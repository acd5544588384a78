//! `OP_MEMORY` → the `operator_memory.csv` rows of a [`MemoryEventTable`] (ascend-db.md §3).

use std::ops::ControlFlow;

use super::schema::{int, text, Select};
use super::{round3, scan, us_f64, DbFile};
use crate::base::Problems;
use crate::model::memory_events::{MemoryEvent, MemoryEventTable, Totals};
use crate::model::strings::StringPool;

const TABLE: &str = "OP_MEMORY";
const REQUIRED: [&str; 3] = ["name", "size", "allocationTime"];

/// What [`read`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// The table and its required columns exist.
    pub present: bool,
    /// Rows added.
    pub rows: u64,
    /// Stopped by `tick`.
    pub stopped: bool,
}

fn mb(b: Option<i64>) -> Option<f64> {
    b.map(|b| b as f64 / 1_048_576.0)
}
fn ge_mb(b: Option<i64>) -> Option<f64> {
    b.map(|b| round3(b as f64 / 1024.0) / 1024.0)
}

/// Reads every `OP_MEMORY` row, in `rowid` order (the text export's row order), into
/// `events`; names and stream pointers are interned in `strings`.
pub fn read(
    f: &DbFile<'_>,
    strings: &mut StringPool,
    events: &mut MemoryEventTable,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
) -> MemoryStats {
    let mut stats = MemoryStats::default();
    if let Some(what) = f.schema.lacks(TABLE, &REQUIRED) {
        problems.push(f.missing(&what, "the memory events (operator_memory)"));
        return stats;
    }
    stats.present = true;
    let mut q = Select::new(&f.schema, TABLE);
    let name = q.string("name");
    let size = q.col("size");
    let alloc = q.col("allocationTime");
    let rel = q.col("releaseTime");
    let act_rel = q.col("activeReleaseTime");
    let dur = q.col("duration");
    let act_dur = q.col("activeDuration");
    let a = [
        q.col("allocationTotalAllocated"),
        q.col("allocationTotalReserved"),
        q.col("allocationTotalActive"),
    ];
    let r = [
        q.col("releaseTotalAllocated"),
        q.col("releaseTotalReserved"),
        q.col("releaseTotalActive"),
    ];
    let stream = q.col("streamPtr");
    let device = q.col("deviceId");
    let sql = q.sql("ORDER BY t.rowid");
    let mut bad = Vec::new();
    let c = scan(f, TABLE, &sql, problems, tick, &mut |id, row| {
        let (Some(sz), Some(at)) = (int(row, size), int(row, alloc)) else {
            bad.push((id, "no size or allocation time"));
            return;
        };
        let ge = int(row, a[2]).is_none() && int(row, stream).is_none();
        let n = text(row, name);
        let n = if ge { format!("cann::{n}") } else { n };
        let totals = |cols: [usize; 3]| {
            let g = |i: usize| int(row, cols[i]);
            if ge {
                Totals {
                    allocated: ge_mb(g(0)),
                    reserved: ge_mb(g(1)),
                    active: None,
                }
            } else {
                Totals {
                    allocated: mb(g(0)),
                    reserved: mb(g(1)),
                    active: mb(g(2)),
                }
            }
        };
        let size_kb = if ge {
            round3(sz as f64 / 1024.0)
        } else {
            sz as f64 / 1024.0
        };
        let ev = MemoryEvent {
            name: strings.intern(&n),
            size_kb,
            alloc_time_ns: at,
            alloc_time_us: us_f64(at),
            release_time_ns: int(row, rel),
            active_release_time_ns: if ge { None } else { int(row, act_rel) },
            duration_us: int(row, dur).map(us_f64),
            active_duration_us: if ge {
                None
            } else {
                int(row, act_dur).map(us_f64)
            },
            alloc_totals: totals(a),
            release_totals: totals(r),
            stream_ptr: match int(row, stream) {
                Some(s) if !ge => strings.intern(&s.to_string()),
                _ => strings.intern(""),
            },
            device_type: match int(row, device) {
                Some(d) => strings.intern(&format!("NPU:{d}")),
                None => strings.intern(""),
            },
            line: u64::try_from(id).unwrap_or(0).saturating_add(1),
            precision_lost: false,
        };
        if ev.times_in_range().is_err() {
            bad.push((id, "a time outside the representable range"));
            return;
        }
        events.push(ev);
        stats.rows += 1;
    });
    for (id, why) in bad {
        problems.push(f.bad_row(TABLE, id, why));
    }
    stats.stopped = c.is_break();
    stats
}
