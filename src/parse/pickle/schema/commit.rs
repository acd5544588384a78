//! Consumed containers become model rows: items added to typed containers
//! ([`Builder::add_items`]), frame dicts and frame lists interned as [`FrameId`] / [`StackId`],
//! and trace entries, segments, blocks and annotations committed to the model; the memo slot
//! of a consumed container is rewritten to its id (or a tombstone).

use crate::model::snapshot::{Block, FrameId, StackId, StrId};
use crate::parse::pickle::fields::{
    AnnotationObj, BlockObj, EntryObj, FrameObj, HistoryListObj, HistoryObj, SegmentObj,
};
use crate::parse::pickle::memo::Memo;
use crate::parse::pickle::slab::NONE;
use crate::parse::pickle::vm::{Obj, Val};

use super::{Builder, Kind, Role, GENERIC_CAP};

impl Builder {
    #[inline]
    fn consumed(memo: &mut Memo, memo_idx: u32, replacement: Val) {
        if memo_idx != NONE {
            memo.replace(memo_idx, replacement);
        }
    }

    /// Adds `items` (k/v pairs for dicts) to `target` (SETITEMS, APPENDS, ADDITEMS, DICT, LIST).
    pub fn add_items(
        &mut self,
        kind: Kind,
        target: Val,
        items: &[Val],
        memo: &mut Memo,
        bigs: &[i128],
    ) -> Result<(), String> {
        match target {
            Val::Generic(i) => {
                if self.generic_items + items.len() > GENERIC_CAP {
                    self.drop_generic();
                    return Ok(());
                }
                self.generic_items += items.len();
                if let Some(node) = self.generic.get_mut(i as usize) {
                    node.items.extend_from_slice(items);
                }
                Ok(())
            }
            Val::Dropped => Ok(()),
            Val::Obj(o) => {
                if o.role.kind() != Some(kind) {
                    return Err(format!("items of the wrong kind added to a {:?}", o.role));
                }
                if kind == Kind::Dict {
                    for pair in items.chunks_exact(2) {
                        self.set_field(o, pair[0], pair[1], memo, bigs)?;
                    }
                    Ok(())
                } else {
                    for &item in items {
                        self.append(o, item, memo, bigs)?;
                    }
                    Ok(())
                }
            }
            _ => Err("items added to a value that is not a container".into()),
        }
    }

    /// Resolves a `frames` value to a stack: `Ok(None)` for `None`/unusable values.
    pub fn stack_of(&mut self, v: Val, memo: &mut Memo) -> Result<Option<StackId>, String> {
        match v {
            Val::Stack(s) => Ok(Some(s)),
            Val::Obj(o) if o.role == Role::FrameList => {
                let slot = self.frame_lists.get(o.slot, o.gen)?;
                if slot.done != NONE {
                    return Ok(Some(StackId(slot.done)));
                }
                let id = self.pools.stacks.intern(&slot.val);
                slot.done = id.0;
                let m = slot.memo;
                Self::consumed(memo, m, Val::Stack(id));
                self.defer(Role::FrameList, o.slot);
                Ok(Some(id))
            }
            Val::None => Ok(None),
            _ => {
                self.warn(
                    "SNAP-FRAMES",
                    "a `frames` value is not a list of frame dicts; its stack is unknown".into(),
                );
                Ok(None)
            }
        }
    }

    fn frame_of(&mut self, v: Val, memo: &mut Memo) -> Result<Option<FrameId>, String> {
        match v {
            Val::Frame(f) => Ok(Some(f)),
            Val::Obj(o) if o.role == Role::Frame => {
                let slot = self.frames.get(o.slot, o.gen)?;
                if slot.done != NONE {
                    return Ok(Some(FrameId(slot.done)));
                }
                let frame = slot.val.to_frame();
                let m = slot.memo;
                let id = self.pools.frames.intern(frame);
                if let Ok(slot) = self.frames.get(o.slot, o.gen) {
                    slot.done = id.0;
                }
                Self::consumed(memo, m, Val::Frame(id));
                self.defer(Role::Frame, o.slot);
                Ok(Some(id))
            }
            _ => Ok(None),
        }
    }

