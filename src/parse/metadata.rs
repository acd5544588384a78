//! `profiler_info_<N>.json` and `profiler_metadata.json` (formats.md §7.1–7.2):
//! the inventory's step 2. Reads each rank's small side files through an
//! [`Opener`] and records rank-id field, profiler level, export type,
//! capabilities, versions and the metadata `role` in the inventory.
//!
//! Decisions (ascend-memory.md §3.3): a side file that cannot be read or parsed
//! is a warning (`MEM-META-001`) for that rank; the rank keeps its name-based
//! facts. Files larger than [`MAX_SIDE_FILE`] are not read.

use std::io::Read;

use serde_json::Value;

use crate::base::Severity;
use crate::ingest::inventory::{FileKind, Inventory, SideInfo};
use crate::ingest::replay::{Heads, Recording, SideBundle};
use crate::ingest::Opener;

/// Largest side file read (bytes): real ones are a few KiB.
pub const MAX_SIDE_FILE: u64 = 16 << 20;

/// Step 2 of the inventory: reads every rank's `profiler_info*.json` (the lexicographically
/// first one directly in the folder) and `profiler_metadata.json`, and the head of every
/// Kineto trace (`parse::kineto::sniff`: is it a trace, `distributedInfo.rank`, devices),
/// then re-finalizes the inventory (rank-id cross-check `MEM-DISC-005`, metadata roles,
/// GPU ranks, readiness; JSON files that are not traces move to the ignored list).
///
/// Never fails: unreadable files become `MEM-META-001` warnings on their rank.
pub fn read_side_files(inv: &mut Inventory, opener: &dyn Opener) {
    for i in 0..inv.ranks.len() {
        let mut side = SideInfo {
            read: true,
            ..Default::default()
        };
        let info = inv.ranks[i]
            .files_of(FileKind::ProfilerInfo)
            .find(|f| !f.rel.contains('/'))
            .or_else(|| inv.ranks[i].file(FileKind::ProfilerInfo))
            .cloned();
        if let Some(f) = inv.ranks[i].file(FileKind::KinetoTrace).cloned() {
            side.kineto = Some(match opener.open_head(&f.path) {
                Ok(src) => crate::parse::kineto::sniff(src, &f.rel, Some(f.size)),
                Err(e) => crate::ingest::kineto::KinetoHead {
                    is_trace: crate::ingest::kineto::is_trace_name(&f.rel),
                    not_trace_reason: Some(format!("cannot be opened: {e}")),
                    ..Default::default()
                },
            });
        }
        if let Some(f) = info {
            match read_json(opener, &f.path, f.size) {
                Ok(v) => apply_info(&v, &mut side),
                Err(e) => inv.add_rank_note(i, Severity::Warning, "MEM-META-001", &f.path, e),
            }
        }
        if let Some(f) = inv.ranks[i].file(FileKind::ProfilerMetadata).cloned() {
            match read_json(opener, &f.path, f.size) {
                Ok(v) => apply_metadata(&v, &mut side),
                Err(e) => inv.add_rank_note(
                    i,
                    Severity::Warning,
                    "MEM-META-001",
                    &f.path,
                    format!("{e}; the role falls back to the folder name"),
                ),
            }
        }
        inv.set_side_info(i, side);
    }
    inv.drop_non_traces();
}

/// [`read_side_files`], keeping the bytes it read of each Kineto trace's head for the run
/// ([`Heads`]; run through [`crate::ingest::replay::Resume`] over the same opener, a trace's
/// bytes are read once per drop). The other side files are small and read here only.
pub fn read_side_files_keeping_heads(inv: &mut Inventory, opener: &dyn Opener) -> Heads {
    let rec = Recording::new(opener);
    read_side_files(inv, &rec);
    heads_of_traces(rec.bundle(), inv)
}

/// The heads of `inv`'s Kineto traces, cluster summary files and JSON snapshots among the
/// bytes of `bundle` (what step 2 read; the runs of those targets read the same files from
/// their start). A snapshot pickle has no head: step 2 never opens one.
pub fn heads_of_traces(bundle: SideBundle, inv: &Inventory) -> Heads {
    let traces: rustc_hash::FxHashSet<&str> = inv
        .ranks
        .iter()
        .filter_map(|r| r.file(FileKind::KinetoTrace))
        .map(|f| f.path.as_str())
        .chain(inv.summaries.iter().map(|f| f.path.as_str()))
        .chain(inv.snapshots.iter().map(|f| f.path.as_str()))
        .collect();
    Heads::of(bundle, |p| traces.contains(p))
}

fn read_json(opener: &dyn Opener, path: &str, size: u64) -> Result<Value, String> {
    if size > MAX_SIDE_FILE {
        return Err(format!("{path}: {size} bytes, larger than the {MAX_SIDE_FILE}-byte limit for side files; not read"));
    }
    let mut bytes = Vec::new();
    opener
        .open(path)
        .and_then(|r| r.take(MAX_SIDE_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("{path}: cannot read: {e}"))?;
    if bytes.is_empty() {
        return Err(format!("File is empty: {path}"));
    }
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    serde_json::from_slice::<Value>(text)
        .map_err(|e| format!("Failed to parse JSON file {path}: {e}"))
}

/// `rank_id` as int or string of digits (formats.md §7.1).
fn rank_field(v: &Value) -> Option<i64> {
    match v.get("rank_id")? {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => {
            let t = s.trim();
            if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
                t.parse().ok()
            } else {
                None
            }
        }
        _ => None,
    }
}

