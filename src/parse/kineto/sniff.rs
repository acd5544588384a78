//! Step 2 of the inventory for GPU ranks: the head of a Kineto trace (`ingest::kineto`,
//! formats.md §8.1).

use std::cell::{Cell, RefCell};
use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::marks::{is_pytorch_category, is_pytorch_name};
use super::members::read_member;
use crate::ingest::gzip::maybe_gunzip;
use crate::ingest::kineto::{device_names, is_trace_name, runtime_text, KinetoHead};
use crate::ingest::replay::MAX_HEAD_BYTES;
use crate::ingest::ChunkReader;
use crate::model::gpu::TraceFacts;
use crate::parse::cluster_summary::{head as summary_head, HEAD_BYTES};
use crate::parse::trace_json::scan::{as_str, fields};
use crate::parse::trace_json::splitter::for_each_key_member_and_indexed_event;

/// Events read at least, for the runtime (`cuda…` / `hip…` calls) when the members do not
/// name it.
pub const SNIFF_EVENTS: u64 = 2000;
/// Inflated bytes read at most: 1 MiB under the largest head the run takes over
/// ([`MAX_HEAD_BYTES`]), so that a head read to this bound is still kept and not read twice.
pub const SNIFF_BYTES: u64 = (MAX_HEAD_BYTES as u64) - (1 << 20);

/// [`sniff_within`] with the bound [`SNIFF_BYTES`].
pub fn sniff<'a>(src: Box<dyn Read + 'a>, name: &str, size: Option<u64>) -> KinetoHead {
    sniff_within(src, name, size, SNIFF_BYTES)
}

/// The top-level keys of the snapshot dict (torch-snapshot.md §2.6): a JSON file whose first
/// key is another one is not a snapshot.
const SNAPSHOT_KEYS: [&[u8]; 4] = [
    b"segments",
    b"device_traces",
    b"allocator_settings",
    b"external_annotations",
];

/// What the head of a JSON file said so far (formats.md §8.1).
#[derive(Default)]
struct Marks {
    /// `deviceProperties` / `distributedInfo` members.
    device_properties: bool,
    distributed_info: bool,
    /// The `traceEvents` key (a Chrome trace's wrapper).
    trace_events_key: bool,
    /// An event of a PyTorch category or name (formats.md §8.1).
    pytorch: bool,
    /// A top-level `segments` / `device_traces` before `traceEvents`, or a first element
    /// shaped like a segment: a memory snapshot written as JSON (torch-snapshot.md §2.6).
    snapshot: bool,
    /// A top-level key that is not one of the snapshot dict's came first (proflens' own
    /// `snapshot --json` document begins with `file`): `segments` then is not a snapshot's.
    foreign_first_key: bool,
    /// The read stopped at the byte bound before it could decide.
    bound: bool,
}

impl Marks {
    fn decided(&self) -> bool {
        self.device_properties || self.distributed_info || self.pytorch
    }
}

