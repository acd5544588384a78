//! The §4.5 readings of the four timing perspectives of a set of kernels, as sentences.

use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::structure::Perspectives;

/// §4.5 readings for one set of kernels, as sentences.
pub fn readings(p: &Perspectives, cfg: &AnomalyConfig) -> Vec<&'static str> {
    let (w, b, s, c) = (
        p.wall_ns as f64,
        p.busy_ns as f64,
        p.kernel_sum_ns as f64,
        p.total_cost_ns as f64,
    );
    let gg = |a: f64, b: f64| b > 0.0 && a / b >= cfg.approx_much_greater;
    let eq = |a: f64, b: f64| b > 0.0 && ((a - b) / b).abs() <= cfg.approx_equal_tol;
    let mut v = Vec::new();
    if gg(s, w) {
        v.push("kernel_sum ≫ wall: strong multi-stream parallelism.");
    }
    if gg(w, b) {
        v.push("wall ≫ busy_union: gaps / bubbles inside the set.");
    }
    if gg(c, s) {
        v.push("total_cost ≫ kernel_sum: heavy wait; check for wait-anchor false hotspots.");
    }
    if eq(b, w) && eq(s, w) {
        v.push("busy_union ≈ wall ≈ kernel_sum: clean sequential execution.");
    }
    v
}
