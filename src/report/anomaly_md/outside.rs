//! The Bubble-first answer's note on device idle outside the steps (anomaly.md, report).

use crate::analysis::anomaly::AnomalyResult;
use crate::analysis::bubbles::Scope;
use crate::analysis::intervals::Interval;

use super::ms;

/// " Outside the steps the device is idle longer: …" when the part of a global gap (§5.5) that
/// lies outside every step window is longer than `largest` (ns, the longest significant window
/// of the steps), naming the gap with the longest such part; `""` otherwise. A capture idle
/// mostly around its steps (a profile started long before its first step) is so not answered
/// from the steps alone.
pub(super) fn longer_idle_outside_steps(r: &AnomalyResult, largest: i64) -> String {
    let outside_ns = |w: Interval| {
        w.len_ns()
            - r.steps
                .iter()
                .filter_map(|s| w.clip(s.window))
                .map(|c| c.len_ns())
                .sum::<i64>()
    };
    r
        .bubbles
        .iter()
        .filter(|b| b.window.scope == Scope::Global)
        .map(|b| (b, outside_ns(b.window.interval)))
        .filter(|&(_, out)| out > largest)
        .max_by_key(|&(_, out)| out)
        .map(|(b, out)| {
            let span = r.global.capture.len_ns();
            let len = b.window.interval.len_ns();
            format!(
                " Outside the steps the device is idle longer: `{}` lasts {} ({:.1}% of the {} capture span), {} of it outside every step window.",
                b.window.bubble_id,
                ms(len),
                if span > 0 { len as f64 * 100.0 / span as f64 } else { 0.0 },
                ms(span),
                ms(out)
            )
        })
        .unwrap_or_default()
}
