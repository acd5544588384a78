//! `proflens diff A B` on two GPU traces (Kineto `*.json[.gz]`), two Ascend rank folders or two
//! run folders (traces and steps): each side is inventoried and analysed
//! once through the engine's store (the run of `proflens analyze`: one read per file), then
//! [`crate::engine::export::compare::trace_diff`] compares the stored results (the same assembly as
//! the page's Compare tab) and [`crate::report::trace_diff`] writes them.

use std::path::Path;

use super::analyze::{print_outcomes, run_store};
use super::diff::Args;
use super::fs_opener::FsOpener;
use crate::analysis::compare::ops::StepChoice;
use crate::analysis::snapshot::links::{LinkOptions, LinkStyle};
use crate::engine::export::compare::{diff_plan, trace_diff, StoredSide};
use crate::engine::store::Store;
use crate::ingest::inventory::Inventory;
use crate::parse::metadata::read_side_files_keeping_heads;
use crate::report::trace_diff::render_md;

/// One side: its inventory and analysed store.
pub struct RunSide {
    /// The path as given.
    pub path: String,
    /// What was found under it.
    pub inv: Inventory,
    /// The analyses' results.
    pub store: Store,
}

/// True when `path` is one snapshot pickle (the snapshot diff's input).
pub fn is_snapshot(path: &Path) -> bool {
    FsOpener::walk(path).is_ok_and(|(_, files)| {
        let inv = Inventory::from_paths(&files);
        path.is_file() && inv.snapshots.len() == 1 && inv.ranks.is_empty()
    })
}

/// Inventories and analyses one side (steps and bubbles, and memory events when a rank has
/// `operator_memory.csv`); prints its problems. `Err` is the message for stderr.
pub fn load(path: &Path, problems: &mut u64) -> Result<RunSide, String> {
    let (opener, files) =
        FsOpener::walk(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    *problems += super::print_walk_problems(&opener);
    let mut inv = Inventory::from_paths(&files);
    let heads = read_side_files_keeping_heads(&mut inv, &opener);
    if !inv.ranks.iter().any(crate::engine::read::anomaly::usable) {
        return Err(format!(
            "{}: no GPU trace and no rank folder with kernel_details.csv, op_summary*.csv or \
             trace_view.json (diff compares two snapshot files, two traces, two rank folders or \
             two runs)",
            path.display()
        ));
    }
    let resume = crate::ingest::replay::Resume::new(&heads, &opener);
    let store = run_store(&inv, &resume, diff_plan(&inv), None, false);
    *problems += print_outcomes(&store).1;
    Ok(RunSide {
        path: path.display().to_string(),
        inv,
        store,
    })
}

fn stored(s: &RunSide) -> StoredSide<'_> {
    StoredSide {
        path: &s.path,
        inv: &s.inv,
        store: &s.store,
        elsewhere: &[],
    }
}

/// Runs the trace/rank/run diff; returns the exit code.
pub fn run(args: &Args) -> i32 {
    let fail = |e: String| {
        eprintln!("proflens diff: {e}");
        super::EXIT_NOTHING
    };
    let choice = match (args.all_steps, args.step) {
        (true, Some(_)) => return fail("--step and --all-steps exclude each other".into()),
        (true, None) => StepChoice::All,
        (false, Some(0)) => return fail("--step counts from 1 (1 = the first step)".into()),
        (false, Some(n)) => StepChoice::Nth(n - 1),
        (false, None) => StepChoice::Nth(0),
    };
    let mut problems = 0;
    let sides = super::diff::Sides::of(&args.a, &args.b);
    sides.heading(true);
    let a = match load(&args.a, &mut problems) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    let b_own;
    let b = if sides.same_file {
        &a
    } else {
        sides.heading(false);
        b_own = match load(&args.b, &mut problems) {
            Ok(s) => s,
            Err(e) => return fail(e),
        };
        &b_own
    };
    let Some(style) = LinkStyle::parse(&args.link_style) else {
        return fail(format!(
            "--link-style: expected vscode, cursor, github, file or none, got {:?}",
            args.link_style
        ));
    };
    let links = LinkOptions {
        style,
        project_root: args.project_root.clone(),
        ..LinkOptions::default()
    };
    let j = match trace_diff(&stored(&a), &stored(b), choice, args.rank, &links) {
        Ok(j) => j,
        Err(e) => return fail(e),
    };
    if let Err(e) = super::diff::write_documents(args, &j, |j| render_md(j, args.top)) {
        return fail(e);
    }
    if let Some(table) = args.table {
        use crate::report::diff_tables as t;
        let wrote = match table {
            super::diff::DiffTable::Steps => {
                super::diff::write_table(args, t::STEP_COLUMNS, t::step_lines(&j))
            }
            _ => super::diff::write_table(args, t::OPS_COLUMNS, t::ops_lines(&j)),
        };
        if let Err(e) = wrote {
            return fail(e);
        }
    }
    let count = |c: &str| j.ops.iter().filter(|o| o.change == c).count();
    eprintln!(
        "ops ({}): {} names, {} changed, {} new, {} gone; steps: {} pairs matched by {}",
        j.ops_rule,
        j.ops.len(),
        count("changed"),
        count("new"),
        count("gone"),
        j.steps.len(),
        j.steps_matched_by
    );
    for p in &j.memory {
        eprintln!(
            "memory {}: peak allocated {} → {} MiB",
            p.component,
            p.a.as_ref()
                .map_or("–".into(), |x| format!("{:.2}", x.peak_allocated_mb)),
            p.b.as_ref()
                .map_or("–".into(), |x| format!("{:.2}", x.peak_allocated_mb)),
        );
    }
    if j.ranks.len() > 1 {
        // A rank id as the line prints it.
        let id = |r: Option<i64>| r.map_or("unknown".to_string(), |x| x.to_string());
        let most: Vec<String> = j
            .ranks_changed_most
            .iter()
            .take(3)
            .map(|&r| id(r))
            .collect();
        if most.is_empty() {
            // Ranks are paired by id: two folders of different ranks share none.
            let side = |on: fn(&crate::report::run_diff::RankDiffJson) -> bool| {
                let v: Vec<String> = j
                    .ranks
                    .iter()
                    .filter(|r| on(r))
                    .map(|r| id(r.rank))
                    .collect();
                v.join(", ")
            };
            eprintln!(
                "ranks: {} (no rank id on both sides, so the rank table pairs none: A has {}, B has {}; the ops, steps and memory above compare A's rank {} with B's rank {})",
                j.ranks.len(),
                side(|r| r.a.is_some()),
                side(|r| r.b.is_some()),
                id(j.a.rank),
                id(j.b.rank),
            );
        } else {
            eprintln!(
                "ranks: {} (changed most: {})",
                j.ranks.len(),
                most.join(", ")
            );
        }
    }
    for n in &j.notes {
        eprintln!("{n}");
    }
    if args.json.is_none() && args.md.is_none() && args.table.is_none() {
        eprintln!("(write the full comparison with --json FILE and/or --md FILE)");
    }
    super::exit_code(true, problems, args.common.strict)
}
