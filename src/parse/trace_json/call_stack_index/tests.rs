use super::*;
use crate::model::host_events::CallStackIndex;

const EVENTS: &str = r#"{"ph":"X","name":"aten::add","pid":1,"tid":2,"ts":"1000.000","dur":5.5,"cat":"cpu_op","args":{"Sequence number":7,"Fwd thread id":0,"Call stack":"a.py(1): f;\r\nb.py(2): g"}},
{"ph":"X","name":"aten::add","pid":1,"tid":2,"ts":"900.5","dur":1,"cat":"cpu_op","args":{"Call stack":""}},
{"ph":"X","name":"aten::mul","pid":1,"tid":3,"ts":"950","dur":1,"cat":"cpu_op","args":{"Sequence number":-1}},
{"ph":"X","name":"kernel","pid":9,"tid":1,"ts":"960","dur":1,"args":{"Call stack":"not a cpu_op"}},
{"ph":"X","name":"f","pid":1,"tid":2,"ts":"960","dur":1,"cat":"python_function","args":{"Python id":1}},
{"ph":"s","name":"fwdbwd","id":12,"pid":1,"tid":2,"ts":"1000.000","cat":"fwdbwd"},
{"ph":"f","name":"fwdbwd","id":12,"pid":1,"tid":3,"ts":"2000.000","cat":"fwdbwd","bp":"e"}"#;

struct Out {
    strings: StringPool,
    stacks: StackPool,
    problems: Problems,
    res: Result<(HostOpTable, TraceStats), ParseError>,
}

fn run(text: &str, mode: TraceMode) -> Out {
    run_chunk(text, mode, 7)
}

/// Reads of 7 bytes hand every event over in pieces (the lenient scan, no index); one read
/// of the whole text hands them over indexed (the strict scan): the same result.
#[test]
fn indexed_events_give_what_plain_events_give() {
    let extra = r#",
{"ph":"X","name":"cpu_op\"","pid":1,"tid":2,"ts":"1","dur":1,"cat":"python_function"},
{"ph":"X","name":"a","pid":1,"tid":2,"ts":"2","dur":1,"args":{"cat":"cpu_op"}},
{"ph":"X","name":"b","pid":1,"tid":2,"ts":"3","dur":1,"cat":"x","cat":"cpu_op","args":{}},
{"ph":"X","name":"c","pid":1,"tid":2,"ts":"4","dur":1,"cat":"cpu_op","args":{"Call stack":"d.py(1): h","Call stack":"e"}},
{"ph":"X","name":"d","pid":1,"tid":2,"ts":"x","dur":1,"cat":"cpu_op","args":{"Sequence number":[1,{"a":2}]}},
{"ph":"s","name":"e","pid":1,"tid":2,"ts":"5","cat":"fwdbwd","cat":"other"},
{"ph":"X","name":"f","cat":"cpu_op" "ts":"6"},
{"ph":"X","name":"g","cat":"gpu","ts":"7","args":{"x":"cpu_op\""}}"#;
    let text = format!("[{EVENTS}{extra}]");
    for mode in [TraceMode::Parity, TraceMode::Default] {
        let (a, b) = (run_chunk(&text, mode, 7), run_chunk(&text, mode, 1 << 20));
        assert_eq!(format!("{:?}", a.res), format!("{:?}", b.res), "{mode:?}");
        assert_eq!(format!("{:?}", a.problems), format!("{:?}", b.problems));
        assert_eq!(a.strings.len(), b.strings.len());
        assert_eq!(a.stacks.len(), b.stacks.len());
    }
}

fn run_chunk(text: &str, mode: TraceMode, chunk: usize) -> Out {
    let mut strings = StringPool::new();
    let mut stacks = StackPool::new();
    let mut problems = Problems::new();
    let mut rdr = ChunkReader::with_sizes(text.as_bytes(), None, chunk, 1 << 20);
    let res = read_host_ops(
        &mut rdr,
        "r/trace_view.json",
        mode,
        &mut strings,
        &mut stacks,
        &mut problems,
        &mut |_| ControlFlow::Continue(()),
    );
    Out {
        strings,
        stacks,
        problems,
        res,
    }
}

