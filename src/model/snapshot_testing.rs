//! Small builders of [`Snapshot`]s for tests and doc examples (no pickle involved).
//!
//! Frames are given as `(filename, line, name)`, innermost first.

use super::snapshot::{
    Action, Block, BlockState, DeviceTrace, EntryRow, Frame, Segment, Snapshot, StackId, StrId,
    NO_STACK, NO_TIME,
};

/// Builds a one-or-more-device snapshot entry by entry.
#[derive(Default)]
pub struct SnapshotBuilder {
    snap: Snapshot,
}

impl SnapshotBuilder {
    /// An empty dict-form snapshot.
    pub fn new() -> Self {
        Self::default()
    }
    fn dev(&mut self, device: u32) -> &mut DeviceTrace {
        while self.snap.devices.len() <= device as usize {
            let n = self.snap.devices.len() as u32;
            self.snap.devices.push(DeviceTrace {
                device: n,
                ..Default::default()
            });
        }
        &mut self.snap.devices[device as usize]
    }
    /// Interns a stack given innermost first.
    pub fn stack(&mut self, frames: &[(&str, u32, &str)]) -> StackId {
        let p = &mut self.snap.pools;
        let ids: Vec<_> = frames
            .iter()
            .map(|(f, l, n)| {
                let fr = Frame {
                    filename: p.strings.intern(f),
                    line: *l,
                    name: p.strings.intern(n),
                    fx: None,
                };
                p.frames.intern(fr)
            })
            .collect();
        p.stacks.intern(&ids)
    }
    /// Appends one entry to `device` (time in µs, or [`NO_TIME`]).
    pub fn entry(
        &mut self,
        device: u32,
        action: Action,
        addr: u64,
        size: u64,
        stack: StackId,
        time_us: i64,
    ) -> &mut Self {
        let row = EntryRow {
            action,
            addr,
            size,
            stream: 0,
            time_us,
            stack,
            compile_ctx: StrId(0),
            user_meta: StrId(0),
            device_free: None,
        };
        let d = self.dev(device);
        d.entries.push(&row);
        d.max_frames = d.max_frames.max(1);
        self
    }
    /// An `oom` entry on device 0: `size` requested bytes, the driver's `device_free` bytes.
    pub fn oom(&mut self, size: u64, device_free: u64) -> &mut Self {
        let row = EntryRow {
            action: Action::Oom,
            addr: 0,
            size,
            stream: 0,
            time_us: NO_TIME,
            stack: NO_STACK,
            compile_ctx: StrId(0),
            user_meta: StrId(0),
            device_free: Some(device_free),
        };
        self.dev(0).entries.push(&row);
        self
    }
    /// `alloc` on device 0 without time.
    pub fn alloc(&mut self, addr: u64, size: u64, stack: StackId) -> &mut Self {
        self.entry(0, Action::Alloc, addr, size, stack, NO_TIME)
    }
    /// `free_requested` + `free_completed` on device 0.
    pub fn free(&mut self, addr: u64, size: u64) -> &mut Self {
        self.entry(0, Action::FreeRequested, addr, size, NO_STACK, NO_TIME)
            .entry(0, Action::FreeCompleted, addr, size, NO_STACK, NO_TIME)
    }
    /// Adds an end-state segment with `blocks` as `(size, requested, state, stack)`, addresses contiguous.
    pub fn segment(
        &mut self,
        device: i64,
        address: u64,
        blocks: &[(u64, u64, BlockState, Option<StackId>)],
    ) -> &mut Self {
        let idx = self.snap.segments.len() as u32;
        let start = self.snap.blocks.len() as u32;
        let mut a = address;
        for &(size, req, state, stack) in blocks {
            self.snap.blocks.push(Block {
                segment: idx,
                address: a,
                size,
                requested_size: req,
                state,
                stack,
                has_history: false,
                address_computed: false,
            });
            a += size;
        }
        let total: u64 = blocks.iter().map(|b| b.0).sum();
        let allocated: u64 = blocks
            .iter()
            .filter(|b| b.2 == BlockState::ActiveAllocated)
            .map(|b| b.0)
            .sum();
        self.snap.segments.push(Segment {
            device,
            address,
            total_size: total,
            allocated_size: allocated,
            active_size: allocated,
            requested_size: None,
            stream: 0,
            segment_type: StrId(0),
            pool_id: (0, 0),
            is_expandable: false,
            stack: None,
            blocks: start..self.snap.blocks.len() as u32,
        });
        self
    }
    /// The snapshot.
    pub fn finish(&mut self) -> Snapshot {
        std::mem::take(&mut self.snap)
    }
}
