//! `TASK` ⋈ `COMPUTE_TASK_INFO` ∪ `COMMUNICATION_OP` → the `kernel_details.csv` rows of a
//! [`KernelTableBuilder`]: names, types, cores, shapes, start, duration, stream, msprof's wait
//! time and the `Step Id` (ascend-db.md §5).

use std::ops::ControlFlow;

use rustc_hash::FxHashMap as HashMap;

use super::schema::{int, text, Select};
use super::{scan, DbFile};
use crate::base::Problems;
use crate::model::kernels::{KernelRow, KernelTableBuilder};

const TASK: &str = "TASK";
const COMPUTE: &str = "COMPUTE_TASK_INFO";
const COMM: &str = "COMMUNICATION_OP";
const DTYPES: &str = "ENUM_HCCL_DATA_TYPE";

/// What [`read`] found.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelStats {
    /// Compute rows kept.
    pub compute: u64,
    /// Communication rows kept.
    pub comm: u64,
    /// Stopped by `tick`.
    pub stopped: bool,
}

struct Row {
    device: i64,
    id: i64,
    k: KernelRow,
}

/// Cores msprof's op summary leaves out (ascend-db.md §5).
fn dropped_core(core: &str, name: &str) -> bool {
    matches!(core, "WRITE_BACK" | "INVALID" | "HCCL_AI_CPU")
        || (core == "COMMUNICATION" && !name.ends_with("AivKernel"))
}

/// One step's device range: `(step id, start, end)`.
type StepRange = (i64, i64, i64);

/// The device range of every `STEP_TIME` step (ascend-db.md §5 `Step Id`), in table order.
fn step_ranges(f: &DbFile<'_>, problems: &mut Problems) -> Vec<StepRange> {
    if f.schema
        .lacks("STEP_TIME", &["id", "startNs", "endNs"])
        .is_some()
    {
        return Vec::new();
    }
    let node =
        f.db.conn()
            .query_row(
                "SELECT id FROM ENUM_API_TYPE WHERE name = 'node'",
                [],
                |r| r.get::<_, i64>(0),
            )
            .unwrap_or(10000);
    let launches = f
        .schema
        .lacks("CANN_API", &["startNs", "endNs", "type", "connectionId"])
        .is_none()
        && f.schema.has(TASK, "connectionId");
    let mut steps: Vec<(i64, i64, i64)> = Vec::new();
    let sql = "SELECT s.rowid, s.id, s.startNs, s.endNs FROM STEP_TIME s ORDER BY s.rowid";
    let _ = scan(
        f,
        "STEP_TIME",
        sql,
        problems,
        &mut || ControlFlow::Continue(()),
        &mut |_, r| {
            if let (Some(id), Some(s), Some(e)) = (int(r, 1), int(r, 2), int(r, 3)) {
                steps.push((id, s, e));
            }
        },
    );
    // The tasks of each node launch, one pass over the launches (not one per step).
    let mut lo: Vec<Option<i64>> = vec![None; steps.len()];
    let mut hi: Vec<Option<i64>> = vec![None; steps.len()];
    if launches && !steps.is_empty() {
        let sql = format!(
            "SELECT a.rowid, a.startNs, a.endNs, min(k.startNs), max(k.endNs) FROM CANN_API a \
             JOIN TASK k ON k.connectionId = a.connectionId WHERE a.type = {node} GROUP BY a.rowid"
        );
        let _ = scan(
            f,
            "CANN_API",
            &sql,
            problems,
            &mut || ControlFlow::Continue(()),
            &mut |_, r| {
                let (Some(a0), Some(a1), Some(k0), Some(k1)) =
                    (int(r, 1), int(r, 2), int(r, 3), int(r, 4))
                else {
                    return;
                };
                for (i, (_, s, e)) in steps.iter().enumerate() {
                    if a0 >= *s && a1 <= *e {
                        lo[i] = Some(lo[i].map_or(k0, |v| v.min(k0)));
                        hi[i] = Some(hi[i].map_or(k1, |v| v.max(k1)));
                    }
                }
            },
        );
    }
    steps
        .iter()
        .enumerate()
        .map(|(i, (id, s, e))| (*id, lo[i].unwrap_or(*s), hi[i].map_or(*e, |m| m.max(*e))))
        .collect()
}

