//! Streaming, non-executing decoder of PyTorch memory snapshots (torch-snapshot.md §2, §5):
//! pickles, and the same data written as JSON (`json`, §2.6), both into one schema builder.
//!
//! * [`opcodes`]: opcode bytes, names and classes (data / refused / unsupported).
//! * `vm`: the push-fed VM (`feed(input) -> (Status, used)`), values as handles.
//! * `schema` + `fields` (+ `keys`, the pre-interned key ids): schema-directed building of
//!   [`Snapshot`] columns.
//! * [`writer`]: a small pickle writer for tests and the large-snapshot generator.
//!
//! The decoder reads through [`ChunkReader`]; memory grows with what is kept
//! (columns, pools, the memo of handles), never with the file. It never
//! imports or calls anything: `GLOBAL`, `REDUCE`, `BUILD`, persistent ids and
//! the other object-constructing opcodes stop decoding with an error naming the
//! opcode and its byte offset (§5.4).

mod devices;
mod error;
mod fields;
mod json;
mod keys;
mod memo;
pub mod opcodes;
mod ranges;
mod schema;
mod slab;
mod vm;
pub mod writer;

use std::io::Read;
use std::ops::ControlFlow;

pub use devices::MAX_DEVICES;
pub use error::{sniff, PickleError, PickleErrorKind};
pub use ranges::{MAX_TIME_US, MAX_TOTAL_BYTES};
pub use schema::GENERIC_CAP;
pub use vm::{DecodeStats, Status, MAX_MARKS, MAX_STACK};

use crate::base::Problems;
use crate::ingest::chunk_reader::{FillError, DEFAULT_CHUNK, DEFAULT_MAX_RECORD};
use crate::ingest::{ChunkReader, Progress};
use crate::model::snapshot::{Encoding, Features, Snapshot, TopLevel};

/// A decoded snapshot and the problems found on the way (bad entries, layout warnings).
#[derive(Debug)]
pub struct Decoded {
    /// The snapshot model.
    pub snapshot: Snapshot,
    /// Data-quality problems of decoding (codes `SNAP-ENTRY`, `SNAP-LAYOUT`, `SNAP-FRAMES`, …).
    pub problems: Problems,
    /// The decoder's working-memory accounting (stack, marks, memo, open containers).
    pub stats: DecodeStats,
}

/// Decodes a whole snapshot held in memory (`bytes`) — the entry point for fuzz targets and
/// tests; the same decoder as [`read_snapshot`], no progress reporting.
///
/// # Errors
///
/// As [`read_snapshot`].
pub fn read_snapshot_bytes(file: &str, bytes: &[u8]) -> Result<Decoded, PickleError> {
    let mut src = bytes;
    read_snapshot(file, &mut src, Some(bytes.len() as u64), &mut |_| {
        ControlFlow::Continue(())
    })
}