fn string_at(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    match cur {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn bool_at(v: &Value, path: &[&str]) -> Option<bool> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    cur.as_bool()
}

fn apply_info(v: &Value, side: &mut SideInfo) {
    side.info_rank_field = rank_field(v);
    side.profiler_level = string_at(v, &["config", "experimental_config", "_profiler_level"]);
    side.export_type = match v.pointer("/config/experimental_config/_export_type") {
        Some(Value::String(s)) => vec![s.to_ascii_lowercase()],
        Some(Value::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_ascii_lowercase))
            .collect(),
        _ => Vec::new(),
    };
    side.with_stack = bool_at(v, &["config", "common_config", "with_stack"]);
    side.profile_memory = bool_at(v, &["config", "common_config", "profile_memory"]);
    side.record_shapes = bool_at(v, &["config", "common_config", "record_shapes"]);
    side.with_flops = bool_at(v, &["config", "common_config", "with_flops"]);
    side.with_modules = bool_at(v, &["config", "common_config", "with_modules"]);
    side.torch_npu_version = string_at(v, &["torch_npu_version"]);
    side.cann_version = string_at(v, &["cann_version"]);
}

/// Python truthiness of the metadata `role` (§3.3): non-empty strings, non-zero numbers,
/// `true`, non-empty containers. Non-strings are shown as their JSON text.
fn truthy_role(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Bool(true) => Some("True".into()),
        Value::Number(n) if n.as_f64() != Some(0.0) => Some(n.to_string()),
        Value::Array(a) if !a.is_empty() => Some(v.to_string()),
        Value::Object(o) if !o.is_empty() => Some(v.to_string()),
        _ => None,
    }
}

fn apply_metadata(v: &Value, side: &mut SideInfo) {
    side.metadata_role = v.get("role").and_then(truthy_role);
    side.parallel_groups = parallel_groups(v);
    if side.torch_npu_version.is_none() {
        side.torch_npu_version = string_at(v, &["torch_npu_version"]);
    }
    if side.cann_version.is_none() {
        side.cann_version = string_at(v, &["cann_version"]);
    }
}

/// `parallel_group_info` of a `profiler_metadata.json` value: `{<group id>: {group_name,
/// global_ranks, …}}` in file order (communication.md §1.6); entries without `global_ranks`
/// keep an empty list.
pub fn parallel_groups(v: &Value) -> Vec<crate::ingest::inventory::GroupInfo> {
    let Some(m) = v.get("parallel_group_info").and_then(Value::as_object) else {
        return Vec::new();
    };
    m.iter()
        .map(|(id, g)| crate::ingest::inventory::GroupInfo {
            id: id.clone(),
            name: g
                .get("group_name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            global_ranks: g
                .get("global_ranks")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_i64).collect())
                .unwrap_or_default(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::inventory::Analysis;
    use crate::ingest::rank::{RankSource, RoleSource};
    use crate::ingest::MemOpener;

    #[test]
    fn side_files_set_rank_role_versions_and_capabilities() {
        let mut o = MemOpener::new();
        o.add(
            "run/a_ascend_pt/profiler_info_0.json",
            r#"{"config":{"common_config":{"with_stack":false,"profile_memory":true},
                "experimental_config":{"_profiler_level":"Level0","_export_type":["text"]}},
                "torch_npu_version":"2.7.1","cann_version":"8.3.RC1","rank_id":"1"}"#,
        );
        o.add(
            "run/a_ascend_pt/profiler_metadata.json",
            r#"{"role":"actor_update"}"#,
        );
        o.add(
            "run/a_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
            "x",
        );
        o.add(
            "run/a_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
            "[]",
        );
        o.add(
            "run/b_ascend_pt/profiler_info.json",
            r#"{"rank_id": 4, "config": {"experimental_config": {"_export_type": "db"}}}"#,
        );
        o.add("run/b_ascend_pt/profiler_metadata.json", "{not json");
        let mut inv = Inventory::from_paths(&o.list());
        read_side_files(&mut inv, &o);
        let a = inv
            .ranks
            .iter()
            .find(|r| r.dir == "run/a_ascend_pt")
            .unwrap();
        assert_eq!(a.role, "actor_update");
        assert_eq!(a.role_source, RoleSource::Metadata);
        assert_eq!(a.rank_id, Some(0));
        assert!(a.notes.iter().any(|n| n.code == "MEM-DISC-005"
            && n.message == "rank id mismatch: file name says 0, rank_id field says 1"));
        assert_eq!(a.side.profiler_level.as_deref(), Some("Level0"));
        assert_eq!(a.side.export_type, vec!["text".to_string()]);
        assert_eq!(a.side.torch_npu_version.as_deref(), Some("2.7.1"));
        assert_eq!(a.side.with_stack, Some(false));
        let mem = a.readiness(Analysis::Memory).unwrap();
        assert!(mem.degraded.iter().any(|d| d.contains("with_stack=False")));

        let b = inv
            .ranks
            .iter()
            .find(|r| r.dir == "run/b_ascend_pt")
            .unwrap();
        assert_eq!((b.rank_id, b.rank_source), (Some(4), RankSource::InfoField));
        assert_eq!(b.role, "run");
        assert!(b.notes.iter().any(
            |n| n.code == "MEM-META-001" && n.file == "run/b_ascend_pt/profiler_metadata.json"
        ));
        let mem = b.readiness(Analysis::Memory).unwrap();
        assert!(!mem.can_run);
        assert!(
            mem.missing[0].contains("export_type=db"),
            "{:?}",
            mem.missing
        );
    }
}
