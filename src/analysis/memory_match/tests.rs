use super::*;
use crate::model::host_events::{FlowPoint, HostOp};
use crate::model::memory_events::MemoryEvent;
use crate::model::stacks::StackPool;
use crate::model::strings::StringPool;

struct World {
    names: StringPool,
    stacks: StackPool,
    host: HostOpTable,
    mem: MemoryEventTable,
}

impl World {
    fn new() -> Self {
        World {
            names: StringPool::new(),
            stacks: StackPool::new(),
            host: HostOpTable::new(),
            mem: MemoryEventTable::new(),
        }
    }
    /// op at `ts_us` (integer µs) lasting `dur_us`, on thread `tid`.
    fn op(
        &mut self,
        name: &str,
        ts_us: i64,
        dur_us: i64,
        tid: &str,
        stack: Option<&str>,
        seq: i64,
        fwd: i64,
    ) -> usize {
        let name = self.names.intern(name);
        let stack = stack.map(|s| self.stacks.intern(s));
        let thread = self.host.thread_key("1", tid);
        self.host.push(HostOp {
            name,
            ts_ns: ts_us * 1000,
            ts_us: ts_us as f64,
            dur_ns: dur_us * 1000,
            thread,
            seq: Some(seq),
            fwd_tid: Some(fwd),
            stack,
        });
        self.host.len() - 1
    }
    fn row(&mut self, name: &str, t_ns: i64) {
        let name = self.names.intern(name);
        self.mem.push(MemoryEvent {
            name,
            size_kb: 1.0,
            alloc_time_ns: t_ns,
            alloc_time_us: t_ns as f64 / 1000.0,
            line: self.mem.len() as u64 + 2,
            ..Default::default()
        });
    }
    fn run(&self, opts: MatchOptions) -> Matches {
        let idx = CallStackIndex::build(&self.host);
        match_rows(&self.mem, &self.host, &idx, &opts)
    }
    fn top(&self, op: Option<usize>) -> String {
        op.and_then(|o| self.host.stack(o))
            .map(|s| {
                self.stacks
                    .text(s)
                    .split(";\r\n")
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .unwrap_or_default()
    }
}

#[test]
fn upstream_parity_cases() {
    let mut w = World::new();
    w.op(
        "aten::add",
        1000,
        10,
        "1",
        Some("fsdp2.py(10): func1;\r\nmain.py(1): m"),
        -1,
        0,
    );
    w.op(
        "aten::add",
        1200,
        10,
        "1",
        Some("fsdp2.py(20): func2;\r\nmain.py(1): m"),
        -1,
        0,
    );
    w.op("aten::add", 900, 10, "1", None, -1, 0); // no stack: never in the index
    w.row("aten::add", 1_100_000); // between → first
    w.row("aten::add", 1_200_000); // exact ts
    w.row("aten::add", 500_000); // all later
    w.row("aten::mul", 1_100_000); // unknown name
    let m = w.run(MatchOptions::default());
    assert_eq!(w.top(m.parity_op(0)), "fsdp2.py(10): func1");
    assert_eq!(w.top(m.parity_op(1)), "fsdp2.py(20): func2");
    assert_eq!(m.parity_op(2), None);
    assert_eq!(m.parity_op(3), None);
    assert_eq!(m.quality(0), MatchQuality::NearestBefore);
    assert_eq!(m.quality(1), MatchQuality::Exact);
    assert_eq!(m.quality(2), MatchQuality::None);
    assert_eq!(m.quality(3), MatchQuality::None);
}

#[test]
fn ties_at_equal_ts_pick_the_last_entry() {
    let mut w = World::new();
    w.op("a", 100, 0, "1", Some("first.py(1): f"), -1, 0);
    w.op("a", 100, 0, "1", Some("second.py(1): f"), -1, 0);
    w.row("a", 150_000);
    let m = w.run(MatchOptions::default());
    assert_eq!(w.top(m.parity_op(0)), "second.py(1): f");
    assert_eq!(w.top(m.stack_op(0)), "second.py(1): f");
}

#[test]
fn enclosing_first_and_lag_limit() {
    let mut w = World::new();
    w.op("a", 100, 1000, "1", Some("outer.py(1): f"), -1, 0); // encloses 500
    w.op("a", 300, 10, "1", Some("short.py(1): f"), -1, 0); // ended before 500
    w.row("a", 500_000);
    w.row("a", 200_000); // only the first precedes, and encloses it
    let m = w.run(MatchOptions::default());
    assert_eq!(w.top(m.stack_op(0)), "short.py(1): f");
    assert_eq!(m.quality(0), MatchQuality::NearestBefore);
    let m = w.run(MatchOptions {
        strategy: MatchStrategy::EnclosingFirst,
        ..Default::default()
    });
    assert_eq!(w.top(m.stack_op(0)), "outer.py(1): f");
    assert_eq!(m.quality(0), MatchQuality::Enclosing);
    assert_eq!(m.quality(1), MatchQuality::Enclosing);
    // parity is unaffected by the strategy
    assert_eq!(w.top(m.parity_op(0)), "short.py(1): f");
    let m = w.run(MatchOptions {
        max_match_lag_us: Some(150.0),
        via_forward: false,
        ..Default::default()
    });
    assert_eq!(m.quality(0), MatchQuality::None); // lag 200 µs
    assert_eq!(m.quality(1), MatchQuality::Enclosing); // lag 100 µs
}

#[test]
fn exact_ns_comparison_differs_from_parity_float() {
    // 1736408883688177.930 and .940 µs round to the same f64; exact ns keeps them apart.
    let mut w = World::new();
    let name = w.names.intern("a");
    let thread = w.host.thread_key("1", "1");
    for (ns, st) in [
        (1_736_408_883_688_177_940i64, "late.py(1): f"),
        (1_736_408_883_688_177_930, "early.py(1): f"),
    ] {
        let stack = Some(w.stacks.intern(st));
        w.host.push(HostOp {
            name,
            ts_ns: ns,
            ts_us: "1736408883688177.9".parse::<f64>().unwrap(),
            dur_ns: 0,
            thread,
            seq: None,
            fwd_tid: None,
            stack,
        });
    }
    w.mem.push(MemoryEvent {
        name,
        alloc_time_ns: 1_736_408_883_688_177_935,
        alloc_time_us: "1736408883688177.935".parse::<f64>().unwrap(),
        ..Default::default()
    });
    let m = w.run(MatchOptions::default());
    assert_eq!(w.top(m.stack_op(0)), "early.py(1): f");
    // parity sees equal floats: file order, the last one wins
    assert_eq!(w.top(m.parity_op(0)), "early.py(1): f");
}

#[test]
fn via_forward_on_a_three_event_trace() {
    // forward op with a stack and Sequence number 7 on thread 1; backward node XBackward0 with
    // Sequence number 7 / Fwd thread id 1 on thread 2; a child op named like the CSV row.
    let mut w = World::new();
    w.op(
        "aten::x",
        100,
        50,
        "1",
        Some("/home/u/model.py(12): forward;\r\n<string>(1): <module>"),
        7,
        0,
    );
    w.op("XBackward0", 1000, 100, "2", None, 7, 1);
    w.op("aten::x_backward", 1010, 50, "2", None, -1, 0);
    w.row("aten::x_backward", 1_020_000);
    w.row("aten::x_backward", 5_000_000); // outside every op: none
    let m = w.run(MatchOptions::default());
    assert_eq!(m.quality(0), MatchQuality::ViaForward);
    assert_eq!(m.matched_op(0), Some(2));
    assert_eq!(m.stack_op(0), Some(0));
    assert_eq!(m.parity_op(0), None);
    assert_eq!(m.quality(1), MatchQuality::None);
    let m = w.run(MatchOptions {
        via_forward: false,
        ..Default::default()
    });
    assert_eq!(m.quality(0), MatchQuality::None);
    assert_eq!(m.quality_counts(), [0, 0, 0, 0, 2]);
}

#[test]
fn via_forward_follows_fwdbwd_flows_without_sequence_numbers() {
    let mut w = World::new();
    w.op(
        "aten::conv2d",
        100,
        50,
        "1",
        Some("/home/u/net.py(3): forward"),
        -1,
        0,
    );
    w.op("aten::conv_backward", 1000, 100, "2", None, -1, 0);
    let id = w.names.intern("77");
    let t1 = w.host.thread_key("1", "1");
    let t2 = w.host.thread_key("1", "2");
    w.host.push_flow(FlowPoint {
        id,
        is_start: true,
        ts_ns: 100_000,
        thread: t1,
    });
    w.host.push_flow(FlowPoint {
        id,
        is_start: false,
        ts_ns: 1_000_000,
        thread: t2,
    });
    w.row("aten::conv_backward", 1_050_000);
    let m = w.run(MatchOptions::default());
    assert_eq!(m.quality(0), MatchQuality::ViaForward);
    assert_eq!(m.stack_op(0), Some(0));
}
