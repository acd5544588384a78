//! The terminal headline of one rank (`proflens anomaly` with stdout on a terminal).

use std::fmt::Write;

use crate::analysis::anomaly::AnomalyResult;
use crate::base::format;
use crate::model::kernels::KernelTable;
use crate::report::anomaly_json::RankMeta;

/// The headline of one rank for a terminal (`proflens anomaly` with stdout on a terminal): rank,
/// kernels and steps, and the dominant group's step service, busy union, underfeed, severity
/// and tags in human units; or why bubble analysis is unavailable. One paragraph, no Markdown.
pub fn headline(k: &KernelTable, r: &AnomalyResult, meta: &RankMeta) -> String {
    let rank = meta
        .rank_id
        .map(|x| x.to_string())
        .unwrap_or_else(|| "?".into());
    let mut o = format!("rank {rank} ({}): ", meta.rank_dir);
    if !r.enabled || k.is_empty() {
        // A GPU trace without device events says why itself (problem GPU-RUN-001, an info the
        // CLI does not print); ANOM-FILE-002 is the Ascend rank folder's problem.
        if let Some((_, why)) = crate::analysis::gpu_rank::no_device_events(&r.limitations) {
            let _ = write!(o, "steps & bubbles cannot run (GPU-RUN-001): {why}");
            return o;
        }
        o.push_str("steps & bubbles cannot run, no device kernels (see the ANOM-FILE-002 problem on stderr)");
        return o;
    }
    let _ = write!(
        o,
        "{} kernels, {} step(s) by {}",
        k.len(),
        r.steps.len(),
        r.step_method.as_str()
    );
    if let Some(g) = r.groups.first() {
        let _ = write!(
            o,
            "; mean step service {}, device busy {}, underfeed {}; severity {}, host risk {}, idle pattern {}",
            format::duration_ms(g.stats[0].avg),
            format::duration_ms(g.stats[1].avg),
            format::percent(Some(g.stats[2].avg), 1),
            g.severity.severity_str(),
            g.host_risk_level.risk_str(),
            g.dominant_idle_pattern.as_str()
        );
        if !g.dominant_anomaly_tags.is_empty() {
            let tags: Vec<&str> = g.dominant_anomaly_tags.iter().map(|t| t.as_str()).collect();
            let _ = write!(o, "; tags {}", tags.join(", "));
        }
    }
    o
}
