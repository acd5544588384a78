//! Markdown peak report `MEM_PEAK_ANALYSIS_<name>.md` (torch-snapshot.md §7.9).
//!
//! Rendered from the JSON document ([`SnapshotJson`]) so both outputs carry the
//! same numbers: formatting only. Sizes in binary units with exact bytes.

use std::fmt::Write;

use super::snapshot_json::{ContributorJson, DeviceJson, PointJson, SnapshotJson};

/// Report file name for a snapshot file name (§7.9).
pub fn file_name(snapshot_file: &str) -> String {
    let base = snapshot_file
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or(snapshot_file);
    let stem = base
        .strip_suffix(".pickle")
        .or_else(|| base.strip_suffix(".pkl"))
        .unwrap_or(base);
    format!("MEM_PEAK_ANALYSIS_{stem}.md")
}

/// `1.50 GiB` (binary units) and `1,234,567`: the shared rules of [`crate::base::format`].
pub use crate::base::format::{bytes_i as human, thousands};

/// `1.50 GiB (1,610,612,736 bytes)`: [`crate::base::format::bytes_exact`].
pub use crate::base::format::bytes_exact as exact;

/// Pickle-derived text (frame names, paths, annotations, problem messages) made inert for
/// Markdown, in running text or a table cell: Markdown punctuation is backslash-escaped, `<`, `>`
/// and `&` become entities (no raw HTML), line breaks and other control characters become
/// spaces. `<img onerror=…>` and `[x](javascript:…)` come out as visible text.
pub fn md_text(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '(' | ')' | '!' | '|' | '~' | '#' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A code span holding `s` verbatim (Markdown renders nothing inside one): the fence is one
/// backtick longer than the longest run in `s`; line breaks become spaces; `|` is escaped so a
/// table cell is not split (GFM).
pub fn md_code(s: &str) -> String {
    let body: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in body.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if body.starts_with('`') || body.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{body}{pad}{fence}")
}

/// `[text](url)` when `url` has a scheme the report links with (`vscode`, `cursor`, `file`,
/// `https`, `http`) and no character that could end the destination; the text alone otherwise.
pub fn md_link(text: &str, url: Option<&str>) -> String {
    let safe = |u: &str| {
        ["vscode://", "cursor://", "file://", "https://", "http://"]
            .iter()
            .any(|p| u.starts_with(p))
            && !u
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || "()<>\"`\\".contains(c))
    };
    match url {
        Some(u) if safe(u) => format!("[{}]({u})", md_text(text)),
        _ => md_text(text),
    }
}

fn cell(s: &str) -> String {
    md_text(s)
}

fn secs(t: Option<i64>, first: Option<i64>) -> String {
    match (t, first) {
        (Some(t), Some(f)) => format!("{:.3} s", (t - f) as f64 / 1e6),
        _ => "—".into(),
    }
}

fn site_md(c: &ContributorJson) -> String {
    md_link(&c.site, c.link.as_deref())
}

/// Renders the whole report.
pub fn render(j: &SnapshotJson) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Memory peak analysis: {}\n", md_code(&j.file));
    let f = &j.format;
    let _ = writeln!(o, "- File: {}, {}", md_code(&j.file), exact(j.bytes as i64));
    let mut feats = vec![
        match f.encoding {
            "json" => "JSON (not a pickle)".to_string(),
            _ => format!("pickle protocol {}", f.protocol),
        },
        f.top_level.to_string(),
    ];
    for (on, name) in [
        (f.has_time_us, "time_us"),
        (f.has_history, "legacy history blocks"),
        (f.has_annotations, "external_annotations"),
        (f.has_compile_context, "compile_context"),
        (f.has_user_metadata, "user_metadata"),
        (f.has_fx_frames, "FX frames"),
    ] {
        if on {
            feats.push(name.into());
        }
    }
    let _ = writeln!(o, "- Format: {}", feats.join(", "));
    let _ = writeln!(
        o,
        "- End state: {} segments on device(s) {:?}, reserved {}, allocated {}",
        j.segments.count,
        j.segments.devices,
        exact(j.segments.total_size_sum as i64),
        exact(j.segments.allocated_size_sum as i64)
    );
    if let Some(s) = &j.allocator_settings {
        let pick: Vec<String> = s
            .iter()
            .filter(|(k, _)| {
                matches!(
                    k.as_str(),
                    "expandable_segments" | "max_split_size" | "garbage_collection_threshold"
                )
            })
            .map(|(k, v)| format!("{k} = {}", md_text(&v.to_string())))
            .collect();
        if !pick.is_empty() {
            let _ = writeln!(o, "- Allocator settings: {}", pick.join(", "));
        }
    }
    let _ = writeln!(
        o,
        "- Device slots: {}; devices with a trace: {}",
        f.device_slots,
        j.devices.len()
    );
    let _ = writeln!(o, "\n> {}\n", j.note);
    for p in &j.problems {
        let _ = writeln!(o, "> **{}** {}", p.code, cell(&p.message));
    }
    for d in &j.devices {
        device(&mut o, d);
    }
    for d in &j.end_state_only {
        let _ = writeln!(o, "\n## Device {}: end state only (no trace)\n", d.device);
        for p in &d.points {
            contributors(&mut o, p);
        }
        for w in &d.warnings {
            let _ = writeln!(o, "> **{}** {}", w.code, cell(&w.message));
        }
    }
    o
}

