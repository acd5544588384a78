//! Structure breakdown (anomaly.md §4): step → structure (layer) → block /
//! side → op, with the four timing perspectives at every level (§4.5).

use std::ops::Range;

use rustc_hash::FxHashMap as HashMap;

use super::anomaly_config::AnomalyConfig;
use super::intervals::{merge, window_metrics, Interval, WindowMetrics};
use crate::base::units::ns_to_us;
use crate::model::kernels::{KernelTable, NameId, NameTest, TaskClass};

/// The FusedInferAttentionScore kernel name (FIA: one per layer of a forward pass, §11).
pub const FIA: &str = "FusedInferAttentionScore";

/// True for a kernel name containing [`FIA`] (§11 A1, §3.6 forward passes; the §4.1 cut points).
pub fn is_fia(name: &str) -> bool {
    name.contains(FIA)
}

/// The four timing perspectives of §4.5, ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Perspectives {
    /// `max(end) − min(start)`.
    pub wall_ns: i64,
    /// Union of `[s, s+d]` across all streams.
    pub busy_ns: i64,
    /// `Σ d`.
    pub kernel_sum_ns: i64,
    /// `Σ (d + w)`.
    pub total_cost_ns: i64,
}

/// §4.5 over the kernels `idx`.
pub fn perspectives(k: &KernelTable, idx: impl IntoIterator<Item = usize>) -> Perspectives {
    let (mut lo, mut hi, mut sum, mut cost) = (i64::MAX, i64::MIN, 0i64, 0i64);
    let mut ivs = Vec::new();
    for i in idx {
        let (s, e) = (k.start_ns()[i], k.busy_end_ns(i));
        lo = lo.min(s);
        hi = hi.max(e);
        sum += k.dur_ns()[i];
        cost += k.dur_ns()[i] + k.wait_ns()[i];
        ivs.push(Interval::new(s, e));
    }
    if ivs.is_empty() {
        return Perspectives::default();
    }
    Perspectives {
        wall_ns: hi - lo,
        busy_ns: merge(ivs).iter().map(Interval::len_ns).sum(),
        kernel_sum_ns: sum,
        total_cost_ns: cost,
    }
}

/// The main compute stream of a kernel range (§4.1): largest AI_CORE-family Σ dur,
/// ties more kernels, then the lexically smaller key. `None` without AI_CORE kernels.
pub fn main_stream(k: &KernelTable, range: Range<usize>) -> Option<NameId> {
    let mut acc: HashMap<NameId, (i64, usize)> = HashMap::default();
    for i in range {
        if k.class()[i] == TaskClass::AiCore {
            let e = acc.entry(k.stream()[i]).or_default();
            e.0 += k.dur_ns()[i];
            e.1 += 1;
        }
    }
    acc.into_iter()
        .max_by(|a, b| {
            (a.1 .0, a.1 .1)
                .cmp(&(b.1 .0, b.1 .1))
                .then_with(|| k.text(b.0).cmp(k.text(a.0)))
        })
        .map(|(s, _)| s)
}

/// Block (main-stream compute) or side (comm, AICPU, small ops, other streams), §4.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// Main-stream compute.
    Block,
    /// Everything else.
    Side,
}

/// §4.3 rules in order for kernel `i`.
pub fn block_or_side(k: &KernelTable, i: usize, main: Option<NameId>, cfg: &AnomalyConfig) -> Part {
    let on_main = main == Some(k.stream()[i]);
    let dur_us = ns_to_us(k.dur_ns()[i]);
    let class = k.class()[i];
    if on_main && class == TaskClass::AiCore && dur_us >= cfg.small_kernel_us {
        Part::Block
    } else if matches!(class, TaskClass::Hccl | TaskClass::AiCpu)
        || dur_us < cfg.small_kernel_us
        || !on_main
    {
        Part::Side
    } else {
        Part::Block
    }
}