    fn append(
        &mut self,
        list: Obj,
        item: Val,
        memo: &mut Memo,
        bigs: &[i128],
    ) -> Result<(), String> {
        match list.role {
            Role::FrameList => {
                let f = self.frame_of(item, memo)?;
                match f {
                    Some(f) => self.frame_lists.get(list.slot, list.gen)?.val.push(f),
                    None => self.warn("SNAP-FRAMES", "a frame is not a dict; skipped".into()),
                }
            }
            Role::TraceList(d) => self.commit_entry(d, item, memo, bigs)?,
            Role::DeviceTraces => self.append_trace_slot(item),
            Role::SegmentList => self.commit_segment(item, memo)?,
            Role::BlockList => {
                if let Val::Obj(o) = item {
                    if o.role == Role::Block {
                        let block = self.finish_block(o, memo)?;
                        self.block_lists.get(list.slot, list.gen)?.val.push(block);
                        return Ok(());
                    }
                }
                self.warn("SNAP-LAYOUT", "a block is not a dict; skipped".into());
            }
            Role::HistoryList => {
                if let Val::Obj(o) = item {
                    if o.role == Role::History {
                        let h = self.histories.get(o.slot, o.gen)?;
                        let first = (h.val.real_size, h.val.stack);
                        let m = h.memo;
                        Self::consumed(memo, m, Val::Tomb);
                        self.defer(Role::History, o.slot);
                        let hl = &mut self.history_lists.get(list.slot, list.gen)?.val;
                        if hl.count == 0 {
                            hl.first = Some(first);
                        }
                        hl.count += 1;
                    }
                }
            }
            Role::AnnotationList => self.commit_annotation(item, memo)?,
            _ => return Err(format!("APPEND to a {:?}", list.role)),
        }
        Ok(())
    }

    fn finish_block(&mut self, o: Obj, memo: &mut Memo) -> Result<Block, String> {
        let b = self.blocks.get(o.slot, o.gen)?;
        let m = b.memo;
        let block = b.val.to_block();
        Self::consumed(memo, m, Val::Tomb);
        self.defer(Role::Block, o.slot);
        Ok(block)
    }

    pub(in crate::parse::pickle) fn take_block_list(
        &mut self,
        v: Val,
        memo: &mut Memo,
    ) -> Result<Vec<Block>, String> {
        match v {
            Val::Obj(o) if o.role == Role::BlockList => {
                let s = self.block_lists.get(o.slot, o.gen)?;
                let blocks = std::mem::take(&mut s.val);
                let m = s.memo;
                Self::consumed(memo, m, Val::Tomb);
                self.defer(Role::BlockList, o.slot);
                Ok(blocks)
            }
            _ => {
                self.warn(
                    "SNAP-LAYOUT",
                    "a segment's `blocks` is not a list of blocks".into(),
                );
                Ok(Vec::new())
            }
        }
    }

    pub(in crate::parse::pickle) fn take_history(
        &mut self,
        v: Val,
        memo: &mut Memo,
    ) -> Result<HistoryListObj, String> {
        match v {
            Val::Obj(o) if o.role == Role::HistoryList => {
                let s = self.history_lists.get(o.slot, o.gen)?;
                let h = std::mem::take(&mut s.val);
                let m = s.memo;
                Self::consumed(memo, m, Val::Tomb);
                self.defer(Role::HistoryList, o.slot);
                Ok(h)
            }
            _ => Ok(HistoryListObj::default()),
        }
    }

    fn commit_entry(
        &mut self,
        d: u32,
        item: Val,
        memo: &mut Memo,
        bigs: &[i128],
    ) -> Result<(), String> {
        let Val::Obj(o) = item else {
            let n = self.device_mut(d).trace.entries.len();
            self.device_mut(d).trace.bad_entries += 1;
            self.warn(
                "SNAP-ENTRY",
                format!("device {d}: trace item after entry {n} is not a dict; skipped"),
            );
            return Ok(());
        };
        if o.role != Role::Entry {
            return Err(format!("a {:?} inside a device trace", o.role));
        }
        let slot = self.entries.get(o.slot, o.gen)?;
        let m = slot.memo;
        let e = std::mem::take(&mut slot.val);
        Self::consumed(memo, m, Val::Tomb);
        self.defer(Role::Entry, o.slot);
        let r = e.to_row(&self.k, bigs, &mut self.ranges, self.offset);
        let n_frames = e.stack.map(|s| self.pools.stacks.get(s).len()).unwrap_or(0) as u32;
        let (at, total) = (self.offset, self.total);
        let dev = self.device_mut(d);
        dev.note_keys(e.mask, &e.unknown_keys);
        match r {
            Ok((row, unknown)) => {
                if let Some(name) = unknown {
                    dev.note_unknown_action(name);
                }
                dev.trace.max_frames = dev.trace.max_frames.max(n_frames);
                dev.reserve_rest(at, total);
                dev.trace.entries.push(&row);
            }
            Err(what) => {
                let n = dev.trace.entries.len();
                dev.trace.bad_entries += 1;
                self.warn(
                    "SNAP-ENTRY",
                    format!("device {d}: trace entry after entry {n} skipped: {what}"),
                );
            }
        }
        // Keep the scratch allocation of unknown keys for reuse.
        Ok(())
    }

