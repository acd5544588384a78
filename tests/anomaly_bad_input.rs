//! Every "Bad input" case: missing or partial columns, non-numeric and
//! `N/A` cells, negative or zero durations, no step markers, overlapping or
//! out-of-order steps, a truncated trace, timestamps in different bases — and the
//! column-set variants of formats.md §3. Nothing panics; other ranks stay intact.

mod anomaly_support;

use anomaly_support::*;
use proflens::analysis::anomaly_config::AnomalyConfig;

fn rb() -> AnomalyConfig {
    AnomalyConfig::spec_defaults()
}

const KD: &str = "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv";
const TV: &str = "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json";

fn codes(r: &proflens::engine::read::RankAnalysis) -> Vec<(&'static str, Option<u64>)> {
    r.problems
        .kept()
        .iter()
        .map(|p| (p.code, p.at.line))
        .collect()
}

#[test]
fn missing_required_column_fails_that_file_and_keeps_the_other_rank() {
    let bad = "Step Id,Name,Type,Accelerator Core,Duration(us)\n1,a,N/A,N/A,5\n".to_string();
    let good = csv_owned(&[ai("a", 0.0, 10.0)]);
    let ranks = run_files(
        &[
            (KD, bad),
            (
                "cap/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
                good,
            ),
        ],
        &rb(),
    );
    assert_eq!(ranks.len(), 2);
    let p = ranks[0]
        .problems
        .kept()
        .iter()
        .find(|p| p.code == "ANOM-FILE-001")
        .expect("file problem");
    // A sentence naming the missing column and what the header has (was the Rust debug value
    // `Header { missing: [..] }`); the file and line are the problem's position, not repeated.
    assert_eq!(
        p.message,
        "missing column(s): Start Time(us); the header has: \"Step Id\", \"Name\", \"Type\", \"Accelerator Core\", \"Duration(us)\"; file not used"
    );
    assert_eq!(p.at.line, Some(1));
    assert!(!ranks[0].result.enabled);
    assert!(ranks[1].result.enabled);
    assert_eq!(ranks[1].result.steps[0].metrics.busy_ns, 10_000);
}

#[test]
fn partial_columns_are_analysed_and_named() {
    // Level0-like 7 columns without Step Id, Stream ID, Wait: analysed as far as possible.
    let k = "Name,Type,Accelerator Core,Start Time(us),Duration(us),Block Dim\na,N/A,N/A,100.5\t,10,0\nb,N/A,N/A,200,10,0\n";
    let r = run_rank(k.to_string(), None, &rb());
    let p = r
        .problems
        .kept()
        .iter()
        .find(|p| p.code == "ANOM-KD-008")
        .unwrap();
    assert!(
        p.message.contains("Wait Time(us)") && p.message.contains("Stream ID"),
        "{}",
        p.message
    );
    assert_eq!(r.result.steps.len(), 1);
    assert_eq!(r.result.steps[0].metrics.busy_ns, 20_000);
    assert_eq!(r.kernels.stream_of(0), "unknown");
}

#[test]
fn non_numeric_na_negative_and_zero_cells_become_problems_with_lines() {
    let mut k = String::from(HEADER);
    k.push('\n');
    k.push_str("1,1,1,2,ok,T,AI_CORE,100,10,0,1,\n"); // line 2
    k.push_str("1,1,1,2,badstart,T,AI_CORE,abc,10,0,1,\n"); // line 3
    k.push_str("1,1,1,2,nadur,T,AI_CORE,120,N/A,0,1,\n"); // line 4
    k.push_str("1,1,1,2,neg,T,AI_CORE,130,-5,0,1,\n"); // line 5
    k.push_str("1,1,1,2,zero,T,AI_CORE,140,0,0,1,\n"); // line 6
    k.push_str("1,1,1,2,badwait,T,AI_CORE,150,10,x,1,\n"); // line 7
    k.push_str("1,1,1,N/A,nastream,T,AI_CORE,160,10,N/A,1,\n"); // line 8
    k.push_str("1,1,1,2,short\n"); // line 9: too few cells
    let r = run_rank(k, None, &rb());
    let c = codes(&r);
    assert!(c.contains(&("ANOM-KD-001", Some(3))));
    assert!(c.contains(&("ANOM-KD-001", Some(4))));
    assert!(c.contains(&("ANOM-KD-002", Some(5))));
    assert!(c.contains(&("ANOM-KD-003", Some(6))));
    assert!(c.contains(&("ANOM-KD-004", Some(7))));
    assert!(c.contains(&("ANOM-KD-006", Some(9))));
    assert!(c.contains(&("ANOM-KD-001", Some(9))));
    // Kept: ok, zero, badwait (wait 0), nastream (stream unknown) = 4 kernels.
    assert_eq!(r.kernels.len(), 4);
    let i = (0..r.kernels.len())
        .find(|&i| r.kernels.name_of(i) == "nastream")
        .unwrap();
    assert_eq!(r.kernels.stream_of(i), "unknown");
    assert_eq!(r.kernels.wait_ns()[i], 0);
}

