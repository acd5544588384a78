//! The model-architecture report `model_architecture_report_<dir>.md`
//! (anomaly.md §11.8–11.10): the ten required sections in order, pipe tables,
//! tree glyphs, box-drawing summary, units on every number. Formatting only:
//! facts come from [`Architecture`].

use std::collections::BTreeMap;
use std::fmt::Write;

use super::anomaly_json::RankMeta;
use crate::analysis::anomaly::AnomalyResult;
use crate::analysis::architecture::{config_tokens, role_of, Architecture, Layer, LayerType};
use crate::analysis::intervals::{merge, percentile, total_len, Interval};
use crate::base::units::ns_to_ms;
use crate::model::kernels::KernelTable;
use crate::model::side_tables::CommOp;
use crate::report::float::ns_to_us_text;

mod summary;

use summary::write_summary;

fn wall(k: &KernelTable, l: &Layer) -> i64 {
    let s = l
        .kernels
        .clone()
        .map(|i| k.start_ns()[i])
        .min()
        .unwrap_or(0);
    let e = l.kernels.clone().map(|i| k.end_ns(i)).max().unwrap_or(s);
    e - s
}

/// Collapses consecutive identical names to `Name×k`.
fn collapse<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for n in names {
        match out.last_mut() {
            Some((m, c)) if m == n => *c += 1,
            _ => out.push((n.to_string(), 1)),
        }
    }
    out.into_iter()
        .map(|(n, c)| {
            if c > 1 {
                format!("`{n}`×{c}")
            } else {
                format!("`{n}`")
            }
        })
        .collect()
}

