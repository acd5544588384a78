//! The memory analysis inside a [`super::Session`]: a rank folder's stored result
//! ([`crate::engine::store::Store::memory`], from the session's one read of the rank) turned
//! into [`MemoryRows`] for the view queries and a [`MemorySummaryDto`]; exports written from
//! the store ([`Store::write`]), exactly as the CLI writes them.

use std::io::{self, Write};
use std::sync::Arc;

use crate::analysis::memory_match::MatchQuality;
use crate::analysis::memory_pool::{pool_series, row_components, Component};
use crate::analysis::memory_result::{MemoryRun, RankMemory, RankStatus};
use crate::analysis::memory_summary::{summarize_with, RankSummary};
use crate::base::units::ns_to_ms;
use crate::engine::export::Export;
use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::protocol::{GroupDto, MatchCountsDto, MemoryExportKind, MemorySummaryDto, PoolDto};
use crate::report::memory_rows::Columns;
use crate::views::memory::{MemoryRows, RowIn};

fn quality_index(q: MatchQuality) -> u8 {
    MatchQuality::ALL.iter().position(|x| *x == q).unwrap_or(4) as u8
}

/// The memory view of stored rank folder `index` ([`crate::engine::store::Store::memory`]):
/// its rows for the queries and its summary for the UI, or why the rank has none (failed,
/// cancelled).
///
/// # Errors
///
/// The rank's failure or cancellation, in words.
pub fn rank_view(
    index: u32,
    r: &Arc<RankMemory>,
) -> Result<(MemoryRows, MemorySummaryDto), String> {
    match &r.status {
        RankStatus::Failed(why) => Err(why.clone()),
        RankStatus::Cancelled => Err("cancelled".into()),
        RankStatus::Analysed => {
            // §9.5–9.6 once per allocator pool, in the analysis: the card's summary and the
            // chart's series and peaks come from the same samples.
            let pools = pool_series(r);
            let s = summarize_with(r, &pools);
            let summary = summary_dto(index, r, &s);
            let mut rows = MemoryRows::new(index);
            rows.set_series(&pools);
            drop((pools, s));
            let comp = row_components(r);
            // Rows in export order (§9.0 for one rank: stable by start_time_ms); the rank is
            // shared with the store, not copied.
            let run = MemoryRun::merge_shared(vec![Arc::clone(r)]);
            for row in run.rows() {
                push_row(&mut rows, &row, comp[row.index()]);
            }
            Ok((rows, summary))
        }
    }
}

fn push_row(
    rows: &mut MemoryRows,
    row: &crate::analysis::memory_result::RowRef<'_>,
    component: Component,
) {
    let rank = row.rank();
    let i = row.index();
    let stack_key = row.stack().map(|s| s.index() as u32);
    let frames: Vec<&str> = match row.stack() {
        Some(s) if !rows.knows_stack(s.index() as u32) => rank.stacks().frames(s).collect(),
        _ => Vec::new(),
    };
    let origin = row.stack_origin();
    rows.push(&RowIn {
        name: row.name(),
        size_kb: row.size_kb(),
        start_time_ms: row.start_time_ms(),
        duration_ms: row.duration_ms(),
        alloc_ns: rank.events().alloc_time_ns()[i],
        release_ns: row.release_time_ns(),
        total_allocated_mb: row.total_allocated_mb(),
        total_reserved_mb: row.total_reserved_mb(),
        total_active_mb: row.total_active_mb(),
        frames,
        stack_key,
        call_stack_top: row.call_stack_top(),
        user_frame: row.user_frame().0,
        match_quality: quality_index(row.match_quality()),
        stack_origin: &origin,
        source_line: row.source_line(),
        component,
    });
}

fn groups(g: &[crate::analysis::memory_peak::Group<String>]) -> Vec<GroupDto> {
    g.iter()
        .map(|g| GroupDto {
            key: g.key.clone(),
            count: g.count,
            size_kb: g.kb,
        })
        .collect()
}

