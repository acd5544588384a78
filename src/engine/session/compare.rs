//! "Compare with…" inside a worker session: side B's files are inventoried and
//! every analysis of B's targets runs from ONE read of each of its files into a store of its
//! own ([`CompareState`]); the diff is then computed from both sides' stored results by the
//! CLI's assembly ([`crate::engine::export::compare`]), never reading side A again. The documents are
//! rendered once, as `proflens diff A B --json` / `--md` write them (the exports), and laid
//! out for the tab by [`crate::views::compare::view`] (plus the overlaid curves of
//! `--overlay COLUMNS` for snapshots).

use std::ops::ControlFlow;

use super::snapshot::SnapshotViews;
use super::snapshot_view::ViewState;
use crate::analysis::anomaly::cross_rank::RankRow;
use crate::analysis::compare::ops::StepChoice;
use crate::analysis::compare::ranks::RankCell;
use crate::analysis::snapshot::device::annotation_spans;
use crate::analysis::snapshot::links::{LinkOptions, LinkStyle};
use crate::base::Problems;
use crate::engine::contract::no_progress;
use crate::engine::export::compare::{
    diff_plan, snapshot_diff, snapshot_side, trace_diff, ElsewhereRank, StoredSide,
};
use crate::engine::read::snapshot::SnapshotOptions;
use crate::engine::read::snapshot::{run as run_snapshot, SnapshotRun};
use crate::engine::read::Plan;
use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::ingest::Opener;
use crate::protocol::compare::{
    CompareChoicesDto, CompareExportKind, CompareOptions, CompareRequest, CompareStep,
    CompareViewDto, RankElsewhereDto,
};
use crate::protocol::snapshot::SnapshotSettingsDto;
use crate::protocol::ProblemsDto;
use crate::report::snapshot_diff::render_md as snapshot_md;
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
    /// Side B's snapshot run (snapshots; `None` when B is A's own file, [`Self::b_is_a`]).
    pub snapshot: Option<SnapshotRun>,
    /// Side B is side A's snapshot file (two devices of one file).
    pub b_is_a: bool,
    /// The snapshot settings B was analysed with (A's, when compared).
    pub b_settings: Option<SnapshotSettingsDto>,
    /// `proflens diff A B --json` (pretty JSON, as the CLI writes it).
    pub json: String,
    /// `proflens diff A B --md`.
    pub md: String,
    /// `a_name` and `b_name` as asked (for file names).
    pub names: (String, String),
    /// What the comparison was asked with (side A's snapshot, overlay columns, A's ranks
    /// elsewhere), kept to compute it again with other options.
    pub request: CompareRequest,
    /// Problems found while reading side B.
    pub b_problems: ProblemsDto,
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
    /// The snapshot tab's state of A's snapshots (their runs are in `store`).
    pub snapshots: &'a SnapshotViews,
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
    let a_snap = !a.inv.snapshots.is_empty() && a.inv.ranks.is_empty();
    let mut request = req.clone();
    request.files = Vec::new();
    if req.b_is_a {
        if !a_snap {
            return Err("two devices of one file: side A is not a snapshot file".into());
        }
        let settings = a_view(a, req)?.1.settings().clone();
        let mut state = CompareState {
            inv: Inventory::default(),
            store: Store::new(Plan::defaults()),
            snapshot: None,
            b_is_a: true,
            b_settings: Some(settings),
            json: String::new(),
            md: String::new(),
            names: (req.a_name.clone(), req.b_name.clone()),
            request,
            b_problems: dto_problems(problems),
        };
        let dto = recompute(a, &mut state, &req.options)?;
        return Ok((state, dto));
    }
    let (inv, heads) = super::inventory::inventory_of(&req.files, opener);
    let resume = crate::ingest::replay::Resume::new(&heads, opener);
    let opener: &dyn Opener = &resume;
    let b_snap = !inv.snapshots.is_empty() && inv.ranks.is_empty();
    let mut state = match (a_snap, b_snap) {
        (true, true) => read_snapshot(a, req, inv, opener, problems)?,
        (false, false) => read_runs(a, req, inv, opener, problems)?,
        _ => {
            return Err(format!(
                "{} and {} are not the same kind of input: compare two snapshot files, or two \
                 traces, rank folders or runs",
                req.a_name, req.b_name
            ))
        }
    };
    state.request = request;
    state.b_problems = dto_problems(problems);
    let dto = recompute(a, &mut state, &req.options)?;
    Ok((state, dto))
}

