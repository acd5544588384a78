//! Anomaly exports gathered over workers (`proflens anomaly --out`, the steps and bubbles
//! CSVs, `--report-dir`): a rank's JSON element needs its position among the analysed ranks
//! (the rank id's fallback) and, for a GPU rank, its row of the straggler view over every GPU
//! rank; a rank's report needs the cross-rank table (anomaly.md §13.4) of every rank. So
//! round 0 sends each rank's inputs to those ([`facts`]: its `cross_rank::row_of` row and GPU
//! collectives), round 1 renders each held rank's piece with the [`Context`] every worker
//! builds from all round-0 parts ([`pieces`]), and the join wraps the pieces in inventory
//! order exactly as `engine::export::anomaly::write_json` and `report::anomaly_csv` do.

use std::io::{self, Write};

use crate::analysis::anomaly::cross_rank::{flag_slow_by_role, row_of, RankRow};
use crate::analysis::anomaly::groups::IdlePattern;
use crate::analysis::comm::rank_view::{cross_rank, CrossRankComm};
use crate::analysis::gpu_straggler::{collectives, stragglers_by_role, RoleStragglers};
use crate::base::wire::{Dec, DecResult, Enc};
use crate::engine::export::anomaly::{config, export_stem};
use crate::engine::export::anomaly::{json_element, reports_with, write_json_elements};
use crate::engine::export::gpu_report::{gpu_block, straggler_row};
use crate::engine::read::RankAnalysis;
use crate::engine::store::{split_index, view_order, Store};
use crate::ingest::inventory::Inventory;
use crate::model::side_tables::CommOp;
use crate::protocol::anomaly::AnomalyExportKind;
use crate::report::anomaly_csv::{
    write_header, write_rank_bubbles, write_rank_steps, CsvRank, BUBBLE_COLUMNS, STEP_COLUMNS,
};

pub(crate) const FACTS: &[u8] = b"PLANFACTS3\n";
pub(crate) const PIECES: &[u8] = b"PLANPIECES1\n";

const PATTERNS: [IdlePattern; 6] = [
    IdlePattern::Prelaunch,
    IdlePattern::InternalBubble,
    IdlePattern::Tail,
    IdlePattern::InterStep,
    IdlePattern::Mixed,
    IdlePattern::None,
];

/// Round 0: per anomaly rank `store` holds, its inventory index, rank id, §13.4 row inputs
/// (`cross_rank::row_of`, id filled in by the [`Context`]) and, for a GPU rank, its
/// communication kernels (`gpu_straggler::collectives`).
///
/// # Errors
///
/// A held rank was cancelled.
pub fn facts(store: &Store) -> Result<Vec<u8>, String> {
    let held = store.anomaly_indexed();
    let mut e = Enc::new(FACTS);
    e.u64(held.len() as u64);
    for (index, r) in held {
        let r = r.map_err(|_| "the anomaly analysis was cancelled".to_string())?;
        e.u32(index);
        e.opt_i64(r.meta.rank_id);
        e.str(r.meta.role.as_deref().unwrap_or(""));
        let row = row_of(0, &r.result);
        e.u64(row.steps as u64);
        for x in [
            row.service_ms_avg,
            row.busy_union_ms_avg,
            row.underfeed_ratio_avg,
            row.comm_total_ms,
        ] {
            e.f64(x);
        }
        e.opt_f64(row.comm_wait_ratio_weighted);
        e.f64(row.bubble_count_avg);
        e.str(row.dominant_idle_pattern);
        match r.gpu.as_deref() {
            None => e.bool(false),
            Some(t) => {
                e.bool(true);
                let c = collectives(t);
                e.u64(c.len() as u64);
                for (start, name) in c {
                    e.i64(start);
                    e.str(name);
                }
            }
        }
        // The communication ops' times, for the reports' cross-rank communication rows.
        e.u64(r.comm_ops.len() as u64);
        for o in &r.comm_ops {
            e.str(&o.group_name);
            e.str(&o.collective_name);
            e.i64(o.start_ns);
            e.f64(o.elapse_ms);
            e.opt_i64(o.data_size.and_then(|v| i64::try_from(v).ok()));
        }
    }
    Ok(e.buf)
}

