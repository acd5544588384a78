//! The kernel table of a GPU rank as CSV (`kernels_<rank>.csv` next to the reports
//! of `proflens anomaly --report-dir` / `proflens analyze --out-dir`, and the page's export):
//! one line per (kernel name, category) of `analysis::gpu_kernels::name_table`, in its order
//! (Σ duration descending). Columns: [`KERNEL_COLUMNS`]. Times are exact µs from the integer
//! ns (`report::float::ns_to_us_text`, 3 decimals); `mean_us` is Σ / count rounded to the
//! nearest ns (halves away from zero); `share_of_span` is Σ duration / the rank's device span
//! (first device-op start → last device-op end, whole capture; above 1 when the name runs on
//! several streams at once), Python's `repr` of the f64, empty when the span is 0. `streams`
//! lists the streams the name ran on, ascending, joined by `;` (`device:stream` when the rank's
//! device ops ran on several devices).

use std::io::{self, Write};

use crate::analysis::gpu_kernels::NameTable;
use crate::report::float::{ns_to_us_text, py_repr};

/// The header of the kernel table.
pub const KERNEL_COLUMNS: &[&str] = &[
    "name",
    "category",
    "streams",
    "count",
    "total_us",
    "mean_us",
    "max_us",
    "share_of_span",
];

/// Σ / count in whole ns, rounded to the nearest (halves away from zero); 0 for no count.
fn mean_ns(total: i64, count: u64) -> i64 {
    if count == 0 {
        return 0;
    }
    let (t, c) = (total as i128, count as i128);
    let q = (2 * t.abs() + c) / (2 * c);
    (if t < 0 { -q } else { q }) as i64
}

/// Writes the kernel table `t` (header and one line per row).
///
/// Errors: only those of `out`.
pub fn write_kernels(t: &NameTable, out: &mut dyn Write) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(out);
    let err = |e: csv::Error| io::Error::other(e.to_string());
    w.write_record(KERNEL_COLUMNS).map_err(err)?;
    for r in &t.rows {
        let streams = r
            .streams
            .iter()
            .map(|&(d, s)| {
                if t.several_devices {
                    format!("{d}:{s}")
                } else {
                    s.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(";");
        let share = if t.span_ns > 0 {
            py_repr(r.total_ns as f64 / t.span_ns as f64)
        } else {
            String::new()
        };
        w.write_record([
            r.name.as_str(),
            r.category.as_str(),
            &streams,
            &r.count.to_string(),
            &ns_to_us_text(r.total_ns),
            &ns_to_us_text(mean_ns(r.total_ns, r.count)),
            &ns_to_us_text(r.max_ns),
            &share,
        ])
        .map_err(err)?;
    }
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::mean_ns;

    #[test]
    fn mean_rounds_to_the_nearest_ns() {
        assert_eq!(mean_ns(10, 4), 3); // 2.5 → 3
        assert_eq!(mean_ns(9, 4), 2); // 2.25 → 2
        assert_eq!(mean_ns(11, 4), 3); // 2.75 → 3
        assert_eq!(mean_ns(7, 0), 0);
    }
}