/// Decodes one snapshot pickle (or JSON snapshot, §2.6) from `src`.
///
/// `file` names the input in errors and problems; `total` is its size in bytes
/// if known (for progress and the truncation message). Progress is reported
/// after each chunk; `ControlFlow::Break` from `on_progress` cancels.
///
/// # Shape
///
/// Accepts protocols 2–5, the dict form and the top-level list of segments
/// (§3.1), every format era of §3.10. Trace entries become rows of per-device
/// [`crate::model::snapshot::EntryTable`]s in file order.
///
/// # Errors
///
/// [`PickleErrorKind`] with the §5.4 messages: refused or unsupported opcode,
/// protocol > 5, truncated file, not a snapshot, not a pickle at all,
/// structurally invalid pickle, read failure, cancel. A bad trace entry is not
/// an error: it is skipped and counted (`bad_entries`, §5.2).
///
/// # Cost
///
/// One pass, O(file) time. Memory: the entry columns (≈ 33–45 bytes per
/// entry), the pools, and the memo (16 bytes per memoized object) while decoding. Both are
/// sized once from `total` instead of growing by doubling: the memo with one slot per 64
/// bytes, a device's columns after its first 65,536 entries at the density seen so far.
pub fn read_snapshot(
    file: &str,
    src: &mut dyn Read,
    total: Option<u64>,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
) -> Result<Decoded, PickleError> {
    // Small files get a small buffer (no 4 MiB allocation for a 12 kB pickle).
    let chunk = total.map_or(DEFAULT_CHUNK, |t| {
        (t as usize).saturating_add(1).clamp(4096, DEFAULT_CHUNK)
    });
    let mut rdr = ChunkReader::with_sizes(src, total, chunk, DEFAULT_MAX_RECORD);
    let fill_err = |e: FillError, file: &str| match e {
        FillError::Io { at, source } => PickleError::new(
            file,
            at,
            PickleErrorKind::Io {
                message: source.to_string(),
            },
        ),
        FillError::TooLarge { at, limit } => {
            PickleError::new(file, at, PickleErrorKind::TooLarge { limit })
        }
    };
    // Sniff the first bytes before running the VM.
    while rdr.buffer().len() < 2 && !rdr.at_eof() {
        rdr.fill().map_err(|e| fill_err(e, file))?;
    }
    if rdr.buffer().first() != Some(&opcodes::PROTO) {
        // A JSON snapshot (§2.6): `{` or `[` after an optional BOM and whitespace.
        while rdr.buffer().len() < 3 && !rdr.at_eof() {
            rdr.fill().map_err(|e| fill_err(e, file))?;
        }
        let mut lead = 0;
        loop {
            let buf = rdr.buffer();
            if rdr.offset() == 0 && lead == 0 && buf.starts_with(b"\xEF\xBB\xBF") {
                lead = 3;
            }
            lead += buf[lead.min(buf.len())..]
                .iter()
                .take_while(|b| b.is_ascii_whitespace())
                .count();
            if lead < buf.len() || rdr.at_eof() || lead >= 1 << 20 {
                break;
            }
            rdr.fill().map_err(|e| fill_err(e, file))?;
        }
        if matches!(rdr.buffer().get(lead), Some(b'{' | b'[')) {
            rdr.consume(lead);
            let mut m = json::JsonMachine::new(file, total.unwrap_or(0));
            run(&mut rdr, file, on_progress, &fill_err, |buf, at, eof| {
                m.feed(buf, at, eof)
            })?;
            let mut stats = m.stats;
            stats.generic_items = m.b.generic_items();
            if m.invalid_json_strings > 0 {
                let n = m.invalid_json_strings;
                m.b.warn(
                    "SNAP-UTF8",
                    format!("{n} JSON strings had a raw control character or an invalid escape; kept as read"),
                );
            }
            let histogram = vec![0; 256];
            return finish(m.b, m.result, stats, Encoding::Json, 0, histogram, file);
        }
        return Err(PickleError::new(
            file,
            0,
            PickleErrorKind::WrongFileType {
                detected: sniff(rdr.buffer()),
            },
        ));
    }
    let mut vm = vm::Machine::new(file, total.unwrap_or(0));
    run(&mut rdr, file, on_progress, &fill_err, |buf, at, eof| {
        vm.feed(buf, at, eof)
    })?;
    let stats = vm.final_stats();
    let histogram = std::mem::take(&mut vm.histogram);
    finish(
        vm.b,
        vm.result,
        stats,
        Encoding::Pickle,
        vm.protocol,
        histogram,
        file,
    )
}

/// Feeds `rdr`'s bytes to a push machine (`feed(buffer, offset, at_eof)`) until it is done,
/// reporting progress after each chunk; `Break` cancels.
fn run<R: Read>(
    rdr: &mut ChunkReader<R>,
    file: &str,
    on_progress: &mut dyn FnMut(Progress) -> ControlFlow<()>,
    fill_err: &dyn Fn(FillError, &str) -> PickleError,
    mut feed: impl FnMut(&[u8], u64, bool) -> Result<(Status, usize), PickleError>,
) -> Result<(), PickleError> {
    loop {
        let at_eof = rdr.at_eof();
        let (status, used) = feed(rdr.buffer(), rdr.offset(), at_eof)?;
        rdr.consume(used);
        match status {
            Status::Done => break,
            Status::NeedMore => {
                if rdr.report(on_progress).is_break() {
                    return Err(PickleError::new(
                        file,
                        rdr.offset(),
                        PickleErrorKind::Cancelled,
                    ));
                }
                rdr.fill().map_err(|e| fill_err(e, file))?;
            }
        }
    }
    let _ = rdr.report(on_progress);
    Ok(())
}

