//! Step annotations without `ProfilerStep#` (anomaly.md §3.1.1): the top-level user
//! annotations of a trace, their families (the name up to its first digit), how each measures
//! against the rule (≥ 2 occurrences, no self-overlap, ≥ 50 % of the device busy union) and
//! the step markers of the best family that qualifies. `steps::detect` calls it when no marker
//! of §3.1 items 1–3 and no `Step Id` exist.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use super::anomaly_config::AnomalyConfig;
use super::intervals::Interval;
use crate::model::kernels::KernelTable;
use crate::model::trace_events::{HostEventTable, MarkerEvent};

/// A top-level `user_annotation` of a trace (§3.1.1): one that no other user annotation of
/// its thread holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Annotation {
    /// The name as written.
    pub name: String,
    /// Interned `(pid, tid)` thread key.
    pub thread: u32,
    /// Start, ns.
    pub ts_ns: i64,
    /// Duration, ns (> 0).
    pub dur_ns: i64,
}

/// The top-level `user_annotation` events of `trace` (§3.1.1), by start: an annotation is
/// top-level when no other user annotation of its thread holds it (`start ≤ its start` and
/// `its end ≤ end`, the longer first on equal starts).
pub fn top_level_annotations(trace: &HostEventTable) -> Vec<Annotation> {
    let mut is_annotation: Vec<Option<bool>> = vec![None; trace.text_count()];
    // Per thread, the ends of the open annotations (innermost last).
    let mut open: HashMap<u32, Vec<i64>> = HashMap::default();
    let mut out = Vec::new();
    for e in trace.events() {
        let cat = trace.cat_of(e);
        let ann = match is_annotation.get_mut(cat as usize) {
            Some(slot) => *slot.get_or_insert_with(|| trace.text(cat) == "user_annotation"),
            None => false,
        };
        if !ann {
            continue;
        }
        let stack = open.entry(trace.thread_of(e)).or_default();
        while stack.last().is_some_and(|&end| end <= e.start_ns) {
            stack.pop();
        }
        if stack.is_empty() {
            out.push(Annotation {
                name: trace.text(e.name).to_string(),
                thread: trace.thread_of(e),
                ts_ns: e.start_ns,
                dur_ns: e.dur_ns,
            });
        }
        stack.push(e.end_ns());
    }
    out
}

/// The family of an annotation name (§3.1.1): the name up to its first ASCII digit
/// (`execute_context_1(888)_generation_0(0)` → `execute_context_`), the whole name when it
/// has none; a name that starts with a digit has each run of digits replaced by `#`
/// (`2_decode` → `#_decode`).
pub fn annotation_family(name: &str) -> Cow<'_, str> {
    match name.bytes().position(|b| b.is_ascii_digit()) {
        Some(0) => {
            let mut key = String::with_capacity(name.len());
            for c in name.chars() {
                if !c.is_ascii_digit() {
                    key.push(c);
                } else if !key.ends_with('#') {
                    key.push('#');
                }
            }
            Cow::Owned(key)
        }
        Some(i) => Cow::Borrowed(&name[..i]),
        None => Cow::Borrowed(name),
    }
}

/// One family of top-level annotations and how it measures against §3.1.1.
#[derive(Clone, Debug, PartialEq)]
pub struct AnnotationFamily {
    /// [`annotation_family`] of its names.
    pub key: String,
    /// Its occurrences, by start.
    pub occurrences: Vec<Annotation>,
    /// True when an occurrence ends after the next one starts.
    pub overlaps: bool,
    /// `|busy ∩ ⋃ occurrences| / |busy|` over the whole capture's busy union (§5.3).
    pub cover: f64,
}

impl AnnotationFamily {
    /// True when the family is a step marker: at least `step_annotation_min_count`
    /// occurrences, none overlapping the next, holding at least `step_annotation_min_cover`
    /// of the busy union.
    pub fn qualifies(&self, cfg: &AnomalyConfig) -> bool {
        self.occurrences.len() >= cfg.step_annotation_min_count
            && !self.overlaps
            && self.cover >= cfg.step_annotation_min_cover
    }

    /// The three facts of §3.1.1, each failing one with what it needs
    /// (`occurs once (≥ 2 needed), holds 100.0 % of the device busy time`).
    fn describe(&self, cfg: &AnomalyConfig) -> String {
        let n = self.occurrences.len();
        let mut t = match n {
            1 => "occurs once".to_string(),
            n => format!("occurs {n} times"),
        };
        if n < cfg.step_annotation_min_count {
            t.push_str(&format!(" (≥ {} needed)", cfg.step_annotation_min_count));
        }
        if self.overlaps {
            t.push_str(", overlaps itself");
        }
        t.push_str(&format!(
            ", holds {:.1} % of the device busy time",
            self.cover * 100.0
        ));
        if self.cover < cfg.step_annotation_min_cover {
            t.push_str(&format!(
                " (≥ {} % needed)",
                cfg.step_annotation_min_cover * 100.0
            ));
        }
        t
    }
}