#[test]
fn parity_keeps_cpu_op_with_call_stack_only() {
    let o = run(&format!("[{EVENTS}]"), TraceMode::Parity);
    let (host, stats) = o.res.unwrap();
    assert_eq!(host.len(), 2);
    assert_eq!(stats.with_stack, 2);
    assert_eq!(host.flows().len(), 0);
    let idx = CallStackIndex::build(&host);
    let add = o.strings.find("aten::add").unwrap();
    // grouped by name, sorted by ts: 900.5 then 1000
    let g: Vec<f64> = idx
        .parity_group(add)
        .iter()
        .map(|i| host.ts_us()[*i as usize])
        .collect();
    assert_eq!(g, [900.5, 1000.0]);
    assert_eq!(
        o.stacks.text(host.stack(0).unwrap()),
        "a.py(1): f;\r\nb.py(2): g"
    );
    assert_eq!(host.stack(1).map(|s| o.stacks.text(s)), Some(""));
}

#[test]
fn default_keeps_every_cpu_op_and_flows() {
    let o = run(&format!("[{EVENTS}]"), TraceMode::Default);
    let (host, stats) = o.res.unwrap();
    assert_eq!((stats.cpu_ops, stats.with_stack, stats.flows), (3, 2, 2));
    assert_eq!(host.ts_ns(), &[1_000_000, 900_500, 950_000]);
    assert_eq!(host.dur_ns(), &[5_500, 1_000, 1_000]);
    assert_eq!(host.seq(0), Some(7));
    assert_eq!(host.fwd_tid(0), Some(0));
    assert_eq!(host.seq(2), Some(-1));
    assert_eq!(host.stack(2), None);
    assert_eq!(host.thread()[0], host.thread()[1]);
    assert_ne!(host.thread()[0], host.thread()[2]);
    assert!(host.flows()[0].is_start && !host.flows()[1].is_start);
    assert_eq!(host.flows()[0].id, host.flows()[1].id);
    assert!(o.problems.is_empty());
}

#[test]
fn empty_array_gives_an_empty_index() {
    for mode in [TraceMode::Parity, TraceMode::Default] {
        let (host, _) = run("[]", mode).res.unwrap();
        assert!(host.is_empty());
    }
    let e = run("", TraceMode::Default);
    assert!(matches!(e.res.unwrap_err().kind(), ParseErrorKind::Empty));
}

#[test]
fn wrapped_trace_is_empty_in_parity_and_full_in_default() {
    let text = format!("{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[{EVENTS}]}}");
    let (host, stats) = run(&text, TraceMode::Parity).res.unwrap();
    assert!(host.is_empty());
    assert!(stats.scan.wrapped);
    let o = run(&text, TraceMode::Default);
    let (host, _) = o.res.unwrap();
    assert_eq!(host.len(), 3);
    assert_eq!(o.problems.kept()[0].code, "MEM-TV-001");
}

#[test]
fn truncated_trace_keeps_what_was_read_with_the_byte_offset() {
    let full = format!("[{EVENTS}]");
    let cut = full.find("{\"ph\":\"X\",\"name\":\"aten::mul\"").unwrap() + 30;
    let o = run(&full[..cut], TraceMode::Default);
    let (host, stats) = o.res.unwrap();
    assert_eq!(host.len(), 2);
    let p = &o.problems.kept()[0];
    assert_eq!(p.code, "MEM-TV-002");
    let at = stats.scan.truncated_at.unwrap();
    assert_eq!(p.at.byte, Some(at));
    assert_eq!(at as usize, cut);
    let start = cut - 30;
    let last = stats.scan.last_event_end.unwrap();
    assert_eq!(
        p.message,
        format!("trace_view.json ends early (at byte {cut}, inside the event that starts at byte {start}); events read so far are used (2 events; the last one ends at byte {last})")
    );
    assert!(run(&full[..cut], TraceMode::Parity).res.is_err());
}

#[test]
fn missing_ts_fails_parity_and_is_counted_in_default() {
    let text = r#"[{"name":"a","cat":"cpu_op","args":{"Call stack":"x.py(1): f"}}]"#;
    let p = run(text, TraceMode::Parity);
    assert!(p.res.is_err());
    assert_eq!(p.problems.kept()[0].code, "MEM-TV-003");
    let d = run(text, TraceMode::Default);
    let (host, stats) = d.res.unwrap();
    assert!(host.is_empty());
    assert_eq!(stats.bad_ts, 1);
    assert_eq!(d.problems.kept()[0].code, "MEM-TV-003");
}

#[test]
fn garbage_after_events_keeps_them_in_default() {
    let text = format!("[{EVENTS}, }} garbage");
    let d = run(&text, TraceMode::Default);
    let (host, _) = d.res.unwrap();
    assert_eq!(host.len(), 3);
    assert_eq!(d.problems.kept()[0].code, "MEM-TV-004");
    assert!(run(&text, TraceMode::Parity).res.is_err());
    assert!(run("not json", TraceMode::Default).res.is_err());
}