#[test]
fn no_step_markers_fall_back_to_step_id_then_pseudo() {
    let k = csv_owned(&[ai("a", 0.0, 10.0), ai("b", 50.0, 10.0)]);
    let r = run_rank(k, Some(trace(&[], &[])), &rb());
    assert_eq!(r.result.step_method.as_str(), "step_id");
    assert_eq!(r.result.steps[0].step_id, "step_1");
    assert_eq!(r.result.steps[0].metrics.service_ns, 60_000);
}

#[test]
fn step_id_windows_use_step_trace_time_when_present() {
    let k = csv_owned(&[ai("a", 1000.0, 10.0), ai("b", 1050.0, 10.0)]);
    let st = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n1,20,0,0,0,40,60.0,0,0,500.5\n";
    let ranks = run_files(
        &[
            (KD, k),
            (
                "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                st.into(),
            ),
        ],
        &rb(),
    );
    let r = &ranks[0].result;
    assert_eq!(r.step_method.as_str(), "step_id+step_trace");
    assert_eq!(r.steps[0].window.start_ns, 499_500);
    assert_eq!(r.steps[0].window.end_ns, 1_060_000);
    assert_eq!(r.steps[0].metrics.prelaunch_ns, 500_500);
}

#[test]
fn step_trace_rows_naming_no_marker_step_are_said() {
    // torch_npu 2.10 writes a row with an empty Step when the schedule ends inside a step
    // (anomaly.md §13.1); a row for a step the trace has no marker of is said the same way.
    let k = csv_owned(&[ai("a", 1000.0, 10.0), ai("b", 2050.0, 10.0)]);
    let st = "Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,Communication(Not Overlapped and Exclude Receive),Preparing\n1,20,0,0,0,40,60.0,0,0,10\n,20,0,0,0,40,60.0,0,0,-246.75\n7,1,0,0,0,0,1,0,0,1\n";
    let marks = trace(&[(1, 990.0, 1000.0), (2, 2000.0, 100.0)], &[]);
    let ranks = run_files(
        &[
            (KD, k),
            (TV, marks),
            (
                "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                st.into(),
            ),
        ],
        &rb(),
    );
    let r = &ranks[0];
    assert_eq!(r.result.step_method.as_str(), "marker");
    let said: Vec<(Option<u64>, &str)> = r
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "ANOM-ST-004")
        .map(|p| (p.at.line, p.message.as_str()))
        .collect();
    assert_eq!(
        said,
        vec![
            (Some(3), "row with an empty Step names no ProfilerStep marker of the trace (steps 1, 2): not cross-checked"),
            (Some(4), "row with Step \"7\" names no ProfilerStep marker of the trace (steps 1, 2): not cross-checked"),
        ]
    );
    // Step-Id steps take their windows from the rows: nothing to say there.
    let k = csv_owned(&[ai("a", 1000.0, 10.0)]);
    let ranks = run_files(
        &[
            (KD, k),
            (
                "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
                st.into(),
            ),
        ],
        &rb(),
    );
    assert_eq!(ranks[0].problems.count("ANOM-ST-004"), 0);
}

#[test]
fn overlapping_duplicate_and_out_of_order_markers() {
    let k = csv_owned(&[
        ai("a", 0.0, 10.0),
        ai("b", 100.0, 10.0),
        ai("c", 200.0, 10.0),
    ]);
    // Out of file order, #2 duplicated (later copy dropped), #1 overlaps #2.
    let t = trace(
        &[
            (3, 200.0, 50.0),
            (2, 100.0, 50.0),
            (1, 0.0, 150.0),
            (2, 120.0, 60.0),
        ],
        &[],
    );
    let r = run_rank(k, Some(t), &rb());
    let ids: Vec<&str> = r.result.steps.iter().map(|s| s.step_id.as_str()).collect();
    assert_eq!(ids, ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]);
    assert_eq!(r.result.steps[1].window.start_ns, 100_000);
    assert_eq!(r.result.steps[0].window.end_ns, 100_000);
    assert!(r
        .result
        .limitations
        .iter()
        .any(|l| l.contains("duplicate step marker")));
    assert!(r
        .result
        .limitations
        .iter()
        .any(|l| l.contains("overlap the next one")));
}

