//! Conversions from core types to [`crate::protocol`] payloads (inventory, problems).

use crate::base::{Problem, Problems, Severity};
use crate::ingest::inventory::{Analysis, FileKind, Inventory};
use crate::protocol::{
    AnalysisKind, CapabilityDto, FileDto, FileMeta, InventoryDto, ProblemDto, ProblemsDto,
    RankFolderDto, SeverityDto,
};

/// Display name of a file kind (the file name users know).
pub fn kind_label(kind: FileKind) -> &'static str {
    match kind {
        FileKind::ProfilerInfo => "profiler_info.json",
        FileKind::ProfilerMetadata => "profiler_metadata.json",
        FileKind::OperatorMemory => "operator_memory.csv",
        FileKind::TraceView => "trace_view.json",
        FileKind::KernelDetails => "kernel_details.csv",
        FileKind::OpSummary => "op_summary.csv",
        FileKind::StepTraceTime => "step_trace_time.csv",
        FileKind::Communication => "communication.json",
        FileKind::CommunicationMatrix => "communication_matrix.json",
        FileKind::MemoryRecord => "memory_record.csv",
        FileKind::NpuModuleMem => "npu_module_mem.csv",
        FileKind::OperatorDetails => "operator_details.csv",
        FileKind::AscendDb => "profiler database (.db)",
        FileKind::AnalysisDb => "analysis.db",
        FileKind::Database => "database (.db)",
        FileKind::KinetoTrace => "PyTorch profiler trace",
    }
}

fn severity(s: Severity) -> SeverityDto {
    match s {
        Severity::Info => SeverityDto::Info,
        Severity::Warning => SeverityDto::Warning,
        Severity::Error => SeverityDto::Error,
    }
}

/// One problem for the UI.
pub fn problem(p: &Problem) -> ProblemDto {
    ProblemDto {
        severity: severity(p.severity),
        code: p.code.to_string(),
        file: p.at.file.to_string(),
        line: p.at.line,
        byte: p.at.byte,
        column: p.at.column.as_ref().map(|c| c.to_string()),
        message: p.message.clone(),
    }
}

/// The problems of a run for the UI (kept list and exact counts).
pub fn problems(p: &Problems) -> ProblemsDto {
    ProblemsDto {
        kept: p.kept().iter().map(problem).collect(),
        total: p.total(),
        by_code: p
            .by_code()
            .iter()
            .map(|(c, n)| (c.to_string(), *n))
            .collect(),
    }
}

/// The inventory for the UI; `files` is the `Open` list (gives each file its index).
pub fn inventory(inv: &Inventory, files: &[FileMeta]) -> InventoryDto {
    use crate::ingest::inventory::unused_codes::INSIDE;
    let index_of = |path: &str| -> u32 {
        files
            .iter()
            .position(|f| f.path == path)
            .map(|i| i as u32)
            .unwrap_or(u32::MAX)
    };
    let unused = inv.not_used();
    let ranks = inv
        .ranks
        .iter()
        .enumerate()
        .map(|(i, r)| RankFolderDto {
            index: i as u32,
            dir: r.label().to_string(),
            role: r.role.clone(),
            rank_id: r.rank_id,
            rank_source: r.rank_source.describe().to_string(),
            level: r.side.profiler_level.clone(),
            export_type: (!r.side.export_type.is_empty()).then(|| r.side.export_type.join(", ")),
            torch_npu_version: r.side.torch_npu_version.clone(),
            cann_version: r.side.cann_version.clone(),
            gpu_device: r
                .side
                .kineto
                .as_ref()
                .filter(|h| !h.devices.is_empty())
                .map(|h| h.devices.join(", ")),
            gpu_runtime: r.side.kineto.as_ref().and_then(|h| h.runtime.clone()),
            kineto: r.side.kineto.is_some(),
            files: r
                .files
                .iter()
                .map(|f| FileDto {
                    file: index_of(&f.path),
                    path: f.path.clone(),
                    size: f.size,
                    kind: kind_label(f.kind).to_string(),
                })
                .collect(),
            // A GPU rank's collectives come from its trace (the anomaly read): no
            // communication files to ask for.
            analyses: r
                .analyses
                .iter()
                .filter_map(|a| {
                    Some(CapabilityDto {
                        analysis: match a.analysis {
                            Analysis::Memory => AnalysisKind::Memory,
                            Analysis::Anomaly => AnalysisKind::Anomaly,
                            Analysis::Communication if r.side.kineto.is_some() => return None,
                            Analysis::Communication => AnalysisKind::Comm,
                        },
                        can_run: a.can_run,
                        missing: a.missing.clone(),
                        degraded: a.degraded.clone(),
                    })
                })
                .collect(),
            // The rank's notes, then what inside it no analysis reads (formats.md §11.1).
            notes: r
                .notes
                .iter()
                .chain(
                    unused
                        .iter()
                        .filter(|n| n.code == INSIDE && n.file == r.label()),
                )
                .map(|n| format!("{}: {}", n.code, n.message))
                .collect(),
            // The count and bytes `DROP-003` gives (formats.md §11.1).
            other_files: {
                let (n, bytes, _) = r.not_read();
                (n, bytes)
            },
        })
        .collect();
    InventoryDto {
        ranks,
        snapshots: inv
            .snapshots
            .iter()
            .map(|f| FileDto {
                file: index_of(&f.path),
                path: f.path.clone(),
                size: f.size,
                kind: "memory snapshot".into(),
            })
            .collect(),
        summaries: inv
            .summaries
            .iter()
            .map(|f| FileDto {
                file: index_of(&f.path),
                path: f.path.clone(),
                size: f.size,
                kind: match f.refusal() {
                    None => crate::protocol::cluster_view::SUMMARY_KIND.into(),
                    Some(_) => format!(
                        "proflens cluster summary, version {}: not readable here",
                        f.head.version
                    ),
                },
            })
            .collect(),
        ignored: inv
            .ignored
            .iter()
            .map(|f| FileDto {
                file: index_of(&f.path),
                path: f.path.clone(),
                size: f.size,
                kind: f.reason.clone(),
            })
            .collect(),
        total_bytes: files.iter().map(|f| f.size).sum(),
        problems: inv.notes.iter().map(|n| problem(&n.to_problem())).collect(),
    }
}
