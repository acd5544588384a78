//! The Compare tab's payload: the diff document `proflens diff A B --json` writes
//! (`report::snapshot_diff` / `report::trace_diff`, serialised by the session), laid out as
//! headline figures, delta tables and overlaid curves. Pure: every value is the document's own
//! (copied, never recomputed), so the page shows the export's numbers; this module only picks
//! the fields, their titles and units.

use serde_json::Value;

use crate::protocol::compare::{
    CellDto, ColumnDto, CompareKind, CompareTableDto, CompareViewDto, FactDto, OverlayDto,
    OverlaySeriesDto, UnitDto,
};
use crate::protocol::ProblemsDto;

/// One column of a table: title, field path (`a.service_ms_avg`), unit, delta.
type Col = (&'static str, &'static str, UnitDto, bool);

const SITES: &[Col] = &[
    ("Site", "site", UnitDto::Site, false),
    ("A", "a_bytes", UnitDto::Bytes, false),
    ("B", "b_bytes", UnitDto::Bytes, false),
    ("Δ B − A", "delta_bytes", UnitDto::Bytes, true),
    ("Change", "change", UnitDto::Text, false),
];

const PEAKS: &[Col] = &[
    ("A entry", "a_index", UnitDto::Count, false),
    ("B entry", "b_index", UnitDto::Count, false),
    ("Annotation", "annotation", UnitDto::Text, false),
    ("Matched by", "matched_by", UnitDto::Text, false),
    ("A", "a_bytes", UnitDto::Bytes, false),
    ("B", "b_bytes", UnitDto::Bytes, false),
    ("Δ B − A", "delta_bytes", UnitDto::Bytes, true),
    ("Change", "change", UnitDto::Text, false),
];

const OPS: &[Col] = &[
    ("Name", "name", UnitDto::Text, false),
    ("A count", "a_count", UnitDto::Count, false),
    ("B count", "b_count", UnitDto::Count, false),
    ("Δ count", "delta_count", UnitDto::Count, true),
    ("A time", "a_time_us", UnitDto::Us, false),
    ("B time", "b_time_us", UnitDto::Us, false),
    ("Δ time", "delta_time_us", UnitDto::Us, true),
    ("Change", "change", UnitDto::Text, false),
];

const STEPS: &[Col] = &[
    ("Step", "step_id", UnitDto::Text, false),
    ("B step", "b_step_id", UnitDto::Text, false),
    ("A service", "a_service_ms", UnitDto::Ms, false),
    ("B service", "b_service_ms", UnitDto::Ms, false),
    ("Δ service", "delta_service_ms", UnitDto::Ms, true),
    ("A busy union", "a_device_busy_union_ms", UnitDto::Ms, false),
    ("B busy union", "b_device_busy_union_ms", UnitDto::Ms, false),
    ("Δ busy", "delta_device_busy_union_ms", UnitDto::Ms, true),
    ("A underfeed", "a_underfeed_ms", UnitDto::Ms, false),
    ("B underfeed", "b_underfeed_ms", UnitDto::Ms, false),
    ("Δ underfeed", "delta_underfeed_ms", UnitDto::Ms, true),
    ("A bubbles", "a_bubble_count", UnitDto::Count, false),
    ("B bubbles", "b_bubble_count", UnitDto::Count, false),
    ("Δ bubbles", "delta_bubble_count", UnitDto::Count, true),
    ("A bubble total", "a_bubble_total_ms", UnitDto::Ms, false),
    ("B bubble total", "b_bubble_total_ms", UnitDto::Ms, false),
    ("Δ bubble total", "delta_bubble_total_ms", UnitDto::Ms, true),
];

const LABELS: &[Col] = &[
    ("Label", "label", UnitDto::Text, false),
    ("A windows", "a_windows", UnitDto::Count, false),
    ("B windows", "b_windows", UnitDto::Count, false),
    ("A total", "a_total_ms", UnitDto::Ms, false),
    ("B total", "b_total_ms", UnitDto::Ms, false),
    ("Δ total", "delta_total_ms", UnitDto::Ms, true),
];