/// Renders the report. `base` is `<profiling_dir_name>`.
pub fn render(
    k: &KernelTable,
    a: &Architecture,
    r: &AnomalyResult,
    meta: &RankMeta,
    comm_ops: &[CommOp],
    base: &str,
) -> String {
    let mut o = String::new();
    let no_fia = a.fia.is_empty();
    let _ = writeln!(o, "# Model architecture report: `{base}`\n");
    let _ = writeln!(o, "Rank {} (`{}`). Everything below is counted from the profile; nothing is assumed about the model family.\n", meta.rank_id.map(|x| x.to_string()).unwrap_or_else(|| "?".into()), meta.rank_dir);
    // 1. Configuration Context
    let c = config_tokens(base);
    let _ = writeln!(o, "## 1. Configuration Context\n");
    let mut par = Vec::new();
    if let Some(v) = c.dp {
        par.push(format!("DP{v}"));
    }
    if let Some(v) = c.tp {
        par.push(format!("TP{v}"));
    }
    if let Some(v) = c.pp {
        par.push(format!("PP{v}"));
    }
    if let Some(e) = c.ep {
        par.push(e.map(|v| format!("EP{v}")).unwrap_or_else(|| "EP".into()));
    }
    let span = r.global.capture.len_ns();
    let streams = a.streams.len();
    let _ = writeln!(o, "| Item | Value |\n|---|---|");
    let _ = writeln!(
        o,
        "| Parallelism | {} |",
        if par.is_empty() {
            "not stated (no distributed_args read, no dp/tp tokens in the folder name)".into()
        } else {
            par.join(" × ")
        }
    );
    let _ = writeln!(
        o,
        "| Sequence lengths | {} |",
        c.seq_k
            .map(|(p, d)| format!("prefill {p}k, decode {d}k tokens"))
            .unwrap_or_else(|| "not stated".into())
    );
    let _ = writeln!(
        o,
        "| Batch size | {} |",
        c.bs.map(|b| b.to_string())
            .unwrap_or_else(|| "not stated".into())
    );
    let _ = writeln!(
        o,
        "| Profiling scope | {} |",
        if r.step_detection_method() == "pseudo" {
            "single pseudo-step".to_string()
        } else {
            format!(
                "{} step(s) by `{}`",
                r.steps.len(),
                r.step_detection_method()
            )
        }
    );
    let _ = writeln!(
        o,
        "| Capture span | {:.6} s, {} device kernels on {} stream(s) |",
        span as f64 / 1e9,
        k.len(),
        streams
    );
    let prefill = a
        .fia
        .iter()
        .filter(|f| f.class == crate::analysis::architecture::FiaClass::Prefill)
        .count();
    let decode = a
        .fia
        .iter()
        .filter(|f| f.class == crate::analysis::architecture::FiaClass::Decode)
        .count();
    let layers: Vec<&Layer> = a
        .layers
        .iter()
        .filter(|l| l.ty != LayerType::Prologue)
        .collect();
    let _ = writeln!(
        o,
        "| Model type | {} |\n",
        if no_fia {
            format!(
                "no attention-layer evidence (no FIA); {} repeated unit(s) found by `{}`",
                layers.len(),
                a.layer_source
            )
        } else {
            format!("attention model with ~{} layers per pass, {} pass(es), {prefill} prefill / {decode} decode FIA", layers.len() / a.passes.len().max(1), a.passes.len())
        }
    );
    // 2. Model Architecture Determination
    let _ = writeln!(o, "## 2. Model Architecture Determination\n");
    if no_fia {
        let _ = writeln!(o, "**no FusedInferAttentionScore kernels: layer boundaries inferred from repetition**{}.\n", if a.layer_source == "none" { " (no repetition with score ≥ 0.5 found either: no layer boundaries)" } else { "" });
    }
    let _ = writeln!(o, "| Evidence | Value | Interpretation |\n|---|---|---|");
    let _ = writeln!(
        o,
        "| Total FIA | {} | {} |",
        a.fia.len(),
        if no_fia {
            "no FIA-delimited layers"
        } else {
            "one FIA per attention layer"
        }
    );
    let _ = writeln!(
        o,
        "| Prefill vs decode FIA | {prefill} / {decode} | FIA > 10 ms prefill, < 1 ms decode |"
    );
    let _ = writeln!(
        o,
        "| Layers per pass | {} | source `{}`{} |",
        layers.len() / a.passes.len().max(1),
        a.layer_source,
        a.anchor
            .as_ref()
            .map(|x| format!(", anchor `{x}`"))
            .unwrap_or_default()
    );
    let _ = writeln!(
        o,
        "| Passes per capture | {} | {} |",
        a.passes.len(),
        if a.passes.len() <= 1 {
            "single pass: no cross-pass validation"
        } else {
            "pass = prefill run + decode run"
        }
    );
    let transitions: Vec<String> = a
        .passes
        .iter()
        .skip(1)
        .map(|p| format!("FIA #{}", p.fia.start))
        .collect();
    let _ = writeln!(
        o,
        "| Phase transition points | {} | |\n",
        if transitions.is_empty() {
            "none".into()
        } else {
            transitions.join(", ")
        }
    );
    // 3. Forward Pass Boundaries
    let _ = writeln!(o, "## 3. Forward Pass Boundaries\n");
    let _ = writeln!(o, "| Pass | FIA index range | Time span (µs) | From capture start (s) | Wall (ms) | Avg prefill FIA (ms) | Kernels |\n|---:|---|---|---:|---:|---:|---:|");
    let mut walls = Vec::new();
    for (pi, p) in a.passes.iter().enumerate() {
        if p.kernels.is_empty() {
            continue;
        }
        let s = p
            .kernels
            .clone()
            .map(|i| k.start_ns()[i])
            .min()
            .unwrap_or(0);
        let e = p.kernels.clone().map(|i| k.end_ns(i)).max().unwrap_or(s);
        walls.push(ns_to_ms(e - s));
        let pf: Vec<f64> = a.fia[p.fia.clone()]
            .iter()
            .filter(|f| f.class == crate::analysis::architecture::FiaClass::Prefill)
            .map(|f| ns_to_ms(k.dur_ns()[f.kernel]))
            .collect();
        let _ = writeln!(
            o,
            "| {pi} | {} | {}–{} | {:.6} | {:.3} | {} | {} |",
            if p.fia.is_empty() {
                "—".into()
            } else {
                format!("#{}–#{}", p.fia.start, p.fia.end - 1)
            },
            ns_to_us_text(s),
            ns_to_us_text(e),
            (s - r.global.capture.start_ns) as f64 / 1e9,
            ns_to_ms(e - s),
            if pf.is_empty() {
                "—".into()
            } else {
                format!("{:.3}", pf.iter().sum::<f64>() / pf.len() as f64)
            },
            p.kernels.len()
        );
    }
    if walls.len() > 1 {
        let mean = walls.iter().sum::<f64>() / walls.len() as f64;
        let sd =
            (walls.iter().map(|w| (w - mean).powi(2)).sum::<f64>() / walls.len() as f64).sqrt();
        let _ = writeln!(o, "\nCross-pass wall: min {:.3} ms, max {:.3} ms, CV {:.1}% (possible causes: KV-cache growth, memory pressure).", walls.iter().cloned().fold(f64::MAX, f64::min), walls.iter().cloned().fold(0.0, f64::max), sd / mean * 100.0);
    } else {
        let _ = writeln!(o, "\nSingle pass: cross-pass variation unavailable.");
    }
    // 4. Layer Classification
    let _ = writeln!(o, "\n## 4. Layer Classification\n");
    let mut by_type: BTreeMap<(LayerType, &str), Vec<usize>> = BTreeMap::new();
    for (i, l) in a.layers.iter().enumerate() {
        by_type.entry((l.ty, l.phase)).or_default().push(i);
    }
    let _ = writeln!(
        o,
        "| Layer Type | Layer Range | Count | Characteristics |\n|---|---|---:|---|"
    );
    for ((ty, phase), idx) in &by_type {
        let walls: Vec<f64> = idx
            .iter()
            .map(|&i| ns_to_ms(wall(k, &a.layers[i])))
            .collect();
        let kern: Vec<f64> = idx
            .iter()
            .map(|&i| a.layers[i].kernels.len() as f64)
            .collect();
        let samp = idx.iter().any(|&i| a.layers[i].sampling);
        let _ = writeln!(
            o,
            "| {}{} | {}–{} | {} | median wall {:.3} ms, median {} kernels{} |",
            ty.as_str(),
            if *phase == "-" {
                String::new()
            } else {
                format!(" ({phase})")
            },
            idx[0],
            idx[idx.len() - 1],
            idx.len(),
            percentile(&walls, 0.5),
            percentile(&kern, 0.5),
            if samp {
                ", **includes decode/sampling logic**"
            } else {
                ""
            }
        );
    }
    if by_type.is_empty() {
        let _ = writeln!(
            o,
            "| (none) | — | 0 | no layer boundaries could be established |"
        );
    }
    // 5. Cross-Verification
    let _ = writeln!(o, "\n## 5. Cross-Verification Table\n");
    for (pi, row) in a.cross_verification.iter().enumerate() {
        let nl = a
            .layers
            .iter()
            .filter(|l| l.pass == pi && l.ty != LayerType::Prologue)
            .count();
        let _ = writeln!(o, "Pass {pi} ({nl} layers):\n\n| Op | Per Pass Count | Layers containing | Interpretation |\n|---|---:|---:|---|");
        for (op, raw, cont) in row {
            let interp = match *op {
                "FusedInferAttentionScore" if !no_fia => {
                    if *cont == nl || *raw == nl {
                        "= layer count ✓".to_string()
                    } else {
                        format!("**mismatch**: expected {nl}")
                    }
                }
                "FusedInferAttentionScore" => "absent: layers inferred without FIA".into(),
                "split_qkv_rmsnorm_rope" | "ReshapeAndCache" => "informational".into(),
                _ if *raw == 0 => "absent".into(),
                _ => "counted".into(),
            };
            let _ = writeln!(o, "| `{op}` | {raw} | {cont} | {interp} |");
        }
        let _ = writeln!(o);
    }
    // 6. Per-Layer Sub-Structure
    let _ = writeln!(o, "## 6. Per-Layer Sub-Structure\n");
    let main = r
        .steps
        .first()
        .and_then(|s| s.main_stream.clone())
        .unwrap_or_default();
    for ((ty, phase), idx) in &by_type {
        let mut ws: Vec<(i64, usize)> = idx.iter().map(|&i| (wall(k, &a.layers[i]), i)).collect();
        crate::base::sort::sort(&mut ws);
        let (lw, li) = ws[ws.len() / 2];
        let l = &a.layers[li];
        let _ = writeln!(
            o,
            "### {}{} (median layer #{li}, {:.3} ms, {} kernels)\n",
            ty.as_str(),
            if *phase == "-" {
                String::new()
            } else {
                format!(" {phase}")
            },
            ns_to_ms(lw),
            l.kernels.len()
        );
        let mut groups: Vec<(&'static str, Vec<usize>)> = Vec::new();
        for i in l.kernels.clone() {
            let role = role_of(k.name_of(i));
            match groups.iter_mut().find(|g| g.0 == role) {
                Some(g) => g.1.push(i),
                None => groups.push((role, vec![i])),
            }
        }
        let _ = writeln!(o, "```\n{} ({:.3} ms)", ty.as_str(), ns_to_ms(lw));
        for (gi, (role, ks)) in groups.iter().enumerate() {
            let glyph = if gi + 1 == groups.len() {
                "└─"
            } else {
                "├─"
            };
            let mut seq = collapse(ks.iter().map(|&i| k.name_of(i)));
            seq.truncate(8);
            let comp = total_len(&merge(
                ks.iter()
                    .map(|&i| Interval::new(k.start_ns()[i], k.end_ns(i)))
                    .collect(),
            ));
            let streams: std::collections::BTreeSet<&str> = ks
                .iter()
                .map(|&i| k.stream_of(i))
                .filter(|s| *s != main)
                .collect();
            let _ = writeln!(
                o,
                "{glyph} {role}: {} ({:.3} ms{})",
                seq.join(" → ").replace('`', ""),
                ns_to_ms(comp),
                if streams.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", stream {}",
                        streams.into_iter().collect::<Vec<_>>().join("/")
                    )
                }
            );
        }
        let _ = writeln!(
            o,
            "```\n\n| Component | Wall time | Share of layer |\n|---|---:|---:|"
        );
        for (role, ks) in &groups {
            let comp = total_len(&merge(
                ks.iter()
                    .map(|&i| Interval::new(k.start_ns()[i], k.end_ns(i)))
                    .collect(),
            ));
            let _ = writeln!(
                o,
                "| {role} | {:.3} ms | {:.1}% |",
                ns_to_ms(comp),
                if lw > 0 {
                    comp as f64 * 100.0 / lw as f64
                } else {
                    0.0
                }
            );
        }
        let _ = writeln!(
            o,
            "\nShares can sum to more than 100% because streams overlap.\n"
        );
    }
    if by_type.is_empty() {
        let _ = writeln!(
            o,
            "No layer could be delimited; no per-layer sub-structure.\n"
        );
    }
    // 7. Decode
    let _ = writeln!(o, "## 7. Decode Phase Analysis\n");
    if decode == 0 {
        let _ = writeln!(o, "No decode FIA (< 1 ms) in this capture: the decode section is omitted (capture scope limitation).\n");
    } else {
        let d: Vec<f64> = a
            .fia
            .iter()
            .filter(|f| f.class == crate::analysis::architecture::FiaClass::Decode)
            .map(|f| ns_to_ms(k.dur_ns()[f.kernel]))
            .collect();
        let _ = writeln!(o, "{decode} decode FIA, median {:.3} ms; decode is latency-bound while prefill is compute/bandwidth-bound.\n", percentile(&d, 0.5));
    }
    // 8. Communication
    let _ = writeln!(o, "## 8. Communication Pipeline Structure\n");
    let _ = writeln!(o, "| Stream | Purpose | Kernels | Σ dur (ms) | Union (ms) | Overlaps with |\n|---|---|---:|---:|---:|---|");
    for s in &a.streams {
        let ov: Vec<String> = s
            .overlaps_with
            .iter()
            .map(|(o, r)| format!("`{o}` ({:.0}%)", r * 100.0))
            .collect();
        let _ = writeln!(
            o,
            "| `{}` | {} | {} | {:.3} | {:.3} | {} |",
            s.stream,
            s.purpose,
            s.kernels,
            ns_to_ms(s.kernel_sum_ns),
            ns_to_ms(s.union_ns),
            if ov.is_empty() {
                "—".into()
            } else {
                ov.join(", ")
            }
        );
    }
    let _ = writeln!(o, "\n```");
    for c in &a.comm_overlaps {
        let _ = writeln!(o, "compute: [stream {}]\ncomm:    [stream {} {:.3} ms overlapped]\n         ↕ overlaps with ↕ ({:.0}% of its union, {:.0}% of Σ dur){}", c.compute_stream, c.comm_stream, ns_to_ms(c.overlap_ns), c.ratio * 100.0, c.ratio_sum * 100.0, if c.ratio > 0.9 { ": well hidden" } else { "" });
    }
    if a.comm_overlaps.is_empty() {
        let _ = writeln!(o, "(no communication stream)");
    }
    let _ = writeln!(o, "```\n");
    if let Some(h) = a.comm_hidden_fraction {
        let _ = writeln!(
            o,
            "Fraction of communication hidden behind compute: **{:.1}%**.\n",
            h * 100.0
        );
    }
    if comm_ops.is_empty() {
        let _ = writeln!(o, "No communication.json: bandwidth statistics omitted.\n");
    } else {
        let _ = writeln!(o, "| Op | Elapse (ms) | Wait ratio | Transit size (MB) | Bandwidth (GB/s) |\n|---|---:|---:|---:|---|");
        for c in comm_ops {
            let bw: Vec<String> = c
                .bandwidth_gbps
                .iter()
                .map(|(t, b)| format!("{t} {b:.2}"))
                .collect();
            let _ = writeln!(
                o,
                "| `{}` | {:.3} | {:.4} | {:.3} | {} |",
                c.collective_name,
                c.elapse_ms,
                c.wait_ratio,
                c.message_size_bytes / 1_048_576.0,
                bw.join(", ")
            );
        }
        let _ = writeln!(o);
    }
    // 9. Variation
    let _ = writeln!(o, "## 9. Layer-to-Layer Variation\n");
    let cols: Vec<(&(LayerType, &str), &Vec<usize>)> = by_type.iter().collect();
    let _ = write!(o, "| Metric |");
    for ((ty, ph), idx) in &cols {
        let _ = write!(
            o,
            " {}{} ({}–{}) |",
            ty.as_str(),
            if *ph == "-" {
                String::new()
            } else {
                format!(" {ph}")
            },
            idx[0],
            idx[idx.len() - 1]
        );
    }
    let _ = writeln!(o, "\n|---|{}", "---:|".repeat(cols.len()));
    for (label, f) in [
        ("Wall time (ms, min–max)", 0u8),
        ("Kernels per layer (median)", 1u8),
    ] {
        let _ = write!(o, "| {label} |");
        for (_, idx) in &cols {
            let w: Vec<f64> = idx
                .iter()
                .map(|&i| {
                    if f == 0 {
                        ns_to_ms(wall(k, &a.layers[i]))
                    } else {
                        a.layers[i].kernels.len() as f64
                    }
                })
                .collect();
            if f == 0 {
                let _ = write!(
                    o,
                    " {:.3}–{:.3} |",
                    w.iter().cloned().fold(f64::MAX, f64::min),
                    w.iter().cloned().fold(0.0, f64::max)
                );
            } else {
                let _ = write!(o, " {} |", percentile(&w, 0.5));
            }
        }
        let _ = writeln!(o);
    }
    // 10. Summary
    write_summary(&mut o, k, a, &layers, &par, &by_type, decode);
    o
}