/// One rank's round-0 facts.
struct Fact {
    index: u32,
    rank_id: Option<i64>,
    role: String,
    row: RankRow,
    collectives: Option<Vec<(i64, String)>>,
    comm_ops: Vec<CommOp>,
}

fn decode_facts(buf: &[u8], out: &mut Vec<Fact>) -> DecResult<()> {
    let mut d = Dec::new(buf, FACTS)?;
    let n = d.count(60)?;
    for _ in 0..n {
        let index = d.u32()?;
        let rank_id = d.opt_i64()?;
        let role = d.str()?.to_string();
        let steps = d.u64()? as usize;
        let (service, busy, underfeed, comm) = (d.f64()?, d.f64()?, d.f64()?, d.f64()?);
        let wait = d.opt_f64()?;
        let bubbles = d.f64()?;
        let name = d.str()?;
        let pattern = PATTERNS
            .iter()
            .map(|p| p.as_str())
            .find(|p| *p == name)
            .ok_or_else(|| format!("unknown idle pattern {name:?}"))?;
        let collectives = if d.bool()? {
            let c = d.count(16)?;
            let mut v = Vec::with_capacity(c);
            for _ in 0..c {
                v.push((d.i64()?, d.str()?.to_string()));
            }
            Some(v)
        } else {
            None
        };
        let c = d.count(24)?;
        let mut comm_ops = Vec::with_capacity(c);
        for _ in 0..c {
            comm_ops.push(CommOp {
                group_name: d.str()?.to_string(),
                collective_name: d.str()?.to_string(),
                start_ns: d.i64()?,
                elapse_ms: d.f64()?,
                data_size: d.opt_i64()?.and_then(|v| u64::try_from(v).ok()),
                ..CommOp::default()
            });
        }
        out.push(Fact {
            index,
            rank_id,
            role,
            row: RankRow {
                rank_id: 0,
                steps,
                service_ms_avg: service,
                busy_union_ms_avg: busy,
                underfeed_ratio_avg: underfeed,
                comm_total_ms: comm,
                comm_wait_ratio_weighted: wait,
                bubble_count_avg: bubbles,
                dominant_idle_pattern: pattern,
                robust_z: None,
                slow: false,
                group: None,
            },
            collectives,
            comm_ops,
        });
    }
    if !d.at_end() {
        return Err("bytes after the last rank of an anomaly facts part".into());
    }
    Ok(())
}

/// What every rank's piece needs to know of the other ranks: built from every worker's
/// round-0 parts, the same on every worker.
pub struct Context {
    /// Inventory index of each analysed rank, in inventory order (position = place here).
    pub order: Vec<u32>,
    /// The cross-rank table (§13.4) in that order, slow ranks flagged (within each role
    /// when the ranks hold several: `cross_rank::flag_slow_by_role`).
    pub cross: Vec<RankRow>,
    /// The straggler views over the GPU ranks (one per role when several), `at` indexed by
    /// position (`engine::export::gpu_report::straggler_views`' shape).
    pub views: RoleStragglers,
    /// The cross-rank communication rules over every rank's ops (`anomaly::comm_cross`).
    pub comm: Option<CrossRankComm>,
}