const POOLS: &[Col] = &[
    ("Pool", "component", UnitDto::Text, false),
    ("Label", "label", UnitDto::Text, false),
    ("A rows", "a_rows", UnitDto::Count, false),
    ("B rows", "b_rows", UnitDto::Count, false),
    (
        "A peak allocated",
        "a.peak_allocated_mb",
        UnitDto::Mib,
        false,
    ),
    (
        "B peak allocated",
        "b.peak_allocated_mb",
        UnitDto::Mib,
        false,
    ),
    ("Δ peak", "delta_peak_allocated_mb", UnitDto::Mib, true),
    ("A live at peak", "a.live_kb", UnitDto::Kib, false),
    ("B live at peak", "b.live_kb", UnitDto::Kib, false),
    ("Δ live", "delta_live_kb", UnitDto::Kib, true),
    ("A peak op", "a.peak_name", UnitDto::Text, false),
    ("B peak op", "b.peak_name", UnitDto::Text, false),
];

const LIVE: &[Col] = &[
    ("Key", "key", UnitDto::Text, false),
    ("A", "a_kb", UnitDto::Kib, false),
    ("B", "b_kb", UnitDto::Kib, false),
    ("Δ B − A", "delta_kb", UnitDto::Kib, true),
    ("A rows", "a_rows", UnitDto::Count, false),
    ("B rows", "b_rows", UnitDto::Count, false),
    ("Change", "change", UnitDto::Text, false),
];

const RANKS: &[Col] = &[
    ("Rank", "rank", UnitDto::Count, false),
    ("A steps", "a.steps", UnitDto::Count, false),
    ("B steps", "b.steps", UnitDto::Count, false),
    ("A service avg", "a.service_ms_avg", UnitDto::Ms, false),
    ("B service avg", "b.service_ms_avg", UnitDto::Ms, false),
    ("Δ service", "delta_service_ms_avg", UnitDto::Ms, true),
    ("A busy avg", "a.busy_union_ms_avg", UnitDto::Ms, false),
    ("B busy avg", "b.busy_union_ms_avg", UnitDto::Ms, false),
    ("Δ busy", "delta_busy_union_ms_avg", UnitDto::Ms, true),
    (
        "A bubbles/step",
        "a.bubble_count_avg",
        UnitDto::Number,
        false,
    ),
    (
        "B bubbles/step",
        "b.bubble_count_avg",
        UnitDto::Number,
        false,
    ),
    ("Δ bubbles", "delta_bubble_count_avg", UnitDto::Number, true),
    (
        "A underfeed ratio",
        "a.underfeed_ratio_avg",
        UnitDto::Number,
        false,
    ),
    (
        "B underfeed ratio",
        "b.underfeed_ratio_avg",
        UnitDto::Number,
        false,
    ),
    ("A comm", "a.comm_total_ms", UnitDto::Ms, false),
    ("B comm", "b.comm_total_ms", UnitDto::Ms, false),
    (
        "A peak allocated",
        "a.peak_allocated_mb",
        UnitDto::Mib,
        false,
    ),
    (
        "B peak allocated",
        "b.peak_allocated_mb",
        UnitDto::Mib,
        false,
    ),
    ("Δ peak", "delta_peak_allocated_mb", UnitDto::Mib, true),
];

/// The value at `path` (`a.live_kb`: members joined by dots) of `v`.
fn at<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| v.get(k))
}

/// The cell of one document value: integers stay integers (bytes, counts), other numbers
/// are the document's f64.
pub fn cell(v: Option<&Value>) -> CellDto {
    match v {
        None | Some(Value::Null) => CellDto::Null,
        Some(Value::String(s)) => CellDto::Text(s.clone()),
        Some(Value::Bool(b)) => CellDto::Text(if *b { "yes" } else { "no" }.into()),
        Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => CellDto::Int(i),
            (None, Some(f)) => CellDto::Num(f),
            (None, None) => CellDto::Null,
        },
        Some(other) => CellDto::Text(other.to_string()),
    }
}

fn table(id: String, title: String, cols: &[Col], rows: Option<&Value>) -> CompareTableDto {
    let rows = rows
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    CompareTableDto {
        id,
        title,
        columns: cols
            .iter()
            .map(|&(title, field, unit, delta)| ColumnDto {
                title: title.into(),
                field: field.into(),
                unit,
                delta,
            })
            .collect(),
        rows: rows
            .iter()
            .map(|r| cols.iter().map(|c| cell(at(r, c.1))).collect())
            .collect(),
    }
}

fn fact(label: String, unit: UnitDto, pair: Option<&Value>) -> FactDto {
    let f = |k: &str| cell(pair.and_then(|p| p.get(k)));
    FactDto {
        label,
        unit,
        a: f("a_bytes"),
        b: f("b_bytes"),
        delta: f("delta_bytes"),
    }
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "–".into(),
        Some(x) => x.to_string(),
    }
}

