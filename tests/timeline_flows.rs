//! `AnomalyQuery::Flows` (views::timeline_flows) through the worker's session handler on real
//! traces: a GPU rank (HTA's `nccl_data.json.gz`, Kineto `ac2g` flows and correlation ids) and
//! an Ascend rank (msinsight level1 `rank0_ascend_pt`, `async_npu` and `HostToDevice` flows).
//! The expected links were read from the JSON by hand and checked with a short Python reading
//! (quoted beside each assertion).

mod session_common;

use std::path::Path;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::Session;
use proflens::protocol::{
    AnalysisKind, AnomalyQuery, AnomalyReply, LaneKind, Query, Reply, Request, Response,
    TimelineFlowsDto, TimelineItemDto,
};
use session_common::{open_dir, send};

fn fixtures() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/fixtures/ascend")
}

fn query(s: &mut Session, o: &FsOpener, q: AnomalyQuery) -> AnomalyReply {
    let mut out = send(s, o, 9, Request::Query(Query::Anomaly(q)));
    assert_eq!(out.out.len(), 1, "{:?}", out.out);
    match out.out.pop().unwrap().1 {
        Response::Reply(Reply::Anomaly(r)) => {
            // The reply survives the wire format.
            let json = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<AnomalyReply>(&json).unwrap(), r);
            r
        }
        other => panic!("{other:?}"),
    }
}

/// The session with folder `dir` opened and rank 0's anomaly analysis run.
fn session(dir: &Path) -> (Session, FsOpener) {
    let mut s = Session::new();
    let (o, _) = open_dir(&mut s, dir);
    send(&mut s, &o, 2, Request::run(AnalysisKind::Anomaly, vec![0]));
    (s, o)
}

/// The item named `name` (search) that starts at absolute µs `start_us`.
fn find(s: &mut Session, o: &FsOpener, name: &str, start_us: &str) -> TimelineItemDto {
    let AnomalyReply::Search(f) = query(
        s,
        o,
        AnomalyQuery::Search {
            rank: 0,
            text: name.into(),
            limit: 10_000,
        },
    ) else {
        panic!("search reply");
    };
    f.matches
        .into_iter()
        .find(|m| m.start_us == start_us && m.name == name)
        .unwrap_or_else(|| panic!("{name} at {start_us}"))
}

fn flows(s: &mut Session, o: &FsOpener, it: &TimelineItemDto) -> TimelineFlowsDto {
    let AnomalyReply::Flows(f) = query(
        s,
        o,
        AnomalyQuery::Flows {
            rank: 0,
            lane: it.lane,
            index: it.index,
            limit: 100,
        },
    ) else {
        panic!("flows reply");
    };
    assert_eq!((f.lane, f.index), (it.lane, it.index));
    f
}

const NCCL_KERNEL: &str =
    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)";

#[test]
fn gpu_kernel_and_host_ops_link_by_correlation_and_ac2g() {
    let dir =
        fixtures().join("facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config");
    let (mut s, o) = session(&dir);
    // nccl_data.json.gz, lines 112524–112545: the kernel (pid 0, tid 40, ts 4458677009853.422,
    // correlation 60047), its `ac2g` f at the same ts, the launching `cudaLaunchKernelExC`
    // (pid 2910249, tid 2919752, ts 4458677009840.015, dur 12.422, correlation 60047) and the
    // `ac2g` s at the call's ts.
    let k = find(&mut s, &o, NCCL_KERNEL, "4458677009853.422");
    assert_eq!(k.kind, LaneKind::Device);
    assert_eq!(k.stream, "40");
    let f = flows(&mut s, &o, &k);
    assert_eq!(f.total, 1);
    let l = &f.flows[0];
    assert_eq!((l.kind.as_str(), l.id.as_str()), ("ac2g", "60047"));
    assert_eq!(l.device, k);
    assert_eq!(l.host.name, "cudaLaunchKernelExC");
    assert_eq!(l.host.start_us, "4458677009840.015");
    assert!((l.host.dur_us - 12.422).abs() < 1e-9, "{}", l.host.dur_us);
    assert_eq!(l.host.stream, "2910249/2919752");
    assert_eq!(l.host.kind, LaneKind::Host);
    // A GPU rank's runtime lane is named for what it is, not after Ascend's CANN.
    assert_eq!(l.host.core, "runtime");
    // The arrow: from the flow's s (= the call's start) to its f (= the kernel's start).
    assert_eq!(l.from_ms, l.host.start_ms);
    assert_eq!(l.to_ms, k.start_ms);
    assert!(((l.to_ms - l.from_ms) - 0.013407).abs() < 1e-9);
    // The call itself links to the kernel.
    let call = flows(&mut s, &o, &l.host);
    assert_eq!(call.total, 1);
    assert_eq!(call.flows[0].device, k);
    // Its enclosing op: `record_param_comms` (ts 4458677009788.685, dur 181.827) runs eleven
    // runtime calls; only `cudaLaunchKernelExC` (correlation 60047) launched a device op.
    let op = find(&mut s, &o, "record_param_comms", "4458677009788.685");
    let f = flows(&mut s, &o, &op);
    assert_eq!(f.total, 1);
    assert_eq!(f.flows[0].device, k);
    assert_eq!(f.flows[0].host, l.host);
    // `c10d::allreduce_` (ts 4458677009744.644) holds the same launch.
    let outer = find(&mut s, &o, "c10d::allreduce_", "4458677009744.644");
    assert_eq!(flows(&mut s, &o, &outer).flows, f.flows);
    // Unknown items: no links, no failure.
    let none = flows(
        &mut s,
        &o,
        &TimelineItemDto {
            index: u32::MAX,
            ..k.clone()
        },
    );
    assert_eq!((none.total, none.flows.len()), (0, 0));
}

