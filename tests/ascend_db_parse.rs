//! The DB reader on the fixtures (docs/rules/ascend-db.md): counts and values from an
//! independent reading of the same DBs (Python's `sqlite3`, `tests/reference/ascend_db_check.py`),
//! and `analysis.db` against the `communication.json` / `step_trace_time.csv` written by the
//! same parse (the st/level2 ranks).

use std::ops::ControlFlow;

use proflens::base::Problems;
use proflens::ingest::MemOpener;
use proflens::model::kernels::KernelTableBuilder;
use proflens::model::memory_events::MemoryEventTable;
use proflens::model::stacks::StackPool;
use proflens::model::strings::StringPool;
use proflens::parse::ascend_db::{analysis_db, host, kernels, memory, DbFile};

const DB: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/db"
);
const ST: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/st/level2"
);

/// (level/rank folder, profiler DB name)
const RANKS: [(&str, &str); 5] = [
    ("level0/rank0_ascend_pt", "ascend_pytorch_profiler_0.db"),
    ("level0/rank1_ascend_pt", "ascend_pytorch_profiler_1.db"),
    ("level1/rank0_ascend_pt", "ascend_pytorch_profiler_0.db"),
    ("level1/rank1_ascend_pt", "ascend_pytorch_profiler_1.db"),
    ("level2/rank0_ascend_pt", "ascend_pytorch_profiler_0.db"),
];

fn opener(path: &str) -> MemOpener {
    let mut o = MemOpener::new();
    o.add("x.db", std::fs::read(path).expect("fixture"));
    o
}

fn go() -> impl FnMut() -> ControlFlow<()> {
    || ControlFlow::Continue(())
}

#[test]
fn every_fixture_rank_gives_the_spec_counts() {
    for (dir, name) in RANKS {
        let p = format!("{DB}/{dir}/ASCEND_PROFILER_OUTPUT/{name}");
        let o = opener(&p);
        let size = std::fs::metadata(&p).unwrap().len();
        let f = DbFile::open(&o, "x.db", size).unwrap();
        let mut probs = Problems::new();
        let mut strings = StringPool::new();
        let mut stacks = StackPool::new();
        let mut ev = MemoryEventTable::new();
        let m = memory::read(&f, &mut strings, &mut ev, &mut probs, &mut go());
        assert_eq!(m.rows, 184, "{dir}");
        let ge = ev
            .name()
            .iter()
            .filter(|n| strings.get(**n).starts_with("cann::"))
            .count();
        assert_eq!(ge, 57, "{dir}");
        let mut ops = host::HostOps::new(&mut strings, &mut stacks, false);
        let mut tl = host::Timeline::new("");
        host::read(&f, Some(&mut ops), Some(&mut tl), &mut probs, &mut go());
        assert_eq!((ops.cpu_ops, ops.with_stack), (860, 316), "{dir}");
        let steps: Vec<_> = tl.table.markers.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(steps, ["ProfilerStep#50"], "{dir}");
        let mut b = KernelTableBuilder::new();
        let k = kernels::read(&f, &mut b, &mut probs, &mut go(), None);
        assert_eq!((k.compute, k.comm), (187, 4), "{dir}");
        let t = b.finish();
        assert_eq!(t.len(), 191, "{dir}");
        assert!(probs.kept().is_empty(), "{dir}: {:?}", probs.kept());
    }
}

#[test]
fn analysis_db_equals_the_text_written_by_the_same_parse() {
    for r in ["rank_0_ascend_pt", "rank_1_ascend_pt", "rank_3_ascend_pt"] {
        let out = format!("{ST}/{r}/ASCEND_PROFILER_OUTPUT");
        let p = format!("{out}/analysis.db");
        let o = opener(&p);
        let f = DbFile::open(&o, "x.db", std::fs::metadata(&p).unwrap().len()).unwrap();
        let mut probs = Problems::new();
        let db_ops = match proflens::parse::ascend_db::comm::ops(&f, &mut probs, &mut || {
            std::ops::ControlFlow::Continue(())
        }) {
            std::ops::ControlFlow::Continue(ops) => ops.unwrap(),
            std::ops::ControlFlow::Break(()) => unreachable!("never cancelled"),
        };
        let txt = std::fs::File::open(format!("{out}/communication.json")).unwrap();
        let text_ops = proflens::parse::communication::read(txt, "c.json").unwrap();
        assert_eq!(db_ops.len(), text_ops.len(), "{r}");
        for (a, b) in db_ops.iter().zip(&text_ops) {
            assert_eq!(a, b, "{r}");
        }
        let db_st = analysis_db::step_trace(&f, &mut probs).unwrap();
        let csv = std::fs::File::open(format!("{out}/step_trace_time.csv")).unwrap();
        let text_st =
            proflens::parse::csv::step_trace_time::read(csv, "s.csv", &mut probs).unwrap();
        assert_eq!(db_st.len(), text_st.len(), "{r}");
        for (a, b) in db_st.iter().zip(&text_st) {
            assert_eq!(a.step, b.step, "{r}");
            // The DB is computed from integer ns; the CSV from float µs (≤ 0.25 µs apart).
            let pairs = [
                (a.computing_ns, b.computing_ns),
                (a.comm_not_overlapped_ns, b.comm_not_overlapped_ns),
                (a.communication_ns, b.communication_ns),
                (a.free_ns, b.free_ns),
                (a.stage_ns, b.stage_ns),
                (a.bubble_ns, b.bubble_ns),
                (a.preparing_ns, b.preparing_ns),
            ];
            for (x, y) in pairs {
                let (x, y) = (x.unwrap_or(0), y.unwrap_or(0));
                assert!((x - y).abs() <= 250, "{r}: {x} vs {y}");
            }
        }
        assert!(probs.kept().is_empty(), "{r}: {:?}", probs.kept());
    }
}
