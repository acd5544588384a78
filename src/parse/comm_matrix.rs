//! `communication_matrix.json` (communication.md §1.4) → the link table of [`RankComm`]: one
//! [`CommLinkRow`] per `"<src>-<dst>"` link of every `"<kind>@<group>"` entry, in file order,
//! ranks kept as the local-rank text they are. Both layouts: 2023 (real op names and a
//! `Total Op Info` table, which is skipped like every `Total…` key) and 2025+ (aggregated
//! kinds `allreduce-top1 … -total`). Streaming through [`super::comm_json::walk`].

use std::io::Read;

use serde::Deserialize;

use super::comm_json::{split_key, walk, Ordered, MAX_COMM_JSON};
use crate::model::comm::{CommLinkRow, RankComm, Section};
use crate::parse::ParseError;

#[derive(Deserialize, Default)]
struct Link {
    #[serde(rename = "Transport Type", default)]
    transport: String,
    #[serde(rename = "Transit Size(MB)", default)]
    size_mb: f64,
    #[serde(rename = "Transit Time(ms)", default)]
    time_ms: f64,
    #[serde(rename = "Bandwidth(GB/s)", default)]
    bandwidth: f64,
    #[serde(rename = "Op Name", default)]
    op_name: String,
}

const WHAT: &str = "communication_matrix.json: {\"<step>\": {\"collective\"|\"p2p\": {\"<kind>@<group>\": {\"<src>-<dst>\": {…}}}}}";

/// Reads `communication_matrix.json` into `out.links` (appending). A link key without `-`
/// is kept with an empty `dst` (the analysis stops that rank's links there, §2.3.1).
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
    let n = out.links.len();
    let res = walk(
        src,
        file,
        cap,
        WHAT,
        &mut |step: &str, section: Section, key: String, links: Ordered<Link>| {
            if key.starts_with("Total") {
                return;
            }
            let (kind, group) = split_key(&key);
            for (lk, l) in links.0 {
                let (s, d) = lk.split_once('-').unwrap_or((lk.as_str(), ""));
                out.links.push(CommLinkRow {
                    step: step.to_string(),
                    section: Some(section),
                    kind: kind.to_string(),
                    group: group.to_string(),
                    src: s.to_string(),
                    dst: d.to_string(),
                    transport: l.transport,
                    size_mb: l.size_mb,
                    time_ms: l.time_ms,
                    bandwidth_gbps: l.bandwidth,
                    op_name: l.op_name,
                });
            }
        },
    );
    match res {
        Ok(()) => out.has_matrix = true,
        Err(_) => out.links.truncate(n),
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_in_file_order_with_local_ranks_as_text() {
        let j = br#"{"step13": {"p2p": {"batchsendrecv-total@37": {
              "1-1": {"Transport Type": "LOCAL", "Transit Size(MB)": 2.0, "Transit Time(ms)": 0.5, "Bandwidth(GB/s)": 4.0},
              "1-0": {"Transport Type": "HCCS", "Transit Size(MB)": 1.0, "Transit Time(ms)": 0.25, "Bandwidth(GB/s)": 4.0, "Op Name": "hcom_x"}}},
            "collective": {"Total Op Info": {"0-0": {}}}}}"#;
        let mut rc = RankComm::default();
        read(&j[..], "m.json", &mut rc).unwrap();
        assert!(rc.has_matrix);
        assert_eq!(rc.links.len(), 2);
        assert_eq!(
            (rc.links[1].src.as_str(), rc.links[1].dst.as_str()),
            ("1", "0")
        );
        assert_eq!(rc.links[1].kind, "batchsendrecv-total");
        assert_eq!(rc.links[1].group, "37");
        assert_eq!(rc.links[1].op_name, "hcom_x");
        assert_eq!(rc.links[0].section, Some(Section::P2p));
        let cut = &j[..j.len() - 10];
        let mut rc = RankComm::default();
        assert!(read(cut, "m.json", &mut rc).is_err());
        assert!(rc.links.is_empty() && !rc.has_matrix);
    }
}
