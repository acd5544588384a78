//! GPU collectives across ranks from NCCL kernels, by TraceLens' NcclAnalyser rules
//! (communication.md §4): kernels keyed `"<PG name>_<index among the rank's kernels of that
//! PG in time order>"`; per collective `comm_latency = min dur`, skews of start and end,
//! `algbw = (MiB / 1024) / (latency / 1e6)` GiB/s, `busbw = algbw × factor(n)`. Sizes are MiB,
//! bandwidths GiB/s (not the Ascend decimal units).

use rustc_hash::FxHashMap as HashMap;
use std::collections::BTreeMap;

use crate::base::sort::{f64_key, sort_by_i64_key};
use crate::model::comm::NcclKernel;

/// One collective across its ranks.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveRow {
    /// `"<PG name>_<index>"` (`"<scope>/<PG name>_<index>"` in a non-empty scope).
    pub collective_id: String,
    /// The collective category (`allreduce`, `reducescatter`, `allgather`, `alltoall`).
    pub collective: String,
    /// `Group size`.
    pub group_size: i64,
    /// Ranks that have it.
    pub ranks: Vec<i64>,
    /// Message size (MiB): `Out` for allgather, else `In`.
    pub full_msg_mb: f64,
    /// min over ranks of the duration (µs).
    pub comm_latency_us: f64,
    /// Latest start − earliest start (µs); `None` when fewer than two ranks hold it (a skew
    /// across ranks cannot be measured on one).
    pub skew_start_us: Option<f64>,
    /// Latest end − earliest end (µs); `None` as [`Self::skew_start_us`].
    pub skew_end_us: Option<f64>,
    /// The rank that started first (largest wait); `None` as [`Self::skew_start_us`].
    pub earliest_arrival_rank: Option<i64>,
    /// GiB/s; `None` when the latency is 0.
    pub algo_bw_gbps: Option<f64>,
    /// `algo_bw × factor(group size)`.
    pub bus_bw_gbps: Option<f64>,
}

/// Bytes per element of a `dtype`, `None` for other types.
pub fn dtype_bytes(dtype: &str) -> Option<f64> {
    Some(match dtype {
        "Float" | "Int" => 4.0,
        "Long" | "Double" => 8.0,
        "BFloat16" | "Half" | "Short" => 2.0,
        "Bool" | "Byte" => 1.0,
        _ => return None,
    })
}

/// The category of a `Collective name`, `None` when not one of TraceLens' names.
pub fn category(name: &str) -> Option<&'static str> {
    Some(match name {
        "allreduce" | "allreduce_coalesced" => "allreduce",
        "reducescatter" | "_reduce_scatter_base" | "reduce_scatter_tensor_coalesced" => {
            "reducescatter"
        }
        "allgather"
        | "all_gather"
        | "_allgather_base"
        | "all_gather_into_tensor_coalesced"
        | "allgather_into_tensor_coalesced" => "allgather",
        "all_to_all" => "alltoall",
        "all_to_allv" => "alltoallv",
        _ => return None,
    })
}

/// The bus-bandwidth factor of a category for `n` ranks.
pub fn bus_factor(category: &str, n: i64) -> Option<f64> {
    let n = n as f64;
    match category {
        "allreduce" => Some(2.0 * (n - 1.0) / n),
        "reducescatter" | "allgather" | "alltoall" => Some((n - 1.0) / n),
        _ => None,
    }
}

/// The collective kernels of `kernels` no collective row can hold: `(without a `Collective
/// name` argument, of a kind outside the implicit-sync categories)` (send/recv, broadcast, …).
pub fn untabulated<'a>(kernels: impl Iterator<Item = &'a NcclKernel>) -> (usize, usize) {
    kernels.fold((0, 0), |(unnamed, other), k| {
        match k.collective.as_deref() {
            None => (unnamed + 1, other),
            Some(c) if category(c).is_none() => (unnamed, other + 1),
            Some(_) => (unnamed, other),
        }
    })
}