#[test]
fn truncated_trace_is_used_up_to_the_cut_with_a_warning() {
    let k = csv_owned(&[ai("a", 0.0, 10.0), ai("b", 100.0, 10.0)]);
    let full = trace(
        &[(1, 0.0, 50.0), (2, 100.0, 50.0)],
        &[host("aten::x", "cpu_op", 20.0, 5.0, 1)],
    );
    let cut = &full[..full.len() - 30];
    let r = run_rank(k, Some(cut.to_string()), &rb());
    let p = r
        .problems
        .kept()
        .iter()
        .find(|p| p.code == "ANOM-TV-001")
        .expect("truncation warning");
    assert!(p.at.byte.is_some());
    assert_eq!(r.result.steps.len(), 2);
}

#[test]
fn timestamps_in_different_bases_are_refused_clearly() {
    // Kernels on the epoch clock (1.7e15 µs), trace on a monotonic clock (5.6e10 µs).
    let k = csv_owned(&[
        ai("a", 1736408883686740.0, 10.0),
        ai("b", 1736408883686800.0, 10.0),
    ]);
    let t = trace(
        &[(1, 56635864386.8, 100.0)],
        &[host("aten::x", "cpu_op", 56635864390.0, 5.0, 1)],
    );
    let r = run_rank(k, Some(t), &rb());
    let p = r
        .problems
        .kept()
        .iter()
        .find(|p| p.code == "ANOM-TB-001")
        .expect("time-base error");
    assert!(p.message.contains("different bases"), "{}", p.message);
    assert!(!r.result.capabilities.trace);
    assert_ne!(r.result.step_method.as_str(), "marker");
}

#[test]
fn bom_crlf_quoted_tab_block_num_communication_device_id_variants() {
    let k = "\u{feff}Step Id,Device_id,Model ID,Task ID,Stream ID,Name,Type,OP State,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Num\r\n\
1,0,1,1,2,mm,MatMul,dynamic,AI_CORE,\"100.250\t\",10,0,8\r\n\
1,0,1,N/A,N/A,hcom_allReduce__1_0,hcom_allReduce_,N/A,COMMUNICATION,120,30,1,0\r\n";
    let r = run_rank(k.to_string(), None, &rb());
    assert_eq!(r.kernels.len(), 2);
    assert_eq!(r.kernels.start_ns()[0], 100_250);
    assert_eq!(r.kernels.stream_of(1), "hccl");
    assert_eq!(r.kernels.class()[1].as_str(), "HCCL");
    assert_eq!(r.kernels.row_of(1), 3);
}

#[test]
fn op_summary_renames_and_aggregate_only_tables() {
    let op = "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim\n\
0,1,1,3,main_kernel,main,N/A,MIX_AIC,1780676228921483.380\t,20.5,6958.620000,8\n";
    let ranks = run_files(
        &[(
            "cap/rank0_ascend_pt/PROF_000001_x/mindstudio_profiler_output/op_summary_20260605.csv",
            op.into(),
        )],
        &rb(),
    );
    let r = &ranks[0];
    assert_eq!(r.kernels.len(), 1);
    assert_eq!(r.kernels.class()[0].as_str(), "AI_CORE");
    assert_eq!(r.kernels.wait_ns()[0], 6_958_620);
    assert!(r
        .result
        .limitations
        .iter()
        .any(|l| l.contains("op_summary")));
    let agg = "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us)\nMatMul,AI_CORE,3,30,5,10,15\n";
    let ranks = run_files(
        &[(
            "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/op_summary_1.csv",
            agg.into(),
        )],
        &rb(),
    );
    assert!(!ranks[0].result.enabled);
    assert!(ranks[0]
        .result
        .limitations
        .iter()
        .any(|l| l.contains("aggregate columns only")));
}

#[test]
fn trace_only_rank_uses_device_lanes_and_wrapped_traces_work() {
    let ev = vec![
        r#"{"ph":"X","name":"MatMul","pid":9,"tid":7,"ts":"100.000","dur":10}"#.to_string(),
        r#"{"ph":"X","name":"Add","pid":9,"tid":7,"ts":"200.000","dur":10}"#.to_string(),
    ];
    let t = format!("{{\"traceEvents\": {}}}", trace(&[(1, 90.0, 200.0)], &ev));
    let ranks = run_files(&[(TV, t)], &rb());
    let r = &ranks[0];
    assert_eq!(r.kernels.len(), 2);
    assert_eq!(r.kernels.stream_of(0), "7");
    assert_eq!(r.result.steps[0].step_id, "ProfilerStep#1");
    assert_eq!(r.result.steps[0].metrics.prelaunch_ns, 10_000);
    assert!(r
        .result
        .limitations
        .iter()
        .any(|l| l.contains("device lanes")));
}

