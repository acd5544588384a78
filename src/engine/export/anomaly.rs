//! The anomaly analysis' files (anomaly.md §6–§7): the JSON array over ranks, the per-rank
//! Markdown reports (`--report-dir`) and the GPU ranks' kernel tables, for the CLI and the
//! page alike.

use std::borrow::Borrow;

use super::gpu_report;
use crate::analysis::anomaly::cross_rank::{self, RankRow};
use crate::analysis::anomaly_config::AnomalyConfig;
use crate::analysis::comm::rank_view::CrossRankComm;
use crate::engine::read::RankAnalysis;
use crate::ingest::inventory::Inventory;
use crate::report::anomaly_md::CommSection;
use crate::report::pretty_json;

/// The configuration the page uses: the CLI's default (`rulebook`, anomaly.md §0.3).
pub fn config() -> AnomalyConfig {
    AnomalyConfig::spec_defaults()
}

/// The stem of the anomaly exports' file names: the dropped root folder or file ([`root_stem`]), else `proflens`.
pub fn export_stem(inv: &Inventory) -> String {
    root_stem(inv).unwrap_or_else(|| "proflens".to_string())
}

/// The dropped root as a file-name stem: the root folder's name, or a dropped file's name
/// without its profiler extensions (`rank0.pt.trace.json.gz` → `rank0`, not
/// `anomaly_rank0.pt.trace.json.gz.json`); `None` for loose files of several roots.
fn root_stem(inv: &Inventory) -> Option<String> {
    let root = inv.root_label();
    if root == "the dropped files" || root.is_empty() {
        return None;
    }
    let mut stem = root.as_str();
    for ext in [".gz", ".json", ".pt.trace", ".pickle", ".pkl"] {
        stem = stem.strip_suffix(ext).unwrap_or(stem);
    }
    Some(if stem.is_empty() {
        root.clone()
    } else {
        stem.to_string()
    })
}

/// The per-rank report files of `proflens anomaly --report-dir` (§1.6): for rank `i` of
/// `ranks`, `(anomaly report name, anomaly report text, architecture report name,
/// architecture report text)`. `<base>` is the dropped root folder (else the rank folder); the
/// `_rank<N>` suffix is added only when more than one rank was analysed (`_<role>_rank<N>` with several roles: [`report_stem`]). `views` are the
/// straggler views of `ranks` (`gpu_report::straggler_views`, computed once for all ranks).
/// The CLI and the page's export both call this, so the bytes are identical.
pub fn rank_reports<R: Borrow<RankAnalysis>>(
    inv: &Inventory,
    ranks: &[R],
    cross: &[RankRow],
    views: &crate::analysis::gpu_straggler::RoleStragglers,
    cfg: &AnomalyConfig,
    i: usize,
) -> Option<(String, String, String, String)> {
    let comm = comm_cross(ranks);
    rank_reports_with(inv, ranks, cross, views, comm.as_ref(), cfg, i)
}

/// The cross-rank communication rules over the communication ops of `ranks` (the anomaly
/// read's; `None` with fewer than two ranks holding ops): computed once for all the reports
/// ([`rank_reports_with`]).
pub fn comm_cross<R: Borrow<RankAnalysis>>(ranks: &[R]) -> Option<CrossRankComm> {
    let with: Vec<(i64, &[crate::model::side_tables::CommOp])> = ranks
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let r = r.borrow();
            (r.meta.rank_id.unwrap_or(k as i64), r.comm_ops.as_slice())
        })
        .collect();
    crate::analysis::comm::rank_view::cross_rank(&with)
}

/// [`rank_reports`] with the cross-rank communication rules computed once by the caller
/// ([`comm_cross`]).
pub fn rank_reports_with<R: Borrow<RankAnalysis>>(
    inv: &Inventory,
    ranks: &[R],
    cross: &[RankRow],
    views: &crate::analysis::gpu_straggler::RoleStragglers,
    comm: Option<&CrossRankComm>,
    cfg: &AnomalyConfig,
    i: usize,
) -> Option<(String, String, String, String)> {
    let r = ranks.get(i)?.borrow();
    let gpu = gpu_report::report_input(r, views, i);
    Some(reports_with(
        inv,
        r,
        (i, ranks.len()),
        cross,
        gpu.as_ref(),
        comm,
        cfg,
    ))
}