/// The order of a process group name: numeric names by their value, before the others by text.
fn pg_order(pg: &str) -> (u8, u64, &str) {
    match pg.parse::<u64>() {
        Ok(v) => (0, v, pg),
        Err(_) => (1, 0, pg),
    }
}

/// The collectives of `kernels` (every rank), ordered by scope (first appearance), process
/// group (numeric names by value) and index (numerically); only the implicit-sync categories
/// (allreduce, reducescatter, allgather, alltoall). Kernels are matched across ranks of one
/// [`NcclKernel::scope`] only; the id of a collective of a non-empty scope is
/// `"<scope>/<PG name>_<index>"`.
pub fn collectives(kernels: &[NcclKernel]) -> Vec<CollectiveRow> {
    let mut scopes: Vec<&str> = Vec::new();
    let mut scope_ix: HashMap<&str, usize> = HashMap::default();
    let sc: Vec<usize> = kernels
        .iter()
        .map(|k| {
            *scope_ix.entry(&*k.scope).or_insert_with(|| {
                scopes.push(&*k.scope);
                scopes.len() - 1
            })
        })
        .collect();
    // Per scope: no group names and one stream per rank → the index runs over the rank.
    let mut simplified = vec![true; scopes.len()];
    let mut streams: HashMap<(usize, i64), i64> = HashMap::default();
    for (k, &s) in kernels.iter().zip(&sc) {
        let unnamed = k.pg_name.as_deref().unwrap_or("Unknown_Group") == "Unknown_Group";
        if !unnamed || *streams.entry((s, k.rank)).or_insert(k.stream) != k.stream {
            simplified[s] = false;
        }
    }
    // index within (scope, PG, rank) by time (stable: first wins on ties)
    let mut idx: Vec<usize> = (0..kernels.len()).collect();
    sort_by_i64_key(&mut idx, |i| f64_key(kernels[i].ts_us));
    let mut next: HashMap<(usize, &str, i64), usize> = HashMap::default();
    let mut keys: Vec<(usize, &str, usize)> = vec![(0, "", 0); kernels.len()];
    for &i in &idx {
        let k = &kernels[i];
        let s = sc[i];
        let pg = match (simplified[s], k.pg_name.as_deref()) {
            (true, _) => "",
            (false, Some(pg)) => pg,
            (false, None) => "Unknown_Group",
        };
        let n = next.entry((s, pg, k.rank)).or_default();
        keys[i] = (s, pg, *n);
        *n += 1;
    }
    let mut by_id: BTreeMap<(usize, (u8, u64, &str), usize), Vec<usize>> = BTreeMap::new();
    for (i, &(s, pg, n)) in keys.iter().enumerate() {
        by_id.entry((s, pg_order(pg), n)).or_default().push(i);
    }
    let mut out = Vec::new();
    for members in by_id.values() {
        let ks: Vec<&NcclKernel> = members.iter().map(|&i| &kernels[i]).collect();
        let first = ks[0];
        let (s, pg, n) = keys[members[0]];
        let local = if simplified[s] {
            n.to_string()
        } else {
            format!("{pg}_{n}")
        };
        let id = match scopes[s] {
            "" => local,
            scope => format!("{scope}/{local}"),
        };
        let Some(cat) = first.collective.as_deref().and_then(category) else {
            continue;
        };
        let Some(factor) = bus_factor(cat, first.group_size.unwrap_or(0)) else {
            continue;
        };
        let bytes = first.dtype.as_deref().and_then(dtype_bytes);
        let nel = if cat == "allgather" {
            first.out_nelems
        } else {
            first.in_nelems
        };
        let full = match (bytes, nel) {
            (Some(b), Some(n)) => n as f64 * b / (1024.0 * 1024.0),
            _ => f64::NAN,
        };
        let lat = ks.iter().map(|k| k.dur_us).fold(f64::INFINITY, f64::min);
        let latest = ks.iter().map(|k| k.ts_us).fold(f64::NEG_INFINITY, f64::max);
        let (mut wait, mut wait_rank) = (f64::NEG_INFINITY, first.rank);
        for k in &ks {
            let w = latest - k.ts_us;
            if (w, k.rank) > (wait, wait_rank) {
                (wait, wait_rank) = (w, k.rank);
            }
        }
        let ends = ks.iter().map(|k| k.ts_us + k.dur_us);
        let skew_end =
            ends.clone().fold(f64::NEG_INFINITY, f64::max) - ends.fold(f64::INFINITY, f64::min);
        let algo = (lat != 0.0).then(|| (full / 1024.0) / (lat / 1e6));
        // Skews compare ranks: with one rank present they are unmeasurable, not 0.
        let measured = ks.iter().any(|k| k.rank != first.rank);
        out.push(CollectiveRow {
            collective_id: id,
            collective: cat.to_string(),
            group_size: first.group_size.unwrap_or(0),
            ranks: ks.iter().map(|k| k.rank).collect(),
            full_msg_mb: full,
            comm_latency_us: lat,
            skew_start_us: measured.then_some(wait),
            skew_end_us: measured.then_some(skew_end),
            earliest_arrival_rank: measured.then_some(wait_rank),
            algo_bw_gbps: algo,
            bus_bw_gbps: algo.map(|a| a * factor),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(rank: i64, name: &str, ts: f64, dur: f64) -> NcclKernel {
        NcclKernel {
            rank,
            pg_name: Some("0".into()),
            collective: Some(name.into()),
            group_size: Some(2),
            dtype: Some("Float".into()),
            in_nelems: Some(2049000),
            out_nelems: Some(2049000),
            stream: 7,
            ts_us: ts,
            dur_us: dur,
            ..NcclKernel::default()
        }
    }

    #[test]
    fn index_counts_every_kernel_of_the_group_and_only_sync_collectives_are_kept() {
        let ks = vec![
            k(0, "broadcast", 0.0, 5.0),
            k(0, "allreduce", 10.0, 3306.963),
            k(1, "broadcast", 1.0, 5.0),
            k(1, "allreduce", 12.0, 3300.0),
        ];
        let c = collectives(&ks);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].collective_id, "0_1");
        assert_eq!(c[0].ranks, [0, 1]);
        assert_eq!(c[0].comm_latency_us, 3300.0);
        assert_eq!(c[0].skew_start_us, Some(2.0));
        assert_eq!(c[0].earliest_arrival_rank, Some(0));
        assert!((c[0].full_msg_mb - 7.8163).abs() < 1e-4);
        let algo = c[0].algo_bw_gbps.unwrap();
        assert_eq!(c[0].bus_bw_gbps, Some(algo));
    }

    #[test]
    fn rows_are_ordered_by_scope_then_group_and_index_numerically() {
        // Group "10" first in the input, then "2"; 12 allreduces each, one rank.
        let mut ks = Vec::new();
        for pg in ["10", "2"] {
            for n in 0..12 {
                let mut x = k(0, "allreduce", 100.0 * n as f64, 1.0);
                x.pg_name = Some(pg.into());
                ks.push(x);
            }
        }
        // A second scope (another trace of rank 0), last in the input: its rows come after,
        // whatever its times.
        let mut other = k(0, "allreduce", -5.0, 1.0);
        other.scope = "b".into();
        ks.push(other);
        let ids: Vec<String> = collectives(&ks)
            .into_iter()
            .map(|c| c.collective_id)
            .collect();
        let mut want: Vec<String> = Vec::new();
        for pg in ["2", "10"] {
            want.extend((0..12).map(|n| format!("{pg}_{n}")));
        }
        want.push("b/0_0".into());
        assert_eq!(ids, want);
        // One rank: no skew.
        assert_eq!(collectives(&ks)[0].skew_start_us, None);
    }
}
