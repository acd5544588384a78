//! The cluster view's worker side driven natively as the worker drives it: a
//! cluster summary made by the real reduce (`engine::export::cluster::reduce::Reducer`) is recognised
//! by `Open` from its first bytes, `Run{Cluster}` reads it streamed (plain and gzip) into the
//! view, whose numbers are the summary's; a newer version and a cut file are problems in words.

use std::cell::Cell;
use std::io::{self, Read, Write};

use proflens::engine::export::cluster::reduce::Reducer;
use proflens::engine::session::{Collected, Session};
use proflens::ingest::{MemOpener, Opener};
use proflens::protocol::cluster::{
    AnomalySummary, ClusterSummary, ProblemCounts, ProblemSeverity, ProblemSummary, RankStatus,
    RankSummary, RunInfo, StepSummary, TargetKind,
};
use proflens::protocol::cluster_view::{ClusterViewDto, SUMMARY_KIND};
use proflens::protocol::{
    AnalysisKind, Envelope, FileMeta, InventoryDto, Request, Response, Summary,
};

const STRAGGLER: u64 = 5;

fn rank(r: u64, steps: u64) -> RankSummary {
    let scale = if r == STRAGGLER { 1.3 } else { 1.0 };
    let steps: Vec<StepSummary> = (0..steps)
        .map(|s| {
            let service = (100.0 + r as f64 * 0.25 + s as f64) * scale;
            StepSummary {
                step_id: format!("ProfilerStep#{}", 10 + s),
                service_ms: service,
                device_busy_union_ms: service * 0.75,
                underfeed_ms: service * 0.25,
                underfeed_ratio: 0.25,
                prelaunch_gap_ms: 2.0,
                tail_gap_ms: 0.5,
                internal_bubble_total_ms: 4.0,
                largest_internal_bubble_ms: 1.0,
                bubble_count: 7 + r,
                total_kernel_count: 100,
                kernel_duration_sum_ms: service * 0.7,
                tags: vec![],
                labels: vec![],
            }
        })
        .collect();
    let n = steps.len() as f64;
    let avg = |f: fn(&StepSummary) -> f64| steps.iter().map(f).sum::<f64>() / n;
    let problems = if r == 3 {
        vec![ProblemSummary {
            severity: ProblemSeverity::Error,
            code: "ANOM-TV-001".into(),
            file: "rank3_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json".into(),
            location: "byte 4096".into(),
            message: "the trace is cut short".into(),
        }]
    } else {
        vec![]
    };
    RankSummary {
        target: format!("/data/run/actor/rank{r}_ascend_pt"),
        kind: TargetKind::Ascend,
        rank_id: Some(r as i64),
        role: Some("actor".into()),
        rank_dir: format!("/data/run/actor/rank{r}_ascend_pt"),
        status: if r == 3 {
            RankStatus::Partial
        } else {
            RankStatus::Ok
        },
        bytes_read: 1000,
        analysis_s: 0.5,
        anomaly: Some(AnomalySummary {
            step_count: steps.len() as u64,
            service_ms_avg: avg(|s| s.service_ms),
            busy_union_ms_avg: avg(|s| s.device_busy_union_ms),
            underfeed_ratio_avg: 0.25,
            comm_total_ms: 3.0,
            comm_wait_ratio_weighted: Some(0.125),
            bubble_count_avg: avg(|s| s.bubble_count as f64),
            dominant_idle_pattern: if r % 4 == 0 {
                "internal_bubble"
            } else {
                "prelaunch_dominant"
            }
            .into(),
            dominant_anomaly_tags: vec!["PRELAUNCH_GAP_HEAVY".into()],
        }),
        steps,
        steps_dropped: 0,
        top_bubbles: vec![],
        top_bubbles_dropped: 0,
        memory: None,
        snapshots: vec![],
        snapshots_dropped: 0,
        problem_counts: ProblemCounts {
            errors: problems.len() as u64,
            warnings: 0,
        },
        problems,
        problems_dropped: 0,
        comm: None,
    }
}

fn summary(ranks: u64) -> ClusterSummary {
    let mut red = Reducer::new();
    for r in 0..ranks {
        red.push(rank(r, 4), "parts.jsonl", "");
    }
    red.finish(
        vec!["/data/run".into()],
        RunInfo {
            mode: "local".into(),
            tasks: 3,
            wall_s: Some(2.5),
        },
    )
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

/// An opener that counts the bytes read through it.
struct Counting {
    inner: MemOpener,
    read: Cell<u64>,
}

struct CountingReader<'a> {
    inner: Box<dyn Read + 'a>,
    read: &'a Cell<u64>,
}