/// One block or side of a structure (§4.4).
#[derive(Clone, Debug, PartialEq)]
pub struct PartSummary {
    /// Kernel indices, in start order.
    pub kernels: Vec<usize>,
    /// Most common raw core text (ties: larger Σ dur).
    pub dominant_task_type: String,
    /// Stream with the largest Σ dur.
    pub dominant_stream: String,
    /// Top-N kernels by duration.
    pub top_by_duration: Vec<usize>,
    /// Top-N kernels by duration + wait.
    pub top_by_total_cost: Vec<usize>,
    /// Kernels with `wait/(dur+wait) > 0.8`.
    pub wait_heavy: Vec<usize>,
    /// Four perspectives.
    pub perspectives: Perspectives,
    /// Internal bubbles of its own union.
    pub metrics: WindowMetrics,
}

/// One structure (§4.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Structure {
    /// `block_3`, `prologue`, `epilogue`.
    pub structure_id: String,
    /// `transformer_block`, `repeated_block`, `embedding`, `head`, `fia_layer:<phase>`, `unsegmented`.
    pub structure_type: String,
    /// Kernel index range (contiguous in start order).
    pub kernels: Range<usize>,
    /// `[first start, max end)`.
    pub span: Interval,
    /// Four perspectives.
    pub perspectives: Perspectives,
    /// Σ dur shares of AI_CORE, AI_CPU, HCCL (fractions of kernel_sum).
    pub class_pct: [f64; 3],
    /// §5.4 metrics with the structure span as window.
    pub metrics: WindowMetrics,
    /// Gap to the previous structure with no device activity between, ns.
    pub inter_structure_gap_ns: i64,
    /// Block part.
    pub block: PartSummary,
    /// Side part.
    pub side: PartSummary,
    /// `len(union(side HCCL) ∩ union(block)) / len(union(side HCCL))`, null without side HCCL.
    pub comm_overlap_ratio: Option<f64>,
    /// Gap between block and side extents, 0 if they overlap, ns.
    pub block_side_gap_ns: i64,
}

/// How a step was segmented.
#[derive(Clone, Debug, PartialEq)]
pub struct Segmentation {
    /// Signal used: `fia`, `repetition`, `none`; `+gap` when time-gap splitting split something.
    pub method: String,
    /// Repetition anchor name and unit length, when repetition was used.
    pub anchor: Option<(String, usize)>,
    /// Structures in time order.
    pub structures: Vec<Structure>,
}

/// Segments one step (§4.1) and summarises each structure (§4.2–4.4).
/// `segs` are the rank's globally merged busy segments; `service_ns` the step service.
pub fn segment_step(
    k: &KernelTable,
    range: Range<usize>,
    segs: &[Interval],
    service_ns: i64,
    cfg: &AnomalyConfig,
) -> Segmentation {
    let main = main_stream(k, range.clone());
    let mut method = "none".to_string();
    let mut anchor = None;
    // Cut points: (kernel index where a structure starts, type of that structure).
    let mut cuts: Vec<(usize, String)> = Vec::new();
    let mut is_fia = NameTest::new(k, is_fia);
    let fia: Vec<usize> = range.clone().filter(|&i| is_fia.of(i)).collect();
    if !fia.is_empty() {
        method = "fia".into();
        if fia[0] > range.start {
            cuts.push((range.start, "embedding".into()));
        }
        for &f in &fia {
            let phase = fia_phase(k.dur_ns()[f], cfg);
            cuts.push((f, format!("fia_layer:{phase}")));
        }
    } else if let Some(rep) = repetition(k, range.clone(), main) {
        method = "repetition".into();
        anchor = Some((rep.name.clone(), rep.unit));
        if rep.unit_starts[0] > range.start {
            cuts.push((range.start, "embedding".into()));
        }
        let mut attention = NameTest::new(k, |n| n.to_ascii_lowercase().contains("attention"));
        for (j, &u) in rep.unit_starts.iter().enumerate() {
            let end = rep.unit_starts.get(j + 1).copied().unwrap_or(rep.last_end);
            let attn = (u..end).any(|i| attention.of(i));
            cuts.push((
                u,
                if attn {
                    "transformer_block"
                } else {
                    "repeated_block"
                }
                .into(),
            ));
        }
        if rep.last_end < range.end {
            cuts.push((rep.last_end, "head".into()));
        }
    } else if !range.is_empty() {
        cuts.push((range.start, "unsegmented".into()));
    }
    // Time-gap splitting inside each structure.
    let thr = (cfg
        .gap_heavy_floor_ms
        .max(cfg.gap_heavy_service_frac * service_ns as f64 / 1e6)
        * 1e6) as i64;
    let mut split = Vec::new();
    let mut did_split = false;
    for (c, (start, ty)) in cuts.iter().enumerate() {
        let end = cuts.get(c + 1).map(|x| x.0).unwrap_or(range.end);
        split.push((*start, ty.clone()));
        let mut max_end = i64::MIN;
        for i in *start..end {
            if i > *start && max_end != i64::MIN && k.start_ns()[i] - max_end >= thr {
                split.push((i, ty.clone()));
                did_split = true;
            }
            max_end = max_end.max(k.busy_end_ns(i));
        }
    }
    if did_split {
        method.push_str("+gap");
    }
    let n_units = split.len();
    let mut structures: Vec<Structure> = Vec::with_capacity(n_units);
    let mut block_no = 0;
    for (c, (start, ty)) in split.iter().enumerate() {
        let end = split.get(c + 1).map(|x| x.0).unwrap_or(range.end);
        if end <= *start {
            continue;
        }
        let id = match ty.as_str() {
            "embedding" if c == 0 => "prologue".to_string(),
            "head" if c + 1 == n_units => "epilogue".to_string(),
            _ => {
                block_no += 1;
                format!("block_{}", block_no - 1)
            }
        };
        let prev_end = structures.last().map(|s: &Structure| s.span.end_ns);
        structures.push(summarise(
            k,
            *start..end,
            id,
            ty.clone(),
            main,
            segs,
            prev_end,
            cfg,
        ));
    }
    Segmentation {
        method,
        anchor,
        structures,
    }
}