/// PMU ratios by `globalTaskId` from `TASK_PMU_INFO` (Level1 and up): `aic_mac_ratio`,
/// `aic_mte2_ratio`, the two the kernel table keeps (ascend-db.md §5).
fn pmu(f: &DbFile<'_>, problems: &mut Problems) -> HashMap<i64, [Option<f32>; 2]> {
    let mut out: HashMap<i64, [Option<f32>; 2]> = HashMap::default();
    if f.schema
        .lacks("TASK_PMU_INFO", &["globalTaskId", "name", "value"])
        .is_some()
        || !f.schema.has("STRING_IDS", "value")
    {
        return out;
    }
    let sql = "SELECT t.rowid, t.globalTaskId, s.value, t.value FROM TASK_PMU_INFO t \
               JOIN STRING_IDS s ON s.id = t.name \
               WHERE s.value IN ('aic_mac_ratio', 'aic_mte2_ratio')";
    let _ = scan(
        f,
        "TASK_PMU_INFO",
        sql,
        problems,
        &mut || ControlFlow::Continue(()),
        &mut |_, r| {
            let (Some(id), Some(v)) = (int(r, 1), super::schema::real(r, 3)) else {
                return;
            };
            let slot = usize::from(text(r, 2) != "aic_mac_ratio");
            out.entry(id).or_default()[slot] = Some(v as f32);
        },
    );
    out
}

/// The data size of every `COMMUNICATION_OP` row by op name (`count × element bytes` of the
/// `ENUM_HCCL_DATA_TYPE` name of `dataType`, communication.md §2.4.1; the first row of a name
/// kept), the communication analysis' slow-link input; read with the kernel rows when the
/// anomaly runs too ([`read`]'s `sizes`), alone by [`op_sizes`] otherwise.
pub type OpSizes = std::collections::BTreeMap<String, u64>;

/// The columns of an op's size in a `COMMUNICATION_OP` select: `(count, data type name)`.
fn size_cols(f: &DbFile<'_>, q: &mut Select<'_>) -> Option<(usize, usize)> {
    if f.schema.lacks(COMM, &["count", "dataType"]).is_some() || !f.schema.has(DTYPES, "name") {
        return None;
    }
    q.join(&format!("LEFT JOIN {DTYPES} dt ON dt.id = t.dataType"));
    Some((q.col("count"), q.expr("dt.name")))
}

/// Adds row `r`'s size (columns `cols`) under op name `name` to `sizes`.
fn add_size(
    sizes: &mut OpSizes,
    name: &str,
    r: &rusqlite::Row<'_>,
    (count, dtype): (usize, usize),
) {
    if sizes.contains_key(name) {
        return;
    }
    let size = int(r, count).and_then(|c| crate::model::comm::op_data_size(c, &text(r, dtype)));
    if let Some(b) = size {
        sizes.insert(name.to_string(), b);
    }
}

/// [`OpSizes`] of `f` alone (the communication analysis without the anomaly's kernel read);
/// `None` when `COMMUNICATION_OP` or the columns and type table the size needs are missing.
pub fn op_sizes(
    f: &DbFile<'_>,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
) -> ControlFlow<(), Option<OpSizes>> {
    if f.schema.lacks(COMM, &["opName"]).is_some() {
        return ControlFlow::Continue(None);
    }
    let mut q = Select::new(&f.schema, COMM);
    let name = q.string("opName");
    let Some(cols) = size_cols(f, &mut q) else {
        return ControlFlow::Continue(None);
    };
    let mut sizes = OpSizes::new();
    let sql = q.sql("ORDER BY t.startNs, t.rowid");
    scan(f, COMM, &sql, problems, tick, &mut |_, r| {
        add_size(&mut sizes, &text(r, name), r, cols)
    })?;
    ControlFlow::Continue(Some(sizes))
}