/// `(<base>, <suffix>)` of rank `r`'s report file names ([`rank_reports`]): `<base>` is the
/// dropped root folder (else the rank folder); the suffix is `_rank<N>` when `n` > 1, and
/// `_<role>_rank<N>` (the role as a file name's part, [`file_part`]) when the analysed ranks hold
/// several roles, since two roles of an RL run hold the same rank ids and their reports would
/// otherwise overwrite each other. When another rank of its group has the same id (two traces
/// of one rank in a folder, `GPU-DISC-002`), the suffix adds the rank's own trace or folder
/// name (`_rank0_eager_trace`), so no rank's files overwrite another's. Both are decided by
/// `cross_rank::scopes` (the GPU collectives' scope's rule too) over `cross`, the cross-rank
/// rows of every analysed rank in position order (`store::cross_rows`).
pub fn report_stem(
    inv: &Inventory,
    r: &RankAnalysis,
    position: usize,
    n: usize,
    cross: &[RankRow],
) -> (String, String) {
    let base = root_stem(inv).unwrap_or_else(|| r.dir_name.clone());
    let id = r.meta.rank_id.unwrap_or(position as i64);
    let keys: Vec<(&str, i64)> = cross.iter().map(cross_rank::scope_key).collect();
    let scopes = cross_rank::scopes(&keys);
    let several_roles = scopes.first().is_some_and(|s| s.role);
    let mut suffix = match r.meta.role.as_deref() {
        Some(role) if several_roles && n > 1 => format!("_{}_rank{id}", file_part(role)),
        _ if n > 1 => format!("_rank{id}"),
        _ => String::new(),
    };
    if scopes.get(position).is_some_and(|s| s.trace) && n > 1 {
        suffix = format!("{suffix}_{}", r.dir_name);
    }
    (base, suffix)
}

/// `role` as part of a file name: runs of characters other than ASCII letters, digits, `-`,
/// `.` and `_` become one `_`, none at either end (`"mix (NVIDIA B200, world 8)"` →
/// `"mix_NVIDIA_B200_world_8"`).
fn file_part(role: &str) -> String {
    let mut out = String::with_capacity(role.len());
    for c in role.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_') {
            out.push(c);
        } else if !out.ends_with('_') {
            out.push('_');
        }
    }
    out.trim_matches('_').to_string()
}

/// The kernel table of GPU rank `r` (rank `position` of `n`) as `(kernels_<base><suffix>.csv,
/// CSV bytes)` (`report::gpu_kernels_csv` over `analysis::gpu_kernels::name_table`), named as
/// its reports ([`report_stem`]); `None` for an Ascend rank.
pub fn kernel_csv_of(
    inv: &Inventory,
    r: &RankAnalysis,
    position: usize,
    n: usize,
    cross: &[RankRow],
) -> Option<(String, Vec<u8>)> {
    let t = r.gpu.as_deref()?;
    let (base, suffix) = report_stem(inv, r, position, n, cross);
    let mut out = Vec::new();
    crate::report::gpu_kernels_csv::write_kernels(
        &crate::analysis::gpu_kernels::name_table(t),
        &mut out,
    )
    .ok()?;
    Some((format!("kernels_{base}{suffix}.csv"), out))
}

/// [`rank_reports`] of `r`, rank `position` of the `n` analysed ranks (its id falls back to
/// the position), with its GPU section's input (`None` on Ascend ranks): the one renderer for
/// the CLI, the page's export from one worker and the gathered export (`engine::export::gather`,
/// where the rank's worker holds only some ranks).
pub fn reports_of(
    inv: &Inventory,
    r: &RankAnalysis,
    position: usize,
    n: usize,
    cross: &[RankRow],
    gpu: Option<&crate::report::gpu_md::GpuReportInput<'_>>,
    cfg: &AnomalyConfig,
) -> (String, String, String, String) {
    reports_with(inv, r, (position, n), cross, gpu, None, cfg)
}

/// [`reports_of`] with the cross-rank communication rules (`comm`; `None`: this export holds
/// the rank alone, and its communication section says the cross-rank rows are not computed).
/// The gathered export passes the rules over every part's ranks (`gather::anomaly`).
pub fn reports_with(
    inv: &Inventory,
    r: &RankAnalysis,
    (position, n): (usize, usize),
    cross: &[RankRow],
    gpu: Option<&crate::report::gpu_md::GpuReportInput<'_>>,
    comm: Option<&CrossRankComm>,
    cfg: &AnomalyConfig,
) -> (String, String, String, String) {
    let (base, suffix) = report_stem(inv, r, position, n, cross);
    let view = crate::analysis::comm::rank_view::rank_view(&r.comm_ops);
    let section = view.as_ref().map(|view| CommSection { view, cross: comm });
    let md = crate::report::anomaly_md::render_with(
        &r.kernels,
        &r.result,
        &r.meta,
        &r.cross_check,
        cross,
        gpu,
        section.as_ref(),
        cfg,
    );
    let facts = crate::analysis::architecture::analyse(&r.kernels, cfg);
    let arch =
        crate::report::arch_md::render(&r.kernels, &facts, &r.result, &r.meta, &r.comm_ops, &base);
    (
        format!("anomaly_report_{base}{suffix}.md"),
        md,
        format!("model_architecture_report_{base}{suffix}.md"),
        arch,
    )
}

