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

use std::borrow::Cow;
use std::io::{self, Write};

use super::frame::{Cell, Frame, Kind};
use super::table_csv::{frame_of, names, write_csv};
use crate::analysis::gpu_kernels::{NameRow, NameTable};

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

/// The columns of the kernel table of several ranks ([`write_kernel_table`], [`kernels_frame`];
/// docs/frames.md §3.3): the rank, then [`KERNEL_COLUMNS`], with their frame types.
pub const RANK_KERNEL_COLUMNS: &[(&str, Kind)] = &[
    ("rank_id", Kind::I64),
    ("rank_dir", Kind::Text),
    ("name", Kind::Text),
    ("category", Kind::Text),
    ("streams", Kind::TextList),
    ("count", Kind::I64),
    ("total_us", Kind::TimeNs),
    ("mean_us", Kind::TimeNs),
    ("max_us", Kind::TimeNs),
    ("share_of_span", Kind::F64),
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

/// The cells of row `r` of table `t` ([`KERNEL_COLUMNS`]): times fixed µs with 3 decimals
/// (integer ns in a frame), `streams` a list, `share_of_span` null when the span is 0.
pub fn kernel_cells<'a>(t: &NameTable, r: &'a NameRow) -> Vec<Cell<'a>> {
    let streams = r
        .streams
        .iter()
        .map(|&(d, s)| {
            Cow::Owned(if t.several_devices {
                format!("{d}:{s}")
            } else {
                s.to_string()
            })
        })
        .collect();
    vec![
        Cell::Str(Cow::Borrowed(r.name.as_str())),
        Cell::Str(Cow::Borrowed(r.category.as_str())),
        Cell::List(streams),
        Cell::I64(r.count as i64),
        Cell::Fixed(r.total_ns, 3),
        Cell::Fixed(mean_ns(r.total_ns, r.count), 3),
        Cell::Fixed(r.max_ns, 3),
        if t.span_ns > 0 {
            Cell::F64(r.total_ns as f64 / t.span_ns as f64)
        } else {
            Cell::Null
        },
    ]
}

/// Writes the kernel table `t` (header and one line per row).
///
/// Errors: only those of `out`.
pub fn write_kernels(t: &NameTable, out: &mut dyn Write) -> io::Result<()> {
    write_csv(
        KERNEL_COLUMNS,
        t.rows.iter().map(|r| kernel_cells(t, r)),
        out,
    )
}

/// The kernel table of one GPU rank, for [`write_kernel_table`] / [`kernels_frame`].
pub struct KernelRank<'a> {
    /// Rank id (null when unknown).
    pub rank_id: Option<i64>,
    /// Rank folder or trace path.
    pub rank_dir: &'a str,
    /// Its table.
    pub table: &'a NameTable,
}

fn rank_lines<'a>(ranks: &'a [KernelRank<'a>]) -> impl Iterator<Item = Vec<Cell<'a>>> + 'a {
    ranks.iter().flat_map(|k| {
        k.table.rows.iter().map(move |r| {
            let mut cells = vec![
                k.rank_id.map(Cell::I64).unwrap_or(Cell::Null),
                Cell::Str(Cow::Borrowed(k.rank_dir)),
            ];
            cells.extend(kernel_cells(k.table, r));
            cells
        })
    })
}

/// Writes the kernel tables of `ranks` as one CSV ([`RANK_KERNEL_COLUMNS`]), rank by rank.
///
/// Errors: only those of `out`.
pub fn write_kernel_table(ranks: &[KernelRank<'_>], out: &mut dyn Write) -> io::Result<()> {
    write_csv(&names(RANK_KERNEL_COLUMNS), rank_lines(ranks), out)
}

/// The lines of [`write_kernel_table`] as a typed [`Frame`]: `total_ns` / `mean_ns` /
/// `max_ns` integer ns, `streams` a list.
pub fn kernels_frame(ranks: &[KernelRank<'_>]) -> Frame {
    frame_of(RANK_KERNEL_COLUMNS, rank_lines(ranks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::gpu_kernels::Category;
    use crate::report::frame::Values;

    fn table() -> NameTable {
        let row = |name: &str, category, streams, count, total_ns, max_ns| NameRow {
            name: name.to_string(),
            category,
            streams,
            count,
            total_ns,
            max_ns,
        };
        NameTable {
            rows: vec![
                row(
                    "gemm, fp16",
                    Category::Compute,
                    vec![(0, 7), (0, 9)],
                    4,
                    10,
                    6,
                ),
                row(
                    "Memcpy HtoD",
                    Category::Memory,
                    vec![(0, 7)],
                    1,
                    1_500,
                    1_500,
                ),
            ],
            span_ns: 2_000,
            several_devices: false,
        }
    }

    #[test]
    fn the_rank_table_is_the_kernel_csv_with_the_rank_in_front() {
        let t = table();
        let mut one = Vec::new();
        write_kernels(&t, &mut one).unwrap();
        let one = String::from_utf8(one).unwrap();
        assert_eq!(
            one,
            "name,category,streams,count,total_us,mean_us,max_us,share_of_span\n\
             \"gemm, fp16\",compute,7;9,4,0.010,0.003,0.006,0.005\n\
             Memcpy HtoD,memory,7,1,1.500,1.500,1.500,0.75\n"
        );
        let ranks = [KernelRank {
            rank_id: Some(3),
            rank_dir: "r3",
            table: &t,
        }];
        let mut all = Vec::new();
        write_kernel_table(&ranks, &mut all).unwrap();
        let all = String::from_utf8(all).unwrap();
        let mut lines = all.lines();
        assert_eq!(
            lines.next(),
            Some("rank_id,rank_dir,name,category,streams,count,total_us,mean_us,max_us,share_of_span")
        );
        for (got, want) in lines.zip(one.lines().skip(1)) {
            assert_eq!(got, format!("3,r3,{want}"));
        }
        let f = kernels_frame(&ranks);
        assert_eq!(f.rows, 2);
        let names: Vec<&str> = f.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(&names[6..9], ["total_ns", "mean_ns", "max_ns"]);
        assert_eq!(
            f.columns[6].values,
            Values::I64(vec![Some(10), Some(1_500)])
        );
    }

    #[test]
    fn mean_rounds_to_the_nearest_ns() {
        assert_eq!(mean_ns(10, 4), 3); // 2.5 → 3
        assert_eq!(mean_ns(9, 4), 2); // 2.25 → 2
        assert_eq!(mean_ns(11, 4), 3); // 2.75 → 3
        assert_eq!(mean_ns(7, 0), 0);
    }
}
