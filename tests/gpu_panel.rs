//! The page's GPU panel, driven natively through the worker's session as the
//! browser drives it: on HTA's `trace_filter` pair (two real GPU ranks) every number of
//! `AnomalyQuery::Gpu` equals the `gpu` block of `proflens anomaly`'s JSON (HTA 0.5.0's own
//! breakdowns, pinned in `tests/gpu_anomaly_json.rs`), and the straggler view built from the
//! two ranks' `AnomalyQuery::Collectives` (as if from two workers) equals the JSON's straggler
//! rows; on the tb_plugin sample the `[memory]` counter curve holds the JSON's peak.

use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::session::Session;
use proflens::protocol::anomaly::{AnomalyQuery, AnomalyReply};
use proflens::protocol::gpu::{CollectivesDto, GpuPanelDto};
use proflens::protocol::{AnalysisKind, Query, Request, Response};
use proflens::views::gpu::straggler_view;
use serde_json::Value;

const TF: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/facebookresearch__HolisticTraceAnalysis/tests/data/trace_filter"
);
const TB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/xiaobingling93-pixel__Ascend-mstt/plugins/tensorboard-plugins/tb_plugin/samples/resnet50_num_workers_0"
);

mod session_common;
use session_common::{open_dir, send as ask};

/// A session that opened `dir` and ran the anomaly analysis on its first `ranks` rank folders.
fn session(dir: &str, ranks: u32) -> (Session, FsOpener) {
    let mut s = Session::new();
    let (opener, _) = open_dir(&mut s, std::path::Path::new(dir));
    ask(
        &mut s,
        &opener,
        2,
        Request::run(AnalysisKind::Anomaly, (0..ranks).collect::<Vec<u32>>()),
    );
    (s, opener)
}

fn query(s: &mut Session, o: &FsOpener, q: AnomalyQuery) -> AnomalyReply {
    let out = ask(s, o, 9, Request::Query(Query::Anomaly(q)));
    match out.out.into_iter().next().map(|(_, r)| r) {
        Some(Response::Reply(proflens::protocol::Reply::Anomaly(r))) => r,
        other => panic!("{other:?}"),
    }
}

fn panel(s: &mut Session, o: &FsOpener, rank: u32) -> GpuPanelDto {
    match query(
        s,
        o,
        AnomalyQuery::Gpu {
            rank,
            width_px: 300,
        },
    ) {
        AnomalyReply::Gpu(p) => *p,
        other => panic!("{other:?}"),
    }
}

