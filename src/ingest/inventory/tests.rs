use super::*;

fn files(paths: &[&str]) -> Vec<InputFile> {
    paths
        .iter()
        .enumerate()
        .map(|(i, p)| InputFile {
            path: p.to_string(),
            size: 100 + i as u64,
        })
        .collect()
}

const L1: &[&str] = &[
    "level1/rank0_ascend_pt/profiler_info_0.json",
    "level1/rank0_ascend_pt/profiler_metadata.json",
    "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
    "level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    "level1/rank0_ascend_pt/FRAMEWORK/torch.op_mark",
    "level1/rank1_ascend_pt/profiler_info_1.json",
    "level1/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    "level1/notes.txt",
    "level1/snap.pickle",
];

#[test]
fn run_root_with_two_ranks() {
    let inv = Inventory::from_paths(&files(L1));
    assert_eq!(inv.ranks.len(), 2);
    let r0 = &inv.ranks[0];
    assert_eq!(r0.dir, "level1/rank0_ascend_pt");
    assert_eq!(r0.role, "level1");
    assert_eq!(r0.role_source, RoleSource::ParentFolder);
    assert_eq!(r0.rank_id, Some(0));
    assert_eq!(r0.rank_source, RankSource::InfoFileName);
    assert_eq!(r0.files.len(), 5);
    assert_eq!(r0.other_files, 1);
    assert_eq!(
        r0.file(FileKind::TraceView).unwrap().rel,
        "ASCEND_PROFILER_OUTPUT/trace_view.json"
    );
    assert!(r0.readiness(Analysis::Memory).unwrap().can_run);
    assert!(r0.readiness(Analysis::Memory).unwrap().degraded.is_empty());
    let r1 = &inv.ranks[1];
    assert_eq!(r1.rank_id, Some(1));
    let mem = r1.readiness(Analysis::Memory).unwrap();
    assert!(mem.can_run);
    assert_eq!(mem.degraded.len(), 1, "{mem:?}");
    let an = r1.readiness(Analysis::Anomaly).unwrap();
    assert!(!an.can_run);
    assert!(an.missing[0].contains("kernel_details.csv"));
    assert_eq!(inv.snapshots.len(), 1);
    assert_eq!(inv.ignored.len(), 1);
    assert_eq!(inv.ignored[0].path, "level1/notes.txt");
    assert!(inv.ignored[0].reason.contains("ascend_pt"));
    assert!(inv.notes.is_empty());
}

#[test]
fn dropped_capture_folder_itself() {
    let inv = Inventory::from_paths(&files(&[
        "20260526_085155_ascend_pt/profiler_info_0.json",
        "20260526_085155_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
    ]));
    assert_eq!(inv.ranks.len(), 1);
    let r = &inv.ranks[0];
    assert_eq!(r.role, "unknown");
    assert_eq!(r.sort_key, "20260526_085155");
    assert!(r.notes.iter().any(|n| n.code == "MEM-DISC-006"));
}

