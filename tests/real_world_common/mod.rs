//! What the exact-value tests on the real-world sets share (`real_world_exact*.rs`):
//! `proflens analyze` run on a set, its `anomaly.json` read as JSON, and the fields compared.
#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

pub const RW: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/fixtures/real_world/"
);
pub const TL: &str = "AMD-AGI__TraceLens/tests/traces/";

/// `proflens analyze --out-dir OUT INPUT`, OUT a fresh folder named by `tag`; the ranks of
/// `OUT/anomaly.json`, in file order.
pub fn analyze(tag: &str, input: &Path) -> Vec<Value> {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rw_exact_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let st = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .arg("analyze")
        .arg("--quiet")
        .arg("--out-dir")
        .arg(&out)
        .arg(input)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let text = std::fs::read_to_string(out.join("anomaly.json")).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    let doc: Value = serde_json::from_str(&text).unwrap();
    doc.as_array().unwrap().clone()
}

/// The one rank of the trace `rel` (under `real_world/`).
pub fn one(tag: &str, rel: &str) -> Value {
    let mut v = analyze(tag, &Path::new(RW).join(rel));
    assert_eq!(v.len(), 1, "{rel}");
    v.remove(0)
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// `(step_id, start_us, end_us, total_kernel_count, kernel_duration_sum_ms, device_busy_union_ms)`.
pub type Step = (String, f64, f64, u64, f64, f64);

pub fn st(id: &str, start_us: f64, end_us: f64, kernels: u64, sum_ms: f64, busy_ms: f64) -> Step {
    (id.to_string(), start_us, end_us, kernels, sum_ms, busy_ms)
}

/// The [`Step`] of every step of rank `r`.
pub fn steps(r: &Value) -> Vec<Step> {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["step_id"].as_str().unwrap().to_string(),
                f(&s["window"]["start_us"]),
                f(&s["window"]["end_us"]),
                s["total_kernel_count"].as_u64().unwrap(),
                f(&s["kernel_duration_sum_ms"]),
                f(&s["device_busy_union_ms"]),
            )
        })
        .collect()
}

/// `(capture_span_ms, device_busy_union_ms, device_gap_ms, largest_gap_ms, gap_count)`.
pub fn global(r: &Value) -> (f64, f64, f64, f64, u64) {
    let g = &r["anomaly_discovery"]["global_device_gap_analysis"];
    (
        f(&g["capture_span_ms"]),
        f(&g["device_busy_union_ms"]),
        f(&g["device_gap_ms"]),
        f(&g["largest_gap_ms"]),
        g["gap_count"].as_u64().unwrap(),
    )
}

/// `gpu.kernel_categories` as `[(count, sum_ms, busy_ms)]` for compute, communication, memory.
pub fn categories(r: &Value) -> Vec<(String, u64, f64, f64)> {
    r["gpu"]["kernel_categories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["category"].as_str().unwrap().to_string(),
                c["count"].as_u64().unwrap(),
                f(&c["sum_ms"]),
                f(&c["busy_ms"]),
            )
        })
        .collect()
}

pub fn cats(c: [(u64, f64, f64); 3]) -> Vec<(String, u64, f64, f64)> {
    ["compute", "communication", "memory"]
        .iter()
        .zip(c)
        .map(|(n, (k, s, b))| (n.to_string(), k, s, b))
        .collect()
}

pub fn hta_time(span: i64, idle: i64, compute: i64, non_compute: i64) -> Value {
    json!({"span_us": span, "idle_us": idle, "compute_us": compute, "non_compute_us": non_compute})
}

pub fn idle(stream: i64, host: Option<i64>, kernel: Option<i64>, other: i64) -> Value {
    json!({"stream": stream, "host_wait_us": host, "kernel_wait_us": kernel, "other_us": other})
}

/// The regular files of a `.tar.gz` (ustar), in archive order: `(path, bytes)`.
pub fn untar_gz(path: &str) -> Vec<(String, Vec<u8>)> {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut raw)
        .unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while at + 512 <= raw.len() {
        let h = &raw[at..at + 512];
        if h.iter().all(|&b| b == 0) {
            break;
        }
        let text = |r: std::ops::Range<usize>| {
            let f = &h[r];
            let end = f.iter().position(|&b| b == 0).unwrap_or(f.len());
            String::from_utf8_lossy(&f[..end]).trim().to_string()
        };
        let size = usize::from_str_radix(&text(124..136), 8).unwrap();
        let (name, prefix) = (text(0..100), text(345..500));
        let name = if prefix.is_empty() {
            name
        } else {
            format!("{prefix}/{name}")
        };
        at += 512;
        if h[156] == b'0' || h[156] == 0 {
            out.push((name, raw[at..at + size].to_vec()));
        }
        at += size.div_ceil(512) * 512;
    }
    out
}

