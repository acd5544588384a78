//! `communication.json` → [`CommOp`]s (anomaly.md §1.4, formats.md §7.3).
//!
//! Layout: `{ "<stepKey>": { "collective": {op@group: OpInfo, …, "Total Op Info": …} | [],
//! "p2p": … } }`. Decoded into typed structs (no DOM); `Total Op Info` is skipped;
//! an empty group may be `[]`.

use std::collections::BTreeMap;
use std::io::Read;

use serde::Deserialize;

use crate::base::Position;
use crate::model::side_tables::CommOp;
use crate::parse::{ParseError, ParseErrorKind};

#[derive(Deserialize)]
#[serde(untagged)]
enum Group {
    Ops(BTreeMap<String, OpInfo>),
    #[allow(dead_code)]
    Empty(Vec<serde::de::IgnoredAny>),
}

#[derive(Deserialize, Default)]
struct StepEntry {
    #[serde(default)]
    collective: Option<Group>,
    #[serde(default)]
    p2p: Option<Group>,
}

#[derive(Deserialize)]
struct OpInfo {
    #[serde(rename = "Communication Time Info", default)]
    time: Option<TimeInfo>,
    #[serde(rename = "Communication Bandwidth Info", default)]
    bandwidth: BTreeMap<String, BwInfo>,
}

#[derive(Deserialize, Default)]
struct TimeInfo {
    #[serde(rename = "Start Timestamp(us)", default)]
    start_us: Option<f64>,
    #[serde(rename = "Elapse Time(ms)", default)]
    elapse_ms: f64,
    #[serde(rename = "Transit Time(ms)", default)]
    transit_ms: f64,
    #[serde(rename = "Wait Time(ms)", default)]
    wait_ms: f64,
    #[serde(rename = "Synchronization Time(ms)", default)]
    sync_ms: f64,
    #[serde(rename = "Idle Time(ms)", default)]
    idle_ms: f64,
    #[serde(rename = "Wait Time Ratio", default)]
    wait_ratio: f64,
    #[serde(rename = "Synchronization Time Ratio", default)]
    sync_ratio: f64,
}

#[derive(Deserialize, Default)]
struct BwInfo {
    #[serde(rename = "Transit Size(MB)", default)]
    size_mb: f64,
    #[serde(rename = "Bandwidth(GB/s)", default)]
    bandwidth: f64,
}

/// Reads every op (collective and p2p) of every step key, in key order.
///
/// `Start Timestamp(us)` is a JSON number (f64); it is converted to ns by rounding
/// (µs precision of the source, formats.md §7.3). Ops without a time block are skipped.
/// Errors: [`ParseErrorKind::Syntax`] when the file is not this layout (byte offset unknown).
pub fn read<R: Read>(src: R, file: &str) -> Result<Vec<CommOp>, ParseError> {
    read_capped(src, file, MAX_COMM_FILE)
}

/// Largest `communication.json` read (bytes): the file is decoded whole (one op table per
/// step), real ones are KiB to a few MiB. Past it, [`ParseErrorKind::TooLarge`] at the cap.
pub const MAX_COMM_FILE: u64 = 64 << 20;

