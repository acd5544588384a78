//! `proflens targets ROOT... --json`: the analysis targets under the roots
//! (`docs/cluster-summary.md` §1), by the inventory of `proflens analyze` (one walk,
//! `MultiOpener::walk`, and `ingest::inventory`): what the cluster driver splits into tasks.

use std::path::{Path, PathBuf};

use super::analyze::MultiOpener;
use crate::engine::contract::Target;
use crate::engine::export::cluster::summary::{inventory_targets, InvTarget};
use crate::ingest::inventory::Inventory;
use crate::ingest::replay::Heads;
use crate::parse::metadata::read_side_files_keeping_heads;
use crate::protocol::cluster::TargetEntry;

/// Arguments of `proflens targets`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Run roots (folders holding rank folders, traces, pickles), or the targets themselves.
    #[arg(required = true)]
    pub roots: Vec<PathBuf>,
    /// Print the JSON array (the only output format; required so a later text form stays free).
    #[arg(long)]
    pub json: bool,
    /// Options of every command (`--strict`).
    #[command(flatten)]
    pub common: super::CommonArgs,
}

/// The walk of `inputs` (relative to the parent of `root` when given, see
/// [`MultiOpener::walk_under`]) and its inventory with the side files read, and the traces'
/// heads the inventory read (for a run through [`crate::ingest::replay::Resume`]).
///
/// Errors: an input unreadable or outside `root` (the message names it).
pub fn walk_inventory(
    inputs: &[PathBuf],
    root: Option<&Path>,
) -> Result<(MultiOpener, Inventory, Heads), String> {
    let parent = match root {
        Some(b) => {
            let b = b
                .canonicalize()
                .map_err(|e| format!("cannot read {}: {e}", b.display()))?;
            Some(b.parent().map(Path::to_path_buf).unwrap_or(b))
        }
        None => None,
    };
    let (opener, files) = MultiOpener::walk_under(inputs, parent.as_deref())?;
    let mut inv = Inventory::from_paths(&files);
    let heads = read_side_files_keeping_heads(&mut inv, &opener);
    Ok((opener, inv, heads))
}

/// The target id (canonical path on disk) and the canonical root of target `t` of `inv`.
pub fn disk_ids(opener: &MultiOpener, inv: &Inventory, t: &InvTarget) -> (String, String) {
    let probe = match t.target {
        Target::Rank(i) => inv.ranks[i as usize].files.first().map(|f| f.path.as_str()),
        Target::Snapshot(i) => Some(inv.snapshots[i as usize].path.as_str()),
        Target::Summary(i) => Some(inv.summaries[i as usize].path.as_str()),
    };
    match probe.and_then(|p| opener.root_of(p)) {
        Some(o) => (
            o.disk_path(&t.path).to_string_lossy().into_owned(),
            o.root().to_string_lossy().into_owned(),
        ),
        None => (t.path.clone(), String::new()),
    }
}

/// Runs the subcommand; returns the exit code.
pub fn run(args: Args) -> i32 {
    if !args.json {
        eprintln!("proflens targets: give --json (the only output format)");
        return super::EXIT_NOTHING;
    }
    let (opener, inv, _) = match walk_inventory(&args.roots, None) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("proflens targets: {e}");
            return super::EXIT_NOTHING;
        }
    };
    let entries: Vec<TargetEntry> = inventory_targets(&inv)
        .iter()
        .map(|t| {
            let (target, root) = disk_ids(&opener, &inv, t);
            TargetEntry {
                paths: vec![target.clone()],
                target,
                kind: t.kind,
                rank_id: t.rank_id,
                role: t.role.clone(),
                bytes: t.bytes,
                root,
            }
        })
        .collect();
    match serde_json::to_string(&entries) {
        Ok(s) => {
            if let Err(e) = super::write_out(std::path::Path::new("-"), &s) {
                eprintln!("proflens targets: {e}");
                return super::EXIT_NOTHING;
            }
        }
        Err(e) => {
            eprintln!("proflens targets: {e}");
            return super::EXIT_NOTHING;
        }
    }
    let mut n = opener.walk_problems;
    for note in &inv.notes {
        let p = note.to_problem();
        if p.severity >= crate::base::Severity::Warning {
            n += 1;
        }
        super::print_problem(&p);
    }
    super::exit_code(!entries.is_empty(), n, args.common.strict)
}
