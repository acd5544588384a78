//! `analysis.db`'s communication tables → the same [`RankComm`] tables the text readers fill
//! (communication.md §1.5, docs/rules/communication.md "The DB export"):
//! * `CommAnalyzerTime`: one [`CommTimeRow`] per row (the ratios, which the DB does not hold,
//!   computed as the JSON writes them: `round(x / (x + transit), 4)`, 0 on a zero divisor);
//! * `CommAnalyzerBandwidth`: one row per (op, transport, packet size) → one [`CommBandRow`] per
//!   (op, transport) (size, time, bandwidth and large-packet ratio of its first row, one
//!   [`PacketBin`] per row with a packet, keyed by Python's `repr` of the size as the JSON key
//!   is), and the transports the JSON lists with zeros (`RDMA`, `HCCS`, `PCIE`, `SDMA`, `SIO`)
//!   added with zeros where the DB has no row, in the JSON's order;
//! * `CommAnalyzerMatrix`: one [`CommLinkRow`] per row.
//!
//! Rows are taken in table order (the order torch_npu wrote the JSON in). A missing table is
//! "no data" with an `ASC-DB-002` problem (information when both are missing: a capture
//! without communication data); a row whose op is not in `CommAnalyzerTime` is left
//! out with an `ASC-DB-004` problem.

use std::ops::ControlFlow;

use rustc_hash::FxHashMap as HashMap;

use super::schema::{real, text, Select};
use super::{round_to, scan, DbFile};
use crate::base::pyfloat::py_repr;
use crate::base::Problems;
use crate::model::comm::{CommBandRow, CommLinkRow, CommTimeRow, PacketBin, RankComm, Section};
use crate::model::side_tables::CommOp;

const TIME: &str = "CommAnalyzerTime";
const BAND: &str = "CommAnalyzerBandwidth";
const MATRIX: &str = "CommAnalyzerMatrix";

/// The transports torch_npu's `communication.json` lists for every op, zeros included, in its
/// order (communication.md §1.2).
pub const JSON_TRANSPORTS: [&str; 5] = ["RDMA", "HCCS", "PCIE", "SDMA", "SIO"];

/// True when `f` holds a communication table this reader uses.
pub fn has_comm(f: &DbFile<'_>) -> bool {
    f.schema.has_table(TIME) || f.schema.has_table(MATRIX)
}

fn ratio(x: f64, transit: f64) -> f64 {
    if (x + transit).abs() < 1e-15 {
        0.0
    } else {
        round_to(x / (x + transit), 4)
    }
}

/// Reads the three tables into `out` (appending; `has_time` / `has_matrix` set when the
/// table was there). `tick` is the scans' progress and cancellation: `Break` when cancelled.
pub fn read(
    f: &DbFile<'_>,
    out: &mut RankComm,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
) -> ControlFlow<()> {
    if !has_comm(f) {
        // A capture without the communication analysis (level 0): one note, not two warnings.
        problems.push(crate::base::Problem::new(
            crate::base::Severity::Info,
            super::codes::MISSING,
            crate::base::Position::file(f.path.as_str()),
            format!(
                "no communication tables ({TIME}, {MATRIX}): this rank has no communication data"
            ),
        ));
        return ControlFlow::Continue(());
    }
    // (op, group, step, type) → index into out.ops.
    let mut index: HashMap<(String, String, String, String), u32> = HashMap::default();
    match f
        .schema
        .lacks(TIME, &["hccl_op_name", "group_name", "step", "type"])
    {
        Some(what) => problems.push(f.missing(&what, "the communication time summary")),
        None => {
            let mut q = Select::new(&f.schema, TIME);
            let c = [
                q.col("hccl_op_name"),
                q.col("group_name"),
                q.col("step"),
                q.col("type"),
                q.col("start_timestamp"),
                q.col("elapse_time"),
                q.col("transit_time"),
                q.col("wait_time"),
                q.col("synchronization_time"),
                q.col("idle_time"),
            ];
            let sql = q.sql("ORDER BY t.rowid");
            scan(f, TIME, &sql, problems, tick, &mut |_, r| {
                let g = |i: usize| real(r, c[i]).unwrap_or(0.0);
                let key = (text(r, c[0]), text(r, c[1]), text(r, c[2]), text(r, c[3]));
                let transit = g(6);
                let row = CommTimeRow {
                    step: key.2.clone(),
                    section: Section::of_key(&key.3),
                    op: key.0.clone(),
                    group: key.1.clone(),
                    start_us: real(r, c[4]),
                    elapse_ms: g(5),
                    transit_ms: transit,
                    wait_ms: g(7),
                    sync_ms: g(8),
                    idle_ms: g(9),
                    wait_ratio: ratio(g(7), transit),
                    sync_ratio: ratio(g(8), transit),
                };
                index.entry(key).or_insert(out.ops.len() as u32);
                out.ops.push(row);
            })?;
            out.has_time = true;
        }
    }
    if out.has_time {
        read_bands(f, out, &index, problems, tick)?;
    }
    match f.schema.lacks(
        MATRIX,
        &["hccl_op_name", "group_name", "src_rank", "dst_rank"],
    ) {
        Some(what) => problems.push(f.missing(&what, "the communication matrix")),
        None => {
            let mut q = Select::new(&f.schema, MATRIX);
            let c = [
                q.col("hccl_op_name"),
                q.col("group_name"),
                q.col("step"),
                q.col("type"),
                q.col("src_rank"),
                q.col("dst_rank"),
                q.col("transport_type"),
                q.col("transit_size"),
                q.col("transit_time"),
                q.col("bandwidth"),
                q.col("op_name"),
            ];
            let sql = q.sql("ORDER BY t.rowid");
            scan(f, MATRIX, &sql, problems, tick, &mut |_, r| {
                let g = |i: usize| real(r, c[i]).unwrap_or(0.0);
                out.links.push(CommLinkRow {
                    step: text(r, c[2]),
                    section: Section::of_key(&text(r, c[3])),
                    kind: text(r, c[0]),
                    group: text(r, c[1]),
                    src: text(r, c[4]),
                    dst: text(r, c[5]),
                    transport: text(r, c[6]),
                    size_mb: g(7),
                    time_ms: g(8),
                    bandwidth_gbps: g(9),
                    op_name: text(r, c[10]),
                });
            })?;
            out.has_matrix = true;
        }
    }
    ControlFlow::Continue(())
}