#[test]
fn dropped_output_folder_and_loose_files() {
    let inv = Inventory::from_paths(&files(&[
        "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "ASCEND_PROFILER_OUTPUT/trace_view.json",
    ]));
    assert_eq!(inv.ranks.len(), 1);
    assert_eq!(inv.ranks[0].kind, CaptureKind::LooseOutput);
    assert_eq!(inv.ranks[0].rank_id, Some(0));
    assert_eq!(inv.ranks[0].rank_source, RankSource::SingleFolder);
    assert!(inv.ranks[0].notes.iter().any(|n| n.code == "MEM-DISC-002"));
    assert_eq!(
        inv.ranks[0].file(FileKind::OperatorMemory).unwrap().path,
        "ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    );

    let inv = Inventory::from_paths(&files(&["operator_memory.csv", "readme.md"]));
    assert_eq!(inv.ranks.len(), 1);
    assert_eq!(inv.ranks[0].kind, CaptureKind::LooseFiles);
    assert_eq!(inv.ranks[0].role, "unknown");
    assert_eq!(inv.ranks[0].rank_id, Some(0));
    assert!(inv.ranks[0].notes.iter().any(|n| n.code == "MEM-DISC-007"));
    assert_eq!(inv.ranks[0].other_files, 1);

    // an output folder with a sibling profiler_info: the sibling gives the rank
    let inv = Inventory::from_paths(&files(&[
        "cap/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "cap/profiler_info_3.json",
    ]));
    assert_eq!(inv.ranks.len(), 1);
    assert_eq!(inv.ranks[0].rank_id, Some(3));
}

#[test]
fn unrelated_drop_reports_no_candidate() {
    let inv = Inventory::from_paths(&files(&["photos/cat.jpg", "photos/dog.png"]));
    assert!(inv.ranks.is_empty());
    assert_eq!(inv.ignored.len(), 2);
    assert_eq!(inv.notes.len(), 1);
    assert_eq!(inv.notes[0].code, "MEM-DISC-001");
    assert_eq!(
        inv.notes[0].message,
        "No folder ending in \"ascend_pt\" and no PyTorch profiler trace found under photos"
    );
}

#[test]
fn several_captures_per_rank_get_source_index_and_nested_candidates() {
    let inv = Inventory::from_paths(&files(&[
        "run/actor/w_1_20250101120000300_ascend_pt/profiler_info_0.json",
        "run/actor/w_1_20250101120000300_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "run/actor/w_1_20250101120000100_ascend_pt/profiler_info_0.json",
        "run/actor/w_1_20250101120000100_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "run/actor/w_1_20250101120000100_ascend_pt/inner_ascend_pt/profiler_info_1.json",
        "run/ref/x_ascend_pt/profiler_info_0.json",
    ]));
    let got: Vec<(String, Option<i64>, u32, String)> = inv
        .ranks
        .iter()
        .map(|r| (r.role.clone(), r.rank_id, r.source_index, r.dir.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "actor".into(),
                Some(0),
                0,
                "run/actor/w_1_20250101120000100_ascend_pt".into()
            ),
            (
                "actor".into(),
                Some(0),
                1,
                "run/actor/w_1_20250101120000300_ascend_pt".into()
            ),
            ("ref".into(), Some(0), 0, "run/ref/x_ascend_pt".into()),
            (
                "w_1_20250101120000100_ascend_pt".into(),
                Some(1),
                0,
                "run/actor/w_1_20250101120000100_ascend_pt/inner_ascend_pt".into()
            ),
        ]
    );
}

#[test]
fn rank_fallbacks_and_side_info() {
    let mut inv = Inventory::from_paths(&files(&[
        "r/a_ascend_pt/profiler_info.json",
        "r/a_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "r/rank_4_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "r/b_ascend_pt/profiler_info_2.json",
        "r/b_ascend_pt/profiler_info_9.json",
    ]));
    let a = inv
        .ranks
        .iter()
        .position(|r| r.dir == "r/a_ascend_pt")
        .unwrap();
    assert_eq!(inv.ranks[a].rank_id, None);
    let n = inv.ranks[a]
        .notes
        .iter()
        .find(|n| n.code == "MEM-DISC-003")
        .unwrap();
    assert_eq!(n.severity, Severity::Error);
    assert!(
        n.message.contains("its memory events are skipped"),
        "{}",
        n.message
    );
    assert!(!inv.ranks[a].readiness(Analysis::Memory).unwrap().can_run);
    let r4 = inv
        .ranks
        .iter()
        .find(|r| r.dir == "r/rank_4_ascend_pt")
        .unwrap();
    assert_eq!(
        (r4.rank_id, r4.rank_source),
        (Some(4), RankSource::FolderName)
    );
    let b = inv.ranks.iter().find(|r| r.dir == "r/b_ascend_pt").unwrap();
    assert_eq!(b.rank_id, Some(2));
    assert!(b.notes.iter().any(|n| n.code == "MEM-DISC-004"));

    inv.set_side_info(
        a,
        SideInfo {
            read: true,
            info_rank_field: Some(6),
            metadata_role: Some("rollout".into()),
            ..Default::default()
        },
    );
    inv.finalize();
    let a = inv.ranks.iter().find(|r| r.dir == "r/a_ascend_pt").unwrap();
    assert_eq!((a.rank_id, a.rank_source), (Some(6), RankSource::InfoField));
    assert_eq!(a.role, "rollout");
    assert!(!a.notes.iter().any(|n| n.code == "MEM-DISC-003"));
}

