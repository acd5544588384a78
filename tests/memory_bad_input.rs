//! Bad input (issue 2 "Bad input" list, ascend-memory.md §10.3, §12.3–12.4 gaps): each case
//! sits in its own rank folder next to a good rank (the real RL-Insight fixture); each test
//! asserts the exact problem code and that the good rank and the good rows are intact.

use std::ops::ControlFlow;

use proflens::analysis::memory_match::MatchQuality;
use proflens::analysis::memory_result::{MemoryRun, RankMemory, RankStatus};
use proflens::base::Problems;
use proflens::engine::memory::{analyse_inventory, MemoryOptions, Mode};
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;
use proflens::parse::metadata::read_side_files;

const H15: &str = "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type";

const GOOD: &str = "run/memory_data/20260526_085155_ascend_pt";

fn with_good_rank() -> MemOpener {
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/rl_insight/data/recipe/memory_data/20260526_085155_ascend_pt"
    );
    let mut o = MemOpener::new();
    for f in [
        "profiler_info_0.json",
        "profiler_metadata.json",
        "ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        "ASCEND_PROFILER_OUTPUT/trace_view.json",
    ] {
        o.add(
            format!("{GOOD}/{f}"),
            std::fs::read(format!("{src}/{f}")).expect("fixture present"),
        );
    }
    o
}

fn analyse(o: &MemOpener, mode: Mode) -> (MemoryRun, Problems) {
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, o);
    let opts = MemoryOptions {
        mode,
        ..Default::default()
    };
    analyse_inventory(&inv, o, &opts, &mut |_| ControlFlow::Continue(()))
}

fn rank<'a>(run: &'a MemoryRun, dir: &str) -> &'a RankMemory {
    run.ranks
        .iter()
        .find(|r| r.info.source_dir == dir)
        .unwrap_or_else(|| panic!("no rank {dir}"))
}

fn assert_good_intact(run: &MemoryRun) {
    let g = rank(run, GOOD);
    assert_eq!(g.status, RankStatus::Analysed);
    assert_eq!(g.len(), 49);
    assert_eq!((0..49).map(|i| g.row(i).size_kb()).sum::<f64>(), 172_387.5);
    assert!(
        g.problems
            .kept()
            .iter()
            .all(|p| p.severity != proflens::base::Severity::Error),
        "{:?}",
        g.problems.kept()
    );
}

fn codes(r: &RankMemory) -> Vec<&'static str> {
    r.problems.kept().iter().map(|p| p.code).collect()
}