/// The families of `annotations` measured against the busy union of `kernels`, best first:
/// by cover, then occurrences, then first start, then key (§3.1.1).
pub fn annotation_families(
    kernels: &KernelTable,
    annotations: &[Annotation],
) -> Vec<AnnotationFamily> {
    let busy = super::intervals::kernel_union(kernels, |_| true);
    let total = super::intervals::total_len(&busy);
    let mut by_key: BTreeMap<Cow<'_, str>, Vec<Annotation>> = BTreeMap::new();
    for a in annotations {
        by_key
            .entry(annotation_family(&a.name))
            .or_default()
            .push(a.clone());
    }
    let mut out: Vec<AnnotationFamily> = by_key
        .into_iter()
        .map(|(key, mut occ)| {
            crate::base::sort::sort_by_key(&mut occ, |a| a.ts_ns);
            let overlaps = occ
                .windows(2)
                .any(|p| p[0].ts_ns + p[0].dur_ns > p[1].ts_ns);
            let spans = super::intervals::merge(
                occ.iter()
                    .map(|a| Interval::new(a.ts_ns, a.ts_ns + a.dur_ns))
                    .collect(),
            );
            let covered: i64 = spans
                .iter()
                .map(|&w| super::intervals::covered_ns(&busy, w))
                .sum();
            AnnotationFamily {
                key: key.to_string(),
                overlaps,
                cover: if total > 0 {
                    covered as f64 / total as f64
                } else {
                    0.0
                },
                occurrences: occ,
            }
        })
        .collect();
    crate::base::sort::sort_by(&mut out, |a, b| {
        b.cover
            .total_cmp(&a.cover)
            .then(b.occurrences.len().cmp(&a.occurrences.len()))
            .then(a.occurrences[0].ts_ns.cmp(&b.occurrences[0].ts_ns))
            .then(a.key.cmp(&b.key))
    });
    out
}

/// §3.1.1: the step markers from the best qualifying family, named by their annotation (with
/// ` (k)` appended, k = 1, 2, … in time order, when two of its names are equal), and the
/// note saying what was chosen or why nothing was.
pub(super) fn annotation_markers(
    kernels: &KernelTable,
    annotations: &[Annotation],
    cfg: &AnomalyConfig,
) -> (Option<(String, Vec<MarkerEvent>)>, Option<String>) {
    let families = annotation_families(kernels, annotations);
    let Some(f) = families.iter().find(|f| f.qualifies(cfg)) else {
        if families.is_empty() {
            return (None, None);
        }
        let seen: Vec<String> = families
            .iter()
            .take(3)
            .map(|f| format!("`{}…` {}", f.key, f.describe(cfg)))
            .collect();
        let more = families.len().saturating_sub(3);
        return (
            None,
            Some(format!(
                "no top-level user annotation is a step marker (§3.1.1): {}{}",
                seen.join("; "),
                if more > 0 {
                    format!("; {more} more")
                } else {
                    String::new()
                }
            )),
        );
    };
    let mut names: Vec<&str> = f.occurrences.iter().map(|a| a.name.as_str()).collect();
    names.sort_unstable();
    let distinct = names.windows(2).all(|p| p[0] != p[1]);
    let markers = f
        .occurrences
        .iter()
        .enumerate()
        .map(|(k, a)| MarkerEvent {
            name: if distinct {
                a.name.clone()
            } else {
                format!("{} ({})", a.name, k + 1)
            },
            ts_ns: a.ts_ns,
            dur_ns: a.dur_ns,
        })
        .collect();
    let note = format!(
        "no ProfilerStep#N: the {} top-level user annotations `{}…` are the step markers (§3.1.1: they repeat, do not overlap and hold {:.1} % of the device busy time)",
        f.occurrences.len(),
        f.key,
        f.cover * 100.0
    );
    (Some((f.key.clone(), markers)), Some(note))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_are_names_up_to_the_first_digit() {
        assert_eq!(
            annotation_family("execute_context_1(888_788544)_generation_0(0)"),
            "execute_context_"
        );
        assert_eq!(annotation_family("forward"), "forward");
        assert_eq!(
            annotation_family("## Call CompiledFxGraph f4ii ##"),
            "## Call CompiledFxGraph f"
        );
        // A leading digit: digit runs become `#`.
        assert_eq!(annotation_family("12_decode_3"), "#_decode_#");
    }
}
