//! `proflens memory` end to end (exit codes, stdout = the in-process export, byte for byte)
//! and chunk-boundary equivalence of the two streaming readers on real files.

mod engine_support;

use std::io::Read;
use std::ops::ControlFlow;
use std::process::Command;

use proflens::base::Problems;
use proflens::cli::fs_opener::FsOpener;
use proflens::engine::read::memory::MemoryOptions;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::ChunkReader;
use proflens::model::memory_events::MemoryEventTable;
use proflens::model::stacks::StackPool;
use proflens::model::strings::StringPool;
use proflens::parse::csv::operator_memory::{self, CsvMode};
use proflens::parse::metadata::read_side_files;
use proflens::parse::trace_json::call_stack_index::{read_host_ops, TraceMode};
use proflens::report::memory_rows::{write_csv, write_json, Columns};

const L1: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/ascend/Ascend__msinsight/test/data/pytorch/text/level1"
);

fn export(root: &str, json: bool) -> Vec<u8> {
    let (opener, files) = FsOpener::walk(std::path::Path::new(root)).unwrap();
    let mut inv = Inventory::from_paths(&files);
    read_side_files(&mut inv, &opener);
    let (run, _) =
        engine_support::memory_run(&inv, &opener, &MemoryOptions::default(), &mut |_| {
            ControlFlow::Continue(())
        });
    let mut out = Vec::new();
    if json {
        write_json(&run, Columns::Full, &mut out).unwrap();
    } else {
        write_csv(&run, Columns::Full, &mut out).unwrap();
    }
    out
}

#[test]
fn cli_output_is_the_export_byte_for_byte() {
    for (fmt, json) in [("csv", false), ("json", true)] {
        let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
            .args(["memory", L1, "--format", fmt])
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.stdout == export(L1, json), "{fmt} differs");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains("368 rows from 2 of 2 rank folder(s)"),
            "{stderr}"
        );
    }
    let v: serde_json::Value = serde_json::from_slice(&export(L1, true)).unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 368);
    let keys: Vec<&String> = rows[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 33);
}

#[test]
fn cli_exit_code_is_nonzero_only_when_nothing_was_analysed() {
    let dir = std::env::temp_dir().join(format!("proflens_cli_{}", std::process::id()));
    std::fs::create_dir_all(dir.join("x")).unwrap();
    std::fs::write(dir.join("x/readme.txt"), "nothing here").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["memory"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("MEM-DISC-001"));
    let out = dir.join("rows.csv");
    let o = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .args(["memory", L1, "--parity", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("name,role,rank_id,call_stack,call_stack_top,size_kb,start_time_ms,duration_ms,total_allocated_mb,total_reserved_mb,total_active_mb,device_type\n"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A reader handing out at most `n` bytes per read.
struct Trickle<'a>(&'a [u8], usize);
impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.1.min(buf.len()).min(self.0.len());
        buf[..k].copy_from_slice(&self.0[..k]);
        self.0 = &self.0[k..];
        Ok(k)
    }
}

#[test]
fn trace_reader_agrees_across_chunk_sizes() {
    let bytes = std::fs::read(format!(
        "{L1}/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json"
    ))
    .unwrap();
    let digest = |chunk: usize, per_read: usize| {
        let mut strings = StringPool::new();
        let mut stacks = StackPool::new();
        let mut p = Problems::new();
        let mut rdr = ChunkReader::with_sizes(Trickle(&bytes, per_read), None, chunk, 1 << 24);
        let (h, s) = read_host_ops(
            &mut rdr,
            "t",
            TraceMode::Default,
            &mut strings,
            &mut stacks,
            &mut p,
            &mut |_| ControlFlow::Continue(()),
        )
        .unwrap();
        let stacks_text: Vec<String> = (0..h.len())
            .map(|i| {
                h.stack(i)
                    .map(|x| stacks.text(x).to_string())
                    .unwrap_or_default()
            })
            .collect();
        (
            h.ts_ns().to_vec(),
            h.dur_ns().to_vec(),
            stacks_text,
            s.cpu_ops,
            s.with_stack,
            s.flows,
        )
    };
    let whole = digest(1 << 22, usize::MAX);
    assert_eq!(whole.3, 860);
    assert_eq!(whole.4, 316);
    assert_eq!(whole.5, 54); // fwdbwd s + f points (python json count)
    for (chunk, per_read) in [(4096, 4096), (333, 17), (1 << 16, 1000)] {
        assert!(
            digest(chunk, per_read) == whole,
            "chunk {chunk}/{per_read} differs"
        );
    }
}

#[test]
fn csv_reader_agrees_with_one_byte_reads() {
    let bytes = std::fs::read(format!(
        "{L1}/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
    ))
    .unwrap();
    let rows = |per_read: usize| {
        let mut strings = StringPool::new();
        let mut t = MemoryEventTable::new();
        let mut p = Problems::new();
        operator_memory::read(
            &mut Trickle(&bytes, per_read),
            "m",
            None,
            CsvMode::Default,
            &mut strings,
            &mut t,
            &mut p,
            &mut |_| ControlFlow::Continue(()),
        )
        .unwrap();
        assert!(p.is_empty());
        (
            t.alloc_time_ns().to_vec(),
            t.line().to_vec(),
            (0..t.len())
                .map(|i| t.release_time_ns(i))
                .collect::<Vec<_>>(),
        )
    };
    let whole = rows(usize::MAX);
    assert_eq!(whole.0.len(), 184);
    assert_eq!(rows(1), whole);
    assert_eq!(rows(7), whole);
}