fn overlay(device: u32, o: &Value) -> OverlayDto {
    let series = |side: &str| -> Vec<OverlaySeriesDto> {
        o.get(side)
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|s| {
                let col = |k: &str| -> Vec<Option<i64>> {
                    s.get(k)
                        .and_then(Value::as_array)
                        .map_or(&[][..], Vec::as_slice)
                        .iter()
                        .map(Value::as_i64)
                        .collect()
                };
                OverlaySeriesDto {
                    curve: text(s.get("curve")),
                    min: col("min"),
                    max: col("max"),
                }
            })
            .collect()
    };
    OverlayDto {
        device,
        axis: text(o.get("axis")),
        align: o.get("align").and_then(Value::as_str).map(str::to_string),
        x0: o.get("x0").and_then(Value::as_f64).unwrap_or(0.0),
        x1: o.get("x1").and_then(Value::as_f64).unwrap_or(0.0),
        a: series("a"),
        b: series("b"),
    }
}

fn snapshot(doc: &Value, v: &mut CompareViewDto) {
    for side in ["a", "b"] {
        let s = doc.get(side);
        let bytes = s
            .and_then(|s| s.get("bytes"))
            .and_then(Value::as_i64)
            .map_or("–".into(), crate::base::format::bytes_i);
        v.sides.push(format!(
            "{}: {} ({bytes}), peaks on the {} curve",
            side.to_uppercase(),
            text(s.and_then(|s| s.get("file"))),
            text(doc.get("curve")),
        ));
    }
    let devices = doc
        .get("devices")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for d in devices {
        let dev = d.get("device").and_then(Value::as_u64).unwrap_or(0) as u32;
        let name = match d.get("b_device").and_then(Value::as_u64) {
            Some(b) => format!("device {dev} ↔ {b}"),
            None => format!("device {dev}"),
        };
        v.facts.push(fact(
            format!("{name}: global peak"),
            UnitDto::Bytes,
            d.get("peak"),
        ));
        v.facts
            .push(fact(format!("{name}: end"), UnitDto::Bytes, d.get("end")));
        for (key, title, cols) in [
            (
                "sites_at_peak",
                "live bytes per site at each side's global peak",
                SITES,
            ),
            ("sites_at_end", "live bytes per site at the end", SITES),
            (
                "matched_peaks",
                "peaks matched by annotation, then order",
                PEAKS,
            ),
        ] {
            v.tables.push(table(
                format!("dev{dev}.{key}"),
                format!("{name}: {title}"),
                cols,
                d.get(key),
            ));
        }
        if let Some(o) = d.get("overlay").filter(|o| !o.is_null()) {
            v.overlays.push(overlay(dev, o));
        }
        let (in_a, in_b) = (
            d.get("in_a").and_then(Value::as_bool).unwrap_or(false),
            d.get("in_b").and_then(Value::as_bool).unwrap_or(false),
        );
        if !in_a || !in_b {
            v.notes.push(format!(
                "{name} has a trace on side {} only",
                if in_a { "A" } else { "B" }
            ));
        }
    }
}

fn trace(doc: &Value, v: &mut CompareViewDto) {
    for side in ["a", "b"] {
        let s = doc.get(side);
        let ranks = s
            .and_then(|s| s.get("ranks"))
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        v.sides.push(format!(
            "{}: {} ({}, {ranks} rank(s), compared rank {})",
            side.to_uppercase(),
            text(s.and_then(|s| s.get("path"))),
            text(s.and_then(|s| s.get("capture"))),
            text(s.and_then(|s| s.get("rank"))),
        ));
    }
    let os = doc.get("ops_steps");
    let steps = |k: &str| -> String {
        os.and_then(|o| o.get(k))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|x| text(Some(x)))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "whole capture".into())
    };
    let rule = match doc.get("ops_rule").and_then(Value::as_str) {
        Some("hta_trace_diff") => "HTA TraceDiff rule",
        _ => "device kernels per name",
    };
    v.tables.push(table(
        "ops".into(),
        format!(
            "Ops per name ({rule}; A step {}, B step {})",
            steps("a"),
            steps("b")
        ),
        OPS,
        doc.get("ops"),
    ));
    v.tables.push(table(
        "steps".into(),
        format!(
            "Steps side by side (matched by {})",
            text(doc.get("steps_matched_by"))
        ),
        STEPS,
        doc.get("steps"),
    ));
    v.tables.push(table(
        "bubble_labels".into(),
        "Bubble labels per side".into(),
        LABELS,
        doc.get("bubble_labels"),
    ));
    let pools = doc
        .get("memory")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    if !pools.is_empty() {
        v.tables.push(table(
            "memory".into(),
            "Memory events per allocator pool".into(),
            POOLS,
            doc.get("memory"),
        ));
    }
    for p in pools {
        let c = text(p.get("component"));
        for (key, by) in [
            ("live_by_user_frame", "user frame"),
            ("live_by_name", "op name"),
        ] {
            v.tables.push(table(
                format!("memory.{c}.{key}"),
                format!("{c}: live at the peak by {by}"),
                LIVE,
                p.get(key),
            ));
        }
    }
    let ranks = doc
        .get("ranks")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    if ranks > 1 {
        v.tables.push(table(
            "ranks".into(),
            "Ranks side by side".into(),
            RANKS,
            doc.get("ranks"),
        ));
        let most: Vec<String> = doc
            .get("ranks_changed_most")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|r| r.as_i64().map_or("unknown".into(), |x| x.to_string()))
            .collect();
        if !most.is_empty() {
            v.notes.push(format!(
                "Ranks that changed most (|Δ mean step service|): {}",
                most.join(", ")
            ));
        }
    }
    for n in doc
        .get("notes")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
    {
        v.notes.push(text(Some(n)));
    }
}