impl Read for CountingReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.set(self.read.get() + n as u64);
        Ok(n)
    }
}

impl Opener for Counting {
    fn open(&self, path: &str) -> io::Result<Box<dyn Read + '_>> {
        Ok(Box::new(CountingReader {
            inner: self.inner.open(path)?,
            read: &self.read,
        }))
    }
}

fn send(session: &mut Session, opener: &dyn Opener, body: Request) -> Vec<Response> {
    let mut out = Collected::default();
    session.handle(Envelope { seq: 1, body }, opener, &mut out);
    out.out.into_iter().map(|(_, r)| r).collect()
}

fn open(session: &mut Session, opener: &Counting) -> InventoryDto {
    let files = opener
        .inner
        .list()
        .into_iter()
        .map(|f| FileMeta {
            path: f.path,
            size: f.size,
        })
        .collect();
    match send(session, opener, Request::Open { files }).remove(0) {
        Response::Inventory(inv) => inv,
        other => panic!("expected the inventory, got {other:?}"),
    }
}

/// Runs the cluster view on every summary of the inventory: the views and the failures.
fn run(
    session: &mut Session,
    opener: &dyn Opener,
    n: usize,
) -> (Vec<ClusterViewDto>, Vec<String>, Vec<String>) {
    let (mut views, mut failed, mut problems) = (vec![], vec![], vec![]);
    for r in send(
        session,
        opener,
        Request::run(AnalysisKind::Cluster, 0..n as u32),
    ) {
        match r {
            Response::Done {
                summary: Summary::Cluster(v),
                ..
            } => views.push(*v),
            Response::TargetFailed { message, .. } => failed.push(message),
            Response::Problems(p) => problems.extend(
                p.kept
                    .into_iter()
                    .map(|p| format!("{} {}", p.code, p.message)),
            ),
            _ => {}
        }
    }
    (views, failed, problems)
}

#[test]
fn a_summary_opens_from_its_head_and_its_view_carries_the_summarys_numbers() {
    let s = summary(12);
    let text = serde_json::to_vec(&s).unwrap();
    let mut mem = MemOpener::new();
    mem.add("runs/summary.json", text.clone());
    mem.add("runs/summary.json.gz", gzip(&text));
    mem.add(
        "runs/notes.json",
        br#"{"format":"something else","traceEvents":[]}"#.to_vec(),
    );
    let opener = Counting {
        inner: mem,
        read: Cell::new(0),
    };
    let mut session = Session::new();
    let inv = open(&mut session, &opener);
    let names: Vec<(&str, &str)> = inv
        .summaries
        .iter()
        .map(|f| (f.path.as_str(), f.kind.as_str()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("runs/summary.json", SUMMARY_KIND),
            ("runs/summary.json.gz", SUMMARY_KIND)
        ]
    );
    assert!(inv.ranks.is_empty());
    assert_eq!(inv.ignored.len(), 1, "{:?}", inv.ignored);
    assert!(inv.problems.is_empty(), "{:?}", inv.problems);

    opener.read.set(0);
    let (views, failed, problems) = run(&mut session, &opener, 2);
    assert!(
        failed.is_empty() && problems.is_empty(),
        "{failed:?} {problems:?}"
    );
    assert_eq!(views.len(), 2);
    // each file read once, whole
    assert_eq!(
        opener.read.get(),
        text.len() as u64 + gzip(&text).len() as u64
    );
    let (plain, gz) = (&views[0], &views[1]);
    assert_eq!(plain.ranks, gz.ranks);
    assert_eq!(plain.file, "runs/summary.json");
    assert_eq!(plain.run, "local (3 tasks, 2.500 s)");
    assert_eq!(plain.ranks.len(), 12);
    assert_eq!(
        plain.step_ids,
        vec![
            "ProfilerStep#10",
            "ProfilerStep#11",
            "ProfilerStep#12",
            "ProfilerStep#13"
        ]
    );
    assert_eq!(plain.slow_ranks, vec![STRAGGLER as i64]);
    // every row is its rank's summary joined with its cross-rank row, same f64
    for (row, (r, c)) in plain.ranks.iter().zip(s.ranks.iter().zip(&s.cross_rank)) {
        let a = r.anomaly.as_ref().unwrap();
        assert_eq!(row.rank_id, r.rank_id);
        assert_eq!(row.service_ms_avg, Some(a.service_ms_avg));
        assert_eq!(row.busy_union_ms_avg, Some(a.busy_union_ms_avg));
        assert_eq!(row.comm_wait_ratio, Some(0.125));
        assert_eq!(row.robust_z, c.robust_z);
        assert_eq!(row.slow, c.slow);
        assert_eq!(row.slow, r.rank_id == Some(STRAGGLER as i64));
        assert_eq!(row.steps, 4);
    }
    let r3 = &plain.ranks[3];
    assert_eq!(
        (r3.status.as_str(), r3.errors, r3.warnings),
        ("partial", 1, 0)
    );
    assert_eq!(
        r3.first_problem.as_deref(),
        Some("ANOM-TV-001: the trace is cut short")
    );
    assert_eq!((plain.problems_errors, plain.problems_warnings), (1, 0));
    // the heatmap cells are the matrices', row-major
    assert_eq!((plain.service_ms.rows, plain.service_ms.cols), (12, 4));
    for (i, line) in s.matrices.service_ms.iter().enumerate() {
        for (j, v) in line.iter().enumerate() {
            assert_eq!(plain.service_ms.get(i as u32, j as u32), *v);
        }
    }
    assert_eq!(plain.underfeed_ratio.get(7, 2), Some(0.25));
    // 3 of 12 ranks (0, 4, 8) are internal_bubble
    let patterns: Vec<(&str, u32)> = plain
        .patterns
        .iter()
        .map(|p| (p.pattern.as_str(), p.ranks))
        .collect();
    assert_eq!(
        patterns,
        vec![("prelaunch_dominant", 9), ("internal_bubble", 3)]
    );
    assert!(
        plain
            .outliers
            .iter()
            .all(|o| o.rank_id == Some(STRAGGLER as i64)),
        "{:?}",
        plain.outliers
    );
    assert_eq!(
        plain.outliers_total,
        s.outliers.len() as u64 + s.outliers_dropped
    );
}

