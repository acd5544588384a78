//! Bad input ("Bad input" list, ascend-memory.md §10.3, §12.3–12.4 gaps): each case
//! sits in its own rank folder next to a good rank (the real RL-Insight fixture); each test
//! asserts the exact problem code and that the good rank and the good rows are intact.

mod engine_support;

use std::ops::ControlFlow;

use proflens::analysis::memory_match::MatchQuality;
use proflens::analysis::memory_result::{MemoryRun, RankMemory, RankStatus};
use proflens::base::Problems;
use proflens::engine::read::memory::{MemoryOptions, Mode};
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
    engine_support::memory_run(&inv, o, &opts, &mut |_| ControlFlow::Continue(()))
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
    // The offset is where the file ends (the cut), and the message also names the
    // start of the cut event and the end of the last complete one.
    let start = full[..cut].rfind('{').unwrap();
    let last = full[..start].rfind('}').unwrap() + 1;
    assert_eq!(p.at.byte, Some(cut as u64));
    assert_eq!(
        p.message,
        format!("trace_view.json ends early (at byte {cut}, inside the event that starts at byte {start}); events read so far are used (1 event; the last one ends at byte {last})")
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
    let (run, _) = engine_support::memory_run(&inv, &o, &opts, &mut |_| ControlFlow::Continue(()));
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
    let (run, _) = engine_support::memory_run(&inv, &o, &opts, &mut |_| ControlFlow::Continue(()));
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
    let (run, drop) =
        engine_support::memory_run(&inv, &o, &opts, &mut |_| ControlFlow::Continue(()));
    assert!(run.is_empty());
    assert_eq!(drop.kept()[0].code, "MEM-RUN-002");
    assert_eq!(
        drop.kept()[0].message,
        "RL analysis currently only supports processing all ranks"
    );
}

