//! Section 10 of the architecture report: the box-drawing summary and the per-pass
//! execution timeline.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::wall;
use crate::analysis::architecture::{Architecture, Layer, LayerType};
use crate::base::units::ns_to_ms;
use crate::model::kernels::KernelTable;

/// Writes section 10: `layers` are the non-prologue layers, `par` the parallelism tokens,
/// `by_type` the layer indices by (type, phase), `decode` the decode FIA count.
pub(super) fn write_summary(
    o: &mut String,
    k: &KernelTable,
    a: &Architecture,
    layers: &[&Layer],
    par: &[String],
    by_type: &BTreeMap<(LayerType, &str), Vec<usize>>,
    decode: usize,
) {
    let _ = writeln!(o, "\n## 10. Model Architecture Summary\n\n```");
    let title = if a.fia.is_empty() {
        format!("Model without FIA: {} repeated unit(s)", layers.len())
    } else {
        format!("Attention model: {} layer(s)", layers.len())
    };
    let width = 56usize.max(title.chars().count() + 4);
    let line = |s: &str| format!("│ {s:<w$} │", w = width - 4);
    let _ = writeln!(o, "┌{}┐", "─".repeat(width - 2));
    let _ = writeln!(o, "{}", line(&title));
    let _ = writeln!(
        o,
        "{}",
        line(&format!(
            "Parallelism: {}",
            if par.is_empty() {
                "not stated".into()
            } else {
                par.join(" × ")
            }
        ))
    );
    let _ = writeln!(o, "├{}┤", "─".repeat(width - 2));
    for ((ty, ph), idx) in by_type {
        let _ = writeln!(
            o,
            "{}",
            line(&format!(
                "{}{} × {}",
                ty.as_str(),
                if *ph == "-" {
                    String::new()
                } else {
                    format!(" {ph}")
                },
                idx.len()
            ))
        );
    }
    let _ = writeln!(
        o,
        "{}",
        line(&format!(
            "Decode: {}",
            if decode == 0 {
                "none in capture".to_string()
            } else {
                format!("{decode} FIA")
            }
        ))
    );
    let _ = writeln!(o, "└{}┘", "─".repeat(width - 2));
    let _ = writeln!(o, "```\n\nPer-pass execution timeline:\n\n```");
    for (pi, p) in a.passes.iter().enumerate() {
        let ls: Vec<&Layer> = a.layers.iter().filter(|l| l.pass == pi).collect();
        let s0 = p
            .kernels
            .clone()
            .map(|i| k.start_ns()[i])
            .min()
            .unwrap_or(0);
        let mut row = format!("pass {pi} |");
        for l in ls.iter().take(12) {
            let _ = write!(
                row,
                "[{} {:.1}ms]",
                match l.ty {
                    LayerType::Prologue => "pro",
                    LayerType::Dense => "D",
                    LayerType::MoeDfc => "DFC",
                    LayerType::MoeGmm => "GMM",
                    LayerType::MoeOther => "MoE",
                    LayerType::Repeated => "U",
                },
                ns_to_ms(wall(k, l))
            );
        }
        if ls.len() > 12 {
            let _ = write!(row, "… (+{} layers)", ls.len() - 12);
        }
        let e = p.kernels.clone().map(|i| k.end_ns(i)).max().unwrap_or(s0);
        let _ = writeln!(o, "{row}| 0 ms … {:.3} ms", ns_to_ms(e - s0));
    }
    let _ = writeln!(o, "```");
}
