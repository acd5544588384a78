//! The icicle of live bytes by stack (torch-snapshot.md §7.7): root on top, one row per
//! Python frame level (outermost first), widths proportional to bytes. The layout (offsets,
//! folding of tiny nodes) is computed in the worker; this only places the boxes. Click a box
//! to zoom into it, click the top row to zoom out.

use leptos::prelude::*;

use crate::protocol::SnapTreeNodeDto;
use crate::views::format;

const ROW_PX: f64 = 20.0;
/// Boxes narrower than this percentage of the focused node are not drawn (a zoom shows them),
/// so thin deep chains do not stretch the chart into a column of slivers.
const MIN_PERCENT: f64 = 0.3;

fn color(label: &str) -> String {
    let h = label
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    format!("hsl({}, 55%, 72%)", h % 360)
}

/// True when `node` is `anc` or below it.
fn under(nodes: &[SnapTreeNodeDto], mut node: usize, anc: usize) -> bool {
    loop {
        if node == anc {
            return true;
        }
        if node == 0 {
            return false;
        }
        node = nodes.get(node).map(|n| n.parent as usize).unwrap_or(0);
    }
}

/// True when `node` is drawn with `focus` zoomed to the full width `w0` bytes: below the
/// focus and at least [`MIN_PERCENT`] wide.
fn shown(nodes: &[SnapTreeNodeDto], node: usize, focus: usize, w0: f64) -> bool {
    nodes
        .get(node)
        .is_some_and(|n| n.bytes as f64 / w0 * 100.0 >= MIN_PERCENT)
        && under(nodes, node, focus)
}

/// The icicle of one live set.
#[component]
pub fn Icicle(nodes: Vec<SnapTreeNodeDto>) -> impl IntoView {
    let focus = RwSignal::new(0usize);
    let nodes = StoredValue::new(nodes);
    let boxes = move || {
        let f = focus.get();
        nodes.with_value(|nodes| {
            let Some(top) = nodes.get(f) else {
                return Vec::new();
            };
            let (x0, w0, d0) = (top.offset as f64, (top.bytes as f64).max(1.0), top.depth);
            nodes
                .iter()
                .enumerate()
                .filter(|(i, n)| shown(nodes, *i, f, w0) && n.bytes > 0)
                .map(|(i, n)| {
                    let left = (n.offset as f64 - x0) / w0 * 100.0;
                    let width = n.bytes as f64 / w0 * 100.0;
                    let top_px = (n.depth - d0) as f64 * ROW_PX;
                    let title = format!("{}\n{} ({} bytes) in {} tensors", n.label, format::bytes(n.bytes as f64), n.bytes, n.tensors);
                    let text = if width > 2.5 { format::short_site(&n.label) } else { String::new() };
                    let target = if i == f { n.parent as usize } else { i };
                    view! {
                        <div class="ice" data-testid="snap-ice"
                            style=format!("left:{left:.4}%;width:{width:.4}%;top:{top_px}px;background:{}", color(&n.label))
                            title=title
                            on:click=move |_| focus.set(target)>
                            {text}
                        </div>
                    }
                })
                .collect::<Vec<_>>()
        })
    };
    let height = move || {
        let f = focus.get();
        nodes.with_value(|nodes| {
            let d0 = nodes.get(f).map(|n| n.depth).unwrap_or(0);
            let w0 = nodes
                .get(f)
                .map(|n| (n.bytes as f64).max(1.0))
                .unwrap_or(1.0);
            let max = nodes
                .iter()
                .enumerate()
                .filter(|(i, _)| shown(nodes, *i, f, w0))
                .map(|(_, n)| n.depth)
                .max()
                .unwrap_or(0);
            (max - d0 + 1) as f64 * ROW_PX
        })
    };
    view! {
        <h4>"Live bytes by call stack (icicle: outermost frame on top; click a box to zoom into it, the top box to zoom out; boxes under 0.3 % are shown once zoomed)"</h4>
        <div class="icicle" data-testid="snap-icicle" style=move || format!("height:{}px", height())>
            {boxes}
        </div>
    }
}