/// Writes the JSON array over `ranks` exactly as `proflens anomaly` prints it (pretty, then
/// one `\n`), streamed to `w`: each element is serialized straight into `w`
/// ([`write_json_element`]), never held whole in memory.
///
/// Errors: those of `w`.
pub fn write_json<R: Borrow<RankAnalysis>>(
    w: &mut dyn std::io::Write,
    ranks: &[R],
    cfg: &AnomalyConfig,
) -> std::io::Result<()> {
    let gpu = gpu_report::gpu_blocks(ranks);
    let mut any = false;
    for (r, gpu) in ranks.iter().zip(gpu) {
        w.write_all(if any { b",\n" } else { b"[\n" })?;
        write_json_element(w, r.borrow(), gpu, cfg)?;
        any = true;
    }
    w.write_all(if any { b"\n]\n" } else { b"[]\n" })?;
    w.flush()
}

/// The JSON element of rank `r` (with its `gpu` block) exactly as it stands inside the
/// pretty array of [`write_json`]: indented one level, no separator.
///
/// Errors: serialization (not expected: plain data).
pub fn json_element(
    r: &RankAnalysis,
    gpu: Option<crate::report::anomaly_json::gpu::GpuJson>,
    cfg: &AnomalyConfig,
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    write_json_element(&mut out, r, gpu, cfg)?;
    Ok(out)
}

/// [`json_element`] streamed to `w`.
///
/// Errors: those of `w`; serialization (not expected: plain data).
pub fn write_json_element(
    w: &mut dyn std::io::Write,
    r: &RankAnalysis,
    gpu: Option<crate::report::anomaly_json::gpu::GpuJson>,
    cfg: &AnomalyConfig,
) -> std::io::Result<()> {
    let mut j = crate::report::anomaly_json::build(&r.kernels, &r.result, &r.meta, cfg);
    j.gpu = gpu;
    // The element as it stands inside the pretty array: serde_json's pretty output, every
    // line (the first one too) indented one level deeper.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, w);
    std::io::Write::write_all(&mut out, pretty_json::INDENT)?;
    let mut ser = serde_json::Serializer::with_formatter(&mut out, pretty_json::Indented::new(1));
    serde::Serialize::serialize(&j, &mut ser).map_err(std::io::Error::other)?;
    std::io::Write::flush(&mut out)
}

/// Writes the pretty JSON array of `elements` ([`json_element`], in rank order) and one
/// `\n`, the bytes `serde_json::to_writer_pretty` gives for the whole array.
///
/// Errors: those of `w`.
pub fn write_json_elements<'e>(
    w: &mut dyn std::io::Write,
    elements: impl Iterator<Item = &'e [u8]>,
) -> std::io::Result<()> {
    let mut any = false;
    for e in elements {
        w.write_all(if any { b",\n" } else { b"[\n" })?;
        w.write_all(e)?;
        any = true;
    }
    w.write_all(if any { b"\n]\n" } else { b"[]\n" })?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::export_stem;
    use crate::ingest::inventory::Inventory;
    use crate::ingest::InputFile;

    #[test]
    fn a_dropped_file_names_the_exports_without_its_extensions() {
        let stem = |paths: &[&str]| {
            let files: Vec<InputFile> = paths
                .iter()
                .map(|p| InputFile {
                    path: (*p).into(),
                    size: 1,
                })
                .collect();
            export_stem(&Inventory::from_paths(&files))
        };
        assert_eq!(stem(&["rank0.pt.trace.json.gz"]), "rank0");
        assert_eq!(stem(&["worker0.1234.pt.trace.json"]), "worker0.1234");
        assert_eq!(stem(&["trace.json"]), "trace");
        assert_eq!(
            stem(&["level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv"]),
            "level1"
        );
        assert_eq!(
            stem(&["a/x.pt.trace.json", "b/y.pt.trace.json"]),
            "proflens"
        );
    }
}