/// The model of a decoded snapshot from the builder `b` and the top-level value `result`.
fn finish(
    mut b: schema::Builder,
    result: Option<vm::Val>,
    stats: DecodeStats,
    encoding: Encoding,
    protocol: u8,
    histogram: Vec<u64>,
    file: &str,
) -> Result<Decoded, PickleError> {
    let result = result.unwrap_or(vm::Val::None);
    let top_level = match result {
        vm::Val::Obj(o) if o.role == schema::Role::Top => TopLevel::Dict,
        vm::Val::Obj(o) if o.role == schema::Role::SegmentList => TopLevel::SegmentsList,
        other => {
            return Err(PickleError::new(
                file,
                0,
                PickleErrorKind::NotSnapshot {
                    top_type: type_name(&b, other, encoding).into(),
                    json: encoding == Encoding::Json,
                    chrome_trace: false,
                },
            ))
        }
    };
    let b = &mut b;
    if top_level == TopLevel::SegmentsList
        && b.out_segments.is_empty()
        && b.problems.count("SNAP-LAYOUT") > 0
    {
        return Err(PickleError::new(
            file,
            0,
            PickleErrorKind::NotSnapshot {
                top_type: type_name(&b, result, encoding).into(),
                json: encoding == Encoding::Json,
                chrome_trace: false,
            },
        ));
    }
    if top_level == TopLevel::Dict
        && !b
            .top_keys
            .iter()
            .any(|k| k == "segments" || k == "device_traces")
    {
        return Err(PickleError::new(
            file,
            0,
            PickleErrorKind::NotSnapshot {
                top_type: type_name(&b, result, encoding).into(),
                json: encoding == Encoding::Json,
                chrome_trace: b.top_keys.iter().any(|k| k == "traceEvents"),
            },
        ));
    }
    if b.invalid_utf8 > 0 {
        let n = b.invalid_utf8;
        b.warn(
            "SNAP-UTF8",
            format!("{n} strings were not valid UTF-8; invalid bytes were replaced with U+FFFD"),
        );
    }
    for m in b.ranges.messages() {
        b.problems.push(crate::base::Problem::new(
            crate::base::Severity::Warning,
            "SNAP-RANGE",
            crate::base::Position::file(file),
            m,
        ));
    }
    let devices = b.take_devices();
    let blocks = std::mem::take(&mut b.out_blocks);
    let has_key = |k: &str| {
        devices
            .iter()
            .any(|d| d.key_sets.iter().any(|s| s.split(',').any(|x| x == k)))
    };
    let features = Features {
        encoding,
        protocol,
        top_level,
        has_time_us: devices.iter().any(|d| d.entries.has_time()),
        has_history: blocks.iter().any(|b| b.has_history),
        has_annotations: b.has_annotations_key,
        has_compile_context: has_key("compile_context"),
        has_user_metadata: has_key("user_metadata"),
        has_fx_frames: b.has_fx,
        has_settings: b.settings.is_some(),
    };
    let snapshot = Snapshot {
        pools: std::mem::take(&mut b.pools),
        devices,
        segments: std::mem::take(&mut b.out_segments),
        blocks,
        annotations: b
            .has_annotations_key
            .then(|| std::mem::take(&mut b.out_annotations)),
        settings: b.settings.take(),
        top_keys: std::mem::take(&mut b.top_keys),
        other_fields: std::mem::take(&mut b.other_fields),
        features,
        opcode_histogram: histogram,
    };
    Ok(Decoded {
        snapshot,
        problems: std::mem::take(&mut b.problems),
        stats,
    })
}

fn type_name(b: &schema::Builder, v: vm::Val, encoding: Encoding) -> &'static str {
    let name = python_type_name(b, v);
    match (encoding, name) {
        (Encoding::Json, "dict") => "object",
        (Encoding::Json, "list") => "array",
        (Encoding::Json, "NoneType") => "null",
        (_, n) => n,
    }
}

fn python_type_name(b: &schema::Builder, v: vm::Val) -> &'static str {
    use vm::Val;
    match v {
        Val::None => "NoneType",
        Val::Bool(_) => "bool",
        Val::Int(_) | Val::Big(_) | Val::TooWide => "int",
        Val::Float(_) => "float",
        Val::Str(_) => "str",
        Val::Bytes => "bytes",
        Val::Generic(_) | Val::Obj(_) | Val::Frame(_) | Val::Stack(_) => {
            match b.container_kind(v) {
                Some(schema::Kind::Dict) => "dict",
                Some(schema::Kind::List) => "list",
                Some(schema::Kind::Tuple) => "tuple",
                Some(schema::Kind::Set) => "set",
                None => "dict",
            }
        }
        _ => "unknown",
    }
}