#[test]
fn gpu_host_op_lists_its_kernels_in_launch_order_with_a_cap() {
    let dir =
        fixtures().join("facebookresearch__HolisticTraceAnalysis/tests/data/nccl_parser_config");
    let (mut s, o) = session(&dir);
    let op = find(&mut s, &o, "c10d::allreduce_", "4458677009744.644");
    let AnomalyReply::Flows(capped) = query(
        &mut s,
        &o,
        AnomalyQuery::Flows {
            rank: 0,
            lane: op.lane,
            index: op.index,
            limit: 0,
        },
    ) else {
        panic!("flows reply");
    };
    assert_eq!((capped.total, capped.flows.len()), (1, 0));
}

#[test]
fn ascend_kernel_and_host_ops_link_by_trace_flows() {
    let dir = fixtures().join("Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt");
    let (mut s, o) = session(&dir);
    // trace_view.json: kernel `Conv2D2` (kernel_details.csv, stream 2, start
    // 1736408883706918.838) ends two flows: `async_npu` id 1736408883706918838 from the
    // Python thread at 1736408883705380.440 (innermost host event there: the `Conv2D` cpu_op,
    // dur 165.13) and `HostToDevice` id 40006882869110636543 (20 digits) from the CANN thread
    // at 1736408883706743.110 (innermost: `Node@launch` at 1736408883706740.400, dur 4.53).
    let k = find(&mut s, &o, "Conv2D2", "1736408883706918.838");
    assert_eq!(k.stream, "2");
    let f = flows(&mut s, &o, &k);
    assert_eq!(f.total, 2);
    let got: Vec<(&str, &str, &str, &str)> = f
        .flows
        .iter()
        .map(|l| {
            (
                l.kind.as_str(),
                l.id.as_str(),
                l.host.name.as_str(),
                l.host.start_us.as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "async_npu",
                "1736408883706918838",
                "Conv2D",
                "1736408883705380.440"
            ),
            (
                "HostToDevice",
                "40006882869110636543",
                "Node@launch",
                "1736408883706740.400"
            ),
        ]
    );
    assert!(f
        .flows
        .iter()
        .all(|l| l.device == k && l.to_ms == k.start_ms));
    // The arrow of the HostToDevice flow starts at its s, 2.71 µs into `Node@launch`.
    assert!((f.flows[1].from_ms - f.flows[1].host.start_ms - 0.00271).abs() < 1e-9);
    // `Node@launch` runs on a CANN thread of this Ascend rank.
    assert_eq!(f.flows[1].host.core, "CANN");
    // `Conv2D` launched four kernels (Python reading: the async_npu s ends on its thread
    // inside [705380.440, +165.13) whose f starts a kernel_details row), by flow id.
    let conv = f.flows[0].host.clone();
    let f = flows(&mut s, &o, &conv);
    let names: Vec<&str> = f.flows.iter().map(|l| l.device.name.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "trans_TransData_3",
            "trans_TransData_4",
            "Conv2D2",
            "trans_TransData_5"
        ]
    );
    assert_eq!(f.total, 4);
    assert!(f.flows.iter().all(|l| l.host == conv));
}
