//! Anomaly tags (anomaly.md §5.10) and the per-step bubble-severity rules.

use crate::analysis::anomaly_config::{AnomalyConfig, Compat};
use crate::analysis::intervals::WindowMetrics;
use crate::base::units::ns_to_ms;

/// Every anomaly tag (§5.10), in the emission order used for ties (§5.10.1 first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tag {
    /// §5.10.1
    DeviceIdleGapHeavy,
    /// §5.10.1
    PrelaunchGapHeavy,
    /// §5.10.1
    TailGapHeavy,
    /// §5.10.1
    InternalBubbleHeavy,
    /// §5.10.2
    RecurringBubblePattern,
    /// §5.10.3
    HostOriginatedRisk,
    /// §5.10.3
    UntracedHostBlockingRisk,
    /// §5.10.3
    CommSyncRisk,
    /// §5.10.3 / §5.13
    WaitPollutionRisk,
    /// §5.12
    WaitAnchorFalseHotspot,
    /// §5.10.3 / §5.14
    AicpuExposedRisk,
    /// §5.10.3
    PartialCaptureBoundary,
    /// §5.10.3
    VariableShapeSameTemplate,
}

impl Tag {
    /// The spec spelling (`DEVICE_IDLE_GAP_HEAVY`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Tag::DeviceIdleGapHeavy => "DEVICE_IDLE_GAP_HEAVY",
            Tag::PrelaunchGapHeavy => "PRELAUNCH_GAP_HEAVY",
            Tag::TailGapHeavy => "TAIL_GAP_HEAVY",
            Tag::InternalBubbleHeavy => "INTERNAL_BUBBLE_HEAVY",
            Tag::RecurringBubblePattern => "RECURRING_BUBBLE_PATTERN",
            Tag::HostOriginatedRisk => "HOST_ORIGINATED_RISK",
            Tag::UntracedHostBlockingRisk => "UNTRACED_HOST_BLOCKING_RISK",
            Tag::CommSyncRisk => "COMM_SYNC_RISK",
            Tag::WaitPollutionRisk => "WAIT_POLLUTION_RISK",
            Tag::WaitAnchorFalseHotspot => "WAIT_ANCHOR_FALSE_HOTSPOT",
            Tag::AicpuExposedRisk => "AICPU_EXPOSED_RISK",
            Tag::PartialCaptureBoundary => "PARTIAL_CAPTURE_BOUNDARY",
            Tag::VariableShapeSameTemplate => "VARIABLE_SHAPE_SAME_TEMPLATE",
        }
    }

    /// True for the four HEAVY tags of §5.10.1.
    pub fn is_heavy(self) -> bool {
        matches!(
            self,
            Tag::DeviceIdleGapHeavy
                | Tag::PrelaunchGapHeavy
                | Tag::TailGapHeavy
                | Tag::InternalBubbleHeavy
        )
    }
}