fn cli_json(dir: &str) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["anomaly", dir])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn panel_and_straggler_view_equal_the_cli_gpu_block() {
    let json = cli_json(TF);
    let (mut s, o) = session(TF, 2);
    let mut colls: Vec<CollectivesDto> = Vec::new();
    for rank in 0..2u32 {
        let g = &json[rank as usize]["gpu"];
        let p = panel(&mut s, &o, rank);
        let t = p
            .time
            .expect("a GPU trace with kernels has a temporal breakdown");
        let b = &g["gpu_time_breakdown"];
        assert_eq!(
            [t.span_us, t.idle_us, t.compute_us, t.non_compute_us],
            ["span_us", "idle_us", "compute_us", "non_compute_us"].map(|k| b[k].as_i64().unwrap())
        );
        let idle = g["idle_by_stream"].as_array().unwrap();
        assert_eq!(p.idle_by_stream.len(), idle.len());
        for (row, j) in p.idle_by_stream.iter().zip(idle) {
            assert_eq!(row.stream, j["stream"].as_i64().unwrap());
            assert_eq!(row.host_wait_us, j["host_wait_us"].as_i64());
            assert_eq!(row.kernel_wait_us, j["kernel_wait_us"].as_i64());
            assert_eq!(row.other_us, j["other_us"].as_i64().unwrap());
            assert_eq!(
                row.idle_us,
                row.host_wait_us.unwrap_or(0) + row.kernel_wait_us.unwrap_or(0) + row.other_us
            );
        }
        assert!(p.window_note.starts_with("HTA parity window"));
        // The categories and kernel tables cover the whole capture; the HTA figures do not:
        // the panel says so (trace_filter rank 0: 1,144 + 10 + 50 = 1,204 device ops, 602 of
        // them launched in the last of the 2 ProfilerSteps; rank 1: 1,094 + 10 + 50 = 1,154,
        // 577; the totals counted by hand: kernel + gpu_memcpy + gpu_memset events per file).
        let (ops, dropped) = [(1204, 602), (1154, 577)][rank as usize];
        assert_eq!(
            p.categories_note,
            format!("Whole capture: all {ops} device ops (kernels, memcpy, memset) of the 2 ProfilerSteps, the last one included; the HTA figures above leave out the {dropped} launched in the last step.")
        );
        assert_eq!(p.categories.iter().map(|c| c.count).sum::<u64>(), ops);
        for (c, j) in p
            .categories
            .iter()
            .zip(g["kernel_categories"].as_array().unwrap())
        {
            assert_eq!(c.category, j["category"].as_str().unwrap());
            assert_eq!(c.count, j["count"].as_u64().unwrap());
            assert_eq!(c.sum_ms, j["sum_ms"].as_f64().unwrap());
            assert_eq!(c.busy_ms, j["busy_ms"].as_f64().unwrap());
        }
        let steps = g["steps"].as_array().unwrap();
        assert_eq!(p.steps.len(), steps.len());
        for (st, j) in p.steps.iter().zip(steps) {
            assert_eq!(st.step_id, j["step_id"].as_str().unwrap());
            assert_eq!(
                st.comm_compute_overlap_ms,
                j["comm_compute_overlap_ms"].as_f64().unwrap()
            );
            assert_eq!(st.exposed_comm_ms, j["exposed_comm_ms"].as_f64().unwrap());
            for k in 0..3 {
                assert_eq!(
                    st.busy_ms[k],
                    j["categories"][k]["busy_ms"].as_f64().unwrap()
                );
            }
        }
        // The JSON lists the top 20 names; the panel the same ones first, then more.
        let top = g["top_kernels"].as_array().unwrap();
        assert!(p.kernels.len() >= top.len() && p.kernel_names as usize >= p.kernels.len());
        for (k, j) in p.kernels.iter().zip(top) {
            assert_eq!(k.name, j["name"].as_str().unwrap());
            assert_eq!(k.count, j["count"].as_u64().unwrap());
            assert_eq!(k.total_ms, j["total_ms"].as_f64().unwrap());
        }
        let share: f64 = p.kernels.iter().map(|k| k.share_ratio).sum();
        assert!(share <= 1.0 + 1e-9, "{share}");
        assert!(p.memory.is_empty(), "trace_filter has no [memory] events");
        match query(&mut s, &o, AnomalyQuery::Collectives { rank }) {
            AnomalyReply::Collectives(c) => {
                // Every number on the wire fits a JavaScript number (53 bits).
                let js = 1i64 << 53;
                assert!(c.base_s.abs() < js && c.starts_ns.iter().all(|s| s.abs() < js));
                colls.push(c)
            }
            other => panic!("{other:?}"),
        }
    }
    let v = straggler_view(&colls);
    for (row, r) in v.rows.iter().zip(&json) {
        let j = &r["gpu"]["straggler"];
        assert_eq!(v.matched, j["collectives_matched"].as_u64().unwrap());
        assert_eq!(row.started_last, j["started_last"].as_u64().unwrap());
        assert_eq!(
            row.mean_start_delay_ms,
            j["mean_start_delay_ms"].as_f64().unwrap()
        );
        assert_eq!(
            row.max_start_delay_ms,
            j["max_start_delay_ms"].as_f64().unwrap()
        );
        assert_eq!(row.is_straggler, j["is_straggler"].as_bool().unwrap());
    }
    // Rank 1 starts 8 of the 10 matched collectives last (tests/gpu_anomaly_json.rs).
    assert_eq!((v.matched, v.rows[1].started_last), (10, 8));
    assert!(v.rows[1].is_straggler);
    // One role: one view, no group.
    assert!(!v.grouped && v.rows.iter().all(|r| r.group.is_none() && r.matched == 10));
}

