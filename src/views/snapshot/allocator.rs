//! The allocator state after any entry, for the snapshot tab's segment map (
//! torch-snapshot.md §6.1, §7.10): answered from the [`AllocatorHistory`] built once per
//! device when the view is made (one backward walk), so a click undoes fewer than `K` entries
//! from a checkpoint and never replays from zero nor reads the file again.

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::snapshot::allocator::fragmentation::{classify, largest_recent_request};
use crate::analysis::snapshot::allocator::oom::explain;
use crate::analysis::snapshot::allocator::{AllocatorHistory, SegmentMap, State, NO_RECORD};
use crate::analysis::snapshot::device::DeviceAnalysis;
use crate::base::format::bytes_i as human;
use crate::model::snapshot::Snapshot;
use crate::model::snapshot::{Action, BlockState, DeviceTrace, StackId};
use crate::protocol::snapshot_allocator::{
    SnapAllocatorDto, SnapAllocatorQuery, SnapBlockDto, SnapEntryRowDto, SnapFragmentationDto,
    SnapOomDto, SnapSegmentMapDto,
};

use super::live::Frames;
use super::{trace, SnapshotData};

/// At most this many entries are listed on each side of the selected one.
pub const MAX_CONTEXT: u32 = 200;

/// Builds the allocator history of every device of `devices` with a trace (None for the others).
pub fn histories(snap: &Snapshot, devices: &[DeviceAnalysis]) -> Vec<Option<AllocatorHistory>> {
    devices
        .iter()
        .map(|d| {
            let t = trace(snap, d)?;
            Some(AllocatorHistory::build(
                snap,
                t,
                &d.lifetimes,
                crate::analysis::snapshot::allocator::DEFAULT_K,
            ))
        })
        .collect()
}

/// `state` for block states in the payload.
fn state_name(s: BlockState) -> &'static str {
    match s {
        BlockState::ActiveAllocated => "allocated",
        BlockState::ActivePendingFree => "pending_free",
        _ => "inactive",
    }
}

/// One entry as the MemoryViz event list writes it.
pub fn entry_text(t: &DeviceTrace, i: usize) -> String {
    let e = &t.entries;
    let stream = e
        .stream_values()
        .get(e.stream()[i] as usize)
        .copied()
        .unwrap_or(0);
    let size = human(e.size()[i].min(i64::MAX as u64) as i64);
    match e.action()[i] {
        Action::Oom => {
            let free = e
                .device_free()
                .iter()
                .find(|(j, _)| *j as usize == i)
                .map_or("unknown".to_string(), |(_, f)| {
                    human((*f).min(i64::MAX as u64) as i64)
                });
            format!("OOM (requested {size}, device has {free} free)")
        }
        a => format!("{} 0x{:x} {size} (stream {stream})", a.name(), e.addr()[i]),
    }
}

