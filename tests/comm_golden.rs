//! Golden values of communication.md §5 on the fixtures: MSI-ST (ranks 0, 1, 3 of a 4-rank
//! PP2×DP2 run, rank 2 missing), MSI-L1 (ranks 0, 1 of 8), MSI-L2r0; parity and default modes;
//! bad input (a cut file, an unknown era, a group only one rank names).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use proflens::analysis::comm::{CommOptions, CommReport, MatrixRow};
use proflens::base::Problems;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::{self, Plan};
use proflens::ingest::inventory::Inventory;

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/fixtures/ascend/Ascend__msinsight/"
    ))
    .join(rel)
}

fn run_dir(dir: &Path, parity: bool) -> (CommReport, Problems) {
    let (opener, files) = FsOpener::walk(dir).expect("fixture folder");
    let mut inv = Inventory::from_paths(&files);
    proflens::parse::metadata::read_side_files(&mut inv, &opener);
    let opts = CommOptions { parity, step: None };
    let plan = Plan {
        comm: Some(opts.clone()),
        ..Plan::none()
    };
    let store = engine::run(&inv, &opener, plan, &mut |_| ControlFlow::Continue(()));
    proflens::engine::export::comm::report(&store, &[], &opts).expect("not cancelled")
}

fn st(parity: bool) -> (CommReport, Problems) {
    run_dir(&fixture("test/st/level2"), parity)
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol, "{what}: got {a}, expected {b}");
}

/// group | rank set | rank | ops | elapse | transit | wait | sync | idle | wait r | sync r
/// (times rounded to 5 decimals in the spec; ratios exact).
const ST_TIME: &str = "
3985310379703952346 | (0,) | 0 | 3 | 4.02776 | 0.0 | 3.99188 | 3.99188 | 0.03588 | 1.0 | 1.0
3985310405473756128 | (0,) | 0 | 3 | 313.8778 | 0.0 | 158.50548 | 158.50548 | 155.37232 | 1.0 | 1.0
3985310491373102170 | (0,) | 0 | 1 | 34.62392 | 0.0 | 0.0 | 0.0 | 34.62392 | 0 | 0
5862276093215481612 | (0, 1, 3) | 0 | 4 | 2.23244 | 0.0 | 1.64618 | 1.64618 | 0.58626 | 1.0 | 1.0
5862276114690318097 | (0, 1) | 0 | 4 | 65.41234 | 0.0 | 0.0 | 0.0 | 65.41234 | 0 | 0
3985310383998919643 | (1, 3) | 1 | 3 | 4.45914 | 0.0 | 4.42308 | 4.42308 | 0.03606 | 1.0 | 1.0
3985310499963036764 | (1, 3) | 1 | 3 | 322.98056 | 0.0 | 164.05138 | 164.05138 | 158.92918 | 1.0 | 1.0
3985310504258004061 | (1, 3) | 1 | 1 | 34.56272 | 0.0 | 0.0 | 0.0 | 34.56272 | 0 | 0
5862276093215481612 | (0, 1, 3) | 1 | 4 | 2.92572 | 0.00658 | 2.31228 | 1.12432 | 0.60686 | 0.9972 | 0.9942
5862276114690318097 | (0, 1) | 1 | 4 | 76.78024 | 0.0 | 0.0 | 0.0 | 76.78024 | 0 | 0
3985310383998919643 | (1, 3) | 3 | 3 | 0.05014 | 0.00618 | 0.01012 | 0.00004 | 0.03384 | 0.6209 | 0.0064
3985310401178788831 | (3,) | 3 | 6 | 0.01514 | 0.0 | 0.0 | 0.0 | 0.01514 | 0 | 0
3985310499963036764 | (1, 3) | 3 | 3 | 74.98674 | 0.0 | 0.80726 | 0.80726 | 74.17948 | 1.0 | 1.0
3985310504258004061 | (1, 3) | 3 | 1 | 120.94212 | 0.0 | 0.0 | 0.0 | 120.94212 | 0 | 0
5862276093215481612 | (0, 1, 3) | 3 | 4 | 0.07362 | 0.0063 | 0.01106 | 0.00006 | 0.05626 | 0.6371 | 0.0094
5862276106100383503 | (3,) | 3 | 2 | 0.0333 | 0.00418 | 0.00706 | 0.00002 | 0.02206 | 0.6281 | 0.0048
5862276123280252691 | (3,) | 3 | 4 | 65.39738 | 0.0 | 0.0 | 0.0 | 65.39738 | 0 | 0
";