#[test]
fn the_inventory_reads_only_the_head_of_a_summary() {
    let big = serde_json::to_vec(&summary(400)).unwrap();
    assert!(big.len() > 500_000, "{}", big.len());
    let mut mem = MemOpener::new();
    mem.add("big.json", big);
    let opener = Counting {
        inner: mem,
        read: Cell::new(0),
    };
    let inv = open(&mut Session::new(), &opener);
    assert_eq!(inv.summaries.len(), 1);
    assert_eq!(opener.read.get(), 4096, "bytes read by Open");
}

#[test]
fn a_newer_version_and_a_cut_file_are_problems_in_words() {
    let text = serde_json::to_string(&summary(12)).unwrap();
    let mut mem = MemOpener::new();
    mem.add(
        "newer.json",
        text.replacen("\"version\":1", "\"version\":2", 1),
    );
    let cut = gzip(&text.as_bytes()[..text.len() / 2]);
    mem.add("cut.json.gz", cut);
    mem.add(
        "damaged.json",
        text.replacen("\"ranks\":[", "\"ranks\":[7,", 1),
    );
    let opener = Counting {
        inner: mem,
        read: Cell::new(0),
    };
    let mut session = Session::new();
    let inv = open(&mut session, &opener);
    let kinds: Vec<(&str, &str)> = inv
        .summaries
        .iter()
        .map(|f| (f.path.as_str(), f.kind.as_str()))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("cut.json.gz", SUMMARY_KIND),
            ("damaged.json", SUMMARY_KIND),
            (
                "newer.json",
                "proflens cluster summary, version 2: not readable here"
            ),
        ]
    );
    assert_eq!(inv.problems.len(), 1);
    assert_eq!(inv.problems[0].code, "CLU-001");
    assert_eq!(
        inv.problems[0].message,
        "newer.json: a proflens cluster summary of version 2; this page reads version 1 and older. Open it with a newer proflens page."
    );
    let (views, failed, problems) = run(&mut session, &opener, 3);
    assert!(views.is_empty());
    assert_eq!(failed.len(), 3);
    assert!(
        failed[0].starts_with("cut.json.gz: the file ends early (line 1, column "),
        "{}",
        failed[0]
    );
    assert!(
        failed[0].ends_with("): a cut or unfinished cluster summary"),
        "{}",
        failed[0]
    );
    assert!(
        failed[1].starts_with("damaged.json: not a valid cluster summary at line 1, column ")
            && failed[1].contains("invalid type: integer `7`, expected struct RankSummary"),
        "{}",
        failed[1]
    );
    assert_eq!(failed[2], inv.problems[0].message);
    // the two read failures are also problems of the run (the refusal is the inventory's)
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert!(problems.iter().all(|p| p.starts_with("CLU-002 ")));
}
