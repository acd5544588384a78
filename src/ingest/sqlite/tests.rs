use super::*;
use crate::ingest::MemOpener;

fn fixture(rel: &str) -> Vec<u8> {
    let p = format!(
        "{}/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/db/{rel}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(p).expect("fixture")
}

#[test]
fn a_fixture_db_is_read_through_the_opener() {
    let bytes =
        fixture("level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let mut op = MemOpener::new();
    op.add("r/a.db", bytes.clone());
    let src = OpenerSource::new(&op, "r/a.db", bytes.len() as u64);
    let db = Db::open(Box::new(src)).unwrap();
    let n: i64 = db
        .conn()
        .query_row("SELECT count(*) FROM OP_MEMORY", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 184);
    assert_eq!(db.columns("STEP_TIME").unwrap(), ["id", "startNs", "endNs"]);
    assert!(db.columns("NO_SUCH_TABLE").unwrap().is_empty());
}

#[test]
fn a_wal_flagged_db_is_read_and_writes_are_refused() {
    // MindStudio Insight leaves bytes 18–19 = 2 (WAL): served as 1, nothing else needed.
    let mut bytes =
        fixture("level0/rank1_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_1.db");
    bytes[18] = 2;
    bytes[19] = 2;
    let db = Db::open(Box::new(MemSource(bytes))).unwrap();
    let n: i64 = db
        .conn()
        .query_row("SELECT count(*) FROM TASK", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 550);
    assert!(db.conn().execute("DELETE FROM TASK", []).is_err());
    assert!(db
        .conn()
        .execute_batch("CREATE TABLE x(a INTEGER)")
        .is_err());
}

#[test]
fn not_sqlite_and_truncated_files_are_errors_not_panics() {
    let e = Db::open(Box::new(MemSource(
        b"hello, this is not a database".to_vec(),
    )))
    .err()
    .unwrap();
    assert!(matches!(e, OpenError::NotSqlite), "{e}");
    let bytes =
        fixture("level0/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let cut = bytes[..bytes.len() / 3].to_vec();
    // Opening may succeed (SQLite reads lazily); a scan over the missing pages fails.
    if let Ok(db) = Db::open(Box::new(MemSource(cut))) {
        let r: Result<i64, _> =
            db.conn()
                .query_row("SELECT count(*) FROM PYTORCH_CALLCHAINS", [], |r| r.get(0));
        let r2: Result<i64, _> = db
            .conn()
            .query_row("SELECT count(*) FROM OP_MEMORY", [], |r| r.get(0));
        assert!(r.is_err() || r2.is_err());
    }
}

#[test]
fn many_windows_stay_bounded() {
    // A read larger than the cache walks windows and evicts; bytes come back in order.
    let data: Vec<u8> = (0..(window::WINDOW as usize * 10 + 77))
        .map(|i| (i % 251) as u8)
        .collect();
    let mut w = window::Windowed::new(Box::new(MemSource(data.clone())));
    let mut buf = vec![0u8; data.len()];
    assert_eq!(w.read(0, &mut buf).unwrap(), data.len());
    assert_eq!(buf, data);
    let mut b = [0u8; 10];
    assert_eq!(w.read(data.len() as u64 - 5, &mut b).unwrap(), 5);
}
