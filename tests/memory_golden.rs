//! ascend-memory.md §12 golden values on the real fixtures (RL-Insight §12.1, msinsight
//! level0/1/2 §12.2), through the same engine the CLI and the worker call.

mod engine_support;

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use proflens::analysis::memory_match::{MatchQuality, MatchStrategy};
use proflens::analysis::memory_peak::SampleKind;
use proflens::analysis::memory_result::{MemoryRun, RankStatus};
use proflens::analysis::memory_summary::summarize;
use proflens::analysis::user_frame::UserFrameStatus;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::memory::{MemoryOptions, Mode};
use proflens::ingest::inventory::Inventory;
use proflens::parse::metadata::read_side_files;

fn fixture(rel: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    assert!(p.exists(), "fixture missing: {}", p.display());
    p
}

fn run(rel: &str, opts: &MemoryOptions) -> MemoryRun {
    let (opener, files) = FsOpener::walk(&fixture(rel)).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    let (run, drop) =
        engine_support::memory_run(&inv, &opener, opts, &mut |_| ControlFlow::Continue(()));
    assert!(drop.is_empty(), "{:?}", drop.kept());
    run
}

const RLI: &str = "rl_insight/data/recipe/memory_data";
const MSI: &str = "ascend/Ascend__msinsight/test/data/pytorch/text";

#[test]
fn rl_insight_parity_golden() {
    let opts = MemoryOptions {
        mode: Mode::Parity,
        ..Default::default()
    };
    let run = run(RLI, &opts);
    assert_eq!(run.ranks.len(), 1);
    assert_eq!(run.len(), 49);
    let rows: Vec<_> = run.rows().collect();
    assert!(rows.iter().all(|r| !r.call_stack().is_empty()));
    let tops: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.call_stack_top()).collect();
    assert_eq!(
        tops.into_iter().collect::<Vec<_>>(),
        ["rl_insight/train.py(42): train_step"]
    );
    assert_eq!(rows.iter().filter(|r| r.size_kb() < 0.0).count(), 0);
    let zero: Vec<_> = rows.iter().filter(|r| r.duration_ms() == 0.0).collect();
    assert_eq!(zero.len(), 1);
    assert_eq!(
        (zero[0].name(), zero[0].size_kb()),
        ("aten::embedding", 8192.5)
    );
    assert_eq!(rows.iter().map(|r| r.size_kb()).sum::<f64>(), 172_387.5);
    assert_eq!(
        (rows[0].name(), rows[0].start_time_ms()),
        ("aten::zeros", 1779785515596.6616)
    );
    assert_eq!(
        (rows[48].name(), rows[48].start_time_ms()),
        ("aten::mul", 1779785515984.4646)
    );
    let max = rows
        .iter()
        .map(|r| r.total_allocated_mb())
        .fold(f64::MIN, f64::max);
    assert_eq!(max, 19207.61279296875);
    let mut names: BTreeMap<&str, u32> = BTreeMap::new();
    for r in &rows {
        *names.entry(r.name()).or_default() += 1;
    }
    let want: BTreeMap<&str, u32> = [
        ("aten::add", 12),
        ("aten::mul", 12),
        ("aten::sigmoid", 7),
        ("aten::empty_strided", 4),
        ("aten::empty", 4),
        ("aten::pow", 2),
        ("aten::mean", 2),
        ("aten::zeros", 1),
        ("aten::embedding", 1),
        ("aten::clone", 1),
        ("npu::_npu_dtype_cast", 1),
        ("aten::rsqrt", 1),
        ("aten::matmul", 1),
    ]
    .into_iter()
    .collect();
    assert_eq!(names, want);
    assert!(rows
        .iter()
        .all(|r| r.role() == "memory_data" && r.rank_id() == 0));
    // naive curve (§11)
    let s = summarize(&run.ranks[0]);
    assert_eq!(s.naive_points, 97);
    assert_eq!(s.naive_peak_mb, 136.037109375);
}

