//! `communication.json` → [`CommOp`]s (anomaly.md §1.4, formats.md §7.3).
//!
//! Layout: `{ "<stepKey>": { "collective": {op@group: OpInfo, …, "Total Op Info": …} | [],
//! "p2p": … } }`. Read through [`super::comm_time`] (streaming, the communication
//! analysis' tables) and projected to the anomaly's [`CommOp`]s by [`ops_of`].

use std::io::Read;

use crate::model::comm::{RankComm, Section};
use crate::model::side_tables::CommOp;
use crate::parse::ParseError;
#[cfg(test)]
use crate::parse::ParseErrorKind;

/// Reads every op (collective and p2p) of every step key, in key order.
///
/// `Start Timestamp(us)` is a JSON number (f64); it is converted to ns by rounding
/// (µs precision of the source, formats.md §7.3). Ops without a time block are skipped.
/// Errors: [`crate::parse::ParseErrorKind::Syntax`] when the file is not this layout.
pub fn read<R: Read>(src: R, file: &str) -> Result<Vec<CommOp>, ParseError> {
    read_capped(src, file, MAX_COMM_FILE)
}

/// Largest `communication.json` read (bytes): the read streams (one op at a time).
pub const MAX_COMM_FILE: u64 = super::comm_json::MAX_COMM_JSON;

fn read_capped<R: Read>(src: R, file: &str, cap: u64) -> Result<Vec<CommOp>, ParseError> {
    let mut rc = RankComm::default();
    super::comm_time::read_capped(src, file, cap, &mut rc)?;
    Ok(ops_of(&rc))
}

/// The anomaly analysis' view of a rank's communication tables: one [`CommOp`] per op with a
/// start time, ordered by step key, then `collective` before `p2p`, then op key (the order
/// of the keyed decode this replaces).
pub fn ops_of(rc: &RankComm) -> Vec<CommOp> {
    let mut bands: Vec<Vec<&crate::model::comm::CommBandRow>> = vec![Vec::new(); rc.ops.len()];
    for b in &rc.bands {
        if let Some(v) = bands.get_mut(b.op as usize) {
            v.push(b);
        }
    }
    let mut out: Vec<(String, u8, String, CommOp)> = Vec::new();
    for (i, o) in rc.ops.iter().enumerate() {
        let Some(start_us) = o.start_us else { continue };
        let mut bw: Vec<&crate::model::comm::CommBandRow> = bands[i].clone();
        crate::base::sort::sort_by(&mut bw, |a, b| a.transport.cmp(&b.transport));
        bw.dedup_by(|a, b| a.transport == b.transport);
        let size = |k: &str| {
            bw.iter()
                .find(|b| b.transport == k)
                .map_or(0.0, |b| b.size_mb)
        };
        let onchip = if bw.iter().any(|b| b.transport == "SDMA") {
            size("SDMA")
        } else {
            size("HCCS") + size("PCIE") + size("SIO")
        };
        let used = || bw.iter().filter(|b| b.size_mb != 0.0);
        let kind = o.section.unwrap_or(Section::Collective);
        let key = match o.group.is_empty() {
            true => o.op.clone(),
            false => format!("{}@{}", o.op, o.group),
        };
        let op = CommOp {
            step_key: o.step.clone(),
            group_kind: kind.key().to_string(),
            collective_name: o.op.clone(),
            group_name: o.group.clone(),
            start_ns: (start_us * 1000.0).round() as i64,
            elapse_ms: o.elapse_ms,
            wait_ms: o.wait_ms,
            wait_ratio: o.wait_ratio,
            sync_ms: o.sync_ms,
            sync_ratio: o.sync_ratio,
            transit_ms: o.transit_ms,
            idle_ms: o.idle_ms,
            message_size_bytes: (onchip + size("RDMA")) * 1_048_576.0,
            transport_types: used().map(|b| b.transport.clone()).collect(),
            bandwidth_gbps: used()
                .map(|b| (b.transport.clone(), b.bandwidth_gbps))
                .collect(),
            data_size: rc.op_bytes.get(&o.op).copied(),
        };
        out.push((o.step.clone(), (kind == Section::P2p) as u8, key, op));
    }
    crate::base::sort::sort_by(&mut out, |a, b| (&a.0, a.1, &a.2).cmp(&(&b.0, b.1, &b.2)));
    out.into_iter().map(|t| t.3).collect()
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
