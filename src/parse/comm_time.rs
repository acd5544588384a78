//! `communication.json` (communication.md §1.2, §1.3) → the op and bandwidth tables of
//! [`RankComm`]: one [`CommTimeRow`] per `"<op>@<group>"` entry, one [`CommBandRow`] per
//! transport of it (all transports, zeros included, in file order), the histogram kept with
//! its size keys as written. Keys starting with `Total` are never ops (msprof-analyze skips
//! them); `Total Op Info` is kept aside as the file's own per-section total (a check).
//! Streaming through [`super::comm_json::walk`].

use std::io::Read;

use serde::Deserialize;

use super::comm_json::{split_key, walk, Ordered, MAX_COMM_JSON};
use crate::model::comm::{CommBandRow, CommTimeRow, PacketBin, RankComm, Section};
use crate::parse::ParseError;

#[derive(Deserialize)]
struct OpInfo {
    #[serde(rename = "Communication Time Info", default)]
    time: Option<TimeInfo>,
    #[serde(rename = "Communication Bandwidth Info", default)]
    bandwidth: Ordered<BwInfo>,
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
    #[serde(rename = "Transit Time(ms)", default)]
    time_ms: f64,
    #[serde(rename = "Bandwidth(GB/s)", default)]
    bandwidth: f64,
    #[serde(rename = "Large Packet Ratio", default)]
    lpr: f64,
    #[serde(rename = "Size Distribution", default)]
    dist: Ordered<Vec<f64>>,
}

const WHAT: &str =
    "communication.json: {\"<step>\": {\"collective\"|\"p2p\": {\"<op>@<group>\": {…}}}}";

/// Reads `communication.json` into `out.ops`, `out.bands` and `out.file_totals` (appending).
/// An op without a `Communication Time Info` block is kept with zero times and no start.
pub fn read<R: Read>(src: R, file: &str, out: &mut RankComm) -> Result<(), ParseError> {
    read_capped(src, file, MAX_COMM_JSON, out)
}

/// [`read`] with a byte cap.
pub fn read_capped<R: Read>(
    src: R,
    file: &str,
    cap: u64,
    out: &mut RankComm,
) -> Result<(), ParseError> {
    let (n_ops, n_bands, n_totals) = (out.ops.len(), out.bands.len(), out.file_totals.len());
    let res = walk(
        src,
        file,
        cap,
        WHAT,
        &mut |step: &str, section: Section, key: String, op: OpInfo| {
            let (name, group) = split_key(&key);
            let t = op.time.unwrap_or_default();
            let row = CommTimeRow {
                step: step.to_string(),
                section: Some(section),
                op: name.to_string(),
                group: group.to_string(),
                start_us: t.start_us,
                elapse_ms: t.elapse_ms,
                transit_ms: t.transit_ms,
                wait_ms: t.wait_ms,
                sync_ms: t.sync_ms,
                idle_ms: t.idle_ms,
                wait_ratio: t.wait_ratio,
                sync_ratio: t.sync_ratio,
            };
            if key.starts_with("Total") {
                if key == "Total Op Info" {
                    out.file_totals.push(row);
                }
                return;
            }
            let idx = out.ops.len() as u32;
            out.ops.push(row);
            for (transport, b) in op.bandwidth.0 {
                out.bands.push(CommBandRow {
                    op: idx,
                    transport,
                    size_mb: b.size_mb,
                    time_ms: b.time_ms,
                    bandwidth_gbps: b.bandwidth,
                    large_packet_ratio: b.lpr,
                    bins: b
                        .dist
                        .0
                        .into_iter()
                        .map(|(size_key, v)| PacketBin {
                            size_key,
                            count: v.first().copied().unwrap_or(0.0),
                            time_ms: v.get(1).copied().unwrap_or(0.0),
                        })
                        .collect(),
                });
            }
        },
    );
    if res.is_err() {
        // A refused file contributes nothing (never half a rank).
        out.ops.truncate(n_ops);
        out.bands.truncate(n_bands);
        out.file_totals.truncate(n_totals);
    } else {
        out.has_time = true;
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_bands_and_bins_in_file_order_totals_aside() {
        let j = br#"{"step13": {"p2p": {}, "collective": {
            "hcom_b__1_1@9": {"Communication Time Info": {"Start Timestamp(us)": 2.5, "Elapse Time(ms)": 2.0,
                "Transit Time(ms)": 0.5, "Wait Time(ms)": 1.0, "Synchronization Time(ms)": 0.25, "Idle Time(ms)": 0.5},
              "Communication Bandwidth Info": {"RDMA": {"Transit Size(MB)": 0, "Size Distribution": {}},
                "HCCS": {"Transit Size(MB)": 3.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 6.0,
                  "Size Distribution": {"9.6e-05": [2, 0.1], "1.5": [1, 0.4]}}}},
            "hcom_a__1_2@9": {"Communication Time Info": {"Elapse Time(ms)": 1.0}},
            "Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 3.0}},
            "Total HCCL Operators": {}}}}"#;
        let mut rc = RankComm::default();
        read(&j[..], "c.json", &mut rc).unwrap();
        assert!(rc.has_time);
        let names: Vec<&str> = rc.ops.iter().map(|o| o.op.as_str()).collect();
        assert_eq!(names, ["hcom_b__1_1", "hcom_a__1_2"]);
        assert_eq!(rc.ops[0].group, "9");
        assert_eq!(rc.ops[0].start_us, Some(2.5));
        assert_eq!(rc.ops[1].start_us, None);
        assert_eq!(rc.bands.len(), 2);
        assert_eq!(rc.bands[1].transport, "HCCS");
        assert_eq!(rc.bands[1].bins[0].size_key, "9.6e-05");
        assert_eq!(rc.bands[1].bins[1].count, 1.0);
        assert_eq!(rc.file_totals.len(), 1);
        assert_eq!(rc.file_totals[0].elapse_ms, 3.0);
    }

    #[test]
    fn a_cut_file_and_an_unknown_era_are_refused_with_nothing_kept() {
        let cut =
            br#"{"step1": {"collective": {"hcom_a__1@9": {"Communication Time Info": {"Elapse"#;
        let mut rc = RankComm::default();
        let e = read(&cut[..], "c.json", &mut rc).unwrap_err();
        assert!(e.to_string().contains("cut"), "{e}");
        assert!(rc.ops.is_empty() && !rc.has_time);
        let era = br#"{"step1": {"ops": {"hcom_a__1@9": {}}}}"#;
        let e = read(&era[..], "c.json", &mut rc).unwrap_err();
        assert!(e.to_string().contains("known era"), "{e}");
        assert!(read(&b"[1,2]"[..], "c.json", &mut rc).is_err());
    }
}
