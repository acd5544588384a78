//! Per-step inventory (§3.4) and step groups: steps with the same kernel template (hash, or
//! name-count similarity) and dominant class form one group.

use std::collections::BTreeMap;
use std::ops::Range;

use rustc_hash::FxHashMap as HashMap;

use super::{Inventory, Step, StepGroup};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::base::arith;
use crate::model::kernels::{KernelTable, NameId, TaskClass};

/// §3.4 inventory of one step.
pub fn inventory(kernels: &KernelTable, step: &Step) -> Inventory {
    let mut inv = Inventory::default();
    let mut streams: Vec<&str> = Vec::new();
    for i in step.kernels.clone() {
        inv.total_kernel_count += 1;
        match kernels.class()[i] {
            TaskClass::AiCore => inv.ai_core_count += 1,
            TaskClass::AiCpu => inv.ai_cpu_count += 1,
            TaskClass::Hccl => inv.hccl_count += 1,
            TaskClass::Other => inv.other_count += 1,
        }
        inv.kernel_duration_sum_ns += kernels.dur_ns()[i];
        inv.kernel_wait_sum_ns += kernels.wait_ns()[i];
        streams.push(kernels.stream_of(i));
    }
    streams.sort_unstable();
    streams.dedup();
    inv.distinct_streams = streams.into_iter().map(str::to_string).collect();
    inv
}

/// 64-bit FNV-1a over the step's kernel names joined by `\n` (§3.5).
pub fn template_hash(kernels: &KernelTable, range: Range<usize>) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for (n, i) in range.enumerate() {
        if n > 0 {
            h ^= b'\n' as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        for &b in kernels.name_of(i).as_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// [`template_hash`] of each range. A range whose kernel name ids are those of an earlier
/// range takes its hash (one id per distinct text: the same names, the same hash), so the
/// steps of a repeating template are hashed once.
pub fn template_hashes(
    kernels: &KernelTable,
    ranges: impl Iterator<Item = Range<usize>>,
) -> Vec<u64> {
    let mut seen: rustc_hash::FxHashMap<&[NameId], u64> = Default::default();
    ranges
        .map(|r| {
            let names = &kernels.name()[r.clone()];
            *seen
                .entry(names)
                .or_insert_with(|| template_hash(kernels, r))
        })
        .collect()
}

fn dominant_class(kernels: &KernelTable, range: Range<usize>) -> Option<TaskClass> {
    let mut sums: BTreeMap<TaskClass, i64> = BTreeMap::new();
    for i in range {
        *sums.entry(kernels.class()[i]).or_default() += kernels.dur_ns()[i];
    }
    sums.into_iter()
        .max_by_key(|&(c, d)| (d, std::cmp::Reverse(c)))
        .map(|(c, _)| c)
}

fn name_counts(kernels: &KernelTable, range: Range<usize>) -> HashMap<u32, u64> {
    let mut m = HashMap::default();
    for i in range {
        *m.entry(kernels.name()[i]).or_default() += 1;
    }
    m
}

fn jaccard(a: &HashMap<u32, u64>, b: &HashMap<u32, u64>) -> f64 {
    let (mut inter, mut uni) = (0u64, 0u64);
    for (k, &ca) in a {
        let cb = b.get(k).copied().unwrap_or(0);
        inter += ca.min(cb);
        uni += ca.max(cb);
    }
    for (k, &cb) in b {
        if !a.contains_key(k) {
            uni += cb;
        }
    }
    if uni == 0 {
        1.0
    } else {
        inter as f64 / uni as f64
    }
}

/// §3.5: groups by exact template hash, then greedy merges (count within 2 %,
/// multiset Jaccard ≥ 0.9, same dominant class); ids by Σ service descending.
/// `hashes` are the steps' [`template_hash`]es.
pub(super) fn group_steps(
    kernels: &KernelTable,
    steps: &mut [Step],
    hashes: &[u64],
    cfg: &AnomalyConfig,
) -> Vec<StepGroup> {
    let mut by_hash: Vec<(u64, Vec<usize>)> = Vec::new();
    for (i, &h) in hashes.iter().enumerate() {
        match by_hash.iter_mut().find(|(hh, _)| *hh == h) {
            Some((_, v)) => v.push(i),
            None => by_hash.push((h, vec![i])),
        }
    }
    // A sort key only: a (theoretical) overflow of overlapping windows saturates.
    let service = |v: &[usize]| -> i64 {
        arith::sum(v.iter().map(|&i| steps[i].window.len_ns())).unwrap_or(i64::MAX)
    };
    crate::base::sort::sort_by(&mut by_hash, |a, b| {
        service(&b.1).cmp(&service(&a.1)).then(a.1[0].cmp(&b.1[0]))
    });
    let mut merged: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut taken = vec![false; by_hash.len()];
    // Name multiset and dominant class of each hash group's first step, computed once.
    type Profile = (HashMap<u32, u64>, Option<TaskClass>);
    let mut profiles: Vec<Option<Profile>> = vec![None; by_hash.len()];
    let mut profile = |g: usize| -> Profile {
        profiles[g]
            .get_or_insert_with(|| {
                let r = steps[by_hash[g].1[0]].kernels.clone();
                (name_counts(kernels, r.clone()), dominant_class(kernels, r))
            })
            .clone()
    };
    for a in 0..by_hash.len() {
        if taken[a] {
            continue;
        }
        taken[a] = true;
        let (ha, mut members) = by_hash[a].clone();
        let ca = steps[members[0]].kernels.len();
        let (na, da) = profile(a);
        for b in a + 1..by_hash.len() {
            if taken[b] {
                continue;
            }
            let cb = steps[by_hash[b].1[0]].kernels.len();
            let tol = cfg.group_count_tol * ca.max(cb) as f64;
            if (ca as f64 - cb as f64).abs() <= tol && {
                let (nb, db) = profile(b);
                jaccard(&na, &nb) >= cfg.group_jaccard_min && db == da
            } {
                taken[b] = true;
                members.extend(by_hash[b].1.iter().copied());
            }
        }
        members.sort_unstable();
        merged.push((ha, members));
    }
    crate::base::sort::sort_by(&mut merged, |a, b| {
        service(&b.1).cmp(&service(&a.1)).then(a.1[0].cmp(&b.1[0]))
    });
    merged
        .into_iter()
        .enumerate()
        .map(|(g, (h, members))| {
            for &m in &members {
                steps[m].group = g;
            }
            StepGroup {
                group_id: format!("g{g}"),
                steps: members,
                template_hash: h,
            }
        })
        .collect()
}