/// Computes the comparison held in `state` again with `options` (the Compare tab's controls,
/// [`crate::protocol::Request::CompareAgain`]) from side A's and side B's stored results —
/// nothing is read — and keeps its documents (the exports) in `state`; on `Err`, `state` is
/// unchanged.
///
/// # Errors
///
/// In words, as `proflens diff` with the same flags: a side without the device or rank, a
/// side without `time_us` on the time axis or without an entry inside the annotation, A's
/// snapshot settings changed since B was analysed.
pub fn recompute(
    a: &SideA<'_>,
    state: &mut CompareState,
    options: &CompareOptions,
) -> Result<CompareViewDto, String> {
    let req = &state.request;
    let (json, md, doc, choices) = if let Some(settings) = &state.b_settings {
        let (ra, view) = a_view(a, req)?;
        if view.settings() != settings {
            return Err(format!(
                "the settings of {} changed since it was compared: compare with {} again",
                req.a_name, req.b_name
            ));
        }
        let rb = match &state.snapshot {
            Some(rb) => rb,
            None if state.b_is_a => ra,
            None => return Err("side B's snapshot is not held here".into()),
        };
        snapshot_documents(ra, rb, view.options(), settings, req, options)?
    } else {
        run_documents(a, state, options)?
    };
    let mut dto =
        crate::views::compare::view(&doc, &req.a_name, &req.b_name, state.b_problems.clone());
    dto.options = options.clone();
    dto.choices = choices;
    state.json = json;
    state.md = md;
    Ok(dto)
}

/// Side A's snapshot view asked by `req`.
fn a_view<'a>(
    a: &SideA<'a>,
    req: &CompareRequest,
) -> Result<(&'a SnapshotRun, &'a ViewState), String> {
    a.snapshots.get(a.store, req.a_snapshot).ok_or_else(|| {
        format!(
            "snapshot {} of side A has not been analysed by this worker",
            req.a_snapshot
        )
    })
}

/// Reads side B's one snapshot file with A's snapshot settings.
fn read_snapshot(
    a: &SideA<'_>,
    req: &CompareRequest,
    inv: Inventory,
    opener: &dyn Opener,
    problems: &mut Problems,
) -> Result<CompareState, String> {
    let (_, view) = a_view(a, req)?;
    if inv.snapshots.len() != 1 {
        return Err(format!(
            "{} holds {} snapshot files: compare with one snapshot file",
            req.b_name,
            inv.snapshots.len()
        ));
    }
    let rb = run_snapshot(opener, &inv.snapshots[0], view.options(), &mut |_| {
        ControlFlow::Continue(())
    })
    .map_err(|e| e.to_string())?;
    problems.extend(rb.problems.clone());
    Ok(CompareState {
        inv,
        store: Store::new(Plan::defaults()),
        snapshot: Some(rb),
        b_is_a: false,
        b_settings: Some(view.settings().clone()),
        json: String::new(),
        md: String::new(),
        names: (req.a_name.clone(), req.b_name.clone()),
        request: req.clone(),
        b_problems: ProblemsDto::default(),
    })
}