#[test]
fn garbage_inputs_never_panic() {
    let cases: Vec<(&str, String)> = vec![
        (KD, String::new()),
        (KD, "\u{0}\u{1}not,a\ncsv\"unterminated".into()),
        (TV, "{\"traceEvents\": 5}".into()),
        (
            TV,
            "[{\"ph\":\"X\",\"ts\":\"1e400\",\"dur\":\"x\"}, 3, \"s\", {}]".into(),
        ),
        (
            "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
            "{\"step1\": {\"collective\": 7}}".into(),
        ),
        (
            "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
            "Step,Stage\nx,y\n".into(),
        ),
    ];
    for (path, body) in cases {
        let mut files = vec![(KD, csv_owned(&[ai("a", 0.0, 10.0)]))];
        files.retain(|f| f.0 != path);
        files.push((path, body));
        let ranks = run_files(&files, &rb());
        assert!(ranks.len() <= 1);
    }
}

fn problem<'a>(
    r: &'a proflens::engine::read::RankAnalysis,
    code: &str,
) -> &'a proflens::base::Problem {
    r.problems
        .kept()
        .iter()
        .find(|p| p.code == code)
        .unwrap_or_else(|| panic!("no {code} in {:?}", r.problems.kept()))
}

/// Garbage in the middle of the event array used to drop the whole trace with a
/// Rust debug value (`Syntax { expected: … }`); now the events before it are used (marker 1
/// still gives its step) and the message says where, as in the memory path.
#[test]
fn garbage_mid_array_keeps_the_events_before_it() {
    let k = csv_owned(&[ai("a", 0.0, 10.0), ai("b", 100.0, 10.0)]);
    let t = trace(&[(1, 0.0, 50.0)], &[]);
    let cut = t.len() - 1;
    let bad = format!("{}, @@@ {}]", &t[..cut], host("x", "cpu_op", 100.0, 5.0, 1));
    let r = run_rank(k, Some(bad), &rb());
    let p = problem(&r, "ANOM-TV-004");
    let at = cut + 2;
    assert_eq!(p.at.byte, Some(at as u64));
    assert_eq!(
        p.message,
        format!("expected an event, `,` or `]`; 3 events before it are used (the last one ends at byte {cut}); the rest of the file is not read")
    );
    assert!(r.problems.kept().iter().all(|p| !p.message.contains('{')));
    assert_eq!(r.result.step_method.as_str(), "marker");
    assert_eq!(r.result.steps[0].step_id, "ProfilerStep#1");
}

/// Unreadable `ts` / `dur` (1e400, NaN) were dropped silently; they are counted
/// with the offsets of the first events, and the readable events are used.
#[test]
fn unreadable_ts_and_dur_are_counted_with_offsets() {
    let k = csv_owned(&[ai("a", 0.0, 10.0)]);
    let ev = [
        r#"{"ph":"X","name":"big","pid":1,"tid":1,"ts":"1e400","dur":1}"#.to_string(),
        r#"{"ph":"X","name":"nan","pid":1,"tid":1,"ts":NaN,"dur":1}"#.to_string(),
        r#"{"ph":"X","name":"nandur","pid":1,"tid":1,"ts":"5","dur":NaN}"#.to_string(),
        host("ok", "cpu_op", 6.0, 2.0, 1),
    ];
    let t = trace(&[(1, 0.0, 50.0)], &ev);
    let off = |s: &str| t.find(s).unwrap() as u64;
    let (big, nan, nandur) = (off(&ev[0]), off(&ev[1]), off(&ev[2]));
    let r = run_rank(k, Some(t.clone()), &rb());
    let p = problem(&r, "ANOM-TV-003");
    assert_eq!(p.at.byte, Some(big));
    assert_eq!(p.message, format!("trace_view.json: 2 × event without a readable `ts` (missing, NaN, out of range or not a decimal µs number): skipped; at bytes {big}, {nan}"));
    let p = problem(&r, "ANOM-TV-015");
    assert_eq!(p.message, format!("trace_view.json: 1 × event whose `dur` is missing or unreadable: duration taken as 0; at byte {nandur}"));
    let trace = r.trace.as_ref().unwrap();
    let names: Vec<&str> = trace.events().iter().map(|e| trace.text(e.name)).collect();
    assert_eq!(names, ["ProfilerStep#1", "ok"]);
}