/// One `cpu_op` event with raw JSON `ts` and raw `Call stack` bytes.
fn raw_event(name: &[u8], ts: &str, stack: &[u8]) -> Vec<u8> {
    let mut v = br#"{"ph":"X","name":""#.to_vec();
    v.extend_from_slice(name);
    v.extend_from_slice(
        format!(r#"","pid":1,"tid":1,"ts":{ts},"dur":10,"cat":"cpu_op","args":{{"Call stack":""#)
            .as_bytes(),
    );
    v.extend_from_slice(stack);
    v.extend_from_slice(b"\"}}");
    v
}

/// "Silent drops": invalid UTF-8 in a `Call stack` (was: the stack became empty, no
/// warning), a duplicate key (was: first wins), unreadable `ts` (was: counted without offset),
/// a raw control byte, `,]` and bytes after the array (were: no diagnostic). Each finding is
/// counted with its offset; the good events and the good rank are intact.
#[test]
fn trace_findings_are_located_and_the_good_events_kept() {
    let mut o = with_good_rank();
    let events: Vec<Vec<u8>> = vec![
        raw_event(b"a", "\"100.0\"", b"x.py(1): f\xff"),
        br#"{"ph":"X","name":"b","pid":1,"tid":1,"ts":"200.0","dur":10,"cat":"cpu_op","args":{"Call stack":"old.py(9): h","Call stack":"y.py(2): g"}}"#.to_vec(),
        raw_event(b"c", "\"1e400\"", b"z.py(3): k"),
        raw_event(b"d", "NaN", b"z.py(3): k"),
        raw_event(b"e\x01", "\"300.0\"", b"w.py(4): m"),
    ];
    let mut tv = b"[".to_vec();
    let mut at = Vec::new();
    for e in &events {
        at.push(tv.len() as u64);
        tv.extend_from_slice(e);
        tv.push(b',');
    }
    let comma = tv.len() as u64 - 1;
    tv.extend_from_slice(b"]\n junk");
    let junk = tv.len() as u64 - 4;
    let csv = format!(
        "{H15}\n{}\n{}\n",
        csv_row("a", "1.0", "150.0"),
        csv_row("b", "2.0", "250.0")
    );
    let dir = "run/bad/f_ascend_pt";
    add_rank(&mut o, dir, 1, Some(csv), None);
    o.add(
        format!("{dir}/ASCEND_PROFILER_OUTPUT/trace_view.json"),
        tv.clone(),
    );
    let (run, _) = analyse(&o, Mode::Default);
    assert_good_intact(&run);
    let r = rank(&run, dir);
    let got: Vec<(&str, Option<u64>, &str)> = r
        .problems
        .kept()
        .iter()
        .map(|p| (p.code, p.at.byte, p.message.as_str()))
        .collect();
    let (b, c, d) = (at[1], at[2], at[3]);
    // String flaws at the offending byte (was: the start of the event).
    let a = tv.iter().position(|&x| x == 0xFF).unwrap() as u64;
    let e = tv.iter().position(|&x| x == 1).unwrap() as u64;
    assert!(at[0] < a && a < at[1] && at[4] < e);
    let want = [
        ("MEM-TV-008", Some(junk), format!("trace_view.json: bytes after the end of the trace at byte {junk}; ignored")),
        ("MEM-TV-009", Some(comma), format!("trace_view.json: 1 × `,` right before the closing `]` (invalid JSON; torch_npu writes it when a chunk is empty): accepted; at byte {comma}")),
        ("MEM-TV-003", Some(c), format!("trace_view.json: 2 × event without a readable `ts` (missing, NaN, out of range or not a decimal µs number): skipped; at bytes {c}, {d}")),
        ("MEM-TV-005", Some(a), format!("trace_view.json: 1 × string with invalid UTF-8 (first in `Call stack`): kept with U+FFFD replacement characters; at byte {a}")),
        ("MEM-TV-006", Some(e), format!("trace_view.json: 1 × string with a raw control byte or an invalid `\\` escape (invalid JSON) (first in `name`): kept as read; at byte {e}")),
        ("MEM-TV-007", Some(b), format!("trace_view.json: 1 × object with a duplicate key (first in `Call stack`): the last value is used, as JSON.parse and Python do; at byte {b}")),
    ];
    let want: Vec<(&str, Option<u64>, &str)> =
        want.iter().map(|(c, b, m)| (*c, *b, m.as_str())).collect();
    assert_eq!(got, want);
    assert_eq!(r.len(), 2);
    assert_eq!(r.row(0).call_stack(), "x.py(1): f\u{FFFD}");
    assert_eq!(r.row(1).call_stack(), "y.py(2): g");
}

/// Garbage in the middle of the array keeps the events before it and says where
/// (byte offset of the garbage and end of the last event read); a UTF-16 trace is named.
#[test]
fn garbage_mid_array_and_utf16_are_reported_in_words() {
    let mut o = with_good_rank();
    let good = trace(&[("a", "100.0", "x.py(1): f")]);
    let cut = good.len() - 1; // before the closing `]`
    let tv = format!("{}, @@@ {}]", &good[..cut], &good[1..cut]);
    let csv = format!("{H15}\n{}\n", csv_row("a", "1.0", "150.0"));
    add_rank(
        &mut o,
        "run/bad/g_ascend_pt",
        1,
        Some(csv.clone()),
        Some(tv),
    );
    let utf16: Vec<u8> = [0xFF, 0xFE]
        .into_iter()
        .chain(good.encode_utf16().flat_map(|u| u.to_le_bytes()))
        .collect();
    add_rank(&mut o, "run/bad/u_ascend_pt", 2, Some(csv), None);
    o.add(
        "run/bad/u_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        utf16,
    );
    let (run, _) = analyse(&o, Mode::Default);
    assert_good_intact(&run);
    let r = rank(&run, "run/bad/g_ascend_pt");
    let p = &r.problems.kept()[0];
    let path = "run/bad/g_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";
    let at = cut + 2;
    assert_eq!((p.code, p.at.byte), ("MEM-TV-004", Some(at as u64)));
    assert_eq!(&*p.at.file, path);
    assert_eq!(
        p.message,
        format!("expected an event, `,` or `]`; 1 event before it is used (the last one ends at byte {cut}); the rest of the file is not read")
    );
    assert_eq!(r.row(0).call_stack(), "x.py(1): f");
    let r = rank(&run, "run/bad/u_ascend_pt");
    let p = &r.problems.kept()[0];
    assert_eq!(p.code, "MEM-TV-004");
    // Where is the problem's position (with the byte), what is the message: said once.
    assert_eq!(
        p.at.to_string(),
        "run/bad/u_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json (byte 0)"
    );
    assert_eq!(
        p.message,
        "the text is UTF-16 LE (byte-order mark FF FE), not supported: re-save the file as UTF-8; rows get no call stacks"
    );
    assert_eq!(r.len(), 1);
}

#[test]
fn a_csv_record_past_the_cap_keeps_the_rows_before_and_says_where() {
    // One 300 MB cell cost 821 MB of memory. An unclosed quote on line 4 now runs
    // into the 16 MiB record cap: the two rows before it are matched, the rest is not read,
    // and the problem names the line and byte where the record starts.
    let mut o = with_good_rank();
    let head = format!(
        "{H15}\n{}\n{}\n\"open",
        csv_row("a", "1.0", "150.0"),
        csv_row("b", "2.0", "160.0")
    );
    let byte = head.len() as u64 - 5;
    let mut csv = head.into_bytes();
    csv.resize(csv.len() + (20 << 20), b'x');
    o.add("run/bad/big_ascend_pt/profiler_info_3.json", "{}");
    o.add(
        "run/bad/big_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
        csv,
    );
    o.add(
        "run/bad/big_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
        trace(&[("a", "100.0", "x.py(1): f"), ("b", "155.0", "y.py(2): g")]),
    );
    let (run, _) = analyse(&o, Mode::Default);
    assert_good_intact(&run);
    let r = rank(&run, "run/bad/big_ascend_pt");
    let names: Vec<&str> = (0..r.len()).map(|i| r.row(i).name()).collect();
    assert_eq!(names, ["a", "b"]);
    let p = r
        .problems
        .kept()
        .iter()
        .find(|p| p.code == "MEM-CSV-011")
        .expect("the cap is reported");
    assert_eq!((p.at.line, p.at.byte), (Some(4), Some(byte)));
    assert_eq!(p.severity, proflens::base::Severity::Error);
    assert!(
        p.message.contains("longer than 16 MiB") && p.message.contains("rows before it are kept"),
        "{}",
        p.message
    );
}
