//! The shared parse primitives on real files: line numbers through multi-line quoted
//! fields and CRLF, exact event counts of a real trace. Expected values were computed
//! independently with Python's `csv` and `json` modules on the same files.

use std::fs::File;
use std::ops::ControlFlow;
use std::sync::Arc;

use proflens::ingest::ChunkReader;
use proflens::parse::csv::{CsvTable, RowRead};
use proflens::parse::trace_json::{for_each_event, scan};

const L1R0: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT"
);

#[test]
fn csv_line_numbers_survive_multiline_cells() {
    // operator_details.csv: 859 rows over 6,224 newline characters (formats.md §2.3).
    let f = File::open(format!("{L1R0}/operator_details.csv")).unwrap();
    let mut t = CsvTable::open(f, "operator_details.csv", None).unwrap();
    let mut starts = Vec::new();
    while let RowRead::Row = t.read_row().unwrap() {
        starts.push((t.line(), t.cell(0).unwrap().to_string()));
    }
    assert_eq!(starts.len(), 859);
    assert_eq!(starts[0].0, 2);
    assert_eq!(starts[99], (2137, "aclnnInplaceRelu".to_string()));
    assert_eq!(starts[858], (6213, "aten::_local_scalar_dense".to_string()));
}

#[test]
fn csv_crlf_file_has_exact_rows_and_lines() {
    let f = File::open(format!("{L1R0}/operator_memory.csv")).unwrap();
    let mut t = CsvTable::open(f, "operator_memory.csv", None).unwrap();
    assert_eq!(t.header().len(), 15);
    assert_eq!(t.header().index("Device Type"), Some(14));
    let mut n = 0;
    while let RowRead::Row = t.read_row().unwrap() {
        n += 1;
        assert_eq!(t.line(), n + 1);
        assert_eq!(t.width(), 15);
        assert!(!t.cell(14).unwrap().ends_with('\r'));
    }
    assert_eq!(n, 184);
    assert_eq!(t.line_endings().crlf, 185);
    assert_eq!(t.line_endings().lf, 0);
}

#[test]
fn trace_events_counted_exactly_with_small_chunks() {
    // 10,112 events; 860 cpu_op; 4,384 `X`; 316 cpu_op with a `Call stack` (python json).
    for chunk in [4096, 1 << 20] {
        let f = File::open(format!("{L1R0}/trace_view.json")).unwrap();
        let mut rdr = ChunkReader::with_sizes(f, None, chunk, 1 << 24);
        let file: Arc<str> = "trace_view.json".into();
        let (mut cpu_op, mut x, mut stacks) = (0, 0, 0);
        let scan = for_each_event(
            &mut rdr,
            &file,
            &mut |_| ControlFlow::Continue(()),
            &mut |ev, _| {
                let [cat, ph, args] = scan::fields(ev, ["cat", "ph", "args"]).unwrap();
                if cat.and_then(scan::as_str).as_deref() == Some("cpu_op") {
                    cpu_op += 1;
                    if let Some(args) = args {
                        let [cs] = scan::fields(args, ["Call stack"]).unwrap();
                        stacks += cs.is_some() as u32;
                    }
                }
                x += (ph.and_then(scan::as_str).as_deref() == Some("X")) as u32;
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        assert_eq!(scan.events, 10_112);
        assert_eq!((cpu_op, x, stacks), (860, 4_384, 316));
        assert_eq!(scan.truncated_at, None);
        assert!(!scan.wrapped);
    }
}