#[test]
fn rl_insight_default_mode_extras() {
    let run = run(RLI, &MemoryOptions::default());
    assert_eq!(run.len(), 49);
    let r = &run.ranks[0];
    assert_eq!(r.status, RankStatus::Analysed);
    for row in run.rows() {
        assert_eq!(row.match_quality(), MatchQuality::NearestBefore);
        assert_eq!(
            row.user_frame(),
            ("rl_insight/train.py(42): train_step", UserFrameStatus::Ok)
        );
        assert_eq!(row.stack_origin(), "same_op");
    }
    let s = summarize(r);
    assert_eq!(s.quality(MatchQuality::NearestBefore), 49);
    assert_eq!(s.unreleased_rows, 1);
    let p = s.allocator_peak().unwrap();
    assert_eq!(p.peak.peak_allocated_mb, 20138.58544921875);
    assert_eq!(p.peak.peak_sample_kind, SampleKind::Release);
    assert_eq!(p.peak.peak_source_line, 3);
    assert_eq!(p.peak.peak_time_ns, 1_779_785_665_728_627_910);
    assert_eq!(p.peak.reserved_at_peak_mb, Some(27928.0));
    assert_eq!(p.peak.max_reserved_mb, Some(27928.0));
    assert_eq!(p.peak.live_rows.len(), 2);
    assert_eq!(p.peak.live_kb, 8193.0);
    let live: Vec<(&str, f64)> = p
        .largest_live
        .iter()
        .map(|i| (r.row(*i as usize).name(), r.row(*i as usize).size_kb()))
        .collect();
    assert_eq!(live, [("aten::embedding", 8192.5), ("aten::zeros", 0.5)]);
    // the profiler_info says with_stack=false although the synthetic trace has stacks
    assert!(r.problems.kept().iter().all(|p| p.code != "MEM-FILE-002"));
}

fn check_msinsight_rank(run: &MemoryRun, k: usize) {
    let r = &run.ranks[k];
    assert_eq!(r.status, RankStatus::Analysed, "{}", r.info.source_dir);
    let s = summarize(r);
    assert_eq!(s.rows, 184);
    assert_eq!(s.rows_with_call_stack, 76);
    assert_eq!(s.zero_duration_rows, 24);
    assert_eq!(s.unreleased_rows, 24);
    assert_eq!(s.sum_size_kb, 1_460_243.5);
    assert_eq!(s.max_total_allocated.unwrap().0, 1187.9814453125);
    assert_eq!(s.quality(MatchQuality::Exact), 0);
    assert_eq!(s.quality(MatchQuality::Enclosing), 69);
    assert_eq!(s.quality(MatchQuality::NearestBefore), 7);
    // 108 rows are `none` before via_forward (§12.2)
    assert_eq!(
        s.quality(MatchQuality::ViaForward) + s.quality(MatchQuality::None),
        108
    );
    assert_eq!(s.distinct_names, 58);
    let p = s.allocator_peak().unwrap();
    assert_eq!(p.peak.peak_allocated_mb, 1187.9814453125);
    assert_eq!(p.peak.peak_sample_kind, SampleKind::Alloc);
    assert_eq!(p.peak.peak_source_line, 125);
    assert_eq!(p.peak_name, "aten::_foreach_add");
    assert_eq!(p.peak.reserved_at_peak_mb, Some(1452.0));
    assert_eq!(p.peak.live_rows.len(), 41);
    assert_eq!(p.peak.live_kb, 498_238.5);
    let top2: Vec<(&str, f64, bool)> = p.largest_live[..2]
        .iter()
        .map(|i| {
            let row = r.row(*i as usize);
            (row.name(), row.size_kb(), row.release_time_ns().is_some())
        })
        .collect();
    let mut top2s = top2.clone();
    top2s.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(
        top2s,
        [
            ("aten::_foreach_add", 147456.5, true),
            ("aten::mm", 147456.5, false)
        ]
    );
}

