//! The cross-rank table (anomaly.md §13.4) of the steps / bubbles view: the one step that
//! combines the results of several workers. Each worker sends its ranks'
//! [`AnomalySummaryDto`]s; the UI collects them and calls [`cross_rank_table`], which applies
//! the CLI's own rule ([`cross_rank::flag_slow_by_role`], spec defaults) — the UI renders the rows and
//! computes nothing. `tests/anomaly_views.rs` checks it against `proflens anomaly`'s
//! cross-rank comparison on the real rank folders.

use crate::analysis::anomaly::cross_rank::{self, RankRow};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::protocol::anomaly::{AnomalySummaryDto, CrossRankRowDto};
use crate::protocol::compare::RankElsewhereDto;

/// The cross-rank table (§13.4) from the summaries of every analysed rank (any worker), in
/// the given order, with the slow-rank flag of [`cross_rank::flag_slow_by_role`] (spec
/// defaults; within each role when the ranks hold several, as `proflens anomaly`).
pub fn cross_rank_table(summaries: &[AnomalySummaryDto]) -> Vec<CrossRankRowDto> {
    let mut rows: Vec<RankRow> = summaries
        .iter()
        .map(|s| RankRow {
            rank_id: s.rank_id.unwrap_or(s.rank as i64),
            steps: s.steps as usize,
            service_ms_avg: s.service_ms_avg,
            busy_union_ms_avg: s.busy_union_ms_avg,
            underfeed_ratio_avg: s.underfeed_ratio_avg,
            comm_total_ms: s.comm_total_ms,
            comm_wait_ratio_weighted: s.comm_wait_ratio_weighted,
            bubble_count_avg: s.bubble_count_avg,
            dominant_idle_pattern: "",
            robust_z: None,
            slow: false,
            group: None,
        })
        .collect();
    let roles: Vec<&str> = summaries.iter().map(|s| s.role.as_str()).collect();
    cross_rank::flag_slow_by_role(&mut rows, &roles, &AnomalyConfig::spec_defaults());
    rows.iter()
        .zip(summaries)
        .map(|(r, s)| CrossRankRowDto {
            rank: s.rank,
            rank_id: s.rank_id,
            steps: s.steps,
            service_ms_avg: r.service_ms_avg,
            busy_union_ms_avg: r.busy_union_ms_avg,
            underfeed_ratio_avg: r.underfeed_ratio_avg,
            comm_total_ms: r.comm_total_ms,
            comm_wait_ratio_weighted: r.comm_wait_ratio_weighted,
            bubble_count_avg: r.bubble_count_avg,
            dominant_idle_pattern: s.dominant_idle_pattern.clone(),
            robust_z: r.robust_z.filter(|z| z.is_finite()),
            compared: r.robust_z.is_some(),
            slow: r.slow,
            group: r.group.clone(),
        })
        .collect()
}

/// The robust z of `row` as the page shows it: two decimals, `∞` (MAD 0 above the median), or
/// `—` when the rank was not compared (no peer in its role or run; the Markdown report's text).
pub fn robust_z_text(row: &CrossRankRowDto) -> String {
    match (row.compared, row.robust_z) {
        (false, _) => "—".into(),
        (true, Some(z)) => format!("{z:.2}"),
        (true, None) => "∞".into(),
    }
}

/// What the Compare tab's rank table reads of a rank of side A analysed by another worker
/// : the figures of its anomaly summary (the §13.4 row, [`cross_rank::row_of`]) and
/// its memory summary's main pool peak, copied for [`crate::protocol::Request::Compare`].
pub fn compare_rank(
    anomaly: &AnomalySummaryDto,
    memory: Option<&crate::protocol::MemorySummaryDto>,
) -> RankElsewhereDto {
    RankElsewhereDto {
        target: anomaly.rank,
        rank_id: anomaly.rank_id,
        steps: anomaly.steps,
        service_ms_avg: anomaly.service_ms_avg,
        busy_union_ms_avg: anomaly.busy_union_ms_avg,
        underfeed_ratio_avg: anomaly.underfeed_ratio_avg,
        comm_total_ms: anomaly.comm_total_ms,
        comm_wait_ratio_weighted: anomaly.comm_wait_ratio_weighted,
        bubble_count_avg: anomaly.bubble_count_avg,
        peak_allocated_mb: memory.and_then(|m| m.peak_allocated_mb),
    }
}

