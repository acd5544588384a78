//! Schema-directed building: snapshot containers → `model::snapshot` (torch-snapshot.md §3, §5.1).
//!
//! Each container gets a [`Role`] when it is pushed (decided by the VM from
//! the stack below it). Typed containers are filled in small scratch structs
//! (`fields.rs`) and, when their parent consumes them, turned into model rows:
//! a trace entry becomes one row of its device's [`EntryTable`] and is dropped;
//! a frame dict becomes a [`FrameId`], a frame list a [`StackId`] interned by
//! content. The memo slot of a consumed container is rewritten to that id (or
//! a tombstone), so later `BINGET`s cost nothing. Unknown parts of the file
//! become small generic trees, capped in size.

use std::collections::BinaryHeap;

use crate::base::{Position, Problem, Problems, Severity};
use crate::model::snapshot::{Annotation, Block, FrameId, SettingValue, SnapPools};

use super::devices::{SharedTrace, MAX_DEVICES};
use super::fields::{
    AnnotationObj, BlockObj, DevBuild, EntryObj, FrameObj, HistoryListObj, HistoryObj, SegmentObj,
};
use super::keys::Keys;
use super::ranges::Ranges;
use super::slab::Slab;
use super::vm::{Obj, Val};

/// Container kind as written in the pickle.
mod commit;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Dict,
    List,
    Tuple,
    Set,
}

/// What a container is in the snapshot schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Role {
    Top,
    SegmentList,
    DeviceTraces,
    TraceList(u32),
    Entry,
    FrameList,
    Frame,
    Segment,
    BlockList,
    Block,
    HistoryList,
    History,
    AnnotationList,
    Annotation,
    Generic,
}

impl Role {
    /// Role of the outermost container.
    pub fn root(kind: Kind) -> Role {
        match kind {
            Kind::Dict => Role::Top,
            Kind::List => Role::SegmentList,
            _ => Role::Generic,
        }
    }
    /// The container kind this role expects (`None`: any).
    pub fn kind(self) -> Option<Kind> {
        match self {
            Role::Top
            | Role::Entry
            | Role::Frame
            | Role::Segment
            | Role::Block
            | Role::History
            | Role::Annotation => Some(Kind::Dict),
            Role::Generic => None,
            _ => Some(Kind::List),
        }
    }
    /// True when a container of `kind` may take this role.
    pub fn accepts(self, kind: Kind) -> bool {
        self.kind().is_none_or(|k| k == kind)
    }
}

/// A generic container (unknown keys, settings, tuples).
#[derive(Debug)]
pub(super) struct GenericNode {
    pub kind: Kind,
    pub items: Vec<Val>,
}

/// Total items kept in generic containers (each container counts as one item too) before the
/// rest is dropped with a `SNAP-GENERIC-CAP` warning. Generic parts are the allocator settings,
/// unknown keys and dict-valued metadata: the real fixtures keep at most 6 items; 2^18 items
/// cost at most ≈ 12 MB.
pub const GENERIC_CAP: usize = 1 << 18;

/// Most typed snapshot containers (entries, frames, segments, …) under construction or awaiting
/// release at once. A real snapshot has one per open nesting level plus one `APPENDS` batch of
/// finished entries waiting on the stack (≤ 1000: the real fixtures peak at 1,001); a file that
/// opens containers and never finishes them stops with a located error at this bound instead
/// of growing without limit.
pub(super) const MAX_OPEN: usize = 1 << 16;