impl SnapshotData<'_> {
    /// The allocator state after entry `q.index` of device slot `q.slot`: the segment map
    /// (address order, inactive space included), the fragmentation classes, the OOM
    /// explanation at an `oom` entry and the entries around it.
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn allocator(&self, q: &SnapAllocatorQuery) -> Result<SnapAllocatorDto, String> {
        let d = self.device(q.slot)?;
        let t = trace(self.snap, d);
        let allocs = self
            .allocs
            .get_or_init(|| histories(self.snap, self.devices));
        let hist = allocs.get(q.slot as usize).and_then(|h| h.as_ref());
        let (index, state) = match (t, hist) {
            (Some(t), Some(h)) => {
                let i = q.index.map(|i| (i as usize).min(t.entries.len() - 1));
                (i, h.state_after(t, i))
            }
            _ => (None, State::at_end(self.snap, d.device, &d.lifetimes)),
        };
        let map = state.segment_map();
        let recent = t.map_or(0, |t| largest_recent_request(t, index));
        let f = classify(&map, recent);
        let oom = match (t, index) {
            (Some(t), Some(i)) if t.entries.action()[i] == Action::Oom => {
                let peak = d.curves.reserved[..=i]
                    .iter()
                    .copied()
                    .fold(d.curves.baseline_reserved, i64::max);
                let e = explain(t, i, &map, peak.max(0) as u64);
                Some(SnapOomDto {
                    cause: e.cause.name().to_string(),
                    sentence: e.sentence,
                    requested_bytes: e.requested,
                    device_free_bytes: e.device_free,
                    cached_free_bytes: e.cached_free,
                    largest_free_bytes: e.largest_free,
                    peak_reserved_bytes: e.peak_reserved,
                })
            }
            _ => None,
        };
        let entries = match t {
            Some(t) => {
                let n = t.entries.len();
                let c = q.context.min(MAX_CONTEXT) as usize;
                let mid = index.unwrap_or(0);
                let lo = mid.saturating_sub(c);
                let hi = (mid + c + 1).min(n);
                (lo..hi)
                    .map(|i| SnapEntryRowDto {
                        index: i as u32,
                        text: entry_text(t, i),
                    })
                    .collect()
            }
            None => Vec::new(),
        };
        Ok(SnapAllocatorDto {
            target: self.target,
            slot: q.slot,
            index: index.map(|i| i as u32),
            entries_total: t.map_or(0, |t| t.entries.len() as u64),
            segments: self.segment_rows(d, &map),
            orphan_blocks: map.orphans.len() as u64,
            fragmentation: SnapFragmentationDto {
                reserved_bytes: f.reserved,
                allocated_bytes: f.allocated,
                active_bytes: f.active,
                inactive_bytes: f.inactive,
                largest_inactive_bytes: f.largest_inactive,
                largest_recent_request_bytes: f.largest_recent_request,
                hard_bytes: f.hard,
                soft_bytes: f.soft,
                stream_bytes: f.stream,
                internal_waste_bytes: f.internal_waste,
                external_ratio: f.external_ratio,
            },
            oom,
            entries,
            replay_mismatches: hist.map_or(0, |h| h.mismatches),
        })
    }

    /// The payload rows of `map`, with the site of each block's record.
    fn segment_rows(&self, d: &DeviceAnalysis, map: &SegmentMap) -> Vec<SnapSegmentMapDto> {
        let lt = &d.lifetimes;
        let mut fr = Frames::new(self);
        let mut sites: HashMap<StackId, String> = HashMap::default();
        map.segments
            .iter()
            .map(|s| {
                let sum = |st: BlockState| -> u64 {
                    s.blocks
                        .iter()
                        .filter(|b| b.state == st)
                        .map(|b| b.size)
                        .sum()
                };
                let blocks = s
                    .blocks
                    .iter()
                    .map(|b| {
                        let rec = (b.record != NO_RECORD && (b.record as usize) < lt.len())
                            .then_some(b.record);
                        let site = rec.map(|r| {
                            let stack = lt.stack[r as usize];
                            sites
                                .entry(stack)
                                .or_insert_with(|| fr.record_site(lt, r))
                                .clone()
                        });
                        SnapBlockDto {
                            address: format!("0x{:x}", b.address),
                            offset: b.address - s.address,
                            bytes: b.size,
                            requested_bytes: b.requested,
                            state: state_name(b.state).to_string(),
                            stream: b.stream,
                            record: rec,
                            memoryviz_name: rec.map(|r| {
                                let r = r as usize;
                                format!("b'{:x}_{}'", lt.addr[r], lt.version[r])
                            }),
                            site,
                            exact: b.exact,
                        }
                    })
                    .collect();
                SnapSegmentMapDto {
                    address: format!("0x{:x}", s.address),
                    total_bytes: s.seg.size,
                    stream: s.seg.stream,
                    pool: s.seg.pool,
                    expandable: s.seg.expandable,
                    allocated_bytes: sum(BlockState::ActiveAllocated),
                    pending_bytes: sum(BlockState::ActivePendingFree),
                    inactive_bytes: sum(BlockState::Inactive),
                    largest_free_bytes: s
                        .blocks
                        .iter()
                        .filter(|b| b.state == BlockState::Inactive)
                        .map(|b| b.size)
                        .max()
                        .unwrap_or(0),
                    blocks,
                }
            })
            .collect()
    }
}