    fn commit_segment(&mut self, item: Val, memo: &mut Memo) -> Result<(), String> {
        let Val::Obj(o) = item else {
            self.warn("SNAP-LAYOUT", "a segment is not a dict; skipped".into());
            return Ok(());
        };
        if o.role != Role::Segment {
            return Err(format!("a {:?} inside the segments list", o.role));
        }
        let s = self.segments.get(o.slot, o.gen)?;
        let m = s.memo;
        let seg = std::mem::take(&mut s.val);
        Self::consumed(memo, m, Val::Tomb);
        self.defer(Role::Segment, o.slot);
        if !seg.shaped {
            let n = self.out_segments.len();
            self.warn(
                "SNAP-LAYOUT",
                format!("segment {n} has neither total_size nor blocks: not a segment; skipped"),
            );
            return Ok(());
        }
        if let Some(why) = &seg.unusable {
            let n = self.out_segments.len();
            self.warn(
                "SNAP-FIELD",
                format!(
                    "segment {n} (address 0x{:x}) skipped with its {} blocks: {why}",
                    seg.address,
                    seg.blocks.len()
                ),
            );
            return Ok(());
        }
        let mut sizes = vec![seg.total_size, seg.allocated_size, seg.active_size];
        sizes.extend(seg.requested_size);
        sizes.extend(seg.blocks.iter().flat_map(|b| [b.size, b.requested_size]));
        if let Err(what) = self.ranges.admit(&sizes) {
            let n = self.out_segments.len();
            self.warn(
                "SNAP-RANGE",
                format!(
                    "segment {n} (address 0x{:x}, device {}) skipped with its {} blocks: {what}",
                    seg.address,
                    seg.device,
                    seg.blocks.len()
                ),
            );
            return Ok(());
        }
        let idx = self.out_segments.len() as u32;
        let start = self.out_blocks.len() as u32;
        let mut addr = seg.address;
        for mut b in seg.blocks.iter().cloned() {
            b.segment = idx;
            if b.address_computed {
                b.address = addr;
            }
            addr = addr.wrapping_add(b.size);
            self.out_blocks.push(b);
        }
        let end = self.out_blocks.len() as u32;
        self.out_segments.push(seg.to_segment(start..end));
        Ok(())
    }

    fn commit_annotation(&mut self, item: Val, memo: &mut Memo) -> Result<(), String> {
        if let Val::Obj(o) = item {
            if o.role == Role::Annotation {
                let a = self.annotations.get(o.slot, o.gen)?;
                let m = a.memo;
                let ann = a.val.to_annotation();
                Self::consumed(memo, m, Val::Tomb);
                self.defer(Role::Annotation, o.slot);
                self.out_annotations.push(ann);
                return Ok(());
            }
        }
        self.warn(
            "SNAP-LAYOUT",
            "an external annotation is not a dict; skipped".into(),
        );
        Ok(())
    }

    /// Scratch access for `fields.rs`.
    #[inline]
    pub(in crate::parse::pickle) fn entry(&mut self, o: Obj) -> Result<&mut EntryObj, String> {
        Ok(&mut self.entries.get(o.slot, o.gen)?.val)
    }
    #[inline]
    pub(in crate::parse::pickle) fn frame(&mut self, o: Obj) -> Result<&mut FrameObj, String> {
        Ok(&mut self.frames.get(o.slot, o.gen)?.val)
    }
    pub(in crate::parse::pickle) fn segment(&mut self, o: Obj) -> Result<&mut SegmentObj, String> {
        Ok(&mut self.segments.get(o.slot, o.gen)?.val)
    }
    pub(in crate::parse::pickle) fn block(&mut self, o: Obj) -> Result<&mut BlockObj, String> {
        Ok(&mut self.blocks.get(o.slot, o.gen)?.val)
    }
    pub(in crate::parse::pickle) fn history(&mut self, o: Obj) -> Result<&mut HistoryObj, String> {
        Ok(&mut self.histories.get(o.slot, o.gen)?.val)
    }
    pub(in crate::parse::pickle) fn annotation(
        &mut self,
        o: Obj,
    ) -> Result<&mut AnnotationObj, String> {
        Ok(&mut self.annotations.get(o.slot, o.gen)?.val)
    }

    /// Text of a string id.
    pub fn text(&self, id: StrId) -> &str {
        self.pools.strings.get(id)
    }
}