/// The tarball's regular files ([`untar_gz`]) written under a fresh folder; the folder.
pub fn untar_gz_to(path: &str, tag: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rw_exact_{tag}_in_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for (name, bytes) in untar_gz(path) {
        let p = root.join(name.trim_start_matches("./"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    root
}

/// `proflens analyze --out-dir OUT PICKLE`: the snapshot document it writes,
/// `OUT/snapshots/<file name>.json`.
pub fn analyze_snapshot(tag: &str, rel: &str) -> Value {
    let input = Path::new(RW).join(rel);
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("rw_exact_{tag}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let st = Command::new(env!("CARGO_BIN_EXE_proflens"))
        .arg("analyze")
        .arg("--quiet")
        .arg("--out-dir")
        .arg(&out)
        .arg(&input)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let name = input.file_name().unwrap().to_str().unwrap();
    let text = std::fs::read_to_string(out.join("snapshots").join(format!("{name}.json"))).unwrap();
    let _ = std::fs::remove_dir_all(&out);
    serde_json::from_str(&text).unwrap()
}

/// `(service_ms, prelaunch_gap_ms, tail_gap_ms, internal_bubble_total_ms, bubble_count,
/// largest_internal_bubble_ms)` of every step (anomaly.md §5.4).
pub fn idle_parts(r: &Value) -> Vec<(f64, f64, f64, f64, u64, f64)> {
    r["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                f(&s["service_ms"]),
                f(&s["prelaunch_gap_ms"]),
                f(&s["tail_gap_ms"]),
                f(&s["internal_bubble_total_ms"]),
                s["bubble_count"].as_u64().unwrap(),
                f(&s["largest_internal_bubble_ms"]),
            )
        })
        .collect()
}

/// 10^(ceil(log10(max)) + 1): TraceFuse's offset multiplier of a field with maximum `max`.
pub fn multiplier(max: i64) -> i64 {
    10i64.pow((max as f64).log10().ceil() as u32 + 1)
}

/// TraceFuse's `process_single_file` + `merge` over `(rank, trace)`.
pub fn fuse(traces: &[(i64, Value)]) -> Vec<u8> {
    let mut merged = Vec::new();
    for (rank, t) in traces {
        let events = t["traceEvents"].as_array().unwrap();
        let max_of = |f: &dyn Fn(&Value) -> Option<i64>| {
            events
                .iter()
                .filter(|e| e["cat"] != "Trace")
                .filter_map(f)
                .max()
                .unwrap_or(1)
        };
        let pid_mult = multiplier(max_of(&|e| e["pid"].as_i64()));
        let corr_mult = multiplier(max_of(&|e| e["args"]["correlation"].as_i64()));
        for e in events {
            let mut e = e.clone();
            if e.get("args").is_none() {
                e["args"] = json!({});
            }
            e["args"]["rank"] = json!(rank);
            if let Some(p) = e["pid"].as_i64() {
                e["args"]["pid_raw"] = json!(p);
                e["pid"] = json!(p + rank * pid_mult);
            }
            if e["cat"] == "ac2g" {
                if let Some(id) = e["id"].as_i64() {
                    e["args"]["id_raw"] = json!(id);
                    e["id"] = json!(id + rank * 100 * pid_mult);
                }
            }
            if let Some(c) = e["args"]["correlation"].as_i64() {
                e["args"]["correlation_raw"] = json!(c);
                e["args"]["correlation"] = json!(c + rank * corr_mult);
            }
            merged.push(e);
        }
    }
    serde_json::to_vec(&json!({ "traceEvents": merged })).unwrap()
}

/// The 8 real DLRM traces of `real_world/` (rank = worker number, by file name), and them
/// fused by [`fuse`] into one merged trace.
pub fn fused_dlrm(tag: &str) -> (Vec<(String, Vec<u8>)>, Vec<u8>) {
    let dir = untar_gz_to(
        &format!("{RW}facebookresearch__param/et_replay/tests/inputs/dlrm_kineto.tar.gz"),
        tag,
    );
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".json") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert_eq!(files.len(), 8);
    let mut traces = Vec::new();
    let mut alone = Vec::new();
    for (rank, f) in files.iter().enumerate() {
        let bytes = std::fs::read(f).unwrap();
        traces.push((
            rank as i64,
            serde_json::from_slice::<Value>(&bytes).unwrap(),
        ));
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        alone.push((name, bytes));
    }
    (alone, fuse(&traces))
}