/// FIA class of §11.1: `prefill` (> 10 ms), `decode` (< 1 ms), else `intermediate`.
pub fn fia_phase(dur_ns: i64, cfg: &AnomalyConfig) -> &'static str {
    let us = ns_to_us(dur_ns);
    if us > cfg.fia_prefill_us {
        "prefill"
    } else if us < cfg.fia_decode_us {
        "decode"
    } else {
        "intermediate"
    }
}

#[allow(clippy::too_many_arguments)]
fn summarise(
    k: &KernelTable,
    r: Range<usize>,
    id: String,
    ty: String,
    main: Option<NameId>,
    segs: &[Interval],
    prev_end: Option<i64>,
    cfg: &AnomalyConfig,
) -> Structure {
    let p = perspectives(k, r.clone());
    let start = k.start_ns()[r.start];
    let span = Interval::new(start, start + p.wall_ns);
    let mut class_sum = [0i64; 3];
    for i in r.clone() {
        match k.class()[i] {
            TaskClass::AiCore => class_sum[0] += k.dur_ns()[i],
            TaskClass::AiCpu => class_sum[1] += k.dur_ns()[i],
            TaskClass::Hccl => class_sum[2] += k.dur_ns()[i],
            TaskClass::Other => {}
        }
    }
    let frac = |x: i64| {
        if p.kernel_sum_ns > 0 {
            x as f64 / p.kernel_sum_ns as f64
        } else {
            0.0
        }
    };
    let (mut bk, mut sd) = (Vec::new(), Vec::new());
    for i in r.clone() {
        match block_or_side(k, i, main, cfg) {
            Part::Block => bk.push(i),
            Part::Side => sd.push(i),
        }
    }
    let block = part_summary(k, bk, cfg);
    let side = part_summary(k, sd, cfg);
    let side_hccl = merge(
        side.kernels
            .iter()
            .filter(|&&i| k.class()[i] == TaskClass::Hccl)
            .map(|&i| Interval::new(k.start_ns()[i], k.busy_end_ns(i)))
            .collect(),
    );
    let block_union = merge(
        block
            .kernels
            .iter()
            .map(|&i| Interval::new(k.start_ns()[i], k.busy_end_ns(i)))
            .collect(),
    );
    let hccl_len: i64 = side_hccl.iter().map(Interval::len_ns).sum();
    let comm_overlap_ratio = (hccl_len > 0).then(|| {
        let inter: i64 = side_hccl
            .iter()
            .map(|s| super::intervals::covered_ns(&block_union, *s))
            .sum();
        inter as f64 / hccl_len as f64
    });
    let block_side_gap_ns = match (block.metrics.busy_extent, side.metrics.busy_extent) {
        (Some(b), Some(s)) => (s.start_ns - b.end_ns).max(b.start_ns - s.end_ns).max(0),
        _ => 0,
    };
    let inter_structure_gap_ns = match prev_end {
        Some(pe) if start > pe => {
            start - pe - super::intervals::covered_ns(segs, Interval::new(pe, start))
        }
        _ => 0,
    };
    Structure {
        structure_id: id,
        structure_type: ty,
        kernels: r,
        span,
        perspectives: p,
        class_pct: [frac(class_sum[0]), frac(class_sum[1]), frac(class_sum[2])],
        // Structures list no bubbles (their count, total and largest only).
        metrics: window_metrics(segs, span).without_bubble_list(),
        inter_structure_gap_ns,
        block,
        side,
        comm_overlap_ratio,
        block_side_gap_ns,
    }
}