fn summary_dto(index: u32, r: &RankMemory, s: &RankSummary) -> MemorySummaryDto {
    let q = s.quality_counts;
    let peak = s.allocator_peak();
    let ev = r.events();
    let t_range_ms = (!ev.alloc_time_us().is_empty()).then(|| {
        let first = ev
            .alloc_time_us()
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let mut last = ev
            .alloc_time_us()
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
            / 1000.0;
        for i in 0..ev.len() {
            if let Some(t) = ev.release_time_ns(i) {
                last = last.max(ns_to_ms(t));
            }
        }
        (first / 1000.0, last)
    });
    let t0 = t_range_ms.map(|t| t.0).unwrap_or(0.0);
    MemorySummaryDto {
        rank: index,
        role: r.info.role.clone(),
        rank_id: r.info.rank_id,
        rows: s.rows,
        alloc_count: s.alloc_rows,
        free_count: s.free_rows,
        alloc_kb: s.alloc_kb,
        free_kb: s.free_kb,
        matches: MatchCountsDto {
            exact: q[0],
            enclosing: q[1],
            nearest_before: q[2],
            via_forward: q[3],
            none: q[4],
        },
        peak_allocated_mb: peak.map(|p| p.peak.peak_allocated_mb),
        peak_time_ms: peak.map(|p| ns_to_ms(p.peak.peak_time_ns)),
        reserved_at_peak_mb: peak.and_then(|p| p.peak.reserved_at_peak_mb),
        live_at_peak_rows: peak.map(|p| p.peak.live_rows.len() as u64).unwrap_or(0),
        live_at_peak_kb: peak.map(|p| p.peak.live_kb).unwrap_or(0.0),
        live_at_peak_by_user_frame: peak
            .map(|p| groups(&p.live_by_user_frame))
            .unwrap_or_default(),
        live_at_peak_by_name: peak.map(|p| groups(&p.live_by_name)).unwrap_or_default(),
        pools: s
            .pools
            .iter()
            .map(|p| {
                let k = p.peak.as_ref().map(|k| &k.peak);
                PoolDto {
                    pool: p.component.as_str().into(),
                    label: p.component.label().into(),
                    rule: p.component.rule().into(),
                    rows: p.rows,
                    peak_allocated_mb: k.map(|k| k.peak_allocated_mb),
                    peak_time_ms: k.map(|k| ns_to_ms(k.peak_time_ns)),
                    reserved_at_peak_mb: k.and_then(|k| k.reserved_at_peak_mb),
                    live_at_peak_rows: k.map_or(0, |k| k.live_rows.len() as u64),
                    live_at_peak_kb: k.map_or(0.0, |k| k.live_kb),
                }
            })
            .collect(),
        peak_live_mb: s.naive_peak_mb,
        peak_live_time_ms: (s.naive_points > 0).then_some(t0 + s.naive_peak_rel_ms),
        unreleased_rows: s.unreleased_rows,
        t_range_ms,
        no_stacks: s.rows > 0 && q[4] == s.rows,
    }
}

/// Writes memory export `what` of the ranks held in `store` (the caller makes sure it holds
/// every rank folder of the drop) exactly as `proflens memory --format csv|json|md` writes
/// it; no file is read. Returns `(file name, MIME type)`.
///
/// # Errors
///
/// Those of `w`; the memory analysis was not planned.
pub fn export(
    what: MemoryExportKind,
    inv: &Inventory,
    store: &Store,
    w: &mut dyn Write,
) -> io::Result<(String, String)> {
    let export = match what {
        MemoryExportKind::MemoryCsv => Export::MemoryCsv(Columns::Full),
        MemoryExportKind::MemoryJson => Export::MemoryJson(Columns::Full),
        MemoryExportKind::MemorySummaryMd => Export::MemoryMd,
    };
    let (name, mime) = crate::engine::export::gather::memory::file_of(what);
    crate::engine::export::write(store, inv, export, w)?;
    Ok((name.to_string(), mime.to_string()))
}
