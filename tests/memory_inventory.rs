//! Inventory (ascend-memory.md §2–3, formats.md §11) on the real fixture folders through the
//! native opener: rank folders, roles, rank ids, side files, readiness.

use proflens::cli::fs_opener::FsOpener;
use proflens::ingest::inventory::{Analysis, FileKind, Inventory};
use proflens::ingest::rank::{RankSource, RoleSource};
use proflens::parse::metadata::read_side_files;

fn fixture(rel: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    assert!(p.exists(), "fixture missing: {}", p.display());
    p
}

#[test]
fn rl_insight_memory_data_folder() {
    let (opener, files) = FsOpener::walk(&fixture("rl_insight/data/recipe/memory_data")).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    assert_eq!(inv.ranks.len(), 1);
    let r = &inv.ranks[0];
    assert_eq!(r.dir, "memory_data/20260526_085155_ascend_pt");
    assert_eq!(r.role, "memory_data");
    assert_eq!(r.role_source, RoleSource::ParentFolder);
    assert_eq!(
        (r.rank_id, r.rank_source),
        (Some(0), RankSource::InfoFileName)
    );
    assert_eq!(r.side.info_rank_field, Some(0));
    assert_eq!(r.side.profiler_level.as_deref(), Some("Level0"));
    assert_eq!(r.side.export_type, vec!["text".to_string()]);
    assert_eq!(r.side.with_stack, Some(false));
    assert_eq!(r.side.profile_memory, Some(true));
    assert_eq!(r.files.len(), 4);
    let mem = r.readiness(Analysis::Memory).unwrap();
    assert!(mem.can_run);
    // with_stack=false in profiler_info although the (synthetic) trace has stacks: reported
    assert!(mem.degraded.iter().any(|d| d.contains("with_stack=False")));
    let an = r.readiness(Analysis::Anomaly).unwrap();
    assert!(an.can_run, "trace_view.json alone is enough to start");
    assert!(inv.ignored.is_empty());
    assert!(inv.notes.is_empty());
}

#[test]
fn msinsight_text_root_with_three_levels() {
    let (opener, files) =
        FsOpener::walk(&fixture("ascend/Ascend__msinsight/test/data/pytorch/text")).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    let got: Vec<(String, i64, u32)> = inv
        .ranks
        .iter()
        .map(|r| (r.role.clone(), r.rank_id.unwrap(), r.source_index))
        .collect();
    assert_eq!(
        got,
        vec![
            ("level0".to_string(), 0, 0),
            ("level0".to_string(), 1, 0),
            ("level1".to_string(), 0, 0),
            ("level1".to_string(), 1, 0),
            ("level2".to_string(), 0, 0),
        ]
    );
    for r in &inv.ranks {
        assert!(r.readiness(Analysis::Memory).unwrap().can_run, "{}", r.dir);
        assert!(
            r.readiness(Analysis::Memory).unwrap().degraded.is_empty(),
            "{}",
            r.dir
        );
        assert!(r.readiness(Analysis::Anomaly).unwrap().can_run, "{}", r.dir);
        assert!(r.file(FileKind::KernelDetails).is_some());
        assert_eq!(r.side.info_rank_field, r.rank_id);
        assert!(r.notes.is_empty(), "{}: {:?}", r.dir, r.notes);
    }
    let l0 = &inv.ranks[0];
    assert_eq!(l0.side.profiler_level.as_deref(), Some("Level0"));
    assert_eq!(inv.ranks[2].side.profiler_level.as_deref(), Some("Level1"));
    assert_eq!(inv.ranks[2].side.with_stack, Some(true));
}

#[test]
fn dropping_the_output_folder_itself() {
    let (_, files) = FsOpener::walk(&fixture(
        "ascend/Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT",
    ))
    .unwrap();
    let inv = Inventory::from_paths(&files);
    assert_eq!(inv.ranks.len(), 1);
    let r = &inv.ranks[0];
    assert_eq!(r.dir, "");
    assert_eq!(r.rank_id, Some(0));
    assert_eq!(r.rank_source, RankSource::SingleFolder);
    assert!(r.readiness(Analysis::Memory).unwrap().can_run);
}