/// Reads the kernel rows into `out` (sorted by start per device, waits by msprof's rule,
/// steps by the `STEP_TIME` ranges), and, given `sizes`, the ops' data sizes from the same
/// `COMMUNICATION_OP` scan (left `None` when the columns or type table are missing).
pub fn read(
    f: &DbFile<'_>,
    out: &mut KernelTableBuilder,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
    mut sizes: Option<&mut Option<OpSizes>>,
) -> KernelStats {
    let mut stats = KernelStats::default();
    let mut rows: Vec<Row> = Vec::new();
    let mut bad = Vec::new();
    let task_cols = ["startNs", "endNs", "globalTaskId"];
    match (
        f.schema.lacks(COMPUTE, &["name", "globalTaskId"]),
        f.schema.lacks(TASK, &task_cols),
    ) {
        (Some(w), _) | (None, Some(w)) => {
            problems.push(f.missing(&w, "the compute kernels"));
        }
        (None, None) => {
            let mut q = Select::new(&f.schema, COMPUTE);
            let name = q.string("name");
            let ty = q.string("opType");
            let core = q.string("taskType");
            let shapes = q.string("inputShapes");
            let gid = q.col("globalTaskId");
            let pmu = pmu(f, problems);
            let base = q.expr("k.startNs");
            let end = q.expr("k.endNs");
            let dev = q.expr(if f.schema.has(TASK, "deviceId") {
                "k.deviceId"
            } else {
                "NULL"
            });
            let stream = q.expr(if f.schema.has(TASK, "streamId") {
                "k.streamId"
            } else {
                "NULL"
            });
            q.join("JOIN TASK k ON k.globalTaskId = t.globalTaskId");
            let sql = q.sql("");
            let c = scan(f, COMPUTE, &sql, problems, tick, &mut |id, r| {
                let n = text(r, name);
                let cr = text(r, core);
                if dropped_core(&cr, &n) {
                    return;
                }
                let (Some(s), Some(e)) = (int(r, base), int(r, end)) else {
                    bad.push((COMPUTE, id, "its TASK row has no start or end"));
                    return;
                };
                let Some(d) = e.checked_sub(s).filter(|d| *d >= 0) else {
                    bad.push((COMPUTE, id, "its TASK row ends before it starts"));
                    return;
                };
                rows.push(Row {
                    device: int(r, dev).unwrap_or(0),
                    id,
                    k: KernelRow {
                        name: n,
                        op_type: text(r, ty),
                        core_raw: cr,
                        start_ns: s,
                        dur_ns: d,
                        stream: int(r, stream).map(|v| v.to_string()).unwrap_or_default(),
                        input_shapes: text(r, shapes),
                        pmu_mac_ratio: int(r, gid).and_then(|g| pmu.get(&g)).and_then(|p| p[0]),
                        pmu_mte2_ratio: int(r, gid).and_then(|g| pmu.get(&g)).and_then(|p| p[1]),
                        ..Default::default()
                    },
                });
                stats.compute += 1;
            });
            if c.is_break() {
                stats.stopped = true;
                return stats;
            }
        }
    }
    let default_device = rows.iter().map(|r| r.device).min().unwrap_or(0);
    if let Some(w) = f.schema.lacks(COMM, &["opName", "startNs", "endNs"]) {
        if f.schema.has_table(TASK) {
            problems.push(f.missing(&w, "the communication kernels"));
        }
    } else {
        let mut q = Select::new(&f.schema, COMM);
        let name = q.string("opName");
        let ty = q.string("opType");
        let s_i = q.col("startNs");
        let e_i = q.col("endNs");
        let dev = q.col("deviceId");
        let size_at = sizes.as_ref().and_then(|_| size_cols(f, &mut q));
        if let (Some(out), Some(_)) = (&mut sizes, size_at) {
            **out = Some(OpSizes::new());
        }
        let sql = q.sql("ORDER BY t.startNs, t.rowid");
        let c = scan(f, COMM, &sql, problems, tick, &mut |id, r| {
            if let (Some(Some(v)), Some(cols)) = (sizes.as_deref_mut(), size_at) {
                add_size(v, &text(r, name), r, cols);
            }
            let (Some(s), Some(e)) = (int(r, s_i), int(r, e_i)) else {
                bad.push((COMM, id, "no start or end"));
                return;
            };
            let Some(d) = e.checked_sub(s).filter(|d| *d >= 0) else {
                bad.push((COMM, id, "it ends before it starts"));
                return;
            };
            rows.push(Row {
                device: int(r, dev).unwrap_or(default_device),
                id,
                k: KernelRow {
                    name: text(r, name),
                    op_type: text(r, ty),
                    core_raw: "HCCL".into(),
                    start_ns: s,
                    dur_ns: d,
                    input_shapes: "N/A".into(),
                    ..Default::default()
                },
            });
            stats.comm += 1;
        });
        if c.is_break() {
            stats.stopped = true;
            return stats;
        }
    }
    for (t, id, why) in bad {
        problems.push(f.bad_row(t, id, why));
    }
    // msprof's order and wait rule: per device by start, wait from the previous row.
    crate::base::sort::sort_by_key(&mut rows, |r| (r.device, r.k.start_ns));
    let steps = step_ranges(f, problems);
    let mut prev: HashMap<i64, (i64, i64)> = HashMap::default();
    for (i, r) in rows.iter_mut().enumerate() {
        // The row's line in kernel_details.csv (header = line 1).
        r.k.row = i as u64 + 2;
        if let Some((ps, pd)) = prev.insert(r.device, (r.k.start_ns, r.k.dur_ns)) {
            r.k.wait_ns = (r.k.start_ns - ps - pd).max(0);
        }
        r.k.step_tag = steps
            .iter()
            .find(|(_, lo, hi)| (*lo..=*hi).contains(&r.k.start_ns))
            .map(|s| s.0);
    }
    for r in &rows {
        if out.try_push(&r.k).is_err() {
            let t = if r.k.core_raw == "HCCL" {
                COMM
            } else {
                COMPUTE
            };
            problems.push(f.bad_row(t, r.id, "a time outside the representable range"));
        }
    }
    stats
}