/// The documents of two snapshot runs with `options`, as `proflens diff A B --a-device …
/// --b-device …` writes them (JSON, Markdown), the document with the overlay of `--overlay
/// COLUMNS --overlay-axis … --align …` (for the view), and the controls' choices.
fn snapshot_documents(
    ra: &SnapshotRun,
    rb: &SnapshotRun,
    opts: &SnapshotOptions,
    settings: &SnapshotSettingsDto,
    req: &CompareRequest,
    options: &CompareOptions,
) -> Result<(String, String, serde_json::Value, CompareChoicesDto), String> {
    if options.step != CompareStep::First || options.rank.is_some() {
        return Err(
            "a step or a rank applies to traces, rank folders and runs, not to snapshot files"
                .into(),
        );
    }
    for (dev, r, name) in [(options.a_device, ra, "A"), (options.b_device, rb, "B")] {
        if let Some(d) = dev.filter(|d| !r.devices.iter().any(|x| x.device == *d)) {
            let have: Vec<String> = r.devices.iter().map(|x| x.device.to_string()).collect();
            return Err(format!(
                "side {name} has no device {d} (devices: {})",
                if have.is_empty() {
                    "none".into()
                } else {
                    have.join(", ")
                }
            ));
        }
    }
    let curve: &'static str = match settings.curve.as_str() {
        "allocated" => "allocated",
        "reserved" => "reserved",
        _ => "active",
    };
    let devices = (options.a_device, options.b_device);
    // The page knows each side by its dropped path only.
    let paths = (ra.file.path.as_str(), rb.file.path.as_str());
    let mut j = snapshot_diff(ra, rb, paths, devices, curve, &opts.report);
    let json = pretty(&j)?;
    let md = snapshot_md(&j, MD_TOP);
    let overlay = OverlayOptions {
        columns: (req.overlay_columns as usize).clamp(1, 8192),
        time_axis: options.time_axis,
        align: options.align.clone(),
        range: None,
    };
    let (sa, sb) = (
        snapshot_side(ra, options.a_device),
        snapshot_side(rb, options.b_device),
    );
    add_overlays(&mut j, &sa, &sb, &overlay)?;
    let doc = value_of(&pretty(&j)?)?;
    let names = |r: &SnapshotRun, dev: Option<u32>| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for d in r
            .devices
            .iter()
            .filter(|d| dev.is_none_or(|x| x == d.device))
        {
            for (n, _, _) in annotation_spans(&r.snapshot, d.device) {
                let n = r.snapshot.pools.strings.get(n);
                if !v.iter().any(|x| x == n) {
                    v.push(n.to_string());
                }
            }
        }
        v
    };
    let in_b = names(rb, options.b_device);
    let choices = CompareChoicesDto {
        a_devices: ra.devices.iter().map(|d| d.device).collect(),
        b_devices: rb.devices.iter().map(|d| d.device).collect(),
        annotations: names(ra, options.a_device)
            .into_iter()
            .filter(|n| in_b.contains(n))
            .collect(),
        b_is_a: std::ptr::eq(ra, rb),
        ranks: Vec::new(),
        steps: 0,
    };
    Ok((json, md, doc, choices))
}

/// Reads side B's traces, rank folders or run into a store of its own (the plan of
/// `proflens diff`).
fn read_runs(
    a: &SideA<'_>,
    req: &CompareRequest,
    inv: Inventory,
    opener: &dyn Opener,
    problems: &mut Problems,
) -> Result<CompareState, String> {
    elsewhere_of(a, req)?;
    if !inv.ranks.iter().any(crate::engine::read::anomaly::usable) {
        return Err(format!(
            "{}: no GPU trace and no rank folder with kernel_details.csv, op_summary*.csv or \
             trace_view.json (compare two snapshot files, two traces, two rank folders or two \
             runs)",
            req.b_name
        ));
    }
    let mut store = Store::new(diff_plan(&inv));
    store.run_inventory(&inv, opener, &mut no_progress);
    for (_, _, _, p) in store.outcomes() {
        problems.extend(p.clone());
    }
    Ok(CompareState {
        inv,
        store,
        snapshot: None,
        b_is_a: false,
        b_settings: None,
        json: String::new(),
        md: String::new(),
        names: (req.a_name.clone(), req.b_name.clone()),
        request: req.clone(),
        b_problems: ProblemsDto::default(),
    })
}