fn cells(line: &str) -> Vec<&str> {
    line.split('|').map(str::trim).collect()
}

fn rank_set(v: &[i64]) -> String {
    match v {
        [one] => format!("({one},)"),
        _ => format!(
            "({})",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

#[test]
fn st_time_summary_is_msprof_analyzes_total_op_info_per_group() {
    let (rep, _) = st(true);
    assert_eq!(rep.ranks, [0, 1, 3]);
    let rows: Vec<&str> = ST_TIME.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(rep.time_summary.len(), rows.len());
    for (line, got) in rows.iter().zip(&rep.time_summary) {
        let c = cells(line);
        let what = format!("{} rank {}", c[0], c[2]);
        assert_eq!(got.step, "step13");
        assert_eq!(got.group, c[0], "{what}");
        assert_eq!(rank_set(&got.rank_set), c[1], "{what}");
        assert_eq!(got.rank.to_string(), c[2], "{what}");
        assert_eq!(got.n_ops.to_string(), c[3], "{what}");
        let f = |i: usize| c[i].parse::<f64>().unwrap();
        close(got.elapse_ms, f(4), 5e-6, &what);
        close(got.transit_ms, f(5), 5e-6, &what);
        close(got.wait_ms, f(6), 5e-6, &what);
        close(got.sync_ms, f(7), 5e-6, &what);
        close(got.idle_ms, f(8), 5e-6, &what);
        assert_eq!(got.wait_ratio, f(9), "{what} wait ratio");
        assert_eq!(got.sync_ratio, f(10), "{what} sync ratio");
    }
    // Exact double where the spec gives one.
    let mp0 = &rep.time_summary[0];
    assert!((mp0.wait_ms - 3.9918799999999997).abs() <= 1e-12 * 4.0);
}

#[test]
fn st_bandwidth_summary_hccs_rows_with_large_packet_ratio() {
    let (rep, _) = st(true);
    // group | rank | size MB | time ms | GB/s | LPR
    let want = [
        ("3985310405473756128", 0, 16.777216, 0.80238, 20.9093, 0.0),
        ("3985310491373102170", 0, 622.329856, 32.65338, 19.0587, 1.0),
        ("5862276093215481612", 0, 0.000288, 0.00414, 0.0696, 0.0),
        (
            "5862276114690318097",
            0,
            1127.44704,
            59.51352,
            18.9444,
            0.9091,
        ),
        (
            "5862276114690318097",
            1,
            1127.44704,
            59.51492,
            18.9439,
            0.9091,
        ),
        ("3985310504258004061", 3, 622.329856, 32.60552, 19.0866, 1.0),
        (
            "5862276123280252691",
            3,
            1127.450112,
            59.5534,
            18.9318,
            0.9091,
        ),
    ];
    for (g, r, size, time, bw, lpr) in want {
        let what = format!("{g} rank {r}");
        let find = |t: &str| {
            rep.bandwidth_summary
                .iter()
                .find(|b| b.group == g && b.rank == r && b.transport == t)
                .unwrap_or_else(|| panic!("{what} {t}"))
        };
        let h = find("HCCS");
        close(h.size_mb, size, 1e-9, &what);
        close(h.time_ms, time, 1e-9, &what);
        assert_eq!(h.bandwidth_gbps, bw, "{what}");
        assert_eq!(h.large_packet_ratio, Some(lpr), "{what}");
        // SDMA is the on-chip aggregate: same size, time and bandwidth, no ratio.
        let s = find("SDMA");
        close(s.size_mb, size, 1e-9, &what);
        assert_eq!(s.bandwidth_gbps, bw, "{what} SDMA");
        assert_eq!(s.large_packet_ratio, None);
    }
    // Every transport of the ops is kept, zeros included.
    let n = rep
        .bandwidth_summary
        .iter()
        .filter(|b| b.group == "5862276114690318097" && b.rank == 0)
        .count();
    assert_eq!(n, 5);
}

fn total<'a>(rows: &'a [MatrixRow], g: &str, s: i64, d: i64) -> &'a MatrixRow {
    rows.iter()
        .find(|m| m.group == g && m.src == s && m.dst == d)
        .unwrap_or_else(|| panic!("no link {g} {s}-{d}"))
}

const ST_MATRIX: &[(&str, i64, i64, &str, f64, f64, f64)] = &[
    (
        "5862276114690318097",
        0,
        0,
        "LOCAL",
        2254.894168,
        24.98072,
        90.2654,
    ),
    (
        "5862276114690318097",
        0,
        1,
        "HCCS",
        1127.44704,
        59.51352,
        18.9444,
    ),
    (
        "5862276114690318097",
        1,
        0,
        "HCCS",
        1127.44704,
        59.51492,
        18.9439,
    ),
    (
        "3985310499963036764",
        1,
        3,
        "HCCS",
        16.777216,
        0.8025,
        20.9062,
    ),
    (
        "3985310499963036764",
        3,
        1,
        "HCCS",
        16.777216,
        0.80272,
        20.9005,
    ),
    (
        "3985310499963036764",
        3,
        3,
        "LOCAL",
        33.554456,
        0.47044,
        71.3257,
    ),
    (
        "3985310504258004061",
        1,
        3,
        "HCCS",
        622.329856,
        32.60654,
        19.086,
    ),
    (
        "5862276093215481612",
        0,
        3,
        "HCCS",
        0.000096,
        0.00168,
        0.0571,
    ),
    ("5862276093215481612", 3, 0, "HCCS", 0.00012, 0.00752, 0.016),
    (
        "5862276123280252691",
        3,
        3,
        "LOCAL",
        2254.900312,
        24.94312,
        90.4017,
    ),
];

#[test]
fn st_matrix_in_parity_mode_drops_every_link_to_the_missing_rank() {
    let (rep, problems) = st(true);
    assert_eq!(rep.matrix.len(), 30);
    assert_eq!(rep.matrix_by_kind.len(), 199);
    assert_eq!(rep.dropped_links.len(), 36);
    for (g, s, d, t, size, time, bw) in ST_MATRIX {
        let m = total(&rep.matrix, g, *s, *d);
        assert_eq!(m.transport, *t);
        close(m.size_mb, *size, 1e-9, g);
        close(m.time_ms, *time, 1e-9, g);
        assert_eq!(m.bandwidth_gbps, *bw, "{g} {s}-{d}");
        assert!(!m.mapped_from_metadata);
    }
    assert!(rep
        .dropped_links
        .iter()
        .any(|d| d.group == "5862276093215481612"
            && d.kind == "allgather-total"
            && d.src_local == "0"
            && d.dst_local == "2"));
    assert!(problems.count(proflens::analysis::comm::LINKS_DROPPED) > 0);
}

#[test]
fn st_matrix_by_default_recovers_the_dropped_links_from_metadata() {
    let (rep, _) = st(false);
    assert!(
        rep.dropped_links.is_empty(),
        "{:?}",
        rep.dropped_links.first()
    );
    assert_eq!(rep.matrix_by_kind.len(), 199 + 36);
    for (g, s, d, t, size, time, bw) in ST_MATRIX {
        let m = total(&rep.matrix, g, *s, *d);
        assert_eq!(m.transport, *t);
        close(m.size_mb, *size, 1e-9, g);
        close(m.time_ms, *time, 1e-9, g);
        assert_eq!(m.bandwidth_gbps, *bw);
        assert!(!m.mapped_from_metadata);
    }
    // The default group's links to rank 2 (local 2 = sorted([0,1,2,3])[2]).
    let m = total(&rep.matrix, "5862276093215481612", 0, 2);
    assert!(m.mapped_from_metadata);
    // dp_cp [2,3] seen from rank 3: its link 1-0 is rank 3 → rank 2.
    let m = total(&rep.matrix, "5862276123280252691", 3, 2);
    assert!(m.mapped_from_metadata);
}

#[test]
fn st_groups_carry_metadata_names_and_missing_ranks_and_slow_rank_has_no_vote() {
    let (rep, problems) = st(true);
    let g = rep
        .groups
        .iter()
        .find(|g| g.group == "5862276093215481612")
        .unwrap();
    assert_eq!(g.name, "default_group");
    assert_eq!(g.global_ranks, [0, 1, 2, 3]);
    assert_eq!(g.present, [0, 1, 3]);
    assert_eq!(g.missing, [2]);
    assert_eq!(rep.groups.len(), 11);
    assert!(rep.slow_ranks.is_empty());
    assert!(rep.slow_links.is_empty());
    // Groups named by one rank only, their other ranks missing: located, informational.
    assert!(problems.count(proflens::analysis::comm::GROUP_ALONE) > 0);
}

#[test]
fn l1_two_of_eight_ranks() {
    let (rep, _) = run_dir(&fixture("test/data/pytorch/text/level1"), true);
    assert_eq!(rep.ranks, [0, 1]);
    assert_eq!(rep.time_summary.len(), 2);
    let t0 = &rep.time_summary[0];
    assert_eq!(t0.step, "step50");
    assert_eq!(t0.group, "17522688603477080586");
    assert_eq!(t0.n_ops, 4);
    close(t0.elapse_ms, 105.99187771875, 1e-10, "r0 elapse");
    close(t0.transit_ms, 3.6833534999999995, 1e-12, "r0 transit");
    close(t0.wait_ms, 5.94061871875, 1e-12, "r0 wait");
    close(t0.idle_ms, 96.36790549999999, 1e-10, "r0 idle");
    assert_eq!((t0.wait_ratio, t0.sync_ratio), (0.6173, 0.6039));
    let t1 = &rep.time_summary[1];
    assert_eq!((t1.wait_ratio, t1.sync_ratio), (0.0472, 0.0054));
    let h = rep
        .bandwidth_summary
        .iter()
        .find(|b| b.rank == 1 && b.transport == "HCCS")
        .unwrap();
    close(h.size_mb, 427.59609599999993, 1e-9, "r1 HCCS");
    assert_eq!(h.bandwidth_gbps, 15.5016);
    assert_eq!(rep.matrix.len(), 4);
    assert_eq!(rep.dropped_links.len(), 72);
    let m = total(&rep.matrix, "17522688603477080586", 0, 0);
    assert_eq!(
        (m.transport.as_str(), m.bandwidth_gbps),
        ("LOCAL", 419.8179)
    );
    let m = total(&rep.matrix, "17522688603477080586", 1, 0);
    assert_eq!((m.transport.as_str(), m.bandwidth_gbps), ("HCCS", 15.8557));
    let m = total(&rep.matrix, "17522688603477080586", 1, 1);
    assert_eq!(m.bandwidth_gbps, 428.6377);
    // No metadata in this capture: the default mode drops the same links, saying why.
    let (def, _) = run_dir(&fixture("test/data/pytorch/text/level1"), false);
    assert_eq!(def.dropped_links.len(), 72);
    assert!(def.dropped_links[0]
        .reason
        .contains("no parallel_group_info"));
}

#[test]
fn l2_one_rank() {
    let (rep, _) = run_dir(&fixture("test/data/pytorch/text/level2"), true);
    assert_eq!(rep.ranks, [0]);
    let t = &rep.time_summary[0];
    assert_eq!(t.group, "11022204950826225271");
    close(t.elapse_ms, 99.97327743750002, 1e-10, "elapse");
    assert_eq!((t.wait_ratio, t.sync_ratio), (0.401, 0.3845));
    let h = rep
        .bandwidth_summary
        .iter()
        .find(|b| b.transport == "HCCS")
        .unwrap();
    assert_eq!(h.bandwidth_gbps, 15.0194);
    assert_eq!(rep.matrix.len(), 1);
    assert_eq!(rep.matrix[0].bandwidth_gbps, 419.9332);
    assert_eq!(rep.dropped_links.len(), 42);
}

#[test]
fn st_rank_summaries_carry_the_per_rank_communication_totals() {
    let dir = fixture("test/st/level2");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["summarize", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> = std::str::from_utf8(&o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // rank | ops | elapse | transit | wait | sync | wait r | sync r (communication.md §5.1)
    let want = [
        (0, 15, 420.17426, 0.0, 164.14354, None, 1.0, 1.0),
        (
            1,
            15,
            441.70838,
            0.00658,
            170.78674,
            Some(169.59878),
            1.0,
            1.0,
        ),
        (
            3,
            23,
            261.49844,
            0.01666,
            0.8355,
            Some(0.80738),
            0.9804,
            0.9798,
        ),
    ];
    assert_eq!(
        lines.len(),
        3,
        "every rank folder is a target, comm-only ones included"
    );
    for (r, n, elapse, transit, wait, sync, wr, sr) in want {
        let l = lines.iter().find(|l| l["rank_id"] == r).unwrap();
        let c = &l["comm"];
        let what = format!("rank {r}");
        assert_eq!(c["n_ops"], n, "{what}");
        close(c["elapse_ms"].as_f64().unwrap(), elapse, 5e-6, &what);
        close(c["transit_ms"].as_f64().unwrap(), transit, 5e-6, &what);
        close(c["wait_ms"].as_f64().unwrap(), wait, 5e-6, &what);
        if let Some(s) = sync {
            close(c["sync_ms"].as_f64().unwrap(), s, 5e-6, &what);
        }
        assert_eq!(c["wait_ratio"].as_f64(), Some(wr), "{what}");
        assert_eq!(c["sync_ratio"].as_f64(), Some(sr), "{what}");
    }
}

#[test]
fn cli_json_csv_and_step_filter_agree() {
    let dir = fixture("test/st/level2");
    let out = std::env::temp_dir().join(format!("proflens_comm_cli_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let json = out.join("comm.json");
    let csv = out.join("csv");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "comm",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_proflens"))
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
        v
    };
    let doc = run(&["--parity", "--csv-dir", csv.to_str().unwrap()]);
    assert_eq!(doc["mode"], "parity");
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for k in [
        "time_summary",
        "bandwidth_summary",
        "matrix",
        "dropped_links",
        "slow_links",
        "slow_ranks",
        "collectives",
    ] {
        assert!(keys.contains(&k), "{k}");
    }
    // The CSV has the JSON's rows, columns in the same order.
    let text = std::fs::read_to_string(csv.join("matrix.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap(),
        "step,group,src,dst,transport,size_mb,time_ms,bandwidth_gbps,mapped_from_metadata"
    );
    assert_eq!(lines.count(), doc["matrix"].as_array().unwrap().len());
    // Rows keep their column order in the file.
    let raw = std::fs::read_to_string(&json).unwrap();
    // No negative zero (an empty histogram's large-packet ratio is 0, as Python's sum gives).
    assert!(!raw.contains("-0.0"), "a -0.0 in the document");
    assert!(raw.contains("\"large_packet_ratio\": 0.0}"));
    let at = raw.find("\"time_summary\": [").unwrap();
    assert!(raw[at..].contains("{\"step\": \"step13\", \"group\": \"3985310379703952346\", \"rank\": 0, \"n_ops\": 3, \"elapse_ms\""));
    // --step: the one step by number or key; another step gives empty tables.
    let by_num = run(&["--parity", "--step", "13"]);
    assert_eq!(by_num["time_summary"], doc["time_summary"]);
    assert_eq!(by_num["matrix"], doc["matrix"]);
    let none = run(&["--step", "99"]);
    assert_eq!(none["time_summary"].as_array().unwrap().len(), 0);
    assert_eq!(none["matrix"].as_array().unwrap().len(), 0);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn st_mindstudio_insights_slow_rank_list() {
    // communication.md §5.1 "MSI slow rank list" (the rule: §3.3): no row for the pp groups
    // (batchSendRecv, pg `pp`); per (group, slow rank) the fast rank, times, difference and
    // the top ops by difference (µs, 3 decimals). Rows by time summary order, then smallest
    // time first.
    let (rep, _) = st(false);
    let got: Vec<String> = rep
        .msi_slow_ranks
        .iter()
        .map(|m| {
            format!(
                "{} {} fast {} {} slow {} {} diff {} ≥ {} | {}",
                m.step,
                m.group,
                m.fast_rank,
                m.fast_us,
                m.rank,
                m.time_us,
                m.diff_us,
                m.threshold_us,
                proflens::report::comm::msi_ops_text(&m.ops)
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            "step13 5862276093215481612 fast 1 2925.72 slow 3 73.62 diff 2852.1 ≥ 292.572 | hcom_allReduce__612_4_1:1922.38;hcom_allGather__612_7_1:551.74;hcom_allReduce__612_6_1:258.28",
            "step13 5862276093215481612 fast 1 2925.72 slow 0 2232.44 diff 693.28 ≥ 292.572 | hcom_allReduce__612_4_1:1119.62;hcom_allGather__612_7_1:32.86",
            "step13 5862276114690318097 fast 1 76780.24 slow 0 65412.34 diff 11367.9 ≥ 7678.024 | hcom_reduceScatter__097_4_1:9421;hcom_allGather__097_6_1:1925.16;hcom_reduceScatter__097_5_1:21.84",
            "step13 3985310383998919643 fast 1 4459.14 slow 3 50.14 diff 4409 ≥ 445.914 | hcom_allReduce__643_3_1:3465.4;hcom_allReduce__643_5_1:730.1;hcom_allReduce__643_4_1:213.5",
            "step13 3985310504258004061 fast 3 120942.12 slow 1 34562.72 diff 86379.4 ≥ 12094.212 | hcom_allReduce__061_1_1:86379.4",
        ]
    );
    // The same in parity mode (the rule reads the time summary, which parity does not touch).
    assert_eq!(st(true).0.msi_slow_ranks, rep.msi_slow_ranks);
}
