//! Builders of small synthetic rank folders for the anomaly tests (in memory).
#![allow(dead_code)]

use std::ops::ControlFlow;

#[path = "../engine_support/mod.rs"]
mod engine_support;

use proflens::analysis::anomaly_config::AnomalyConfig;
use proflens::engine::read::RankAnalysis;
use proflens::ingest::inventory::Inventory;
use proflens::ingest::MemOpener;

/// One kernel row: name, core, start µs (text), dur µs (text), wait µs (text), stream.
pub struct K<'a>(
    pub &'a str,
    pub &'a str,
    pub &'a str,
    pub &'a str,
    pub &'a str,
    pub &'a str,
);

pub const HEADER: &str = "Step Id,Model ID,Task ID,Stream ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us),Block Dim,Input Shapes";

/// A kernel_details.csv (2025 Level1-like columns).
pub fn kernel_csv(rows: &[K<'_>]) -> String {
    let mut s = String::from(HEADER);
    s.push('\n');
    for (i, k) in rows.iter().enumerate() {
        s.push_str(&format!(
            "1,4294967295,{},{},{},{},{},{}\t,{},{},8,\"\"\"1,2\"\"\"\n",
            i, k.5, k.0, k.0, k.1, k.2, k.3, k.4
        ));
    }
    s
}

/// A kernel row on stream 2 (AI_CORE) starting at `start` µs lasting `dur` µs.
pub fn ai(name: &str, start: f64, dur: f64) -> (String, String, String, String, String, String) {
    (
        name.into(),
        "AI_CORE".into(),
        format!("{start:.3}"),
        format!("{dur:.3}"),
        "0".into(),
        "2".into(),
    )
}

/// Builds the CSV from owned rows.
pub fn csv_owned(rows: &[(String, String, String, String, String, String)]) -> String {
    let ks: Vec<K<'_>> = rows
        .iter()
        .map(|r| K(&r.0, &r.1, &r.2, &r.3, &r.4, &r.5))
        .collect();
    kernel_csv(&ks)
}

/// A trace_view.json: Python process pid 1, Ascend Hardware pid 9; `events` are raw JSON objects.
pub fn trace(markers: &[(u32, f64, f64)], events: &[String]) -> String {
    let mut v: Vec<String> = vec![
        r#"{"ph":"M","name":"process_name","pid":1,"args":{"name":"Python"}}"#.into(),
        r#"{"ph":"M","name":"process_name","pid":9,"args":{"name":"Ascend Hardware"}}"#.into(),
    ];
    for (n, ts, dur) in markers {
        v.push(format!(r#"{{"ph":"X","name":"ProfilerStep#{n}","cat":"cpu_op","pid":1,"tid":1,"ts":"{ts:.3}","dur":{dur}}}"#));
    }
    v.extend(events.iter().cloned());
    format!("[{}]", v.join(",\n"))
}

/// A host `X` event on the Python lane.
pub fn host(name: &str, cat: &str, ts: f64, dur: f64, tid: u32) -> String {
    format!(
        r#"{{"ph":"X","name":"{name}","cat":"{cat}","pid":1,"tid":{tid},"ts":"{ts:.3}","dur":{dur}}}"#
    )
}

/// Runs the pipeline over in-memory files (paths relative to the dropped root).
pub fn run_files(files: &[(&str, String)], cfg: &AnomalyConfig) -> Vec<RankAnalysis> {
    let bytes: Vec<(&str, Vec<u8>)> = files
        .iter()
        .map(|(p, b)| (*p, b.clone().into_bytes()))
        .collect();
    run_bytes(&bytes, cfg)
}

/// [`run_files`] with raw bytes (files that are not UTF-8).
pub fn run_bytes(files: &[(&str, Vec<u8>)], cfg: &AnomalyConfig) -> Vec<RankAnalysis> {
    let mut m = MemOpener::new();
    for (p, b) in files {
        m.add(*p, b.clone());
    }
    let inv = Inventory::from_paths(&m.list());
    engine_support::anomaly_run(&inv, &m, cfg, &mut |_| ControlFlow::Continue(()))
        .unwrap()
        .0
}

/// One rank folder `cap/rank0_ascend_pt` with a kernel CSV and optionally a trace.
pub fn run_rank(kernels: String, trace: Option<String>, cfg: &AnomalyConfig) -> RankAnalysis {
    let mut files = vec![(
        "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        kernels,
    )];
    if let Some(t) = trace {
        files.push((
            "cap/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json",
            t,
        ));
    }
    let mut v = run_files(&files, cfg);
    assert_eq!(v.len(), 1);
    v.remove(0)
}

pub fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}