/// Side A's ranks held by other workers; `Err` when some analysed rank of A is neither held
/// here nor described (the rank table covers them all, as the CLI's does).
fn elsewhere_of(a: &SideA<'_>, req: &CompareRequest) -> Result<Vec<ElsewhereRank>, String> {
    let elsewhere: Vec<ElsewhereRank> = req
        .a_elsewhere
        .iter()
        .filter(|e| a.store.anomaly(e.target).is_none())
        .map(elsewhere_rank)
        .collect();
    let missing: Vec<u32> = (0..a.inv.ranks.len() as u32)
        .filter(|&i| crate::engine::read::anomaly::usable(&a.inv.ranks[i as usize]))
        .filter(|&i| a.store.anomaly(i).is_none() && !elsewhere.iter().any(|e| e.target == i))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "side A's rank folders {missing:?} are neither analysed here nor described by the \
             request (still running, or failed): the rank table needs every rank of A"
        ));
    }
    Ok(elsewhere)
}

/// The documents of two stored runs with `options`, as `proflens diff A B --step … /
/// --all-steps --rank …` writes them, and the controls' choices.
fn run_documents(
    a: &SideA<'_>,
    state: &CompareState,
    options: &CompareOptions,
) -> Result<(String, String, serde_json::Value, CompareChoicesDto), String> {
    let req = &state.request;
    if options.a_device.is_some()
        || options.b_device.is_some()
        || options.time_axis
        || options.align.is_some()
    {
        return Err(format!(
            "devices, the time axis and the alignment apply to snapshot files; {} and {} are \
             traces, rank folders or runs",
            req.a_name, req.b_name
        ));
    }
    let choice = match options.step {
        CompareStep::First => StepChoice::Nth(0),
        CompareStep::Nth(0) => return Err("steps count from 1 (1 = the first step)".into()),
        CompareStep::Nth(n) => StepChoice::Nth(n as usize - 1),
        CompareStep::All => StepChoice::All,
    };
    let elsewhere = elsewhere_of(a, req)?;
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
        inv: &state.inv,
        store: &state.store,
        elsewhere: &[],
    };
    let j = trace_diff(&sa, &sb, choice, options.rank, &links)?;
    let json = pretty(&j)?;
    let md = trace_md(&j, MD_TOP);
    let choices = CompareChoicesDto {
        ranks: j
            .a
            .ranks
            .iter()
            .flatten()
            .filter(|r| j.b.ranks.contains(&Some(**r)))
            .copied()
            .collect(),
        steps: j.steps.len() as u32,
        ..CompareChoicesDto::default()
    };
    let doc = value_of(&json)?;
    Ok((json, md, doc, choices))
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
                robust_z: None,
                slow: false,
                group: None,
            },
            peak_allocated_mb: e.peak_allocated_mb,
        },
    }
}

/// The document as `proflens diff --json` writes it.
fn pretty<T: serde::Serialize>(j: &T) -> Result<String, String> {
    serde_json::to_string_pretty(j).map_err(|e| format!("JSON encoding failed: {e}"))
}

/// The document's tree for the view, read back from its text: the same `Value` as
/// `serde_json::to_value` (floats round-trip exactly: `float_roundtrip`), without a second
/// serialiser of every document type in the wasm (the one `Value` reader is shared).
fn value_of(json: &str) -> Result<serde_json::Value, String> {
    serde_json::from_slice(json.as_bytes()).map_err(|e| format!("JSON encoding failed: {e}"))
}

fn dto_problems(p: &Problems) -> crate::protocol::ProblemsDto {
    super::dto::problems(p)
}

#[cfg(test)]
mod tests {
    use super::{pretty, value_of};

    #[test]
    fn the_value_read_back_is_to_value_s() {
        #[derive(serde::Serialize)]
        struct Doc {
            floats: Vec<f64>,
            ints: (i64, u64, i32),
            text: &'static str,
            none: Option<u8>,
            nested: Vec<(String, f64)>,
        }
        let d = Doc {
            floats: vec![
                0.1,
                1e-7,
                -0.0,
                1.0,
                f64::NAN,
                1.7976931348623157e308,
                5e-324,
                2.0 / 3.0,
            ],
            ints: (-5, u64::MAX, 7),
            text: "a \"quoted\" \u{1F600}\n",
            none: None,
            nested: vec![("x".into(), 123456.789)],
        };
        let want = serde_json::to_value(&d).unwrap();
        assert_eq!(value_of(&pretty(&d).unwrap()).unwrap(), want);
    }
}
