//! The top-level members of a Kineto trace besides `traceEvents` (formats.md §8):
//! small JSON values decoded with `serde_json` into [`TraceFacts`].

use serde_json::Value;

use crate::model::gpu::{DeviceProperties, DistributedInfo, TraceFacts};

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A capture option's value: `1` / `0`, `true` / `false`, or those as text.
fn flag(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => n.as_i64().map(|i| i != 0),
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "1" | "true" => Some(true),
            "0" | "false" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

/// Records member `key` (raw, without quotes) with raw JSON `value` into `facts`. Returns
/// false when a known member has an unexpected shape (the caller reports it); unknown
/// members (job metadata, `INFO`, `trace_id`…) are ignored and return true.
pub fn read_member(facts: &mut TraceFacts, key: &[u8], value: &[u8]) -> bool {
    const KNOWN: [&[u8]; 16] = [
        b"record_shapes",
        b"with_stack",
        b"profile_memory",
        b"with_flops",
        b"with_modules",
        b"schemaVersion",
        b"deviceProperties",
        b"distributedInfo",
        b"baseTimeNanoseconds",
        b"displayTimeUnit",
        b"cuda_runtime_version",
        b"cuda_driver_version",
        b"cupti_version",
        b"roctracer_version",
        b"hip_runtime_version",
        b"traceName",
    ];
    if !KNOWN.contains(&key) {
        return true;
    }
    let Ok(v) = serde_json::from_slice::<Value>(value) else {
        return false;
    };
    match key {
        b"schemaVersion" => facts.schema_version = int(&v),
        b"baseTimeNanoseconds" => {
            facts.base_time_ns = int(&v);
            return facts.base_time_ns.is_some();
        }
        b"displayTimeUnit" => facts.display_time_unit = text(&v),
        b"cuda_runtime_version" => facts.cuda_runtime_version = int(&v),
        b"cuda_driver_version" => facts.cuda_driver_version = int(&v),
        b"cupti_version" => facts.cupti_version = int(&v),
        b"roctracer_version" | b"hip_runtime_version" => facts.rocm_version = text(&v),
        b"traceName" => facts.trace_name = text(&v),
        b"record_shapes" | b"with_stack" | b"profile_memory" | b"with_flops" | b"with_modules" => {
            let Some(on) = flag(&v) else {
                return false;
            };
            let f = &mut facts.flags;
            let slot = match key {
                b"record_shapes" => &mut f.record_shapes,
                b"with_stack" => &mut f.with_stack,
                b"profile_memory" => &mut f.profile_memory,
                b"with_flops" => &mut f.with_flops,
                _ => &mut f.with_modules,
            };
            *slot = Some(on);
        }
        b"deviceProperties" => {
            let Value::Array(list) = v else {
                return false;
            };
            facts.devices = list
                .iter()
                .map(|d| DeviceProperties {
                    id: d.get("id").and_then(int).unwrap_or(-1),
                    name: d.get("name").and_then(text).unwrap_or_default(),
                    total_global_mem: d.get("totalGlobalMem").and_then(int),
                    compute: match (
                        d.get("computeMajor").and_then(int),
                        d.get("computeMinor").and_then(int),
                    ) {
                        (Some(a), Some(b)) => Some((a, b)),
                        _ => None,
                    },
                    num_sms: d.get("numSms").and_then(int),
                })
                .collect();
        }
        b"distributedInfo" => {
            let Value::Object(m) = v else {
                return false;
            };
            facts.distributed = Some(DistributedInfo {
                rank: m.get("rank").and_then(int),
                world_size: m.get("world_size").and_then(int),
                backend: m.get("backend").and_then(text),
            });
        }
        _ => {}
    }
    true
}
