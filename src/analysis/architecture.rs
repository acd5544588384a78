//! Model-architecture facts (anomaly.md §11, A1–A7): FIA timeline, pass
//! boundaries, layer classification, cross-verification counts, per-layer role
//! groups, stream roles and communication overlap, configuration tokens. The
//! Markdown lives in `report::arch_md`; everything here is counted evidence.

use std::collections::BTreeMap;
use std::ops::Range;

use super::anomaly_config::AnomalyConfig;
use super::intervals::{merge, total_len, Interval};
use super::structure::{is_fia, main_stream, repetition, FIA};
use crate::base::units::ns_to_us;
use crate::model::kernels::{KernelTable, NameTest};

/// FIA duration class (§11.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FiaClass {
    /// > 10 ms.
    Prefill,
    /// < 1 ms.
    Decode,
    /// 1–10 ms (Decision), joins the nearer class by log-duration for pass logic.
    Intermediate,
}

/// One FIA kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fia {
    /// Kernel index.
    pub kernel: usize,
    /// Its class.
    pub class: FiaClass,
    /// Class used for pass logic (intermediate joined to the nearer one).
    pub phase: FiaClass,
}

/// A forward pass (§11.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Pass {
    /// FIA indices (into [`Architecture::fia`]).
    pub fia: Range<usize>,
    /// Kernel index range.
    pub kernels: Range<usize>,
}

/// Layer type by kernel-name presence (§11.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LayerType {
    /// Kernels before the first FIA of a pass.
    Prologue,
    /// No MoE kernels.
    Dense,
    /// `DispatchFFNCombine`.
    MoeDfc,
    /// `GroupedMatmul` + `alltoallv`, no DFC.
    MoeGmm,
    /// `MoeGatingTopK` without DFC/GMM.
    MoeOther,
    /// A repeated unit found without FIA (no-FIA fallback).
    Repeated,
}

impl LayerType {
    /// Display name.
    pub fn as_str(self) -> &'static str {
        match self {
            LayerType::Prologue => "Prologue (embedding)",
            LayerType::Dense => "Dense",
            LayerType::MoeDfc => "MoE+DFC",
            LayerType::MoeGmm => "MoE+GMM",
            LayerType::MoeOther => "MoE-other",
            LayerType::Repeated => "Repeated unit",
        }
    }
}

/// One layer (§11.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Kernel index range.
    pub kernels: Range<usize>,
    /// `prefill`, `decode`, `intermediate` or `-` without FIA.
    pub phase: &'static str,
    /// Type.
    pub ty: LayerType,
    /// Contains `ArgMax` / `rejection_*`.
    pub sampling: bool,
    /// Pass index.
    pub pass: usize,
}

/// Stream role (§11.7).
#[derive(Clone, Debug, PartialEq)]
pub struct StreamRole {
    /// Stream key.
    pub stream: String,
    /// Purpose (Decision list).
    pub purpose: &'static str,
    /// Kernels on it.
    pub kernels: usize,
    /// Σ dur, ns.
    pub kernel_sum_ns: i64,
    /// Union length, ns.
    pub union_ns: i64,
    /// Other streams with overlap ratio ≥ 0.1 against this stream's union.
    pub overlaps_with: Vec<(String, f64)>,
}

/// Comm-vs-compute overlap of one comm stream (§11.7 item 2).
#[derive(Clone, Debug, PartialEq)]
pub struct CommOverlap {
    /// Comm stream.
    pub comm_stream: String,
    /// Compute stream.
    pub compute_stream: String,
    /// `|merge(C) ∩ merge(P)|`, ns.
    pub overlap_ns: i64,
    /// Overlap / |merge(C)| (primary).
    pub ratio: f64,
    /// Overlap / Σ(C durations) (skill's formula).
    pub ratio_sum: f64,
}

/// Parallelism and sequence tokens of the folder name (§11.8 item 1, Decision tokens).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ConfigTokens {
    /// `dp<N>`.
    pub dp: Option<u32>,
    /// `tp<N>`.
    pub tp: Option<u32>,
    /// `pp<N>`.
    pub pp: Option<u32>,
    /// `ep` or `ep<N>`: `Some(None)` for a bare `ep`.
    pub ep: Option<Option<u32>>,
    /// `<a>k_<b>k`: prefill / decode lengths in k tokens.
    pub seq_k: Option<(u32, u32)>,
    /// `bs<N>`.
    pub bs: Option<u32>,
}