/// Invalid UTF-8 in a name (kept lossy, flagged), a duplicate key (last wins, as
/// JSON.parse; was: first wins silently), a raw control byte, `,]` and bytes after the array
/// (were: no diagnostic), a UTF-8 BOM (was: "expected `[` or `{`") and UTF-16 (named).
#[test]
fn strings_keys_commas_bom_and_encodings() {
    let k = csv_owned(&[ai("a", 0.0, 10.0)]);
    let t = trace(
        &[(1, 0.0, 50.0)],
        &[
            r#"{"ph":"X","name":"first","name":"second","pid":1,"tid":1,"ts":"6","dur":2}"#.into(),
            "{\"ph\":\"X\",\"name\":\"ctl\u{1}\",\"pid\":1,\"tid\":1,\"ts\":\"8\",\"dur\":1}"
                .into(),
            r#"{"ph":"X","name":"BAD","pid":1,"tid":1,"ts":"9","dur":1}"#.into(),
        ],
    );
    let dup = t.find(r#"{"ph":"X","name":"first""#).unwrap() as u64;
    let ctl = t.find("{\"ph\":\"X\",\"name\":\"ctl").unwrap() as u64 + 3;
    let bad = t.find(r#"{"ph":"X","name":"BAD""#).unwrap() as u64 + 3;
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend_from_slice(t[..t.len() - 1].replace("BAD", "b\u{0}d").as_bytes());
    let z = bytes.iter().position(|&b| b == 0).unwrap();
    bytes[z] = 0xFF; // "b\xFFd": invalid UTF-8
    bytes.extend_from_slice(b",] x");
    let comma = bytes.len() as u64 - 4;
    let r = &run_bytes(&[(KD, k.clone().into_bytes()), (TV, bytes.clone())], &rb())[0];
    let p = problem(r, "ANOM-TV-012");
    assert_eq!(
        (p.severity, p.at.byte),
        (proflens::base::Severity::Info, Some(0))
    );
    assert_eq!(
        p.message,
        "trace_view.json starts with a UTF-8 byte-order mark (EF BB BF); skipped"
    );
    assert_eq!(problem(r, "ANOM-TV-007").at.byte, Some(dup + 3));
    // String flaws at the offending byte (was: the start of the event).
    assert!(bytes[z - 1] == b'b' && ctl < z as u64 && bad < z as u64);
    let ctl_byte = bytes.iter().position(|&b| b == 1).unwrap() as u64;
    assert_eq!(problem(r, "ANOM-TV-006").at.byte, Some(ctl_byte));
    assert_eq!(problem(r, "ANOM-TV-005").at.byte, Some(z as u64));
    assert_eq!(problem(r, "ANOM-TV-009").at.byte, Some(comma));
    assert_eq!(problem(r, "ANOM-TV-008").at.byte, Some(comma + 3));
    let trace = r.trace.as_ref().unwrap();
    let names: Vec<&str> = trace.events().iter().map(|e| trace.text(e.name)).collect();
    assert_eq!(
        names,
        ["ProfilerStep#1", "second", "ctl\u{1}", "b\u{FFFD}d"]
    );

    let utf16: Vec<u8> = t.encode_utf16().flat_map(|u| u.to_be_bytes()).collect();
    let r = &run_bytes(&[(KD, k.into_bytes()), (TV, utf16)], &rb())[0];
    let p = problem(r, "ANOM-FILE-001");
    assert_eq!(
        p.message,
        "the text is UTF-16 BE (a zero byte before the first character), not supported: re-save the file as UTF-8; file not used"
    );
    assert!(r.result.enabled);
}

/// A trace with host events only (a memory-only capture such as the RL-Insight
/// memory folder) has no kernels: an error saying what is missing and how to capture it,
/// at the trace's path, not zero-length steps without a word.
#[test]
fn a_trace_without_device_events_is_an_error_that_says_how_to_capture() {
    let t = trace(
        &[(1, 1000.0, 500.0)],
        &[host("aten::mm", "cpu_op", 1100.0, 10.0, 1)],
    );
    let r = run_files(
        &[(
            "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
            t,
        )],
        &rb(),
    );
    assert_eq!(r.len(), 1);
    assert!(r[0].kernels.is_empty());
    let p: Vec<_> = r[0]
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "ANOM-FILE-002")
        .collect();
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].severity, proflens::base::Severity::Error);
    assert_eq!(
        p[0].at.to_string(),
        "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    );
    assert!(
        p[0].message.contains("ProfilerActivity.NPU"),
        "{}",
        p[0].message
    );
    assert!(p[0].message.contains("kernel_details.csv is written"));
    assert!(!r[0].result.enabled);
}