fn part_summary(k: &KernelTable, mut kernels: Vec<usize>, cfg: &AnomalyConfig) -> PartSummary {
    // Grown by pushing while the structure was dealt into block and side; kept as is.
    kernels.shrink_to_fit();
    let p = perspectives(k, kernels.iter().copied());
    let own = merge(
        kernels
            .iter()
            .map(|&i| Interval::new(k.start_ns()[i], k.busy_end_ns(i)))
            .collect(),
    );
    let metrics = match (own.first(), own.last()) {
        (Some(a), Some(b)) => {
            window_metrics(&own, Interval::new(a.start_ns, b.end_ns)).without_bubble_list()
        }
        _ => WindowMetrics::default(),
    };
    // By text id (one id per distinct text); ties go to the lexically smaller text.
    let mut core: HashMap<NameId, (usize, i64)> = HashMap::default();
    let mut stream: HashMap<NameId, i64> = HashMap::default();
    for &i in &kernels {
        let e = core.entry(k.core_raw()[i]).or_default();
        e.0 += 1;
        e.1 += k.dur_ns()[i];
        *stream.entry(k.stream()[i]).or_default() += k.dur_ns()[i];
    }
    let dominant_task_type = core
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| k.text(b.0).cmp(k.text(a.0))))
        .map(|(c, _)| k.text(c).to_string())
        .unwrap_or_default();
    let dominant_stream = stream
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| k.text(b.0).cmp(k.text(a.0))))
        .map(|(c, _)| k.text(c).to_string())
        .unwrap_or_default();
    let top = |key: &dyn Fn(usize) -> i64| top_n(&kernels, cfg.top_kernels_n, key);
    let top_by_duration = top(&|i| k.dur_ns()[i]);
    let top_by_total_cost = top(&|i| k.dur_ns()[i] + k.wait_ns()[i]);
    let wait_heavy = kernels
        .iter()
        .copied()
        .filter(|&i| {
            let (d, w) = (k.dur_ns()[i] as f64, k.wait_ns()[i] as f64);
            d + w > 0.0 && w / (d + w) > cfg.wait_heavy_kernel_ratio
        })
        .collect();
    PartSummary {
        kernels,
        dominant_task_type,
        dominant_stream,
        top_by_duration,
        top_by_total_cost,
        wait_heavy,
        perspectives: p,
        metrics,
    }
}

/// The first `n` of `kernels` by `key` descending, ties by index: a selection of the `n`,
/// then a sort of those only.
fn top_n(kernels: &[usize], n: usize, key: &dyn Fn(usize) -> i64) -> Vec<usize> {
    crate::base::top_n::top_n_by(kernels, n, |&a, &b| key(b).cmp(&key(a)).then(a.cmp(&b)))
}

