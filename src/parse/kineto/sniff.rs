//! Step 2 of the inventory for GPU ranks: the head of a Kineto trace (`ingest::kineto`).

use std::io::Read;
use std::ops::ControlFlow;
use std::sync::Arc;

use super::members::read_member;
use crate::ingest::gzip::maybe_gunzip;
use crate::ingest::kineto::{cuda_version_text, is_trace_name, KinetoHead};
use crate::ingest::ChunkReader;
use crate::model::gpu::TraceFacts;
use crate::parse::cluster_summary::{head as summary_head, HEAD_BYTES};
use crate::parse::trace_json::scan::{as_str, fields};
use crate::parse::trace_json::splitter::for_each_member_and_event;

/// Events looked at for GPU categories.
pub const SNIFF_EVENTS: u64 = 2000;
/// Inflated bytes read at most.
pub const SNIFF_BYTES: u64 = 16 << 20;

/// Reads the head of `src` (file `name`): the top-level members up to the events and the
/// first [`SNIFF_EVENTS`] events (further until the first runtime call when neither the members
/// nor those events name the runtime; at most [`SNIFF_BYTES`] inflated bytes), and says whether it
/// is a Kineto trace (formats.md §8: `traceEvents` with `deviceProperties`, `distributedInfo`
/// or a GPU category; or a `*.pt.trace.json[.gz]` name with events).
pub fn sniff<'a>(src: Box<dyn Read + 'a>, name: &str, size: Option<u64>) -> KinetoHead {
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
    let mut keys = (false, false);
    let mut gpu_cat = false;
    let mut hip = false;
    let mut cuda = false;
    // The members name the runtime (`cuda_runtime_version`, an NVIDIA or AMD device).
    let runtime_member = std::cell::Cell::new(false);
    let mut seen = 0u64;
    let file: Arc<str> = Arc::from(name);
    let res = for_each_member_and_event(
        &mut reader,
        &file,
        &mut |p| {
            if p.bytes_done > SNIFF_BYTES {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
        &mut |k, v, _| {
            keys.0 |= k == b"deviceProperties";
            keys.1 |= k == b"distributedInfo";
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
            if let Some([cat, nm]) = fields(ev, ["cat", "name"]) {
                let cat = cat.and_then(as_str).unwrap_or_default();
                gpu_cat |= seen <= SNIFF_EVENTS
                    && matches!(
                        &*cat,
                        "kernel"
                            | "gpu_memcpy"
                            | "gpu_memset"
                            | "cuda_runtime"
                            | "cuda_driver"
                            | "Kernel"
                            | "Memcpy"
                            | "Memset"
                            | "Runtime"
                            | "ac2g"
                    );
                if matches!(&*cat, "cuda_runtime" | "Runtime") {
                    let nm = nm.and_then(as_str);
                    hip |= nm.as_deref().is_some_and(|n| n.starts_with("hip"));
                    cuda |= nm.as_deref().is_some_and(|n| n.starts_with("cuda"));
                }
            }
            // Past the first SNIFF_EVENTS events only the runtime is still looked for, until
            // the first runtime call (HTA's traces have none in their first 2,000 events and
            // no `cuda_runtime_version`), within SNIFF_BYTES.
            if seen >= SNIFF_EVENTS && (hip || cuda || runtime_member.get()) {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        },
    );
    let has_events = match &res {
        Ok(scan) => scan.events > 0 || (scan.wrapped && !scan.no_trace_events && scan.stopped),
        Err(_) => false,
    };
    head.is_trace = has_events && (keys.0 || keys.1 || gpu_cat || is_trace_name(name));
    if !head.is_trace {
        head.not_trace_reason = Some(match &res {
            Err(e) => format!("a JSON file that is not a PyTorch profiler trace ({e})"),
            Ok(_) if !has_events => "a JSON file without trace events: not a PyTorch profiler trace".into(),
            Ok(_) => "a Chrome trace without deviceProperties, distributedInfo or GPU categories: not a PyTorch profiler trace".into(),
        });
    }
    if let Some(d) = &facts.distributed {
        head.rank = d.rank;
        head.world_size = d.world_size;
    }
    for d in &facts.devices {
        if !head.devices.contains(&d.name) {
            head.devices.push(d.name.clone());
        }
    }
    head.runtime = if hip || head.devices.iter().any(|d| d.starts_with("AMD")) {
        Some("ROCm".into())
    } else {
        // Without `cuda_runtime_version` (older Kineto, HTA's traces) `cuda…` runtime calls
        // or an NVIDIA device say CUDA, as `hip…` calls or an AMD device say ROCm; no version.
        let nvidia = head.devices.iter().any(|d| d.starts_with("NVIDIA"));
        facts
            .cuda_runtime_version
            .map(cuda_version_text)
            .or_else(|| (cuda || nvidia).then(|| "CUDA".into()))
    };
    head
}

/// A reader that fails once with the error it holds, then reads as empty.
struct FailOnce(Option<std::io::Error>);

impl Read for FailOnce {
    fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
        self.0.take().map_or(Ok(0), Err)
    }
}