fn read_bands(
    f: &DbFile<'_>,
    out: &mut RankComm,
    index: &HashMap<(String, String, String, String), u32>,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
) -> ControlFlow<()> {
    let need = [
        "hccl_op_name",
        "group_name",
        "step",
        "type",
        "transport_type",
    ];
    if let Some(what) = f.schema.lacks(BAND, &need) {
        problems.push(f.missing(&what, "the communication bandwidth summary"));
        return ControlFlow::Continue(());
    }
    let mut q = Select::new(&f.schema, BAND);
    let c = [
        q.col("hccl_op_name"),
        q.col("group_name"),
        q.col("step"),
        q.col("type"),
        q.col("transport_type"),
        q.col("transit_size"),
        q.col("transit_time"),
        q.col("bandwidth"),
        q.col("large_packet_ratio"),
        q.col("package_size"),
        q.col("count"),
        q.col("total_duration"),
    ];
    let sql = q.sql("ORDER BY t.rowid");
    // Per op: its transports in row order.
    let mut per_op: Vec<Vec<CommBandRow>> = vec![Vec::new(); out.ops.len()];
    let mut orphans = 0u64;
    let mut first_orphan = None;
    scan(f, BAND, &sql, problems, tick, &mut |id, r| {
        let key = (text(r, c[0]), text(r, c[1]), text(r, c[2]), text(r, c[3]));
        let Some(&op) = index.get(&key) else {
            orphans += 1;
            first_orphan.get_or_insert(id);
            return;
        };
        let g = |i: usize| real(r, c[i]).unwrap_or(0.0);
        let transport = text(r, c[4]);
        let v = &mut per_op[op as usize];
        let at = match v.iter().position(|b| b.transport == transport) {
            Some(p) => p,
            None => {
                v.push(CommBandRow {
                    op,
                    transport,
                    size_mb: g(5),
                    time_ms: g(6),
                    bandwidth_gbps: g(7),
                    large_packet_ratio: g(8),
                    bins: Vec::new(),
                });
                v.len() - 1
            }
        };
        let (size, count) = (g(9), g(10));
        if size != 0.0 || count != 0.0 {
            v[at].bins.push(PacketBin {
                size_key: py_repr(size),
                count,
                time_ms: g(11),
            });
        }
    })?;
    if let Some(id) = first_orphan {
        problems.push(f.bad_row(
            BAND,
            id,
            &format!("{orphans} row(s) name an op that CommAnalyzerTime does not hold"),
        ));
    }
    for (op, mut v) in per_op.into_iter().enumerate() {
        for t in JSON_TRANSPORTS {
            if !v.iter().any(|b| b.transport == t) {
                v.push(CommBandRow {
                    op: op as u32,
                    transport: t.to_string(),
                    ..Default::default()
                });
            }
        }
        let rank = |t: &str| JSON_TRANSPORTS.iter().position(|x| *x == t).unwrap_or(5);
        crate::base::sort::sort_by_key(&mut v, |b| rank(&b.transport));
        out.bands.extend(v);
    }
    ControlFlow::Continue(())
}

/// The anomaly analysis' view of `analysis.db`'s communication (the ops `communication.json`
/// gives it, [`crate::parse::communication::ops_of`] over the same tables [`read`] fills);
/// `None` when there is no `CommAnalyzerTime` table. The read's problems go to `problems`
/// only when that table was read.
pub fn ops(
    f: &DbFile<'_>,
    problems: &mut Problems,
    tick: &mut dyn FnMut() -> ControlFlow<()>,
) -> ControlFlow<(), Option<Vec<CommOp>>> {
    let mut rc = RankComm::default();
    let mut found = Problems::new();
    read(f, &mut rc, &mut found, tick)?;
    if !rc.has_time {
        return ControlFlow::Continue(None);
    }
    problems.extend(found);
    ControlFlow::Continue(Some(crate::parse::communication::ops_of(&rc)))
}