/// Parses the folder-name tokens: `0313_dp2_tp8_ep_100k_1k_bs10` → DP2, TP8, EP, 100k/1k, bs 10.
pub fn config_tokens(name: &str) -> ConfigTokens {
    let mut c = ConfigTokens::default();
    let toks: Vec<String> = name
        .split(['_', '-'])
        .map(|t| t.to_ascii_lowercase())
        .collect();
    let num = |t: &str, p: &str| t.strip_prefix(p).and_then(|d| d.parse::<u32>().ok());
    for (i, t) in toks.iter().enumerate() {
        if let Some(v) = num(t, "dp") {
            c.dp = Some(v);
        } else if let Some(v) = num(t, "tp") {
            c.tp = Some(v);
        } else if let Some(v) = num(t, "pp") {
            c.pp = Some(v);
        } else if t == "ep" {
            c.ep = Some(None);
        } else if let Some(v) = num(t, "ep") {
            c.ep = Some(Some(v));
        } else if let Some(v) = num(t, "bs") {
            c.bs = Some(v);
        } else if let (Some(a), Some(b)) = (
            t.strip_suffix('k'),
            toks.get(i + 1).and_then(|n| n.strip_suffix('k')),
        ) {
            if let (Ok(a), Ok(b)) = (a.parse(), b.parse()) {
                if c.seq_k.is_none() {
                    c.seq_k = Some((a, b));
                }
            }
        }
    }
    c
}

/// All architecture facts of one rank.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Architecture {
    /// FIA kernels in start order.
    pub fia: Vec<Fia>,
    /// Passes.
    pub passes: Vec<Pass>,
    /// Layers (FIA layers, or repeated units without FIA).
    pub layers: Vec<Layer>,
    /// `fia`, `repetition` or `none`.
    pub layer_source: &'static str,
    /// Repetition anchor when `layer_source == "repetition"`.
    pub anchor: Option<String>,
    /// Stream roles, by Σ dur descending.
    pub streams: Vec<StreamRole>,
    /// Comm overlaps.
    pub comm_overlaps: Vec<CommOverlap>,
    /// Σ overlap / Σ |merge(comm streams)|.
    pub comm_hidden_fraction: Option<f64>,
    /// Per pass: `(op, raw count, layers containing it)` for the §11.4 ops.
    pub cross_verification: Vec<Vec<(&'static str, usize, usize)>>,
}

const VERIFY_OPS: [&str; 6] = [
    FIA,
    "DispatchFFNCombine",
    "GroupedMatmul",
    "MoeGatingTopK",
    "split_qkv_rmsnorm_rope",
    "ReshapeAndCache",
];

/// Functional role of a kernel by name (§11.5 role table; name-based, ambiguous names → overhead).
pub fn role_of(name: &str) -> &'static str {
    let n = name;
    let has = |p: &str| n.contains(p);
    if has("FusedInferAttentionScore") || has("FlashAttention") {
        "Attention"
    } else if has("reduceScatter")
        || has("allGather")
        || has("allgather_AICPU")
        || has("reduce_scatter_AICPU")
        || has("allReduce")
    {
        "TP communication"
    } else if has("MoeGatingTopK") || has("HistogramV2") {
        "MoE routing"
    } else if has("DispatchFFNCombine") || has("GroupedMatmul") {
        "Expert dispatch"
    } else if has("DynamicQuant") || has("QuantBatchMatmul") || has("SwiGlu") {
        "Expert FFN"
    } else if has("AddRmsNormQuant") || has("AddRmsNormBias") {
        "Post-MoE norm"
    } else if has("split_qkv_rmsnorm_rope") || has("ReshapeAndCache") {
        "Next-layer prep"
    } else if has("alltoallv") || has("AivKernel") {
        "EP communication"
    } else if has("ArgMax") || has("rejection_") || has("IndexFill") || has("LogicalAnd") {
        "Sampling"
    } else if has("MatMul") || has("TensorMove") {
        "Attention projection"
    } else {
        "Small-ops overhead"
    }
}

fn layer_type(k: &KernelTable, r: Range<usize>) -> (LayerType, bool) {
    let (mut dfc, mut gmm, mut a2a, mut gate, mut samp) = (false, false, false, false, false);
    for i in r {
        let n = k.name_of(i);
        dfc |= n.contains("DispatchFFNCombine");
        gmm |= n.contains("GroupedMatmul");
        a2a |= n.contains("alltoallv");
        gate |= n.contains("MoeGatingTopK");
        samp |= n.contains("ArgMax") || n.contains("rejection_");
    }
    let ty = if dfc {
        LayerType::MoeDfc
    } else if gmm && a2a {
        LayerType::MoeGmm
    } else if gate || gmm {
        LayerType::MoeOther
    } else {
        LayerType::Dense
    };
    (ty, samp)
}