/// The builder: pools, scratch slabs, and the model parts built so far.
pub(crate) struct Builder {
    pub pools: SnapPools,
    pub offset: u64,
    /// The file's size in bytes when known (0 otherwise): sizes the entry columns.
    pub total: u64,
    pub invalid_utf8: u64,
    pub file: String,
    pub k: Keys,
    pub problems: Problems,
    entries: Slab<EntryObj>,
    frames: Slab<FrameObj>,
    frame_lists: Slab<Vec<FrameId>>,
    pub(super) segments: Slab<SegmentObj>,
    block_lists: Slab<Vec<Block>>,
    blocks: Slab<BlockObj>,
    history_lists: Slab<HistoryListObj>,
    histories: Slab<HistoryObj>,
    annotations: Slab<AnnotationObj>,
    pub generic: Vec<GenericNode>,
    generic_items: usize,
    generic_dropped: bool,
    /// Consumed slots waiting for release, highest `min_pos` first (a max-heap, so an op
    /// touches only the slots it frees: slots stuck under a deep handle cost nothing per op).
    pending: BinaryHeap<Pending>,
    /// The fast lane of `pending`: slots deferred in non-decreasing `min_pos` order (a batch of
    /// trace entries appended one after another), so the top is the highest and a release is a
    /// `Vec::pop`. A slot that would break the order goes to the heap.
    pending_run: Vec<Pending>,
    pub devices: Vec<DevBuild>,
    pub dt_len: u32,
    pub out_segments: Vec<crate::model::snapshot::Segment>,
    pub out_blocks: Vec<Block>,
    pub out_annotations: Vec<Annotation>,
    pub has_annotations_key: bool,
    pub settings: Option<Vec<(String, SettingValue)>>,
    pub top_keys: Vec<String>,
    pub other_fields: Vec<(String, String)>,
    pub has_fx: bool,
    /// Trace lists referenced more than once from `device_traces`.
    pub(super) shared: Vec<SharedTrace>,
    /// `device_traces` items beyond [`MAX_DEVICES`].
    pub(super) devices_beyond: u64,
    /// Range checks of sizes, times and streams (`ranges.rs`).
    pub(super) ranges: Ranges,
    /// Slab slots in use, all kinds (allocated in `new_container`, freed in `end_op`).
    open: usize,
}

/// A consumed slot waiting for release, ordered by `min_pos` (then slot, role).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    min_pos: u32,
    slot: u32,
    role: Role,
}

impl Ord for Pending {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.min_pos, self.slot, self.role).cmp(&(o.min_pos, o.slot, o.role))
    }
}

impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Builder {
    pub fn new(file: &str) -> Self {
        let mut pools = SnapPools::default();
        let k = Keys::new(&mut pools.strings);
        Builder {
            pools,
            offset: 0,
            total: 0,
            invalid_utf8: 0,
            file: file.to_string(),
            k,
            problems: Problems::new(),
            entries: Slab::default(),
            frames: Slab::default(),
            frame_lists: Slab::default(),
            segments: Slab::default(),
            block_lists: Slab::default(),
            blocks: Slab::default(),
            history_lists: Slab::default(),
            histories: Slab::default(),
            annotations: Slab::default(),
            generic: Vec::new(),
            generic_items: 0,
            generic_dropped: false,
            pending: BinaryHeap::new(),
            pending_run: Vec::new(),
            devices: Vec::new(),
            dt_len: 0,
            out_segments: Vec::new(),
            out_blocks: Vec::new(),
            out_annotations: Vec::new(),
            has_annotations_key: false,
            settings: None,
            top_keys: Vec::new(),
            other_fields: Vec::new(),
            has_fx: false,
            shared: Vec::new(),
            devices_beyond: 0,
            ranges: Ranges::default(),
            open: 0,
        }
    }

    /// Records a warning at the current instruction.
    pub fn warn(&mut self, code: &'static str, message: String) {
        let at = Position::file(self.file.as_str()).at_byte(self.offset);
        self.problems
            .push(Problem::new(Severity::Warning, code, at, message));
    }

    /// Creates a container of `kind` with `role`.
    pub fn new_container(&mut self, role: Role, kind: Kind) -> Result<Val, String> {
        let obj = |role, (slot, gen): (u32, u32)| Val::Obj(Obj { role, slot, gen });
        if !matches!(
            role,
            Role::Generic
                | Role::Top
                | Role::SegmentList
                | Role::DeviceTraces
                | Role::AnnotationList
                | Role::TraceList(_)
        ) {
            self.open += 1; // a slab slot is allocated below
        }
        Ok(match role {
            Role::Generic => return Ok(self.new_generic(kind, &[])),
            Role::Top | Role::SegmentList | Role::DeviceTraces | Role::AnnotationList => {
                obj(role, (0, 0))
            }
            Role::TraceList(d) => {
                self.device_mut(d);
                obj(role, (d, 0))
            }
            Role::Entry => obj(role, self.entries.alloc()),
            Role::Frame => obj(role, self.frames.alloc()),
            Role::FrameList => obj(role, self.frame_lists.alloc()),
            Role::Segment => obj(role, self.segments.alloc()),
            Role::BlockList => obj(role, self.block_lists.alloc()),
            Role::Block => obj(role, self.blocks.alloc()),
            Role::HistoryList => obj(role, self.history_lists.alloc()),
            Role::History => obj(role, self.histories.alloc()),
            Role::Annotation => obj(role, self.annotations.alloc()),
        })
    }

    /// Items counted against [`GENERIC_CAP`].
    pub fn generic_items(&self) -> usize {
        self.generic_items
    }

    /// Typed containers under construction or awaiting release, all kinds together.
    pub fn open_containers(&self) -> usize {
        self.open
    }

    /// A generic container holding `items` (capped: the container counts as one item).
    pub fn new_generic(&mut self, kind: Kind, items: &[Val]) -> Val {
        if self.generic_items + items.len() + 1 > GENERIC_CAP {
            self.drop_generic();
            return Val::Dropped;
        }
        self.generic_items += items.len() + 1;
        self.generic.push(GenericNode {
            kind,
            items: items.to_vec(),
        });
        Val::Generic((self.generic.len() - 1) as u32)
    }

    fn drop_generic(&mut self) {
        if !self.generic_dropped {
            self.generic_dropped = true;
            self.warn(
                "SNAP-GENERIC-CAP",
                format!("unrecognised parts of the pickle exceed {GENERIC_CAP} items; the rest is not kept"),
            );
        }
    }

    pub fn device_mut(&mut self, d: u32) -> &mut DevBuild {
        let d = d as usize;
        while self.devices.len() <= d {
            let n = self.devices.len() as u32;
            self.devices.push(DevBuild::new(n));
        }
        &mut self.devices[d]
    }

    /// Kind of a container value, if `v` is one.
    pub fn container_kind(&self, v: Val) -> Option<Kind> {
        match v {
            Val::Obj(o) => o.role.kind(),
            Val::Generic(i) => self.generic.get(i as usize).map(|n| n.kind),
            _ => None,
        }
    }

    /// Role of the value stored under `key` in `dict`.
    pub fn value_role(&self, dict: Val, key: Val) -> Role {
        let (Val::Obj(o), Val::Str(key)) = (dict, key) else {
            return Role::Generic;
        };
        let k = &self.k;
        match o.role {
            Role::Top if key == k.segments => Role::SegmentList,
            Role::Top if key == k.device_traces => Role::DeviceTraces,
            Role::Top if key == k.external_annotations => Role::AnnotationList,
            Role::Entry | Role::Segment | Role::Block | Role::History if key == k.frames => {
                Role::FrameList
            }
            Role::Segment if key == k.blocks => Role::BlockList,
            Role::Block if key == k.history => Role::HistoryList,
            _ => Role::Generic,
        }
    }

    /// Role of the element at position `pending` (items not yet appended) of `list`.
    pub fn element_role(&self, list: Val, pending: u64) -> Role {
        let Val::Obj(o) = list else {
            return Role::Generic;
        };
        match o.role {
            Role::SegmentList => Role::Segment,
            Role::DeviceTraces => {
                let d = self
                    .dt_len
                    .saturating_add(pending.min(u32::MAX as u64) as u32);
                if d as usize >= MAX_DEVICES {
                    Role::Generic
                } else {
                    Role::TraceList(d)
                }
            }
            Role::TraceList(_) => Role::Entry,
            Role::FrameList => Role::Frame,
            Role::BlockList => Role::Block,
            Role::HistoryList => Role::History,
            Role::AnnotationList => Role::Annotation,
            _ => Role::Generic,
        }
    }

    /// Notes that memo slot `idx` refers to `v` (so it can be rewritten when `v` is consumed).
    #[inline]
    pub fn memoized(&mut self, v: Val, idx: u32) {
        if let Val::Obj(o) = v {
            let (s, g) = (o.slot, o.gen);
            let m = match o.role {
                Role::Entry => self.entries.get(s, g).map(|x| &mut x.memo),
                Role::Frame => self.frames.get(s, g).map(|x| &mut x.memo),
                Role::FrameList => self.frame_lists.get(s, g).map(|x| &mut x.memo),
                Role::Segment => self.segments.get(s, g).map(|x| &mut x.memo),
                Role::BlockList => self.block_lists.get(s, g).map(|x| &mut x.memo),
                Role::Block => self.blocks.get(s, g).map(|x| &mut x.memo),
                Role::HistoryList => self.history_lists.get(s, g).map(|x| &mut x.memo),
                Role::History => self.histories.get(s, g).map(|x| &mut x.memo),
                Role::Annotation => self.annotations.get(s, g).map(|x| &mut x.memo),
                _ => return,
            };
            if let Ok(m) = m {
                *m = idx;
            }
        }
    }

    /// Schedules the consumed slot for release (once).
    fn defer(&mut self, role: Role, slot: u32) {
        let fresh = match role {
            Role::Entry => self.entries.mark_deferred(slot),
            Role::Frame => self.frames.mark_deferred(slot),
            Role::FrameList => self.frame_lists.mark_deferred(slot),
            Role::Segment => self.segments.mark_deferred(slot),
            Role::BlockList => self.block_lists.mark_deferred(slot),
            Role::Block => self.blocks.mark_deferred(slot),
            Role::HistoryList => self.history_lists.mark_deferred(slot),
            Role::History => self.histories.mark_deferred(slot),
            Role::Annotation => self.annotations.mark_deferred(slot),
            _ => false,
        };
        if fresh {
            let min_pos = self.min_pos(role, slot);
            let p = Pending {
                min_pos,
                slot,
                role,
            };
            if self.pending_run.last().is_none_or(|l| l.min_pos <= min_pos) {
                self.pending_run.push(p);
            } else {
                self.pending.push(p);
            }
        }
    }

    /// Notes that a handle to `v` was pushed at stack position `pos`.
    #[inline]
    pub fn note_push(&mut self, v: Val, pos: usize) {
        if let Val::Obj(o) = v {
            self.note_obj_push(o, pos);
        }
    }

    #[inline]
    fn note_obj_push(&mut self, o: Obj, pos: usize) {
        {
            let (s, g) = (o.slot, o.gen);
            let m = match o.role {
                Role::Entry => self.entries.get(s, g).map(|x| &mut x.min_pos),
                Role::Frame => self.frames.get(s, g).map(|x| &mut x.min_pos),
                Role::FrameList => self.frame_lists.get(s, g).map(|x| &mut x.min_pos),
                Role::Segment => self.segments.get(s, g).map(|x| &mut x.min_pos),
                Role::BlockList => self.block_lists.get(s, g).map(|x| &mut x.min_pos),
                Role::Block => self.blocks.get(s, g).map(|x| &mut x.min_pos),
                Role::HistoryList => self.history_lists.get(s, g).map(|x| &mut x.min_pos),
                Role::History => self.histories.get(s, g).map(|x| &mut x.min_pos),
                Role::Annotation => self.annotations.get(s, g).map(|x| &mut x.min_pos),
                _ => return,
            };
            if let Ok(m) = m {
                *m = (*m).min(pos as u32);
            }
        }
    }

    #[inline]
    fn min_pos(&self, role: Role, slot: u32) -> u32 {
        match role {
            Role::Entry => self.entries.min_pos(slot),
            Role::Frame => self.frames.min_pos(slot),
            Role::FrameList => self.frame_lists.min_pos(slot),
            Role::Segment => self.segments.min_pos(slot),
            Role::BlockList => self.block_lists.min_pos(slot),
            Role::Block => self.blocks.min_pos(slot),
            Role::HistoryList => self.history_lists.min_pos(slot),
            Role::History => self.histories.min_pos(slot),
            Role::Annotation => self.annotations.min_pos(slot),
            _ => 0,
        }
    }

    /// Frees the consumed slots that no handle on the VM stack (now `stack_len`
    /// deep) can still refer to; the others wait until the stack shrinks.
    pub fn end_op(&mut self, stack_len: usize) {
        loop {
            // The highest waiting slot of the two lanes, if no handle below `stack_len` holds it.
            let run = self.pending_run.last().copied();
            let heap = self.pending.peek().copied();
            let (p, from_run) = match (run, heap) {
                (Some(r), Some(h)) if h.min_pos > r.min_pos => (h, false),
                (Some(r), _) => (r, true),
                (None, Some(h)) => (h, false),
                (None, None) => break,
            };
            if (p.min_pos as usize) < stack_len {
                break;
            }
            if from_run {
                self.pending_run.pop();
            } else {
                self.pending.pop();
            }
            let (role, slot) = (p.role, p.slot);
            let now = self.min_pos(role, slot);
            if now < p.min_pos {
                // A handle was pushed lower since (cannot happen with stack pushes; kept safe).
                self.pending.push(Pending { min_pos: now, ..p });
                continue;
            }
            let freed = match role {
                Role::Entry => self.entries.release(slot),
                Role::Frame => self.frames.release(slot),
                Role::FrameList => self.frame_lists.release(slot),
                Role::Segment => self.segments.release(slot),
                Role::BlockList => self.block_lists.release(slot),
                Role::Block => self.blocks.release(slot),
                Role::HistoryList => self.history_lists.release(slot),
                Role::History => self.histories.release(slot),
                Role::Annotation => self.annotations.release(slot),
                _ => false,
            };
            if freed {
                self.open -= 1;
            }
        }
    }
}