/// Two roles (actor, critic) each linked to the trace_filter pair: the page's straggler view
/// from the four ranks' collectives is one view per role, the rows equal the CLI JSON's
/// (`group`, `collectives_matched`, `started_last`, `is_straggler`): each role's rank 1 starts
/// 8 of 10 collectives last.
#[cfg(unix)]
#[test]
fn straggler_view_per_role_equals_the_cli() {
    let run = std::env::temp_dir().join(format!("proflens_gpu_panel_roles_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&run);
    let tf = std::path::Path::new(TF).canonicalize().unwrap();
    for role in ["actor", "critic"] {
        let d = run.join(role);
        std::fs::create_dir_all(&d).unwrap();
        for f in ["sampled_rank-0.json.gz", "sampled_rank-1.json.gz"] {
            std::os::unix::fs::symlink(tf.join(f), d.join(f)).unwrap();
        }
    }
    let dir = run.to_str().unwrap();
    let json = cli_json(dir);
    let (mut s, o) = session(dir, 4);
    let colls: Vec<CollectivesDto> = (0..4)
        .map(
            |rank| match query(&mut s, &o, AnomalyQuery::Collectives { rank }) {
                AnomalyReply::Collectives(c) => c,
                other => panic!("{other:?}"),
            },
        )
        .collect();
    let v = straggler_view(&colls);
    assert!(v.grouped);
    let got: Vec<(Option<String>, u64, u64, bool)> = v
        .rows
        .iter()
        .map(|r| (r.group.clone(), r.matched, r.started_last, r.is_straggler))
        .collect();
    let cli: Vec<(Option<String>, u64, u64, bool)> = json
        .iter()
        .map(|r| {
            let j = &r["gpu"]["straggler"];
            (
                j["group"].as_str().map(str::to_string),
                j["collectives_matched"].as_u64().unwrap(),
                j["started_last"].as_u64().unwrap(),
                j["is_straggler"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, cli);
    let g = |r: &str| Some(r.to_string());
    assert_eq!(
        got,
        vec![
            (g("actor"), 10, 2, false),
            (g("actor"), 10, 8, true),
            (g("critic"), 10, 2, false),
            (g("critic"), 10, 8, true),
        ]
    );
    let _ = std::fs::remove_dir_all(&run);
}

#[test]
fn memory_counter_curve_holds_the_cli_peak() {
    let json = cli_json(TB);
    let (mut s, o) = session(TB, 1);
    let p = panel(&mut s, &o, 0);
    let mem = json[0]["gpu"]["memory"].as_array().unwrap();
    assert!(
        !mem.is_empty(),
        "the tb_plugin sample records [memory] events"
    );
    assert_eq!(p.memory.len(), mem.len());
    for (m, j) in p.memory.iter().zip(mem) {
        assert_eq!(
            m.peak_allocated_bytes,
            j["peak_allocated_bytes"].as_i64().unwrap()
        );
        assert_eq!(
            m.peak_allocated_at_ms,
            j["peak_allocated_at_ms"].as_f64().unwrap()
        );
        assert_eq!(m.samples, j["samples"].as_u64().unwrap());
        assert_eq!(m.allocated_source, j["allocated_source"].as_str().unwrap());
        // The curve's largest column maximum is the peak (MiB), and the marker sits on it.
        let top = m.curve.series[0]
            .max
            .iter()
            .copied()
            .filter(|v| !v.is_nan())
            .fold(f64::MIN, f64::max);
        let peak_mib = m.peak_allocated_bytes as f64 / 1048576.0;
        assert_eq!(top, peak_mib);
        assert_eq!(m.curve.peak, Some((m.peak_allocated_at_ms, peak_mib)));
        assert_eq!(m.curve.series[0].max.len(), 300);
    }
}