/// The rank the Compare tab compares ops and steps of (rank folder index): the first by rank
/// id, unknown ids last, then by index — the engine's choice (`engine::export::compare`), so the page
/// sends the comparison to the worker holding it.
pub fn compared_rank<'a>(
    summaries: impl IntoIterator<Item = &'a AnomalySummaryDto>,
) -> Option<u32> {
    summaries
        .into_iter()
        .min_by_key(|a| (a.rank_id.is_none(), a.rank_id, a.rank))
        .map(|a| a.rank)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(rank: u32, service: f64) -> AnomalySummaryDto {
        AnomalySummaryDto {
            rank,
            rank_id: Some(rank as i64),
            role: String::new(),
            dir: String::new(),
            enabled: true,
            steps: 1,
            step_detection_method: "marker".into(),
            kernels: 0,
            service_ms_avg: service,
            busy_union_ms_avg: 0.0,
            underfeed_ratio_avg: 0.0,
            bubble_count_avg: 0.0,
            dominant_idle_pattern: "none".into(),
            severity: "none".into(),
            hidden_issue_present: false,
            host_risk_level: "low".into(),
            confidence: "high".into(),
            requires_host_followup: false,
            tags: vec![],
            bubbles: 0,
            labels: vec![],
            capture_span_ms: 0.0,
            device_gap_ratio: 0.0,
            largest_gap_ms: 0.0,
            capture_us: None,
            gpu: false,
            gpu_device: None,
            gpu_runtime: None,
            origin_us: None,
            comm_total_ms: 0.0,
            comm_wait_ratio_weighted: None,
            streams: vec![],
            limitations: vec![],
            rank_check: None,
        }
    }

    /// §13.4 by hand: services 100, 101, 102, 99, 130 → median 101, |dev| = 1, 0, 1, 2, 29 →
    /// MAD 1; z(130) = 29 / 1.4826 = 19.56 and 130 > 1.05 × 101 → slow; z(102) = 0.674 → not.
    #[test]
    fn the_compared_rank_is_the_first_by_id_unknown_last() {
        let mut a = s(0, 1.0);
        a.rank_id = Some(5);
        let mut b = s(1, 1.0);
        b.rank_id = Some(2);
        let mut c = s(2, 1.0);
        c.rank_id = None;
        assert_eq!(compared_rank([&a, &b, &c]), Some(1));
        assert_eq!(compared_rank([&c, &a]), Some(0));
        assert_eq!(compared_rank([&c]), Some(2));
        assert_eq!(compared_rank(std::iter::empty()), None);
    }

    #[test]
    fn slow_rank_needs_both_excess_and_robust_z() {
        let rows = cross_rank_table(&[
            s(0, 100.0),
            s(1, 101.0),
            s(2, 102.0),
            s(3, 99.0),
            s(4, 130.0),
        ]);
        let slow: Vec<u32> = rows.iter().filter(|r| r.slow).map(|r| r.rank).collect();
        assert_eq!(slow, vec![4]);
        assert!((rows[4].robust_z.unwrap() - 29.0 / 1.4826).abs() < 1e-9);
        assert!((rows[2].robust_z.unwrap() - 1.0 / 1.4826).abs() < 1e-9);
        // 105 is exactly 5 % above 100 (not "more than"), z = +∞ (MAD 0): not slow.
        let rows = cross_rank_table(&[s(0, 100.0), s(1, 100.0), s(2, 105.0)]);
        assert!(!rows[2].slow);
        assert_eq!(rows[2].robust_z, None);
        // 106 with MAD 0: > 5 % and z = +∞ → slow.
        let rows = cross_rank_table(&[s(0, 100.0), s(1, 100.0), s(2, 106.0)]);
        assert!(rows[2].slow);
        assert_eq!(robust_z_text(&rows[2]), "∞");
        assert_eq!(robust_z_text(&rows[0]), "0.00");
        // One rank: not compared ("—", never 0.00), never slow.
        let one = &cross_rank_table(&[s(0, 500.0)])[0];
        assert!(!one.slow && !one.compared);
        assert_eq!((one.robust_z, robust_z_text(one).as_str()), (None, "—"));
        // A role of one rank beside a role of two: only the pair is compared.
        let mut rows = [s(0, 500.0), s(1, 100.0), s(2, 102.0)];
        rows[0].role = "ref".into();
        for r in &mut rows[1..] {
            r.role = "actor".into();
        }
        let text: Vec<String> = cross_rank_table(&rows).iter().map(robust_z_text).collect();
        assert_eq!(text, ["—", "-0.67", "0.67"]);
    }
}
