//! Memory exports gathered over workers (`proflens memory --format csv|json|md`,
//! ascend-memory.md §9.0 and §9.7): each worker renders the rows of the ranks it holds in the
//! rank's own §9.0 order (stable by `start_time_ms`) with their keys; the join orders the
//! ranks by `(role, rank_id, source_index, source_dir)` as `MemoryRun::merge_shared` does and
//! k-way merges the rows by `(start_time_ms, rank position)` — the same order as one stable
//! sort of all ranks' rows concatenated in rank order.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::io::{self, Write};
use std::sync::Arc;

use crate::analysis::memory_phase::PhaseRow;
use crate::analysis::memory_result::{rank_order_key, MemoryRun};
use crate::base::wire::{Dec, DecResult, Enc};
use crate::engine::store::Store;
use crate::protocol::MemoryExportKind;
use crate::report::memory_md::{phase_section, rank_section, summary_head};
use crate::report::memory_rows::{
    csv_header, json_keys, json_separator, push_csv_row, push_json_row, Columns, JSON_END,
};

pub(crate) const MAGIC: &[u8] = b"PLMEMPART1\n";

/// The export's file name and MIME type (the single-worker export's).
pub fn file_of(kind: MemoryExportKind) -> (&'static str, &'static str) {
    match kind {
        MemoryExportKind::MemoryCsv => ("proflens-memory-events.csv", "text/csv"),
        MemoryExportKind::MemoryJson => ("proflens-memory-events.json", "application/json"),
        MemoryExportKind::MemorySummaryMd => ("proflens-memory-summary.md", "text/markdown"),
    }
}

fn kind_tag(kind: MemoryExportKind) -> u8 {
    match kind {
        MemoryExportKind::MemoryCsv => 0,
        MemoryExportKind::MemoryJson => 1,
        MemoryExportKind::MemorySummaryMd => 2,
    }
}

/// One rank of a part, decoded.
struct Piece<'a> {
    index: u32,
    role: &'a str,
    rank_id: i64,
    source_index: u32,
    source_dir: &'a str,
    /// `start_time_ms` per row, in the rank's §9.0 order.
    keys: Vec<f64>,
    /// CSV / JSON: each row's text, in the same order.
    rows: Vec<&'a [u8]>,
    /// Markdown: the rank's section.
    section: &'a str,
    /// Markdown: each row's §9.7 inputs (size_kb, duration_ms, total_allocated_mb,
    /// total_active_mb).
    phase: Vec<[f64; 4]>,
}

/// This worker's part of memory export `kind`: every memory rank `store` holds (failed and
/// cancelled ranks too, as the CLI's summary lists them).
pub fn part(kind: MemoryExportKind, store: &Store) -> Vec<u8> {
    let held = store.memory_indexed();
    let mut e = Enc::new(MAGIC);
    e.u8(kind_tag(kind));
    e.u64(held.len() as u64);
    let list = Columns::Full.list();
    let keys = json_keys(&list);
    let mut line = String::with_capacity(1024);
    for (index, r) in held {
        e.u32(index);
        e.str(&r.info.role);
        e.i64(r.info.rank_id);
        e.u32(r.info.source_index);
        e.str(&r.info.source_dir);
        let run = MemoryRun::merge_shared(vec![Arc::clone(r)]);
        e.u64(run.len() as u64);
        for row in run.rows() {
            e.f64(row.start_time_ms());
        }
        match kind {
            MemoryExportKind::MemorySummaryMd => {
                e.str(&rank_section(r));
                for row in run.rows() {
                    e.f64(row.size_kb());
                    e.f64(row.duration_ms());
                    e.f64(row.total_allocated_mb());
                    e.f64(row.total_active_mb());
                }
            }
            _ => {
                for row in run.rows() {
                    line.clear();
                    if kind == MemoryExportKind::MemoryCsv {
                        push_csv_row(&mut line, &row, &list);
                    } else {
                        push_json_row(&mut line, &row, &list, &keys);
                    }
                    e.str(&line);
                }
            }
        }
    }
    e.buf
}