impl Context {
    /// The context of every worker's round-0 `parts` ([`facts`]).
    ///
    /// # Errors
    ///
    /// An unreadable part, or a rank in two parts.
    pub fn of(parts: &[Vec<u8>]) -> Result<Context, String> {
        let mut all = Vec::new();
        for p in parts {
            decode_facts(p, &mut all)?;
        }
        // Inventory order, a split trace's other ranks right after its first (as
        // `Store::anomaly_ranks` lists them).
        crate::base::sort::sort_by_key(&mut all, |f| view_order(f.index));
        if let Some(p) = all.windows(2).find(|p| p[0].index == p[1].index) {
            return Err(format!(
                "rank folder {} is in two anomaly parts",
                p[0].index
            ));
        }
        // The rank id falls back to the position (`engine::store::cross_rows`, `gpu_blocks`).
        let id = |pos: usize, f: &Fact| f.rank_id.unwrap_or(pos as i64);
        let mut cross: Vec<RankRow> = all
            .iter()
            .enumerate()
            .map(|(pos, f)| RankRow {
                rank_id: id(pos, f),
                ..f.row.clone()
            })
            .collect();
        let roles: Vec<&str> = all.iter().map(|f| f.role.as_str()).collect();
        flag_slow_by_role(&mut cross, &roles, &config());
        let mut gpu_pos = Vec::new();
        let (mut ids, mut gpu_roles, mut colls) = (Vec::new(), Vec::new(), Vec::new());
        for (pos, f) in all.iter().enumerate() {
            if let Some(c) = &f.collectives {
                gpu_pos.push(pos);
                ids.push(id(pos, f));
                gpu_roles.push(f.role.as_str());
                colls.push(c.iter().map(|(t, n)| (*t, n.as_str())).collect::<Vec<_>>());
            }
        }
        let grouped = stragglers_by_role(&ids, &gpu_roles, &colls);
        let mut at = vec![None; all.len()];
        for (k, &pos) in gpu_pos.iter().enumerate() {
            at[pos] = grouped.at[k];
        }
        let with: Vec<(i64, &[CommOp])> = all
            .iter()
            .enumerate()
            .map(|(pos, f)| (id(pos, f), f.comm_ops.as_slice()))
            .collect();
        let comm = cross_rank(&with);
        Ok(Context {
            comm,
            order: all.iter().map(|f| f.index).collect(),
            cross,
            views: RoleStragglers {
                views: grouped.views,
                at,
            },
        })
    }
}

fn kind_tag(what: AnomalyExportKind) -> u8 {
    match what {
        AnomalyExportKind::Json => 0,
        AnomalyExportKind::StepsCsv => 1,
        AnomalyExportKind::BubblesCsv => 2,
        AnomalyExportKind::ReportMd => 3,
        AnomalyExportKind::ArchitectureMd => 4,
        AnomalyExportKind::KernelsCsv => 5,
    }
}

fn csv_rank(r: &RankAnalysis) -> CsvRank<'_> {
    CsvRank {
        rank_id: r.meta.rank_id,
        rank_dir: &r.meta.rank_dir,
        result: &r.result,
        kernels: &r.kernels,
    }
}

/// Round 1: per anomaly rank `store` holds, its piece of export `what` (`rank`: the rank of
/// the per-rank reports, whose piece alone is written), rendered with the [`Context`] of
/// every worker's round-0 `inputs`.
///
/// # Errors
///
/// Unreadable inputs, a held rank missing from them or cancelled.
pub fn pieces(
    what: AnomalyExportKind,
    rank: Option<u32>,
    inputs: &[Vec<u8>],
    inv: &Inventory,
    store: &Store,
) -> Result<Vec<u8>, String> {
    let ctx = Context::of(inputs)?;
    let cfg = config();
    let mut out: Vec<(u32, String, Vec<u8>)> = Vec::new();
    for (index, r) in store.anomaly_indexed() {
        let r = r.map_err(|_| "the anomaly analysis was cancelled".to_string())?;
        let pos = ctx
            .order
            .iter()
            .position(|&i| i == index)
            .ok_or_else(|| format!("rank folder {index} is missing from the round-0 parts"))?;
        let mut body = Vec::new();
        let mut name = String::new();
        let io = |e: io::Error| e.to_string();
        match what {
            AnomalyExportKind::Json => {
                body = json_element(r, gpu_block(r, straggler_row(&ctx.views, pos)), &cfg)
                    .map_err(io)?;
            }
            AnomalyExportKind::StepsCsv => write_rank_steps(&csv_rank(r), &mut body).map_err(io)?,
            AnomalyExportKind::BubblesCsv => {
                write_rank_bubbles(&csv_rank(r), &mut body).map_err(io)?
            }
            AnomalyExportKind::KernelsCsv => {
                if rank != Some(index) {
                    continue;
                }
                (name, body) = crate::engine::export::anomaly::kernel_csv_of(
                    inv,
                    r,
                    pos,
                    ctx.order.len(),
                    &ctx.cross,
                )
                .ok_or_else(|| format!("rank folder {index} is not a GPU rank: no kernel table"))?;
            }
            AnomalyExportKind::ReportMd | AnomalyExportKind::ArchitectureMd => {
                if rank != Some(index) {
                    continue;
                }
                let gpu = crate::engine::export::gpu_report::report_input(r, &ctx.views, pos);
                let (a_name, md, m_name, arch) = reports_with(
                    inv,
                    r,
                    (pos, ctx.order.len()),
                    &ctx.cross,
                    gpu.as_ref(),
                    ctx.comm.as_ref(),
                    &cfg,
                );
                (name, body) = if what == AnomalyExportKind::ReportMd {
                    (a_name, md.into_bytes())
                } else {
                    (m_name, arch.into_bytes())
                };
            }
        }
        out.push((index, name, body));
    }
    let mut e = Enc::new(PIECES);
    e.u8(kind_tag(what));
    e.u64(out.len() as u64);
    for (index, name, body) in out {
        e.u32(index);
        e.str(&name);
        e.bytes(&body);
    }
    Ok(e.buf)
}