fn device(o: &mut String, d: &DeviceJson) {
    let _ = writeln!(o, "\n## Device {}\n", d.device);
    let _ = writeln!(
        o,
        "- Entries kept: {} (streams: {})",
        thousands(d.entries as i64),
        d.streams
    );
    if d.unmatched_free_completed > 0 {
        let _ = writeln!(
            o,
            "- **Ring-buffer warning**: {} frees without an allocation in the trace; the start of the run is missing and absolute numbers are reconstructed.",
            thousands(d.unmatched_free_completed as i64)
        );
    }
    let _ = writeln!(
        o,
        "- Baselines (alive before the first entry): allocated {}, active {}, reserved {}",
        exact(d.baseline_allocated_bytes),
        exact(d.baseline_active_bytes),
        exact(d.baseline_reserved_bytes)
    );
    for (name, l) in [
        ("allocated", &d.max_allocated),
        ("active", &d.max_active),
        ("reserved", &d.max_reserved),
    ] {
        let _ = writeln!(
            o,
            "- Peak {name}: {} at entry {} (t = {})",
            exact(l.bytes),
            l.index.map_or("—".into(), |i| i.to_string()),
            secs(l.time_us, d.first_time_us)
        );
    }
    let iw = &d.in_window_replay;
    let mv = &d.memoryviz_like;
    let _ = writeln!(
        o,
        "- In-window replay: peak {} at entry {}, end {}, {} live at end, {} unmatched free_completed",
        exact(iw.peak_bytes as i64),
        iw.peak_event_index,
        exact(iw.end_bytes as i64),
        iw.live_at_end,
        iw.unmatched_free_completed
    );
    let _ = writeln!(
        o,
        "- MemoryViz-like: baseline {}, max {}, end {}, {} elements ({} initially allocated)",
        exact(mv.baseline_bytes as i64),
        exact(mv.max_bytes as i64),
        exact(mv.end_bytes as i64),
        mv.elements,
        mv.initially_allocated
    );
    for p in d.points.iter().filter(|p| p.kind == "oom") {
        let _ = writeln!(
            o,
            "- **OOM** at entry {}: requested {}, device free {}, reserved {}, active {}, fragmentation {}",
            p.index,
            exact(p.oom_requested_bytes.unwrap_or(0) as i64),
            p.oom_device_free_bytes.map_or("unknown".into(), |f| exact(f as i64)),
            exact(p.reserved_bytes),
            exact(p.active_bytes),
            exact(p.fragmentation_bytes)
        );
        if let Some(e) = &p.oom_explanation {
            oom_section(o, e);
        }
    }
    for w in &d.warnings {
        let _ = writeln!(o, "\n> **{}** {}", w.code, cell(&w.message));
    }
    let _ = writeln!(
        o,
        "\n| # | curve | bytes | index | time | prominence | recurring | annotations |"
    );
    let _ = writeln!(o, "|---:|---|---:|---:|---:|---:|---|---|");
    for (k, p) in d.points.iter().enumerate() {
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            k + 1,
            label(p),
            human(p.height_bytes),
            p.index,
            secs(p.time_us, d.first_time_us),
            p.prominence_bytes.map_or("—".into(), human),
            p.recurring
                .as_ref()
                .map_or("—".into(), |r| format!("×{}", r.count)),
            cell(&p.annotations.join(" › "))
        );
    }
    for (k, p) in d.points.iter().enumerate() {
        let extra = if p.kind == "global_peak" {
            ", global peak"
        } else {
            ""
        };
        let _ = writeln!(
            o,
            "\n### {} {}: {} (t ≈ {}){extra}\n",
            label(p),
            k + 1,
            human(p.height_bytes),
            secs(p.time_us, d.first_time_us)
        );
        if !p.annotations.is_empty() {
            let _ = writeln!(
                o,
                "Open annotations: {}\n",
                cell(&p.annotations.join(" › "))
            );
        }
        if let Some(r) = &p.recurring {
            let _ = writeln!(
                o,
                "Recurring ×{}: heights min {}, median {}, max {} (entries {:?})\n",
                r.count,
                human(r.min_bytes),
                human(r.median_bytes),
                human(r.max_bytes),
                r.indices
            );
        }
        for (name, v) in [
            ("compile context", &p.compile_context),
            ("user metadata", &p.user_metadata),
        ] {
            if let Some(v) = v {
                let _ = writeln!(o, "{name}: {}\n", md_text(v));
            }
        }
        let _ = writeln!(
            o,
            "Allocated {}, active {}, reserved {}; fragmentation (reserved − active) {}{}.\n",
            exact(p.allocated_bytes),
            exact(p.active_bytes),
            exact(p.reserved_bytes),
            exact(p.fragmentation_bytes),
            p.largest_inactive_block_bytes
                .map_or(String::new(), |b| format!(
                    "; largest inactive block {}",
                    exact(b as i64)
                ))
        );
        contributors(o, p);
        if !p.top_tensors.is_empty() {
            let _ = writeln!(o, "\nLargest tensors:\n\n| bytes | address | alloc entry | site |\n|---:|---|---:|---|");
            for t in &p.top_tensors {
                let site = md_link(&t.site, t.link.as_deref());
                let _ = writeln!(
                    o,
                    "| {} | `{}` | {} | {} |",
                    exact(t.bytes as i64),
                    t.addr,
                    t.alloc_index.map_or("before".into(), |i| i.to_string()),
                    site
                );
            }
        }
    }
    if !d.leaks.is_empty() {
        let _ = writeln!(
            o,
            "\n### Never freed (allocated in the window, excluding the last 1%)\n"
        );
        let _ = writeln!(
            o,
            "| # | bytes | tensors | site | call chain |\n|---:|---:|---:|---|---|"
        );
        for (k, c) in d.leaks.iter().enumerate() {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                k + 1,
                exact(c.bytes as i64),
                c.tensors,
                site_md(c),
                cell(&c.chain.join(" ← "))
            );
        }
    }
    if !d.delayed_frees.is_empty() {
        let _ = writeln!(o, "\n### Delayed frees (free_requested → free_completed)\n");
        let _ = writeln!(
            o,
            "| bytes | tensors | max gap (entries) | max gap | site |\n|---:|---:|---:|---:|---|"
        );
        for g in &d.delayed_frees {
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} |",
                exact(g.bytes as i64),
                g.tensors,
                g.max_gap_entries,
                g.max_gap_us
                    .map_or("—".into(), |u| format!("{:.3} ms", u as f64 / 1000.0)),
                cell(&g.site)
            );
        }
    }
}