/// Runs A1–A4 and A7 over the whole capture.
pub fn analyse(k: &KernelTable, cfg: &AnomalyConfig) -> Architecture {
    let mut a = Architecture::default();
    // A1
    let mut is_fia = NameTest::new(k, is_fia);
    for i in 0..k.len() {
        if is_fia.of(i) {
            let us = ns_to_us(k.dur_ns()[i]);
            let class = if us > cfg.fia_prefill_us {
                FiaClass::Prefill
            } else if us < cfg.fia_decode_us {
                FiaClass::Decode
            } else {
                FiaClass::Intermediate
            };
            let phase = match class {
                FiaClass::Intermediate => {
                    let l = us.max(1e-9).ln();
                    if (l - cfg.fia_prefill_us.ln()).abs() <= (l - cfg.fia_decode_us.ln()).abs() {
                        FiaClass::Prefill
                    } else {
                        FiaClass::Decode
                    }
                }
                c => c,
            };
            a.fia.push(Fia {
                kernel: i,
                class,
                phase,
            });
        }
    }
    if !a.fia.is_empty() {
        a.layer_source = "fia";
        // A2: pass starts.
        let mut starts = vec![0usize];
        let has_decode = a.fia.iter().any(|f| f.phase == FiaClass::Decode);
        if has_decode {
            for j in 1..a.fia.len() {
                if a.fia[j - 1].phase == FiaClass::Decode && a.fia[j].phase == FiaClass::Prefill {
                    starts.push(j);
                }
            }
        } else if a.fia.len() > 2 {
            let gaps: Vec<f64> = a
                .fia
                .windows(2)
                .map(|w| (k.start_ns()[w[1].kernel] - k.start_ns()[w[0].kernel]) as f64)
                .collect();
            let med = super::intervals::percentile(&gaps, 0.5);
            for (j, g) in gaps.iter().enumerate() {
                if med > 0.0 && *g >= 5.0 * med {
                    starts.push(j + 1);
                }
            }
        }
        for (p, &s) in starts.iter().enumerate() {
            let e = starts.get(p + 1).copied().unwrap_or(a.fia.len());
            let kstart = if p == 0 { 0 } else { a.fia[s].kernel };
            let kend = starts
                .get(p + 1)
                .map(|&n| a.fia[n].kernel)
                .unwrap_or(k.len());
            a.passes.push(Pass {
                fia: s..e,
                kernels: kstart..kend,
            });
        }
        // A3: layers.
        for (pi, pass) in a.passes.iter().enumerate() {
            let first = a.fia[pass.fia.start].kernel;
            if first > pass.kernels.start {
                a.layers.push(Layer {
                    kernels: pass.kernels.start..first,
                    phase: "-",
                    ty: LayerType::Prologue,
                    sampling: false,
                    pass: pi,
                });
            }
            for j in pass.fia.clone() {
                let s = a.fia[j].kernel;
                let e = if j + 1 < pass.fia.end {
                    a.fia[j + 1].kernel
                } else {
                    pass.kernels.end
                };
                let (ty, sampling) = layer_type(k, s..e);
                let phase = match a.fia[j].class {
                    FiaClass::Prefill => "prefill",
                    FiaClass::Decode => "decode",
                    FiaClass::Intermediate => "intermediate",
                };
                a.layers.push(Layer {
                    kernels: s..e,
                    phase,
                    ty,
                    sampling,
                    pass: pi,
                });
            }
        }
    } else if let Some(rep) = repetition(k, 0..k.len(), main_stream(k, 0..k.len())) {
        a.layer_source = "repetition";
        a.anchor = Some(rep.name.clone());
        a.passes.push(Pass {
            fia: 0..0,
            kernels: 0..k.len(),
        });
        if rep.unit_starts[0] > 0 {
            a.layers.push(Layer {
                kernels: 0..rep.unit_starts[0],
                phase: "-",
                ty: LayerType::Prologue,
                sampling: false,
                pass: 0,
            });
        }
        for (j, &u) in rep.unit_starts.iter().enumerate() {
            let e = rep.unit_starts.get(j + 1).copied().unwrap_or(rep.last_end);
            a.layers.push(Layer {
                kernels: u..e,
                phase: "-",
                ty: LayerType::Repeated,
                sampling: false,
                pass: 0,
            });
        }
    } else {
        a.layer_source = "none";
        if !k.is_empty() {
            a.passes.push(Pass {
                fia: 0..0,
                kernels: 0..k.len(),
            });
        }
    }
    // A4 per pass.
    for (pi, p) in a.passes.iter().enumerate() {
        let layers: Vec<&Layer> = a
            .layers
            .iter()
            .filter(|l| l.pass == pi && l.ty != LayerType::Prologue)
            .collect();
        let row = VERIFY_OPS
            .iter()
            .map(|op| {
                let mut has_op = NameTest::new(k, |n| n.contains(op));
                let raw = p.kernels.clone().filter(|&i| has_op.of(i)).count();
                let containing = layers
                    .iter()
                    .filter(|l| l.kernels.clone().any(|i| has_op.of(i)))
                    .count();
                (*op, raw, containing)
            })
            .collect();
        a.cross_verification.push(row);
    }
    // A7 stream roles.
    // Kernels by stream id, then keyed by the stream's text (each list stays in kernel order).
    let mut by_id: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for i in 0..k.len() {
        by_id.entry(k.stream()[i]).or_default().push(i);
    }
    let by: BTreeMap<String, Vec<usize>> = by_id
        .into_iter()
        .map(|(id, v)| (k.text(id).to_string(), v))
        .collect();
    let mut aicpu = NameTest::new(k, |n| n.contains("AICPU"));
    let mut ep_name = NameTest::new(k, |n| n.starts_with("alltoall") || n.contains("AivKernel"));
    let unions: BTreeMap<String, Vec<Interval>> = by
        .iter()
        .map(|(s, v)| {
            (
                s.clone(),
                merge(
                    v.iter()
                        .map(|&i| Interval::new(k.start_ns()[i], k.end_ns(i)))
                        .collect(),
                ),
            )
        })
        .collect();
    let main = main_stream(k, 0..k.len()).map(|m| k.text(m).to_string());
    for (s, v) in &by {
        let comm = v.iter().filter(|&&i| k.comm()[i]).count();
        let aicpu_comm = v.iter().filter(|&&i| k.comm()[i] && aicpu.of(i)).count();
        let ep = v.iter().filter(|&&i| ep_name.of(i)).count();
        let purpose = if main.as_deref() == Some(s.as_str()) {
            "main compute"
        } else if aicpu_comm * 2 > v.len() {
            "AI_CPU comm"
        } else if comm * 2 > v.len() {
            "HCCL comm"
        } else if ep * 2 > v.len() {
            "alltoall / EP comm"
        } else {
            "auxiliary"
        };
        let u = &unions[s];
        let ul = total_len(u);
        let mut overlaps = Vec::new();
        for (o, ou) in &unions {
            if o == s || ul == 0 {
                continue;
            }
            let ov: i64 = u.iter().map(|x| super::intervals::covered_ns(ou, *x)).sum();
            let r = ov as f64 / ul as f64;
            if r >= cfg.stream_overlaps_min {
                overlaps.push((o.clone(), r));
            }
        }
        // Largest overlap first, ties by stream key: deterministic (§0.4).
        crate::base::sort::sort_by(&mut overlaps, |x, y| {
            y.1.total_cmp(&x.1).then_with(|| x.0.cmp(&y.0))
        });
        a.streams.push(StreamRole {
            stream: s.clone(),
            purpose,
            kernels: v.len(),
            kernel_sum_ns: v.iter().map(|&i| k.dur_ns()[i]).sum(),
            union_ns: ul,
            overlaps_with: overlaps,
        });
    }
    crate::base::sort::sort_by(&mut a.streams, |x, y| {
        y.kernel_sum_ns
            .cmp(&x.kernel_sum_ns)
            .then(x.stream.cmp(&y.stream))
    });
    // Comm overlap vs the main compute stream.
    if let Some(m) = &main {
        let (mut ov_sum, mut comm_len) = (0i64, 0i64);
        for st in a.streams.iter().filter(|s| {
            matches!(
                s.purpose,
                "HCCL comm" | "AI_CPU comm" | "alltoall / EP comm"
            )
        }) {
            let cu = &unions[&st.stream];
            let ov: i64 = cu
                .iter()
                .map(|x| super::intervals::covered_ns(&unions[m], *x))
                .sum();
            ov_sum += ov;
            comm_len += st.union_ns;
            a.comm_overlaps.push(CommOverlap {
                comm_stream: st.stream.clone(),
                compute_stream: m.clone(),
                overlap_ns: ov,
                ratio: if st.union_ns > 0 {
                    ov as f64 / st.union_ns as f64
                } else {
                    0.0
                },
                ratio_sum: if st.kernel_sum_ns > 0 {
                    ov as f64 / st.kernel_sum_ns as f64
                } else {
                    0.0
                },
            });
        }
        a.comm_hidden_fraction = (comm_len > 0).then(|| ov_sum as f64 / comm_len as f64);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_name_tokens() {
        let c = config_tokens("0313_dp2_tp8_ep_100k_1k_bs10");
        assert_eq!(c.dp, Some(2));
        assert_eq!(c.tp, Some(8));
        assert_eq!(c.ep, Some(None));
        assert_eq!(c.seq_k, Some((100, 1)));
        assert_eq!(c.bs, Some(10));
        assert_eq!(config_tokens("rank0_ascend_pt"), ConfigTokens::default());
    }
}
