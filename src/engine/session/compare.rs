//! "Compare with…" inside a worker session (issue 13): side B's files are inventoried and
//! every analysis of B's targets runs from ONE read of each of its files into a store of its
//! own ([`CompareState`]); the diff is then computed from both sides' stored results by the
//! CLI's assembly ([`crate::engine::compare`]), never reading side A again. The documents are
//! rendered once, as `proflens diff A B --json` / `--md` write them (the exports), and laid
//! out for the tab by [`crate::views::compare::view`] (plus the overlaid curves of
//! `--overlay COLUMNS` for snapshots).

use std::ops::ControlFlow;

use super::snapshot::SnapshotStore;
use crate::analysis::anomaly::cross_rank::RankRow;
use crate::analysis::compare::ops::StepChoice;
use crate::analysis::compare::ranks::RankCell;
use crate::base::Problems;
use crate::engine::compare::{
    diff_plan, snapshot_diff, snapshot_side, trace_diff, ElsewhereRank, StoredSide,
};
use crate::engine::contract::no_progress;
use crate::engine::snapshot::{run as run_snapshot, SnapshotRun};
use crate::engine::store::{Plan, Store};
use crate::ingest::inventory::Inventory;
use crate::ingest::Opener;
use crate::protocol::compare::{
    CompareExportKind, CompareRequest, CompareViewDto, RankElsewhereDto,
};
use crate::report::snapshot_diff::render_md as snapshot_md;
use crate::report::snapshot_links::{LinkOptions, LinkStyle};
use crate::report::snapshot_overlay::{add_overlays, OverlayOptions};
use crate::report::trace_diff::render_md as trace_md;

/// Rows per table in the Markdown, as `proflens diff`'s default `--top`.
pub const MD_TOP: usize = 20;

/// Side B and the comparison computed from it.
pub struct CompareState {
    /// Side B's inventory.
    pub inv: Inventory,
    /// Side B's rank results (traces, rank folders, runs).
    pub store: Store,
    /// Side B's snapshot run (snapshots).
    pub snapshot: Option<SnapshotRun>,
    /// `proflens diff A B --json` (pretty JSON, as the CLI writes it).
    pub json: String,
    /// `proflens diff A B --md`.
    pub md: String,
    /// `a_name` and `b_name` as asked (for file names).
    pub names: (String, String),
}

impl CompareState {
    /// The export `what`: file name, MIME type, bytes.
    pub fn export(&self, what: CompareExportKind) -> (String, &'static str, &[u8]) {
        let stem = format!(
            "diff_{}_vs_{}",
            file_stem(&self.names.0),
            file_stem(&self.names.1)
        );
        match what {
            CompareExportKind::Json => (
                format!("{stem}.json"),
                "application/json",
                self.json.as_bytes(),
            ),
            CompareExportKind::Md => (format!("{stem}.md"), "text/markdown", self.md.as_bytes()),
        }
    }
}

/// A name safe in a file name: the last path component, other characters than
/// `[A-Za-z0-9._-]` as `_`.
fn file_stem(name: &str) -> String {
    let last = name.rsplit('/').find(|s| !s.is_empty()).unwrap_or("input");
    last.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// What side A offers the comparison: the session's inventory, rank store and snapshots.
pub struct SideA<'a> {
    /// A's inventory.
    pub inv: &'a Inventory,
    /// A's rank results held here.
    pub store: &'a Store,
    /// A's snapshot results held here.
    pub snapshots: &'a SnapshotStore,
}

/// Reads side B (one read of each of its files through `opener`) and compares it with side
/// A's stored results. `problems` receives B's problems.
///
/// # Errors
///
/// In words: the sides are not the same kind of input, side A's results are not held here,
/// B has nothing to analyse, or B failed to decode.
pub fn compare(
    a: &SideA<'_>,
    req: &CompareRequest,
    opener: &dyn Opener,
    problems: &mut Problems,
) -> Result<(CompareState, CompareViewDto), String> {
    let inv = super::inventory_of(&req.files, opener);
    let a_snap = !a.inv.snapshots.is_empty() && a.inv.ranks.is_empty();
    let b_snap = !inv.snapshots.is_empty() && inv.ranks.is_empty();
    match (a_snap, b_snap) {
        (true, true) => compare_snapshots(a, req, inv, opener, problems),
        (false, false) => compare_runs(a, req, inv, opener, problems),
        _ => Err(format!(
            "{} and {} are not the same kind of input: compare two snapshot files, or two \
             traces, rank folders or runs",
            req.a_name, req.b_name
        )),
    }
}