fn read_capped<R: Read>(src: R, file: &str, cap: u64) -> Result<Vec<CommOp>, ParseError> {
    let mut rdr = std::io::BufReader::new(src.take(cap + 1));
    let parsed: Result<BTreeMap<String, StepEntry>, _> = serde_json::from_reader(&mut rdr);
    if rdr.get_ref().limit() == 0 {
        return Err(ParseError::new(
            Position::file(file).at_byte(cap),
            ParseErrorKind::TooLarge {
                limit: cap as usize,
            },
        ));
    }
    let steps = parsed.map_err(|e| {
        ParseError::new(
            Position::file(file).at_line(e.line() as u64),
            ParseErrorKind::Syntax {
                expected: "communication.json: {\"<step>\": {\"collective\"|\"p2p\": {\"<op>@<group>\": {…}}}}",
            },
        )
    })?;
    let mut out = Vec::new();
    for (step_key, entry) in steps {
        for (kind, group) in [("collective", entry.collective), ("p2p", entry.p2p)] {
            let Some(Group::Ops(ops)) = group else {
                continue;
            };
            for (key, op) in ops {
                if key == "Total Op Info" {
                    continue;
                }
                let Some(t) = op.time else { continue };
                let Some(start_us) = t.start_us else { continue };
                let (name, group_name) = match key.split_once('@') {
                    Some((a, b)) => (a.to_string(), b.to_string()),
                    None => (key.clone(), String::new()),
                };
                let size = |k: &str| op.bandwidth.get(k).map(|b| b.size_mb).unwrap_or(0.0);
                let onchip = if op.bandwidth.contains_key("SDMA") {
                    size("SDMA")
                } else {
                    size("HCCS") + size("PCIE") + size("SIO")
                };
                let transports: Vec<String> = op
                    .bandwidth
                    .iter()
                    .filter(|(_, b)| b.size_mb != 0.0)
                    .map(|(k, _)| k.clone())
                    .collect();
                let bandwidth_gbps = op
                    .bandwidth
                    .iter()
                    .filter(|(_, b)| b.size_mb != 0.0)
                    .map(|(k, b)| (k.clone(), b.bandwidth))
                    .collect();
                out.push(CommOp {
                    step_key: step_key.clone(),
                    group_kind: kind.to_string(),
                    collective_name: name,
                    group_name,
                    start_ns: (start_us * 1000.0).round() as i64,
                    elapse_ms: t.elapse_ms,
                    wait_ms: t.wait_ms,
                    wait_ratio: t.wait_ratio,
                    sync_ms: t.sync_ms,
                    sync_ratio: t.sync_ratio,
                    transit_ms: t.transit_ms,
                    idle_ms: t.idle_ms,
                    message_size_bytes: (onchip + size("RDMA")) * 1_048_576.0,
                    transport_types: transports,
                    bandwidth_gbps,
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_groups_as_lists_and_total_op_info_skipped() {
        let j = br#"{"step50": {"p2p": [], "collective": {
            "hcom_allReduce__1@77": {"Communication Time Info": {"Start Timestamp(us)": 10.5, "Elapse Time(ms)": 2.0, "Wait Time Ratio": 0.5},
               "Communication Bandwidth Info": {"HCCS": {"Transit Size(MB)": 1.0}, "SDMA": {"Transit Size(MB)": 1.0}, "RDMA": {"Transit Size(MB)": 0.5}}},
            "Total Op Info": {"Communication Time Info": {"Start Timestamp(us)": 0, "Elapse Time(ms)": 99}}}}}"#;
        let ops = read(&j[..], "c.json").unwrap();
        assert_eq!(ops.len(), 1);
        assert_eq!(ops[0].collective_name, "hcom_allReduce__1");
        assert_eq!(ops[0].group_name, "77");
        assert_eq!(ops[0].start_ns, 10_500);
        assert_eq!(ops[0].message_size_bytes, 1.5 * 1_048_576.0);
        assert!(read(&b"[1,2]"[..], "c.json").is_err());
    }

    #[test]
    fn a_file_over_the_cap_is_refused_at_the_cap() {
        let j = format!("{{\"step1\": {{\"p2p\": [{}]}}}}", "0,".repeat(100) + "0");
        let e = read_capped(j.as_bytes(), "c.json", 64).err().unwrap();
        assert_eq!(e.kind(), &ParseErrorKind::TooLarge { limit: 64 });
        assert_eq!(
            e.to_string(),
            "c.json (byte 64): one record is larger than 64 bytes"
        );
        assert!(read_capped(j.as_bytes(), "c.json", j.len() as u64).is_ok());
    }
}