fn trace(events: &[(&str, &str, &str)]) -> String {
    // (name, ts, stack)
    let evs: Vec<String> = events
        .iter()
        .map(|(n, ts, st)| format!(r#"{{"ph":"X","name":"{n}","pid":1,"tid":1,"ts":"{ts}","dur":10,"cat":"cpu_op","args":{{"Call stack":"{st}"}}}}"#))
        .collect();
    format!("[{}]", evs.join(",\n"))
}

fn csv_row(name: &str, size: &str, t: &str) -> String {
    format!("{name},{size},\"{t}\t\",,,,,1.0,2.0,3.0,,,,6,NPU:0")
}

fn add_rank(o: &mut MemOpener, dir: &str, rank: u32, csv: Option<String>, tv: Option<String>) {
    o.add(format!("{dir}/profiler_info_{rank}.json"), "{}");
    if let Some(c) = csv {
        o.add(
            format!("{dir}/ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
            c,
        );
    }
    if let Some(t) = tv {
        o.add(format!("{dir}/ASCEND_PROFILER_OUTPUT/trace_view.json"), t);
    }
}

#[test]
fn truncated_trace_is_used_up_to_the_byte_offset() {
    let mut o = with_good_rank();
    let full = trace(&[("a", "100.0", "x.py(1): f"), ("b", "200.0", "y.py(2): g")]);
    let cut = full.find("\"name\":\"b\"").unwrap();
    let csv = format!(
        "{H15}\n{}\n{}\n",
        csv_row("a", "1.0", "150.0"),
        csv_row("b", "2.0", "250.0")
    );
    add_rank(
        &mut o,
        "run/bad/t_ascend_pt",
        1,
        Some(csv),
        Some(full[..cut].to_string()),
    );
    let (run, _) = analyse(&o, Mode::Default);
    assert_good_intact(&run);
    let r = rank(&run, "run/bad/t_ascend_pt");
    assert_eq!(codes(r), ["MEM-TV-002"]);
    let p = &r.problems.kept()[0];
    let at = full[..cut].rfind('{').unwrap() as u64;
    assert_eq!(p.at.byte, Some(at));
    assert_eq!(
        p.message,
        format!("trace_view.json ends early (at byte {at}); events read so far are used")
    );
    assert_eq!(r.len(), 2);
    assert_eq!(r.row(0).call_stack(), "x.py(1): f");
    assert_eq!(r.row(1).match_quality(), MatchQuality::None);
    // parity: upstream's ijson raises on truncation, the rank contributes nothing
    let (run, _) = analyse(&o, Mode::Parity);
    assert_good_intact(&run);
    assert!(rank(&run, "run/bad/t_ascend_pt").is_empty());
}

#[test]
fn bad_csv_rows_are_skipped_with_their_line_and_code() {
    let mut o = with_good_rank();
    let csv = format!(
        "\u{feff}{H15}\r\n{}\r\nshort,1.0,100.0\r\n{},extra\r\n{}\r\n{}\r\n{}\r\n{}\r\n",
        csv_row("a", "1.0", "150.0"),
        csv_row("long", "1.0", "150.0"),
        csv_row("nonnum", "x1", "150.0"),
        csv_row("excel", "1.0", "1.69512E+15"),
        csv_row("na", "-4.0", "160.0").replace("1.0,2.0,3.0", "N/A,N/A,3.0"),
        csv_row("z", "2.0", "170.0"),
    );
    add_rank(
        &mut o,
        "run/bad/c_ascend_pt",
        2,
        Some(csv),
        Some(trace(&[("a", "100.0", "x.py(1): f")])),
    );
    let (run, _) = analyse(&o, Mode::Default);
    assert_good_intact(&run);
    let r = rank(&run, "run/bad/c_ascend_pt");
    let got: Vec<(&str, Option<u64>)> = r
        .problems
        .kept()
        .iter()
        .map(|p| (p.code, p.at.line))
        .collect();
    assert_eq!(
        got,
        [
            ("MEM-CSV-006", Some(1)),
            ("MEM-CSV-004", Some(3)),
            ("MEM-CSV-004", Some(4)),
            ("MEM-CSV-003", Some(5)),
            ("MEM-CSV-005", Some(6))
        ]
    );
    let names: Vec<&str> = (0..r.len()).map(|i| r.row(i).name()).collect();
    assert_eq!(names, ["a", "excel", "na", "z"]);
    let na = r.row(2);
    assert_eq!(
        (
            na.size_kb(),
            na.total_allocated_mb(),
            na.total_reserved_mb()
        ),
        (-4.0, 0.0, 0.0)
    );
    assert!(r.row(1).rank().events().precision_lost()[1]);
    // parity: the BOM hides `Name`; the rank fails, the good one does not
    let (run, _) = analyse(&o, Mode::Parity);
    assert_good_intact(&run);
    let r = rank(&run, "run/bad/c_ascend_pt");
    assert!(r.is_empty());
    assert_eq!(codes(r), ["MEM-CSV-001"]);
}

#[test]
fn empty_files_missing_trace_missing_csv() {
    let mut o = with_good_rank();
    let csv = format!("{H15}\n{}\n", csv_row("a", "1.0", "150.0"));
    add_rank(
        &mut o,
        "run/bad/empty_csv_ascend_pt",
        3,
        Some(String::new()),
        Some(trace(&[])),
    );
    add_rank(
        &mut o,
        "run/bad/empty_tv_ascend_pt",
        4,
        Some(csv.clone()),
        Some(String::new()),
    );
    add_rank(
        &mut o,
        "run/bad/no_tv_ascend_pt",
        5,
        Some(csv.clone()),
        None,
    );
    add_rank(
        &mut o,
        "run/bad/no_csv_ascend_pt",
        6,
        None,
        Some(trace(&[])),
    );
    o.add("run/notes.txt", "hello");
    o.add("run/bad/random_folder/image.png", vec![0u8; 10]);
    let (run, drop) = analyse(&o, Mode::Default);
    assert!(drop.is_empty());
    assert_good_intact(&run);
    let r = rank(&run, "run/bad/empty_csv_ascend_pt");
    assert!(matches!(r.status, RankStatus::Failed(_)));
    // the empty trace array has no stacks (warning), the empty CSV is the error
    assert_eq!(codes(r), ["MEM-FILE-002", "MEM-FILE-003"]);
    assert_eq!(
        r.problems.kept()[1].message,
        "File is empty: run/bad/empty_csv_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    );
    let r = rank(&run, "run/bad/empty_tv_ascend_pt");
    assert_eq!(codes(r), ["MEM-TV-004"]);
    assert_eq!(r.len(), 1);
    assert_eq!(r.row(0).match_quality(), MatchQuality::None);
    let r = rank(&run, "run/bad/no_tv_ascend_pt");
    assert_eq!(codes(r), ["MEM-FILE-002"]);
    assert_eq!(
        r.problems.kept()[0].message,
        "No call stacks for rank 5: trace_view.json missing or recorded with with_stack=false"
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r.row(0).call_stack(), "");
    let r = rank(&run, "run/bad/no_csv_ascend_pt");
    assert_eq!(codes(r), ["MEM-FILE-001"]);
    assert_eq!(
        r.problems.kept()[0].message,
        "operator_memory.csv not found in run/bad/no_csv_ascend_pt"
    );
    // unrelated files: listed as ignored by the inventory, nothing crashes
    let inv = Inventory::from_paths(&o.list());
    let ignored: Vec<&str> = inv.ignored.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        ignored,
        ["run/bad/random_folder/image.png", "run/notes.txt"]
    );
    // parity: a missing trace drops the rank (RL-Insight behaviour)
    let (run, _) = analyse(&o, Mode::Parity);
    assert_good_intact(&run);
    assert!(rank(&run, "run/bad/no_tv_ascend_pt").is_empty());
}

#[test]
fn only_unrelated_files_analyse_nothing() {
    let mut o = MemOpener::new();
    o.add("photos/cat.jpg", vec![1u8; 4]);
    let (run, drop) = analyse(&o, Mode::Default);
    assert!(run.is_empty());
    let c: Vec<&str> = drop.kept().iter().map(|p| p.code).collect();
    assert_eq!(c, ["MEM-DISC-001", "MEM-RUN-001"]);
}

#[test]
fn wrapped_trace_and_metadata_role_and_several_captures_per_rank() {
    let mut o = with_good_rank();
    let inner = trace(&[("a", "100.0", "x.py(1): f")]);
    let wrapped = format!("{{\"traceEvents\":{inner}}}");
    let csv1 = format!("{H15}\n{}\n", csv_row("a", "1.0", "150.0"));
    let csv2 = format!("{H15}\n{}\n", csv_row("a", "2.0", "150.0"));
    add_rank(
        &mut o,
        "run/x/w_1_20250101120000200_ascend_pt",
        7,
        Some(csv1),
        Some(wrapped),
    );
    add_rank(
        &mut o,
        "run/x/w_1_20250101120000100_ascend_pt",
        7,
        Some(csv2),
        Some(inner),
    );
    o.add(
        "run/x/w_1_20250101120000200_ascend_pt/profiler_metadata.json",
        r#"{"role":"actor_update"}"#,
    );
    o.add(
        "run/x/w_1_20250101120000100_ascend_pt/profiler_metadata.json",
        r#"{"role":"actor_update"}"#,
    );
    let (run, _) = analyse(&o, Mode::Default);
    assert_good_intact(&run);
    let a = rank(&run, "run/x/w_1_20250101120000100_ascend_pt");
    let b = rank(&run, "run/x/w_1_20250101120000200_ascend_pt");
    assert_eq!(
        (
            a.info.role.as_str(),
            a.info.source_index,
            b.info.source_index
        ),
        ("actor_update", 0, 1)
    );
    assert_eq!(codes(b), ["MEM-TV-001"]);
    assert_eq!(b.row(0).call_stack(), "x.py(1): f");
    assert_eq!(a.row(0).phase().as_str(), "Training");
    // ties across ranks at equal start_time_ms keep (role, rank, source_index) arrival order
    let tied: Vec<(u32, f64)> = run
        .rows()
        .filter(|r| r.start_time_ms() == 0.15)
        .map(|r| (r.source_index(), r.size_kb()))
        .collect();
    assert_eq!(tied, [(0, 2.0), (1, 1.0)]);
    // parity: the wrapped file gives an empty index, so no stack (but the row is kept)
    let (run, _) = analyse(&o, Mode::Parity);
    let b = rank(&run, "run/x/w_1_20250101120000200_ascend_pt");
    assert_eq!((b.len(), b.row(0).call_stack()), (1, ""));
}

#[test]
fn rank_list_filter_and_parity_refusal() {
    let mut o = with_good_rank();
    let csv = format!("{H15}\na,1.0,\"150.0\t\",,,\"5000\t\",,,,,,,,6,NPU:0\n");
    add_rank(
        &mut o,
        "run/other/r_ascend_pt",
        3,
        Some(csv),
        Some(trace(&[("a", "100.0", "x.py(1): f")])),
    );
    let mut inv = Inventory::from_paths(&o.list());
    read_side_files(&mut inv, &o);
    let mut opts = MemoryOptions::default();
    opts.selection.ranks = proflens::ingest::select::Selection::parse_ranks("3").unwrap();
    let (run, _) = analyse_inventory(&inv, &o, &opts, &mut |_| ControlFlow::Continue(()));
    assert_eq!(run.ranks.len(), 1);
    let row = run.row(0).unwrap();
    assert_eq!((row.rank_id(), row.duration_ms()), (3, 5.0)); // Duration(us)=5000 → 5.0 ms
    assert_eq!(
        (
            row.total_allocated_mb(),
            row.total_reserved_mb(),
            row.total_active_mb()
        ),
        (0.0, 0.0, 0.0)
    ); // empty totals → 0.0
    opts.selection.roles = vec!["mem*".into()];
    let (run, _) = analyse_inventory(&inv, &o, &opts, &mut |_| ControlFlow::Continue(()));
    assert!(run.is_empty());
    // parity: any non-`all` rank list gives zero rows and upstream's message
    let opts = MemoryOptions {
        mode: Mode::Parity,
        selection: proflens::ingest::select::Selection {
            ranks: Some(vec![(0, 0)]),
            ..Default::default()
        },
        ..Default::default()
    };
    let (run, drop) = analyse_inventory(&inv, &o, &opts, &mut |_| ControlFlow::Continue(()));
    assert!(run.is_empty());
    assert_eq!(drop.kept()[0].code, "MEM-RUN-002");
    assert_eq!(
        drop.kept()[0].message,
        "RL analysis currently only supports processing all ranks"
    );
}