/// §5.10.1 bubble-severity tags of one step, in emission order. All comparisons `≥`, values in ms.
pub fn severity_tags(m: &WindowMetrics, cfg: &AnomalyConfig) -> Vec<Tag> {
    let ms = ns_to_ms;
    let g = cfg.heavy_gap_ms(ms(m.service_ns));
    let pre = ms(m.prelaunch_ns) >= g;
    let tail = ms(m.tail_ns) >= g;
    let internal = ms(m.largest_internal_ns()) >= g;
    let under = m.underfeed_ratio >= cfg.underfeed_heavy_ratio;
    let idle = match cfg.compat {
        Compat::Rulebook => under || pre || tail || internal,
        Compat::Script => under,
    };
    let mut out = Vec::new();
    for (on, t) in [
        (idle, Tag::DeviceIdleGapHeavy),
        (pre, Tag::PrelaunchGapHeavy),
        (tail, Tag::TailGapHeavy),
        (internal, Tag::InternalBubbleHeavy),
    ] {
        if on {
            out.push(t);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::intervals::{window_metrics, Interval};

    const MS: i64 = 1_000_000;

    /// A 20 ms window with one busy segment so that the prelaunch gap is `pre` ns.
    fn with_prelaunch(pre: i64) -> WindowMetrics {
        window_metrics(&[Interval::new(pre, 20 * MS)], Interval::new(0, 20 * MS))
    }

    #[test]
    fn prelaunch_heavy_below_at_above_threshold() {
        // service 20 ms → G = max(1, 2.0) = 2.0 ms.
        let c = AnomalyConfig::spec_defaults();
        assert!(!severity_tags(&with_prelaunch(2 * MS - 1), &c).contains(&Tag::PrelaunchGapHeavy));
        assert!(severity_tags(&with_prelaunch(2 * MS), &c).contains(&Tag::PrelaunchGapHeavy));
        assert!(severity_tags(&with_prelaunch(2 * MS + 1), &c).contains(&Tag::PrelaunchGapHeavy));
        // rulebook: DEVICE_IDLE fires via prelaunch; script: underfeed 0.1 < 0.3 → no.
        assert_eq!(
            severity_tags(&with_prelaunch(2 * MS), &c)[0],
            Tag::DeviceIdleGapHeavy
        );
        assert_eq!(
            severity_tags(&with_prelaunch(2 * MS), &AnomalyConfig::script_compatible()),
            [Tag::PrelaunchGapHeavy]
        );
    }

    #[test]
    fn floor_of_one_ms_applies_to_short_steps() {
        // service 5 ms → G = max(1, 0.5) = 1 ms; tail 0.999 / 1.0 ms.
        let c = AnomalyConfig::spec_defaults();
        let w = Interval::new(0, 5 * MS);
        let below = window_metrics(&[Interval::new(0, 4 * MS + 1_000)], w);
        let at = window_metrics(&[Interval::new(0, 4 * MS)], w);
        assert!(!severity_tags(&below, &c).contains(&Tag::TailGapHeavy));
        assert!(severity_tags(&at, &c).contains(&Tag::TailGapHeavy));
    }

    #[test]
    fn internal_and_underfeed_thresholds() {
        let c = AnomalyConfig::spec_defaults();
        let w = Interval::new(0, 10 * MS);
        // Internal bubble of exactly 1 ms (G = 1) → INTERNAL; 0.999 ms → not.
        let at = window_metrics(
            &[Interval::new(0, 4 * MS), Interval::new(5 * MS, 10 * MS)],
            w,
        );
        assert!(severity_tags(&at, &c).contains(&Tag::InternalBubbleHeavy));
        let below = window_metrics(
            &[
                Interval::new(0, 4 * MS),
                Interval::new(5 * MS - 1_000, 10 * MS),
            ],
            w,
        );
        assert!(!severity_tags(&below, &c).contains(&Tag::InternalBubbleHeavy));
        // Underfeed below / exactly at 0.30 in script mode.
        let segs: Vec<Interval> = (0..5)
            .map(|j| Interval::new(j * 2 * MS, j * 2 * MS + 1_400_000))
            .collect();
        let m = window_metrics(&segs, Interval::new(0, 9_400_000 + 0));
        // busy 7 ms of 9.4 → underfeed 2.4/9.4 = 0.255 → no; script never fires.
        assert!(!severity_tags(&m, &AnomalyConfig::script_compatible())
            .contains(&Tag::DeviceIdleGapHeavy));
        let segs2: Vec<Interval> = (0..5)
            .map(|j| Interval::new(j * 2 * MS, j * 2 * MS + 1_400_000))
            .collect();
        let m2 = window_metrics(&segs2, Interval::new(0, 10 * MS));
        // busy 7 of 10 → underfeed exactly 0.30 → fires in script mode.
        assert_eq!(m2.underfeed_ratio, 0.3);
        assert!(severity_tags(&m2, &AnomalyConfig::script_compatible())
            .contains(&Tag::DeviceIdleGapHeavy));
    }
}