/// A capture without `operator_memory.csv` loses nothing to an unknown rank id: the note is
/// info, and says it is numbered by position, not "skipped" (the steps analysis runs on it).
#[test]
fn unknown_rank_id_without_memory_files_is_info() {
    let inv = Inventory::from_paths(&files(&[
        "r/a_ascend_pt/profiler_info.json",
        "r/a_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        "r/b_ascend_pt/profiler_info.json",
        "r/b_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    ]));
    for r in &inv.ranks {
        let n = r.notes.iter().find(|n| n.code == "MEM-DISC-003").unwrap();
        assert_eq!(n.severity, Severity::Info);
        assert!(
            n.message.contains("numbered by its position"),
            "{}",
            n.message
        );
        assert!(!n.message.contains("skipped"), "{}", n.message);
    }
}

#[test]
fn inventory_serializes() {
    let inv = Inventory::from_paths(&files(L1));
    let json = serde_json::to_string(&inv).unwrap();
    assert!(json.contains("\"rank_id\":0"));
    assert!(json.contains("\"kind\":\"operator_memory\""));
    assert!(!json.contains("facts"));
}

#[test]
fn a_db_export_makes_a_rank_and_both_exports_are_noted() {
    // ascend-db.md §1.1, §7.
    assert!(is_ascend_db_name("ascend_pytorch_profiler_0.db"));
    assert!(is_ascend_db_name("ascend_pytorch_profiler.db"));
    assert!(!is_ascend_db_name("ascend_pytorch_profiler_x.db"));
    assert!(!is_ascend_db_name("msprof_0.db"));
    let inv = Inventory::from_paths(&files(&[
        "run/r0_ascend_pt/profiler_info_0.json",
        "run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db",
        "run/r0_ascend_pt/ASCEND_PROFILER_OUTPUT/analysis.db",
        "run/r1_ascend_pt/profiler_info_1.json",
        "run/r1_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db",
        "run/r1_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "run/r1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
    ]));
    assert_eq!(inv.ranks.len(), 2);
    for r in &inv.ranks {
        assert!(r.ascend_db().is_some());
        for a in &r.analyses {
            // Memory and steps from the DB; communication from analysis.db, so rank 1 (no
            // analysis.db, no communication JSON) cannot join, and it says so.
            match a.analysis {
                Analysis::Communication if r.rank_id == Some(1) => {
                    assert!(!a.can_run);
                    assert!(
                        a.missing[0].contains("analysis.db (the DB export's communication tables)"),
                        "{:?}",
                        a.missing
                    );
                }
                _ => assert!(a.can_run, "{:?}", r.analyses),
            }
        }
    }
    assert_eq!(
        inv.ranks[0]
            .file(FileKind::AnalysisDb)
            .map(|f| f.rel.as_str()),
        Some("ASCEND_PROFILER_OUTPUT/analysis.db")
    );
    assert!(!inv.ranks[0].notes.iter().any(|n| n.code == "ASC-DB-001"));
    let both = inv.ranks[1]
        .notes
        .iter()
        .find(|n| n.code == "ASC-DB-001")
        .expect("both exports noted");
    assert!(
        both.message
            .contains("ascend_pytorch_profiler_1.db is read")
            && both
                .message
                .contains("ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
        "{}",
        both.message
    );
    // The skipped text files are listed among the files no analysis reads.
    let unused = inv.not_used();
    assert!(
        unused.iter().any(|n| n.file == "run/r1_ascend_pt"
            && n.message.contains(
                "kernel_details.csv (skipped: the database export of the same run is read)"
            )),
        "{unused:#?}"
    );
}
