//! The kernel overruns section: kernels clipped at the next kernel of their stream.

use std::fmt::Write;

use crate::analysis::anomaly::AnomalyResult;
use crate::base::units::ns_to_ms;
use crate::model::kernels::KernelTable;
use crate::report::float::ns_to_us_text;

/// Kernels clipped at the next kernel of their stream (Decision): the headline
/// busy unions count them up to that start; the raw figures stand beside. Nothing is written
/// when there are none.
pub(super) fn write_overruns(o: &mut String, k: &KernelTable, r: &AnomalyResult) {
    if k.overruns().is_empty() {
        return;
    }
    let raw = crate::analysis::intervals::raw_kernel_union(k);
    let _ = writeln!(
        o,
        "## Kernel overruns
"
    );
    let _ = writeln!(o, "{} kernel(s) run past the start of the next kernel on the same stream (a stall artefact: kernels of one stream run one after another). Busy unions count each only up to that start.\n", k.overruns().len());
    let _ = writeln!(o, "| line | kernel | task type | stream | start_us | raw end_us | clipped at_us | overrun_us | next kernel (line) |");
    let _ = writeln!(o, "|---:|---|---|---|---:|---:|---:|---:|---|");
    for x in k.overruns().iter().take(50) {
        let i = x.kernel;
        let _ = writeln!(
            o,
            "| {} | `{}` | {} | {} | {} | {} | {} | {} | `{}` ({}) |",
            k.row_of(i),
            k.name_of(i),
            k.core_of(i),
            k.stream_of(i),
            ns_to_us_text(k.start_ns()[i]),
            ns_to_us_text(k.end_ns(i)),
            ns_to_us_text(k.busy_end_ns(i)),
            ns_to_us_text(x.overrun_ns),
            k.name_of(x.next),
            k.row_of(x.next)
        );
    }
    let _ = writeln!(
        o,
        "\n| step | busy_union_ms | raw busy_union_ms | service_ms |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|");
    for s in r.steps.iter().take(200) {
        let _ = writeln!(
            o,
            "| `{}` | {:.3} | {:.3} | {:.3} |",
            s.step_id,
            ns_to_ms(s.metrics.busy_ns),
            ns_to_ms(crate::analysis::intervals::covered_ns(&raw, s.window)),
            ns_to_ms(s.metrics.service_ns)
        );
    }
    let _ = writeln!(o);
}