/// A repetition found by §4.1 item 3.
#[derive(Clone, Debug, PartialEq)]
pub struct Repetition {
    /// Anchor kernel name.
    pub name: String,
    /// Mode of the gaps between anchor positions (main-stream kernels per unit).
    pub unit: usize,
    /// `regularity × coverage`.
    pub score: f64,
    /// Kernel index (in the table) where each unit starts.
    pub unit_starts: Vec<usize>,
    /// Kernel index just past the last unit.
    pub last_end: usize,
}

/// §4.1 item 3 on the main-stream kernels of `range`; `None` when the best score < 0.5.
pub fn repetition(
    k: &KernelTable,
    range: Range<usize>,
    main: Option<NameId>,
) -> Option<Repetition> {
    repetition_limited(k, range, main, usize::MAX)
}

/// [`repetition`] with anchor candidates restricted to names occurring at most
/// `max_count` times (§3.6 item 3 uses 2–64).
pub fn repetition_limited(
    k: &KernelTable,
    range: Range<usize>,
    main: Option<NameId>,
    max_count: usize,
) -> Option<Repetition> {
    let main = main?;
    let t: Vec<usize> = range.clone().filter(|&i| k.stream()[i] == main).collect();
    if t.len() < 2 {
        return None;
    }
    let mut pos: HashMap<NameId, Vec<usize>> = HashMap::default();
    for (p, &i) in t.iter().enumerate() {
        pos.entry(k.name()[i]).or_default().push(p);
    }
    let pref = |n: &str| {
        ["FusedInferAttentionScore", "Attention", "MatMul", "RmsNorm"]
            .iter()
            .any(|x| n.contains(x))
    };
    let mut best: Option<(f64, i64, bool, String, NameId, usize)> = None;
    for (&name, ps) in &pos {
        if ps.len() < 2 || ps.len() > max_count {
            continue;
        }
        let gaps: Vec<usize> = ps.windows(2).map(|w| w[1] - w[0]).collect();
        let mut freq: HashMap<usize, usize> = HashMap::default();
        for &g in &gaps {
            *freq.entry(g).or_default() += 1;
        }
        let m = freq
            .iter()
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(&g, _)| g)
            .unwrap_or(1);
        let tol = (0.1 * m as f64).max(1.0);
        let regular = gaps
            .iter()
            .filter(|&&g| (g as f64 - m as f64).abs() <= tol)
            .count() as f64
            / gaps.len() as f64;
        let (p1, pk) = (ps[0], ps[ps.len() - 1]);
        let coverage = ((pk + m - p1) as f64 / t.len() as f64).min(1.0);
        let score = regular * coverage;
        let dur: i64 = ps.iter().map(|&p| k.dur_ns()[t[p]]).sum();
        let text = k.text(name).to_string();
        let cand = (score, dur, pref(&text), text, name, m);
        let better = match &best {
            None => true,
            Some(b) => cand
                .0
                .total_cmp(&b.0)
                .then(cand.1.cmp(&b.1))
                .then(cand.2.cmp(&b.2))
                .then_with(|| b.3.cmp(&cand.3))
                .is_gt(),
        };
        if better {
            best = Some(cand);
        }
    }
    let (score, _, _, text, name, m) = best?;
    if score < 0.5 {
        return None;
    }
    let ps = &pos[&name];
    // Largest offset o in [0, m) with T[p_j − o] the same name for every p_j ≥ o.
    let mut o = 0;
    for cand in (0..m).rev() {
        let names: Vec<NameId> = ps
            .iter()
            .filter(|&&p| p >= cand)
            .map(|&p| k.name()[t[p - cand]])
            .collect();
        if !names.is_empty() && names.iter().all(|&n| n == names[0]) {
            o = cand;
            break;
        }
    }
    let unit_starts: Vec<usize> = ps.iter().filter(|&&p| p >= o).map(|&p| t[p - o]).collect();
    let last_main = ps.last().map(|&p| p - o.min(p) + m).unwrap_or(t.len());
    let last_end = t.get(last_main).copied().unwrap_or(range.end);
    Some(Repetition {
        name: text,
        unit: m,
        score,
        unit_starts,
        last_end,
    })
}