/// The Compare tab's payload of diff document `doc` (its `kind` decides the layout).
pub fn view(doc: &Value, a_name: &str, b_name: &str, b_problems: ProblemsDto) -> CompareViewDto {
    let kind = match doc.get("kind").and_then(Value::as_str) {
        Some("snapshot") => CompareKind::Snapshot,
        _ => CompareKind::Trace,
    };
    let mut v = CompareViewDto {
        kind,
        a_name: a_name.into(),
        b_name: b_name.into(),
        sides: Vec::new(),
        facts: Vec::new(),
        tables: Vec::new(),
        overlays: Vec::new(),
        notes: Vec::new(),
        b_problems,
        options: Default::default(),
        choices: Default::default(),
    };
    match kind {
        CompareKind::Snapshot => snapshot(doc, &mut v),
        CompareKind::Trace => trace(doc, &mut v),
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_keep_integers_and_floats() {
        let v: Value = serde_json::json!({"a": 5, "b": -2.5, "c": null, "d": "x", "e": {"f": 7}});
        assert_eq!(cell(at(&v, "a")), CellDto::Int(5));
        assert_eq!(cell(at(&v, "b")), CellDto::Num(-2.5));
        assert_eq!(cell(at(&v, "c")), CellDto::Null);
        assert_eq!(cell(at(&v, "zz")), CellDto::Null);
        assert_eq!(cell(at(&v, "d")), CellDto::Text("x".into()));
        assert_eq!(cell(at(&v, "e.f")), CellDto::Int(7));
    }

    #[test]
    fn a_snapshot_document_becomes_facts_tables_and_overlays() {
        let doc = serde_json::json!({
            "kind": "snapshot", "a": {"file": "a.pickle", "bytes": 10}, "b": {"file": "b.pickle", "bytes": 12},
            "curve": "active",
            "devices": [{"device": 0, "in_a": true, "in_b": false,
                "peak": {"a_bytes": 100, "b_bytes": 0, "delta_bytes": -100},
                "end": {"a_bytes": 1, "b_bytes": 0, "delta_bytes": -1},
                "sites_at_peak": [{"site": "f @ m.py:1", "a_bytes": 100, "b_bytes": 0, "delta_bytes": -100, "change": "gone"}],
                "sites_at_end": [], "matched_peaks": [],
                "overlay": {"axis": "index", "x0": 0.0, "x1": 4.0, "a": [{"curve": "allocated", "min": [1, null], "max": [2, null]}], "b": []}}]
        });
        let v = view(&doc, "a.pickle", "b.pickle", ProblemsDto::default());
        assert_eq!(v.kind, CompareKind::Snapshot);
        assert_eq!(v.facts[0].delta, CellDto::Int(-100));
        assert_eq!(v.tables.len(), 3);
        assert_eq!(v.tables[0].id, "dev0.sites_at_peak");
        assert_eq!(v.tables[0].rows[0][4], CellDto::Text("gone".into()));
        assert_eq!(v.overlays[0].a[0].max, vec![Some(2), None]);
        assert_eq!(v.notes, vec!["device 0 has a trace on side A only"]);
    }
}