fn compare_snapshots(
    a: &SideA<'_>,
    req: &CompareRequest,
    inv: Inventory,
    opener: &dyn Opener,
    problems: &mut Problems,
) -> Result<(CompareState, CompareViewDto), String> {
    let view = a.snapshots.files.get(&req.a_snapshot).ok_or_else(|| {
        format!(
            "snapshot {} of side A has not been analysed by this worker",
            req.a_snapshot
        )
    })?;
    let (ra, opts, settings) = (view.run(), view.options(), view.settings());
    if inv.snapshots.len() != 1 {
        return Err(format!(
            "{} holds {} snapshot files: compare with one snapshot file",
            req.b_name,
            inv.snapshots.len()
        ));
    }
    let rb = run_snapshot(opener, &inv.snapshots[0], opts, &mut |_| {
        ControlFlow::Continue(())
    })
    .map_err(|e| e.to_string())?;
    problems.extend(rb.problems.clone());
    let curve: &'static str = match settings.curve.as_str() {
        "allocated" => "allocated",
        "reserved" => "reserved",
        _ => "active",
    };
    let mut j = snapshot_diff(ra, &rb, (None, None), curve, &opts.report);
    let json = pretty(&j)?;
    let md = snapshot_md(&j, MD_TOP);
    let overlay = OverlayOptions {
        columns: (req.overlay_columns as usize).clamp(1, 8192),
        time_axis: false,
        align: None,
        range: None,
    };
    add_overlays(
        &mut j,
        &snapshot_side(ra, None),
        &snapshot_side(&rb, None),
        &overlay,
    )?;
    let doc = serde_json::to_value(&j).map_err(|e| format!("JSON encoding failed: {e}"))?;
    let dto = crate::views::compare::view(&doc, &req.a_name, &req.b_name, dto_problems(problems));
    let state = CompareState {
        inv,
        store: Store::new(Plan::defaults()),
        snapshot: Some(rb),
        json,
        md,
        names: (req.a_name.clone(), req.b_name.clone()),
    };
    Ok((state, dto))
}

fn compare_runs(
    a: &SideA<'_>,
    req: &CompareRequest,
    inv: Inventory,
    opener: &dyn Opener,
    problems: &mut Problems,
) -> Result<(CompareState, CompareViewDto), String> {
    // Every rank folder of A that the page analysed must be held here: the rank table covers
    // them all, as the CLI's does.
    let elsewhere: Vec<ElsewhereRank> = req
        .a_elsewhere
        .iter()
        .filter(|e| a.store.anomaly(e.target).is_none())
        .map(elsewhere_rank)
        .collect();
    let missing: Vec<u32> = (0..a.inv.ranks.len() as u32)
        .filter(|&i| crate::engine::anomaly::usable(&a.inv.ranks[i as usize]))
        .filter(|&i| a.store.anomaly(i).is_none() && !elsewhere.iter().any(|e| e.target == i))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "side A's rank folders {missing:?} are neither analysed here nor described by the \
             request (still running, or failed): the rank table needs every rank of A"
        ));
    }
    if !inv.ranks.iter().any(crate::engine::anomaly::usable) {
        return Err(format!(
            "{}: no GPU trace and no rank folder with kernel_details.csv, op_summary*.csv or \
             trace_view.json (compare two snapshot files, two traces, two rank folders or two \
             runs)",
            req.b_name
        ));
    }
    // The plan of `proflens diff` on side B.
    let mut store = Store::new(diff_plan(&inv));
    store.run_inventory(&inv, opener, &mut no_progress);
    for (_, _, _, p) in store.outcomes() {
        problems.extend(p.clone());
    }
    // `proflens diff`'s defaults: `--link-style vscode`, no project root.
    let links = LinkOptions {
        style: LinkStyle::Vscode,
        ..LinkOptions::default()
    };
    let sa = StoredSide {
        path: &req.a_name,
        inv: a.inv,
        store: a.store,
        elsewhere: &elsewhere,
    };
    let sb = StoredSide {
        path: &req.b_name,
        inv: &inv,
        store: &store,
        elsewhere: &[],
    };
    let j = trace_diff(&sa, &sb, StepChoice::Nth(0), None, &links)?;
    let json = pretty(&j)?;
    let md = trace_md(&j, MD_TOP);
    let doc = serde_json::to_value(&j).map_err(|e| format!("JSON encoding failed: {e}"))?;
    let dto = crate::views::compare::view(&doc, &req.a_name, &req.b_name, dto_problems(problems));
    let state = CompareState {
        inv,
        store,
        snapshot: None,
        json,
        md,
        names: (req.a_name.clone(), req.b_name.clone()),
    };
    Ok((state, dto))
}

/// A rank of A held by another worker, from the figures the request carries (the §13.4 row
/// fields the rank table reads; `robust_z` and `slow` compare ranks of one run and are unset,
/// as [`crate::analysis::compare::ranks::cell`] leaves them).
fn elsewhere_rank(e: &RankElsewhereDto) -> ElsewhereRank {
    ElsewhereRank {
        target: e.target,
        rank_id: e.rank_id,
        cell: RankCell {
            row: RankRow {
                rank_id: e.rank_id.unwrap_or(-1),
                steps: e.steps as usize,
                service_ms_avg: e.service_ms_avg,
                busy_union_ms_avg: e.busy_union_ms_avg,
                underfeed_ratio_avg: e.underfeed_ratio_avg,
                comm_total_ms: e.comm_total_ms,
                comm_wait_ratio_weighted: e.comm_wait_ratio_weighted,
                bubble_count_avg: e.bubble_count_avg,
                dominant_idle_pattern: "",
                robust_z: 0.0,
                slow: false,
            },
            peak_allocated_mb: e.peak_allocated_mb,
        },
    }
}

/// The document as `proflens diff --json` writes it.
fn pretty<T: serde::Serialize>(j: &T) -> Result<String, String> {
    serde_json::to_string_pretty(j).map_err(|e| format!("JSON encoding failed: {e}"))
}

fn dto_problems(p: &Problems) -> crate::protocol::ProblemsDto {
    super::dto::problems(p)
}