fn decode(kind: MemoryExportKind, buf: &[u8]) -> DecResult<Vec<Piece<'_>>> {
    let mut d = Dec::new(buf, MAGIC)?;
    if d.u8()? != kind_tag(kind) {
        return Err("a part of another memory export".into());
    }
    let n = d.count(30)?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let index = d.u32()?;
        let role = d.str()?;
        let rank_id = d.i64()?;
        let source_index = d.u32()?;
        let source_dir = d.str()?;
        let rows = d.count(8)?;
        let keys = (0..rows)
            .map(|_| d.f64())
            .collect::<DecResult<Vec<f64>>>()?;
        let mut p = Piece {
            index,
            role,
            rank_id,
            source_index,
            source_dir,
            keys,
            rows: Vec::new(),
            section: "",
            phase: Vec::new(),
        };
        if kind == MemoryExportKind::MemorySummaryMd {
            p.section = d.str()?;
            for _ in 0..rows {
                p.phase.push([d.f64()?, d.f64()?, d.f64()?, d.f64()?]);
            }
        } else {
            for _ in 0..rows {
                p.rows.push(d.bytes()?);
            }
        }
        out.push(p);
    }
    if !d.at_end() {
        return Err("bytes after the last rank of a memory part".into());
    }
    Ok(out)
}

/// The next row of one rank in the merge: ordered by `(key, rank position)`, smallest first
/// out of a max-heap through `Reverse`.
struct Head {
    key: f64,
    piece: usize,
    row: usize,
}

impl PartialEq for Head {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Head {
    fn cmp(&self, o: &Self) -> Ordering {
        self.key
            .total_cmp(&o.key)
            .then(self.piece.cmp(&o.piece))
            .then(self.row.cmp(&o.row))
    }
}

/// The rows of `pieces` (in rank order) in §9.0 order: `(piece, row)` pairs.
fn merged<'p>(pieces: &'p [Piece<'_>]) -> impl Iterator<Item = (usize, usize)> + 'p {
    let mut heap: BinaryHeap<Reverse<Head>> = pieces
        .iter()
        .enumerate()
        .filter_map(|(k, p)| {
            Some(Reverse(Head {
                key: *p.keys.first()?,
                piece: k,
                row: 0,
            }))
        })
        .collect();
    std::iter::from_fn(move || {
        let Reverse(h) = heap.pop()?;
        if let Some(&key) = pieces[h.piece].keys.get(h.row + 1) {
            heap.push(Reverse(Head {
                key,
                piece: h.piece,
                row: h.row + 1,
            }));
        }
        Some((h.piece, h.row))
    })
}

/// Joins the parts of every worker into memory export `kind`, byte for byte what
/// `proflens memory --format csv|json|md` writes for the same ranks.
///
/// # Errors
///
/// A part that is not one of `kind`, a rank in two parts, and those of `w`.
pub fn join(
    kind: MemoryExportKind,
    parts: &[Vec<u8>],
    w: &mut dyn Write,
) -> io::Result<(String, String)> {
    let mut pieces = Vec::new();
    for p in parts {
        pieces.extend(decode(kind, p).map_err(crate::base::wire::invalid_data)?);
    }
    // `MemoryRun::merge_shared`'s rank order; the store's (inventory) order breaks ties.
    crate::base::sort::sort_by(&mut pieces, |a, b| {
        let ka = rank_order_key(a.role, a.rank_id, a.source_index, a.source_dir);
        let kb = rank_order_key(b.role, b.rank_id, b.source_index, b.source_dir);
        (ka, a.index).cmp(&(kb, b.index))
    });
    if let Some(p) = pieces.windows(2).find(|p| p[0].index == p[1].index) {
        return Err(crate::base::wire::invalid_data(format!(
            "rank folder {} is in two memory parts",
            p[0].index
        )));
    }
    match kind {
        MemoryExportKind::MemoryCsv => {
            w.write_all(csv_header(Columns::Full).as_bytes())?;
            for (k, i) in merged(&pieces) {
                w.write_all(pieces[k].rows[i])?;
            }
        }
        MemoryExportKind::MemoryJson => {
            w.write_all(b"[")?;
            for (n, (k, i)) in merged(&pieces).enumerate() {
                w.write_all(json_separator(n).as_bytes())?;
                w.write_all(pieces[k].rows[i])?;
            }
            w.write_all(JSON_END)?;
        }
        MemoryExportKind::MemorySummaryMd => {
            let rows: usize = pieces.iter().map(|p| p.keys.len()).sum();
            let mut s = summary_head(rows, pieces.len());
            for p in &pieces {
                s.push_str(p.section);
            }
            s.push_str(&phase_section(merged(&pieces).map(|(k, i)| {
                let (p, v) = (&pieces[k], pieces[k].phase[i]);
                PhaseRow {
                    role: p.role,
                    size_kb: v[0],
                    start_time_ms: p.keys[i],
                    duration_ms: v[1],
                    total_allocated_mb: v[2],
                    total_active_mb: v[3],
                }
            })));
            w.write_all(s.as_bytes())?;
        }
    }
    w.flush()?;
    let (name, mime) = file_of(kind);
    Ok((name.to_string(), mime.to_string()))
}