fn label(p: &PointJson) -> &'static str {
    match p.kind {
        "global_peak" => "Peak",
        "peak" => "Peak",
        "oom" => "OOM",
        _ => "End state",
    }
}

fn contributors(o: &mut String, p: &PointJson) {
    let _ = writeln!(
        o,
        "Live: {} in {} tensors.\n\n| # | bytes | % of point | tensors | site | call chain | first alloc entry |\n|---:|---:|---:|---:|---|---|---:|",
        exact(p.live_bytes as i64),
        p.live_tensors
    );
    for (k, c) in p.contributors.iter().enumerate() {
        let _ = writeln!(
            o,
            "| {} | {} | {:.1}% | {} | {} | {} | {} |",
            k + 1,
            exact(c.bytes as i64),
            c.percent_of_point,
            c.tensors,
            site_md(c),
            cell(&c.chain.join(" ← ")),
            c.first_alloc_index
                .map_or("before".into(), |i| i.to_string())
        );
    }
    if p.more_sites > 0 {
        let _ = writeln!(
            o,
            "| … | {} | | | {} more sites | | |",
            exact(p.more_sites_bytes as i64),
            p.more_sites
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_names() {
        assert_eq!(human(1536), "1.50 KiB");
        assert_eq!(human(3 << 30), "3.00 GiB");
        assert_eq!(human(12), "12 B");
        assert_eq!(exact(1_610_612_736), "1.50 GiB (1,610,612,736 bytes)");
        assert_eq!(thousands(-1234), "-1,234");
        assert_eq!(
            file_name("/x/y/memory_snapshot.pickle"),
            "MEM_PEAK_ANALYSIS_memory_snapshot.md"
        );
    }
}

/// Segments listed in an OOM explanation (largest free block first).
const OOM_SEGMENTS: usize = 10;

/// The OOM explanation under its `- **OOM**` line: the allocator's bytes, the largest
/// contiguous free block of the largest-free segments, and the one-sentence verdict.
fn oom_section(o: &mut String, e: &crate::report::snapshot_json::OomJson) {
    let _ = writeln!(
        o,
        "  - allocator held: reserved {}, allocated {}, active {}; free in its segments on stream {}: {} (largest contiguous {}); highest reserved before: {}",
        exact(e.reserved_bytes as i64),
        exact(e.allocated_bytes as i64),
        exact(e.active_bytes as i64),
        e.stream,
        exact(e.cached_free_bytes as i64),
        exact(e.largest_free_bytes as i64),
        exact(e.peak_reserved_bytes as i64)
    );
    let mut segs: Vec<_> = e.segments.iter().collect();
    crate::base::sort::sort_by(&mut segs, |a, b| {
        b.largest_free_bytes
            .cmp(&a.largest_free_bytes)
            .then(a.address.cmp(&b.address))
    });
    for s in segs.iter().take(OOM_SEGMENTS) {
        let _ = writeln!(
            o,
            "  - segment {} ({}, stream {}): largest free block {}, free {}",
            s.address,
            human(s.size_bytes as i64),
            s.stream,
            exact(s.largest_free_bytes as i64),
            human(s.free_bytes as i64)
        );
    }
    if segs.len() > OOM_SEGMENTS {
        let _ = writeln!(o, "  - … {} more segments", segs.len() - OOM_SEGMENTS);
    }
    let _ = writeln!(o, "  - **Verdict ({}):** {}", e.cause, e.sentence);
}
