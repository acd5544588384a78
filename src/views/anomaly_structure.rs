//! The structure breakdown tree of one step (anomaly.md §4): step → structure (§4.1–4.2) →
//! block / side (§4.3–4.4) → op (kernels of one name inside the block or side), each node
//! with the four timing perspectives of §4.5 (`wall_ms`, `busy_union_ms`, `kernel_sum_ms`,
//! `total_cost_ms`). Step, structure and part timings are the analysis' own; op timings are
//! §4.5 applied to the op's kernels ([`perspectives`]).

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::anomaly::AnomalyResult;
use crate::analysis::structure::{perspectives, PartSummary, Perspectives};
use crate::base::units::ns_to_ms;
use crate::model::kernels::KernelTable;
use crate::protocol::anomaly::{StructureTreeDto, TreeNodeDto};

/// Ops listed per block / side; the rest are counted in `more`.
pub const OPS_PER_PART: usize = 50;

fn node(kind: &str, label: String, detail: String, n: usize, p: &Perspectives) -> TreeNodeDto {
    TreeNodeDto {
        kind: kind.into(),
        label,
        detail,
        kernel_count: n as u32,
        wall_ms: ns_to_ms(p.wall_ns),
        busy_union_ms: ns_to_ms(p.busy_ns),
        kernel_sum_ms: ns_to_ms(p.kernel_sum_ns),
        total_cost_ms: ns_to_ms(p.total_cost_ns),
        children: Vec::new(),
        more: (0, 0),
    }
}

/// Ops of a block or side: kernels grouped by name, largest `kernel_sum` first (ties: name).
fn ops(k: &KernelTable, kernels: &[usize]) -> (Vec<TreeNodeDto>, (u32, u32)) {
    let mut by_name: HashMap<u32, Vec<usize>> = HashMap::default();
    for &i in kernels {
        by_name.entry(k.name()[i]).or_default().push(i);
    }
    let mut v: Vec<(u32, Vec<usize>, Perspectives)> = by_name
        .into_iter()
        .map(|(n, ks)| {
            let p = perspectives(k, ks.iter().copied());
            (n, ks, p)
        })
        .collect();
    crate::base::sort::sort_by(&mut v, |a, b| {
        b.2.kernel_sum_ns
            .cmp(&a.2.kernel_sum_ns)
            .then_with(|| k.text(a.0).cmp(k.text(b.0)))
    });
    let rest = v.iter().skip(OPS_PER_PART);
    let more = (
        rest.clone().count() as u32,
        rest.map(|x| x.1.len() as u32).sum(),
    );
    let nodes = v
        .iter()
        .take(OPS_PER_PART)
        .map(|(n, ks, p)| {
            let first = ks[0];
            let detail = format!("{} · stream {}", k.core_of(first), k.stream_of(first));
            node("op", k.text(*n).to_string(), detail, ks.len(), p)
        })
        .collect();
    (nodes, more)
}

fn part(k: &KernelTable, kind: &str, p: &PartSummary) -> TreeNodeDto {
    let detail = if p.kernels.is_empty() {
        String::new()
    } else {
        format!("{} · stream {}", p.dominant_task_type, p.dominant_stream)
    };
    let mut n = node(kind, kind.into(), detail, p.kernels.len(), &p.perspectives);
    let (children, more) = ops(k, &p.kernels);
    n.children = children;
    n.more = more;
    n
}

/// The tree of step `step`, `None` when the rank has no such step.
pub fn structure_tree(
    rank: u32,
    k: &KernelTable,
    r: &AnomalyResult,
    step: usize,
) -> Option<StructureTreeDto> {
    let s = r.steps.get(step)?;
    let mut root = node(
        "step",
        s.step_id.clone(),
        format!(
            "group {} · main stream {}",
            s.group_id,
            s.main_stream.as_deref().unwrap_or("none")
        ),
        s.kernels.len(),
        &s.perspectives,
    );
    root.children = s
        .segmentation
        .structures
        .iter()
        .map(|st| {
            let mut n = node(
                "structure",
                st.structure_id.clone(),
                st.structure_type.clone(),
                st.kernels.len(),
                &st.perspectives,
            );
            n.children = vec![part(k, "block", &st.block), part(k, "side", &st.side)];
            n
        })
        .collect();
    Some(StructureTreeDto {
        rank,
        step: step as u32,
        method: s.segmentation.method.clone(),
        root,
    })
}