/// Joins every worker's round-1 parts into anomaly export `what`, byte for byte what the
/// single-worker export (and `proflens anomaly`) writes. Returns `(file name, MIME type)`.
///
/// # Errors
///
/// Unreadable parts, a rank in two parts, a report whose rank has no piece, and those of `w`.
pub fn join(
    what: AnomalyExportKind,
    rank: Option<u32>,
    parts: &[Vec<u8>],
    inv: &Inventory,
    w: &mut dyn Write,
) -> io::Result<(String, String)> {
    let mut all: Vec<(u32, &str, &[u8])> = Vec::new();
    for p in parts {
        decode_pieces(what, p, &mut all).map_err(crate::base::wire::invalid_data)?;
    }
    crate::base::sort::sort_by_key(&mut all, |p| view_order(p.0));
    if let Some(p) = all.windows(2).find(|p| p[0].0 == p[1].0) {
        return Err(crate::base::wire::invalid_data(format!(
            "rank folder {} is in two anomaly parts",
            p[0].0
        )));
    }
    let stem = export_stem(inv);
    let bodies = || all.iter().map(|p| p.2);
    let named = match what {
        AnomalyExportKind::Json => {
            write_json_elements(w, bodies())?;
            (format!("anomaly_{stem}.json"), "application/json")
        }
        AnomalyExportKind::StepsCsv | AnomalyExportKind::BubblesCsv => {
            let steps = what == AnomalyExportKind::StepsCsv;
            write_header(if steps { STEP_COLUMNS } else { BUBBLE_COLUMNS }, w)?;
            for b in bodies() {
                w.write_all(b)?;
            }
            let name = if steps { "steps" } else { "bubbles" };
            (format!("anomaly_{name}_{stem}.csv"), "text/csv")
        }
        AnomalyExportKind::ReportMd
        | AnomalyExportKind::ArchitectureMd
        | AnomalyExportKind::KernelsCsv => {
            // A rank of a split merged trace names its folder (`store::split_index`).
            let dir = rank
                .and_then(|i| inv.ranks.get(split_index(i).0 as usize))
                .map(|f| f.dir.clone())
                .ok_or_else(|| io::Error::other("no rank folder chosen for the report"))?;
            let (_, name, body) = all
                .iter()
                .find(|p| Some(p.0) == rank)
                .ok_or_else(|| io::Error::other(format!("{dir}: no anomaly analysis")))?;
            w.write_all(body)?;
            let mime = if what == AnomalyExportKind::KernelsCsv {
                "text/csv"
            } else {
                "text/markdown"
            };
            (name.to_string(), mime)
        }
    };
    w.flush()?;
    Ok((named.0, named.1.to_string()))
}

fn decode_pieces<'a>(
    what: AnomalyExportKind,
    buf: &'a [u8],
    out: &mut Vec<(u32, &'a str, &'a [u8])>,
) -> DecResult<()> {
    let mut d = Dec::new(buf, PIECES)?;
    if d.u8()? != kind_tag(what) {
        return Err("a part of another anomaly export".into());
    }
    let n = d.count(20)?;
    for _ in 0..n {
        let index = d.u32()?;
        let name = d.str()?;
        out.push((index, name, d.bytes()?));
    }
    if !d.at_end() {
        return Err("bytes after the last rank of an anomaly part".into());
    }
    Ok(())
}
