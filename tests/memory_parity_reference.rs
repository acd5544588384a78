//! Cross-check against an independent Python reference of the RL-Insight rule
//! (tests/reference/memory_parity.py): the parity CSV must be byte-identical, row by row.
//! Also checks `report::float::py_repr` against CPython `repr` on many floats.
//! Skipped (with a message) only when `python3` is absent.

mod engine_support;

use std::ops::ControlFlow;
use std::process::Command;

use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::memory::{MemoryOptions, Mode};
use proflens::ingest::inventory::Inventory;
use proflens::parse::metadata::read_side_files;
use proflens::report::float::py_repr;
use proflens::report::memory_rows::{write_csv, Columns};

fn python() -> Option<&'static str> {
    match Command::new("python3").arg("--version").output() {
        Ok(o) if o.status.success() => Some("python3"),
        _ => {
            eprintln!("SKIPPED: python3 not found; the reference cross-check did not run");
            None
        }
    }
}

fn fixture(rel: &str) -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/fixtures")
        .join(rel);
    assert!(p.exists(), "fixture missing: {}", p.display());
    p
}

fn ours(root: &std::path::Path) -> String {
    let (opener, files) = FsOpener::walk(root).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    let opts = MemoryOptions {
        mode: Mode::Parity,
        ..Default::default()
    };
    let (run, _) =
        engine_support::memory_run(&inv, &opener, &opts, &mut |_| ControlFlow::Continue(()));
    let mut out = Vec::new();
    write_csv(&run, Columns::Parity, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn reference(py: &str, root: &std::path::Path) -> String {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/memory_parity.py"
    );
    let o = Command::new(py).arg(script).arg(root).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

fn compare(rel: &str, rows: usize) {
    let Some(py) = python() else { return };
    let root = fixture(rel);
    let (a, b) = (ours(&root), reference(py, &root));
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.split('\n').collect(), b.split('\n').collect());
    for (k, (x, y)) in la.iter().zip(lb.iter()).enumerate() {
        assert_eq!(x, y, "line {} differs", k + 1);
    }
    assert_eq!(la.len(), lb.len());
    // header + rows; quoted multi-line stacks make the CSV longer than the row count
    let mut rdr = csv::Reader::from_reader(a.as_bytes());
    assert_eq!(rdr.records().count(), rows);
}

#[test]
fn rl_insight_fixture_matches_the_python_reference() {
    compare("rl_insight/data/recipe/memory_data", 49);
}

#[test]
fn msinsight_five_ranks_match_the_python_reference() {
    compare("ascend/Ascend__msinsight/test/data/pytorch/text", 5 * 184);
}

#[test]
fn float_repr_matches_cpython() {
    let Some(py) = python() else { return };
    // deterministic pseudo-random bit patterns plus values of every magnitude
    let mut xs: Vec<f64> = Vec::new();
    let mut s: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..3000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let x = f64::from_bits(s);
        if x.is_finite() {
            xs.push(x);
        }
    }
    for e in -30..30 {
        for m in [1.0, 1.5, 2.675, 9.999999999999999, 1.0000000000000002] {
            xs.push(m * 10f64.powi(e));
        }
    }
    for k in 0..2000u64 {
        // quarter-µs grid values around 1.7e15 µs divided into ms: the tie cases
        xs.push((1_736_405_443_929_156.25 + k as f64 * 0.25) / 1000.0);
    }
    let input: String = xs
        .iter()
        .map(|x| format!("{:016x}\n", x.to_bits()))
        .collect();
    let prog = "import sys,struct\nfor l in sys.stdin:\n print(repr(struct.unpack('>d', bytes.fromhex(l.strip()))[0]))";
    let mut child = Command::new(py)
        .args(["-c", prog])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let want: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(want.len(), xs.len());
    for (x, w) in xs.iter().zip(want) {
        assert_eq!(py_repr(*x), w, "bits {:016x}", x.to_bits());
    }
}