/// Reads the head of `src` (file `name`) until it can tell what the file is, at most `limit`
/// inflated bytes: the top-level members and the events, at least [`SNIFF_EVENTS`] of them
/// and on until the first runtime call when the members do not name the runtime. A Kineto
/// trace (formats.md §8.1) has `traceEvents` and `deviceProperties`, `distributedInfo` or an
/// event of a PyTorch category or name wherever they come in the head, or a
/// `*.pt.trace.json[.gz]` name with events. A file whose head ends at the bound without a
/// verdict is *undecided* (kept; the run judges it by its whole content). A top-level
/// `segments` / `device_traces` (or a list of segments) is a JSON memory snapshot.
pub fn sniff_within<'a>(
    src: Box<dyn Read + 'a>,
    name: &str,
    size: Option<u64>,
    limit: u64,
) -> KinetoHead {
    let mut head = KinetoHead::default();
    let z = match maybe_gunzip(src, size) {
        Ok(z) => z,
        Err(e) => {
            head.not_trace_reason = Some(format!("cannot be read: {e}"));
            return head;
        }
    };
    head.gzip = z.compressed.is_some();
    // The first bytes decide whether this is a proflens cluster summary (read once: they are
    // handed on to the trace sniff below when it is not).
    let mut first = Vec::with_capacity(HEAD_BYTES);
    let mut src = z.reader;
    let failed = src
        .by_ref()
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut first)
        .err();
    if let Some(s) = summary_head(&first) {
        head.summary = Some(s);
        head.not_trace_reason = Some("a proflens cluster summary".into());
        return head;
    }
    let src: Box<dyn Read + 'a> = match failed {
        // A read error in the first bytes reaches the trace sniff where it happened.
        Some(e) => Box::new(std::io::Cursor::new(first).chain(FailOnce(Some(e)))),
        None => Box::new(std::io::Cursor::new(first).chain(src)),
    };
    let mut reader = ChunkReader::with_sizes(src, None, 64 << 10, 64 << 20);
    let mut facts = TraceFacts::default();
    let marks = RefCell::new(Marks::default());
    let mut hip = false;
    let mut cuda = false;
    // The members name the runtime (`cuda_runtime_version`, an NVIDIA or AMD device).
    let runtime_member = Cell::new(false);
    let mut seen = 0u64;
    let file: Arc<str> = Arc::from(name);
    let res = for_each_key_member_and_indexed_event(
        &mut reader,
        &file,
        &mut |p| {
            if p.bytes_done > limit {
                marks.borrow_mut().bound = true;
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
        &mut |k, _| {
            let mut m = marks.borrow_mut();
            m.trace_events_key |= k == b"traceEvents";
            if !m.trace_events_key
                && !m.foreign_first_key
                && (k == b"segments" || k == b"device_traces")
            {
                m.snapshot = true;
                return ControlFlow::Break(());
            }
            m.foreign_first_key |= !SNAPSHOT_KEYS.contains(&k);
            ControlFlow::Continue(())
        },
        &mut |k, v, _| {
            let mut m = marks.borrow_mut();
            m.device_properties |= k == b"deviceProperties";
            m.distributed_info |= k == b"distributedInfo";
            let _ = read_member(&mut facts, k, v);
            runtime_member.set(
                facts.cuda_runtime_version.is_some()
                    || facts
                        .devices
                        .iter()
                        .any(|d| d.name.starts_with("AMD") || d.name.starts_with("NVIDIA")),
            );
        },
        &mut |ev, _| {
            seen += 1;
            let mut m = marks.borrow_mut();
            let ev = ev.bytes();
            if seen == 1 && !m.trace_events_key {
                // A bare list whose first element is a segment (`address`, `total_size`,
                // `blocks`): the list form of a snapshot.
                if let Some([Some(_), Some(_), None]) = fields(ev, ["total_size", "blocks", "ph"]) {
                    m.snapshot = true;
                    return ControlFlow::Break(());
                }
            }
            if let Some([cat, nm]) = fields(ev, ["cat", "name"]) {
                let cat = cat.and_then(as_str).unwrap_or_default();
                let runtime = matches!(&*cat, "cuda_runtime" | "Runtime");
                // The name is decoded only when it can still tell something.
                if !m.pytorch || runtime {
                    let nm = nm.and_then(as_str);
                    if !m.pytorch {
                        m.pytorch =
                            is_pytorch_category(&cat) || nm.as_deref().is_some_and(is_pytorch_name);
                    }
                    if runtime {
                        hip |= nm.as_deref().is_some_and(|n| n.starts_with("hip"));
                        cuda |= nm.as_deref().is_some_and(|n| n.starts_with("cuda"));
                    }
                }
            }
            // Past the first SNIFF_EVENTS events, once decided, only the runtime is still
            // looked for, until the first runtime call (HTA's traces have none in their first
            // 2,000 events and no `cuda_runtime_version`), within the bound.
            if seen >= SNIFF_EVENTS && m.decided() && (hip || cuda || runtime_member.get()) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    let m = marks.into_inner();
    if m.snapshot {
        head.snapshot = true;
        head.not_trace_reason = Some("a memory snapshot written as JSON".into());
        return head;
    }
    let has_events = match &res {
        Ok(scan) => scan.events > 0 || (scan.wrapped && !scan.no_trace_events && scan.stopped),
        Err(_) => false,
    };
    head.is_trace = has_events && (m.decided() || is_trace_name(name));
    // Stopped by the bound with nothing said against a trace: the run decides.
    let clean = matches!(&res, Ok(scan) if scan.error.is_none());
    if !head.is_trace && m.bound && clean {
        head.is_trace = true;
        head.undecided = true;
    }
    if !head.is_trace {
        // A `.gz` name over bytes without the gzip magic was read as plain text: said first,
        // since it is the likelier cause of what follows.
        let plain_gz = if !head.gzip && name.to_ascii_lowercase().ends_with(".gz") {
            "named .gz but not gzip-compressed (it does not start with the bytes 1F 8B), read as plain text: "
        } else {
            ""
        };
        head.not_trace_reason = Some(match &res {
            Err(e) => format!("not a trace: {plain_gz}{e}"),
            Ok(scan) if scan.error.is_some() => format!(
                "not a trace: {plain_gz}the JSON is damaged before any PyTorch profiler mark ({})",
                scan.error.as_ref().map(|e| e.to_string()).unwrap_or_default()
            ),
            Ok(_) if !has_events => "not a trace: a JSON file without trace events".into(),
            Ok(_) => "not a trace: a Chrome trace without deviceProperties, distributedInfo or any PyTorch profiler category (cpu_op, python_function, user_annotation, kernel, …)".into(),
        });
    }
    if let Some(d) = &facts.distributed {
        head.rank = d.rank;
        head.world_size = d.world_size;
    }
    head.devices = device_names(facts.devices.iter().map(|d| d.name.as_str()));
    head.runtime = runtime_text(&head.devices, facts.cuda_runtime_version, hip, cuda);
    head
}

/// A reader that fails once with the error it holds, then reads as empty.
struct FailOnce(Option<std::io::Error>);

impl Read for FailOnce {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}