#[test]
fn msinsight_all_levels_default_mode() {
    let run = run(MSI, &MemoryOptions::default());
    let dirs: Vec<&str> = run
        .ranks
        .iter()
        .map(|r| r.info.source_dir.as_str())
        .collect();
    assert_eq!(
        dirs,
        [
            "text/level0/rank0_ascend_pt",
            "text/level0/rank1_ascend_pt",
            "text/level1/rank0_ascend_pt",
            "text/level1/rank1_ascend_pt",
            "text/level2/rank0_ascend_pt"
        ]
    );
    for k in 0..5 {
        check_msinsight_rank(&run, k);
    }
    assert_eq!(run.len(), 5 * 184);
    // §9.0: one list stably sorted by start_time_ms
    let t: Vec<f64> = run.rows().map(|r| r.start_time_ms()).collect();
    assert!(t.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn msinsight_level1_rank0_details() {
    let run = run(
        &format!("{MSI}/level1/rank0_ascend_pt"),
        &MemoryOptions::default(),
    );
    assert_eq!(run.ranks.len(), 1);
    let r = &run.ranks[0];
    let first = run.row(0).unwrap();
    assert_eq!(
        (first.name(), first.start_time_ms()),
        ("aten::empty_strided", 1736408883694.6248)
    );
    // most common call_stack_top (parity column)
    let mut tops: BTreeMap<&str, u32> = BTreeMap::new();
    let mut ufs: BTreeMap<&str, u32> = BTreeMap::new();
    for row in run.rows() {
        *tops.entry(row.call_stack_top()).or_default() += 1;
        if matches!(
            row.match_quality(),
            MatchQuality::Enclosing | MatchQuality::NearestBefore | MatchQuality::Exact
        ) {
            *ufs.entry(row.user_frame().0).or_default() += 1;
        }
    }
    assert_eq!(tops[""], 108);
    assert_eq!(tops["/home/z30057886/.local/lib/python3.9/site-packages/torch/optim/sgd.py(293): _multi_tensor_sgd"], 17);
    assert_eq!(
        tops["/home/z30057886/imagenet_script/main.py(536): accuracy"],
        12
    );
    assert_eq!(
        ufs["/home/z30057886/imagenet_script/main.py(354): train"],
        25
    );
    assert_eq!(
        ufs["/home/z30057886/imagenet_script/main.py(366): train"],
        20
    );
    assert_eq!(
        ufs["/home/z30057886/imagenet_script/main.py(536): accuracy"],
        12
    );
    assert_eq!(
        ufs["/home/z30057886/imagenet_script/main.py(355): train"],
        7
    );
    assert_eq!(ufs.len(), 11);
    // names with a stack in the trace: 19 of the 58 CSV names
    let with_stack: std::collections::BTreeSet<&str> = run
        .rows()
        .filter(|r| !r.call_stack().is_empty())
        .map(|r| r.name())
        .collect();
    assert_eq!(with_stack.len(), 19);
    // backward ops inherit their forward op's stack
    let conv_bwd: Vec<_> = run
        .rows()
        .filter(|r| r.name() == "aten::convolution_backward")
        .collect();
    assert!(!conv_bwd.is_empty());
    for row in &conv_bwd {
        assert_eq!(
            row.match_quality(),
            MatchQuality::ViaForward,
            "line {}",
            row.source_line()
        );
        assert!(
            row.stack_origin().starts_with("forward:"),
            "{}",
            row.stack_origin()
        );
        assert!(row.call_stack().is_empty(), "parity columns unaffected");
        assert!(!row.stack_text().is_empty());
    }
    assert_eq!(r.trace.with_stack, 316);
    assert_eq!(r.trace.cpu_ops, 860);
}

#[test]
fn enclosing_first_selects_the_same_entries_on_level1() {
    let base = run(
        &format!("{MSI}/level1/rank0_ascend_pt"),
        &MemoryOptions::default(),
    );
    let mut opts = MemoryOptions::default();
    opts.matching.strategy = MatchStrategy::EnclosingFirst;
    let enc = run(&format!("{MSI}/level1/rank0_ascend_pt"), &opts);
    for (a, b) in base.rows().zip(enc.rows()) {
        assert_eq!(a.stack_text(), b.stack_text());
        assert_eq!(a.match_quality(), b.match_quality());
    }
}

#[test]
fn parity_mode_on_msinsight_matches_default_parity_columns() {
    let d = run(MSI, &MemoryOptions::default());
    let p = run(
        MSI,
        &MemoryOptions {
            mode: Mode::Parity,
            ..Default::default()
        },
    );
    assert_eq!(d.len(), p.len());
    for (a, b) in d.rows().zip(p.rows()) {
        assert_eq!(
            (
                a.name(),
                a.call_stack(),
                a.size_kb(),
                a.start_time_ms(),
                a.duration_ms()
            ),
            (
                b.name(),
                b.call_stack(),
                b.size_kb(),
                b.start_time_ms(),
                b.duration_ms()
            )
        );
        assert_eq!(
            (
                a.total_allocated_mb(),
                a.total_reserved_mb(),
                a.total_active_mb(),
                a.device_type()
            ),
            (
                b.total_allocated_mb(),
                b.total_reserved_mb(),
                b.total_active_mb(),
                b.device_type()
            )
        );
    }
}

/// The 2023 10-column form and the unquoted-tab 15-column file of the msinsight UT data
/// (values cross-checked with Python's csv module: counts, Σ, allocator peak sample).
#[test]
fn msinsight_ut_ten_and_fifteen_column_files() {
    let run = run(
        "ascend/Ascend__msinsight/server/src/test/test_data",
        &MemoryOptions::default(),
    );
    let r0 = run
        .ranks
        .iter()
        .find(|r| r.info.source_dir == "test_data/test_rank_0")
        .unwrap();
    let r1 = run
        .ranks
        .iter()
        .find(|r| r.info.source_dir == "test_data/test_rank_1")
        .unwrap();
    let s0 = summarize(r0);
    assert_eq!((s0.rows, s0.sum_size_kb), (28, 341_120.0));
    assert_eq!(r0.problems.count("MEM-CSV-002"), 5); // 10-column form
    assert_eq!(r0.problems.count("MEM-FILE-002"), 1); // no trace_view.json
    assert!(run
        .rows()
        .filter(|r| r.rank_id() == 0)
        .all(|r| r.total_active_mb() == 0.0));
    let p0 = s0.allocator_peak().unwrap();
    assert_eq!(
        (
            p0.peak.peak_allocated_mb,
            p0.peak.peak_source_line,
            p0.peak.peak_sample_kind
        ),
        (80.125, 5, SampleKind::Alloc)
    );
    let s1 = summarize(r1);
    assert_eq!((s1.rows, s1.sum_size_kb), (21, 3_651_407.0));
    let p1 = s1.allocator_peak().unwrap();
    assert_eq!(
        (
            p1.peak.peak_allocated_mb,
            p1.peak.peak_source_line,
            p1.peak.peak_sample_kind
        ),
        (3469.5556640625, 22, SampleKind::Release)
    );
    assert_eq!(r1.problems.count("MEM-CSV-002"), 0);
}

#[test]
fn markdown_summary_states_the_golden_numbers() {
    let run = run(RLI, &MemoryOptions::default());
    let mut out = Vec::new();
    proflens::report::memory_md::write_summary(&run, &mut out).unwrap();
    let md = String::from_utf8(out).unwrap();
    assert!(md.contains("| net size (Σ size) | 168.3 MiB |"), "{md}");
    assert!(md.contains("### Allocator pool PTA (PyTorch allocator): 49 rows, op names starting aten:: or npu::"), "{md}");
    assert!(md.contains("Peak allocated **19.7 GiB** at "), "{md}");
    assert!(md.contains("(1779785665728627.910 µs on the profiler clock; release sample, `aten::empty_strided`, line 3); reserved at peak 27.3 GiB"), "{md}");
    assert!(
        md.contains("Live at peak: 2 rows of this pool, 8.00 MiB (explains 0.04 % of"),
        "{md}"
    );
    assert!(
        md.contains("| naive curve (operator rows only, starts at 0) | 97 points, peak 136.0 MiB"),
        "{md}"
    );
    assert!(!md.contains("§"), "{md}");
    // No unrounded float in the prose (the phase table keeps the reference's 4 decimals).
    assert!(!md.contains("20138.58544921875"), "{md}");
    assert!(
        md.contains("| Unknown | memory_data | 49 | 49 | 0 |"),
        "{md}"
    );
}

/// Every real fixture's allocator pools: the `cann::` rows carry the CANN graph
/// engine workspace totals, the `aten::`/`npu::` rows the PyTorch allocator's, other names
/// their own; each pool's peak and live set are computed over its own rows only. Values
/// checked independently by a Python reading of the CSVs (§9.5–9.6 per component).
#[test]
fn every_fixture_has_one_series_peak_and_live_set_per_allocator_pool() {
    use proflens::analysis::memory_pool::Component::{Ge, Other, Pta};
    // (folder, [(pool, rows, peak MiB, peak line, kind, reserved at peak, live rows, live KiB)])
    type Want = (
        proflens::analysis::memory_pool::Component,
        u64,
        f64,
        u64,
        SampleKind,
        f64,
        usize,
        f64,
    );
    let level = [
        (
            Pta,
            122,
            1187.9814453125,
            125,
            SampleKind::Alloc,
            1452.0,
            41,
            498_238.5,
        ),
        (Ge, 57, 73.0625, 131, SampleKind::Alloc, 74.75, 3, 74_752.0),
        (
            Other,
            5,
            1075.15576171875,
            86,
            SampleKind::Alloc,
            1452.0,
            1,
            5408.5,
        ),
    ];
    let cases: Vec<(&str, Vec<Want>)> = vec![
        (MSI, level.to_vec()),
        (
            "ascend/Ascend__msinsight/test/st/level2",
            vec![(
                Pta,
                3103,
                10282.7490234375,
                1394,
                SampleKind::Alloc,
                10372.0,
                623,
                6_121_259.0,
            )],
        ),
        (
            "ascend/Ascend__msinsight/server/src/test/test_data/test_rank_0",
            vec![(Ge, 28, 80.125, 5, SampleKind::Alloc, 242.0, 1, 81_984.0)],
        ),
        (
            "ascend/Ascend__msinsight/server/src/test/test_data/test_rank_1",
            vec![(
                Pta,
                21,
                3469.5556640625,
                22,
                SampleKind::Release,
                25722.0,
                13,
                2_772_811.5,
            )],
        ),
        (
            RLI,
            vec![(
                Pta,
                49,
                20138.58544921875,
                3,
                SampleKind::Release,
                27928.0,
                2,
                8193.0,
            )],
        ),
    ];
    let mut ranks = 0;
    for (rel, want) in cases {
        for r in &run(rel, &MemoryOptions::default()).ranks {
            let s = summarize(r);
            if r.is_empty() {
                // st/level2 rank_1 and rank_3 have no operator_memory.csv: no pool.
                assert!(s.pools.is_empty());
                continue;
            }
            let got: Vec<Want> = s
                .pools
                .iter()
                .map(|p| {
                    let k = &p.peak.as_ref().unwrap().peak;
                    (
                        p.component,
                        p.rows,
                        k.peak_allocated_mb,
                        k.peak_source_line,
                        k.peak_sample_kind,
                        k.reserved_at_peak_mb.unwrap(),
                        k.live_rows.len(),
                        k.live_kb,
                    )
                })
                .collect();
            assert_eq!(got, want, "{rel}: {}", r.info.source_dir);
            // Every live row of a pool is a row of that pool.
            for p in &s.pools {
                let k = &p.peak.as_ref().unwrap().peak;
                assert!(k.live_rows.iter().all(|&i| {
                    proflens::analysis::memory_pool::Component::of_name(r.row(i as usize).name())
                        == p.component
                }));
            }
            ranks += 1;
        }
    }
    assert_eq!(ranks, 5 + 1 + 1 + 1 + 1);
}

#[test]
fn markdown_summary_has_a_section_per_allocator_pool() {
    let run = run(&format!("{MSI}/level2"), &MemoryOptions::default());
    let mut out = Vec::new();
    proflens::report::memory_md::write_summary(&run, &mut out).unwrap();
    let md = String::from_utf8(out).unwrap();
    for want in [
        "### Allocator pool PTA (PyTorch allocator): 122 rows, op names starting aten:: or npu::",
        "Peak allocated **1.16 GiB** at ",
        "reserved at peak 1.42 GiB, max reserved 1.42 GiB.",
        "Live at peak: 41 rows of this pool, 486.6 MiB",
        "### Allocator pool GE (CANN graph engine workspace): 57 rows, op names starting cann::",
        "Peak allocated **73.1 MiB** at ",
        "Live at peak: 3 rows of this pool, 73.0 MiB",
        "### Allocator pool OTHER (other op names): 5 rows",
    ] {
        assert!(md.contains(want), "{want}\n{md}");
    }
}

#[test]
fn terminal_brief_names_each_pool_in_human_units() {
    let run = run(&format!("{MSI}/level2"), &MemoryOptions::default());
    let mut out = Vec::new();
    proflens::report::memory_md::write_brief(&run, &mut out).unwrap();
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "level2 / rank 0 (level2/rank0_ascend_pt): 184 rows (184 allocations, 1.39 GiB), 76 with a call stack\n\
         \x20 PTA (PyTorch allocator), 122 rows: peak 1.16 GiB at +47.183 ms, live at peak 41 rows, 486.6 MiB\n\
         \x20 GE (CANN graph engine workspace), 57 rows: peak 73.1 MiB at +9.217 ms, live at peak 3 rows, 73.0 MiB\n\
         \x20 OTHER (other op names), 5 rows: peak 1.05 GiB at +38.566 ms, live at peak 1 row, 5.28 MiB\n"
    );
}
