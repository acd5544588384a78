//! Columnar model of one PyTorch caching-allocator snapshot (torch-snapshot.md §3, §7.1).
//!
//! Built by `parse::pickle` straight from the pickle stream; the object tree of
//! the file is never materialised. Per device slot of `device_traces` one
//! [`DeviceTrace`] holds the trace entries as columns ([`EntryTable`]); the end
//! state (`segments` and their `blocks`) is kept as small typed structs.
//!
//! Units: sizes and addresses in bytes (`u64`), `time_us` in µs since the Unix
//! epoch (`i64`). Stacks are innermost first (spec README "call stack order").

pub use super::snapshot_stacks::{
    Frame, FrameId, FrameTable, SnapPools, SnapStrings, StackId, StackPool, StrId,
};

/// One allocator action (torch-snapshot.md §3.6), in C++ enum order, then the torch_npu and prototype ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Action {
    /// A block is handed to a tensor.
    Alloc = 0,
    /// The tensor's storage died (`memory_allocated()` drops here).
    FreeRequested,
    /// The block really returned to the cache.
    FreeCompleted,
    /// Driver malloc of a new segment.
    SegmentAlloc,
    /// Driver free of a segment.
    SegmentFree,
    /// An expandable segment grew.
    SegmentMap,
    /// An expandable segment shrank.
    SegmentUnmap,
    /// A snapshot was taken while recording.
    Snapshot,
    /// The allocator raised OutOfMemoryError.
    Oom,
    /// torch_npu: leading workspace triple marker.
    WorkspaceSnapshot,
    /// Early prototype annotation entry.
    UserDefined,
    /// Any other action string (kept by name in [`DeviceTrace::unknown_actions`]).
    Unknown,
}

impl Action {
    /// All actions, in code order.
    pub const ALL: [Action; 12] = [
        Action::Alloc,
        Action::FreeRequested,
        Action::FreeCompleted,
        Action::SegmentAlloc,
        Action::SegmentFree,
        Action::SegmentMap,
        Action::SegmentUnmap,
        Action::Snapshot,
        Action::Oom,
        Action::WorkspaceSnapshot,
        Action::UserDefined,
        Action::Unknown,
    ];
    /// The action string as written in snapshots (`"unknown"` for [`Action::Unknown`]).
    pub fn name(self) -> &'static str {
        match self {
            Action::Alloc => "alloc",
            Action::FreeRequested => "free_requested",
            Action::FreeCompleted => "free_completed",
            Action::SegmentAlloc => "segment_alloc",
            Action::SegmentFree => "segment_free",
            Action::SegmentMap => "segment_map",
            Action::SegmentUnmap => "segment_unmap",
            Action::Snapshot => "snapshot",
            Action::Oom => "oom",
            Action::WorkspaceSnapshot => "workspace_snapshot",
            Action::UserDefined => "user_defined",
            Action::Unknown => "unknown",
        }
    }
    /// Parses an action string; unknown strings give `None`.
    pub fn from_name(s: &str) -> Option<Action> {
        Action::ALL
            .iter()
            .copied()
            .find(|a| *a != Action::Unknown && a.name() == s)
    }
    /// True for the four segment actions (reserved memory).
    pub fn is_segment(self) -> bool {
        matches!(
            self,
            Action::SegmentAlloc | Action::SegmentFree | Action::SegmentMap | Action::SegmentUnmap
        )
    }
}

/// Streams looked up by a linear scan before [`EntryTable`] builds a hash index.
const STREAM_SCAN: usize = 16;

/// Marker in [`EntryTable::time_us`] for an entry without `time_us`.
pub const NO_TIME: i64 = i64::MIN;
/// Marker in [`EntryTable::stack`] for an entry without a `frames` key.
pub const NO_STACK: StackId = StackId(u32::MAX);

/// One trace entry as decoded, before it is stored (the builder's input row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EntryRow {
    /// The action.
    pub action: Action,
    /// Block or segment address (0 for `oom`/`snapshot`).
    pub addr: u64,
    /// Requested bytes (alloc/free), segment bytes (segment events).
    pub size: u64,
    /// Raw stream handle.
    pub stream: i64,
    /// µs since the Unix epoch, or [`NO_TIME`].
    pub time_us: i64,
    /// Stack of the entry, or [`NO_STACK`] when the `frames` key is missing.
    pub stack: StackId,
    /// `compile_context` string (id 0 = absent or the default `"N/A"`).
    pub compile_ctx: StrId,
    /// `user_metadata` string (id 0 = absent or empty).
    pub user_meta: StrId,
    /// `device_free` of an `oom` entry.
    pub device_free: Option<u64>,
}

/// The entries of one device trace, one column per field (torch-snapshot.md §7.1).
///
/// Invariant: every column has [`EntryTable::len`] rows, in trace order
/// (oldest → newest). Streams are interned per device: `stream()[i]` indexes
/// [`EntryTable::stream_values`].
#[derive(Clone, Debug, Default)]
pub struct EntryTable {
    action: Vec<Action>,
    addr: Vec<u64>,
    size: Vec<u64>,
    stream: Vec<u32>,
    stream_values: Vec<i64>,
    /// Index of `stream_values`, built once there are more than [`STREAM_SCAN`] streams (a
    /// hostile file with a distinct stream per entry stays linear).
    stream_index: rustc_hash::FxHashMap<i64, u32>,
    time_us: Vec<i64>,
    stack: Vec<StackId>,
    compile_ctx: Vec<StrId>,
    user_meta: Vec<StrId>,
    device_free: Vec<(u32, u64)>,
}

impl EntryTable {
    /// Appends one entry. `compile_ctx`/`user_meta` columns are created lazily
    /// (all-default traces cost nothing).
    pub fn push(&mut self, row: &EntryRow) {
        let n = self.action.len();
        self.action.push(row.action);
        self.addr.push(row.addr);
        self.size.push(row.size);
        let s = if self.stream_values.len() <= STREAM_SCAN {
            self.stream_values.iter().position(|&v| v == row.stream)
        } else {
            if self.stream_index.is_empty() {
                for (i, &v) in self.stream_values.iter().enumerate() {
                    self.stream_index.insert(v, i as u32);
                }
            }
            self.stream_index.get(&row.stream).map(|&i| i as usize)
        };
        let s = match s {
            Some(i) => i as u32,
            None => {
                let i = self.stream_values.len() as u32;
                self.stream_values.push(row.stream);
                if !self.stream_index.is_empty() {
                    self.stream_index.insert(row.stream, i);
                }
                i
            }
        };
        self.stream.push(s);
        if row.time_us != NO_TIME && self.time_us.len() < n {
            self.time_us.resize(n, NO_TIME);
        }
        if !self.time_us.is_empty() || row.time_us != NO_TIME {
            self.time_us.push(row.time_us);
        }
        self.stack.push(row.stack);
        if row.compile_ctx != StrId(0) && self.compile_ctx.len() < n {
            self.compile_ctx.resize(n, StrId(0));
        }
        if !self.compile_ctx.is_empty() || row.compile_ctx != StrId(0) {
            self.compile_ctx.push(row.compile_ctx);
        }
        if row.user_meta != StrId(0) && self.user_meta.len() < n {
            self.user_meta.resize(n, StrId(0));
        }
        if !self.user_meta.is_empty() || row.user_meta != StrId(0) {
            self.user_meta.push(row.user_meta);
        }
        if let Some(f) = row.device_free {
            self.device_free.push((n as u32, f));
        }
    }
    /// Makes room for `extra` more entries in every column in use (one allocation each
    /// instead of growth by doubling: each doubling copies the column, and in wasm memory
    /// both copies stay in the high-water mark). An estimate: a column whose room the
    /// allocator refuses is left to grow as before.
    pub fn reserve(&mut self, extra: usize) {
        let _ = self.action.try_reserve(extra);
        let _ = self.addr.try_reserve(extra);
        let _ = self.size.try_reserve(extra);
        let _ = self.stream.try_reserve(extra);
        let _ = self.stack.try_reserve(extra);
        for col in [&mut self.compile_ctx, &mut self.user_meta] {
            if !col.is_empty() {
                let _ = col.try_reserve(extra);
            }
        }
        if !self.time_us.is_empty() {
            let _ = self.time_us.try_reserve(extra);
        }
    }
    /// Releases spare capacity of every column (called once the trace is complete).
    pub fn shrink_to_fit(&mut self) {
        self.action.shrink_to_fit();
        self.addr.shrink_to_fit();
        self.size.shrink_to_fit();
        self.stream.shrink_to_fit();
        self.time_us.shrink_to_fit();
        self.stack.shrink_to_fit();
        self.compile_ctx.shrink_to_fit();
        self.user_meta.shrink_to_fit();
        self.device_free.shrink_to_fit();
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.action.len()
    }
    /// True when the trace is empty.
    pub fn is_empty(&self) -> bool {
        self.action.is_empty()
    }
    /// Actions.
    pub fn action(&self) -> &[Action] {
        &self.action
    }
    /// Addresses (bytes).
    pub fn addr(&self) -> &[u64] {
        &self.addr
    }
    /// Sizes (bytes).
    pub fn size(&self) -> &[u64] {
        &self.size
    }
    /// Interned stream index per entry (see [`EntryTable::stream_values`]).
    pub fn stream(&self) -> &[u32] {
        &self.stream
    }
    /// Distinct raw stream handles, in order of first appearance.
    pub fn stream_values(&self) -> &[i64] {
        &self.stream_values
    }
    /// The `time_us` column as stored: one per entry when the trace records times (empty
    /// otherwise), [`NO_TIME`] where an entry has none.
    pub fn time_us_column(&self) -> &[i64] {
        &self.time_us
    }
    /// `time_us` of entry `i` (µs since the Unix epoch), if recorded.
    pub fn time_us(&self, i: usize) -> Option<i64> {
        self.time_us.get(i).copied().filter(|&t| t != NO_TIME)
    }
    /// The first recorded `time_us` (None when no entry has one): the origin of the page's ms
    /// axis and of the report's `first_time_us` (torch-snapshot.md §7.3).
    pub fn first_time_us(&self) -> Option<i64> {
        (0..self.len()).find_map(|i| self.time_us(i))
    }
    /// True when at least one entry has `time_us`.
    pub fn has_time(&self) -> bool {
        !self.time_us.is_empty()
    }
    /// Stack per entry ([`NO_STACK`] when `frames` was missing).
    pub fn stack(&self) -> &[StackId] {
        &self.stack
    }
    /// `compile_context` of entry `i` (id 0 = absent).
    pub fn compile_ctx(&self, i: usize) -> StrId {
        self.compile_ctx.get(i).copied().unwrap_or_default()
    }
    /// `user_metadata` of entry `i` (id 0 = absent or empty).
    pub fn user_meta(&self, i: usize) -> StrId {
        self.user_meta.get(i).copied().unwrap_or_default()
    }
    /// `(entry index, device_free bytes)` of every `oom` entry that carried `device_free`.
    pub fn device_free(&self) -> &[(u32, u64)] {
        &self.device_free
    }
    /// Approximate heap bytes held by the columns.
    pub fn heap_bytes(&self) -> usize {
        self.action.capacity()
            + 8 * (self.addr.capacity() + self.size.capacity() + self.time_us.capacity())
            + 4 * (self.stream.capacity()
                + self.stack.capacity()
                + self.compile_ctx.capacity()
                + self.user_meta.capacity())
    }
}

/// One slot of `device_traces` (index = device ordinal) with its entries and decode statistics.
#[derive(Clone, Debug, Default)]
pub struct DeviceTrace {
    /// Device ordinal (index in `device_traces`).
    pub device: u32,
    /// The entries, oldest first.
    pub entries: EntryTable,
    /// Each distinct key set of the entries, sorted keys comma-joined (EXPECTED.json `entry_key_sets`).
    pub key_sets: Vec<String>,
    /// Longest `frames` list of any entry.
    pub max_frames: u32,
    /// Unknown action strings and their counts (torch-snapshot.md §3.6 "anything else").
    pub unknown_actions: Vec<(String, u64)>,
    /// Entries skipped because a field had the wrong type (§5.2 `bad_entries`).
    pub bad_entries: u64,
    /// This slot's list is the *same pickle object* as the trace of device slot `k` (a memo
    /// reference): its entries are not copied and not analysed again (ARCHITECTURE.md,
    /// "Decision: shared trace lists"); `entries` stays empty.
    pub same_as: Option<u32>,
}

impl DeviceTrace {
    /// Count of entries per action name, known actions in enum order then unknown names.
    pub fn action_counts(&self) -> Vec<(String, u64)> {
        let mut counts = [0u64; 12];
        for a in self.entries.action() {
            counts[*a as usize] += 1;
        }
        let mut out: Vec<(String, u64)> = Action::ALL
            .iter()
            .filter(|a| **a != Action::Unknown && counts[**a as usize] > 0)
            .map(|a| (a.name().to_string(), counts[*a as usize]))
            .collect();
        out.extend(self.unknown_actions.iter().cloned());
        out
    }
}

/// State of a block at dump time (torch-snapshot.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockState {
    /// Owned by a tensor.
    ActiveAllocated,
    /// Freed, waiting on other streams (`active_pending_free`, alias `active_awaiting_free`).
    ActivePendingFree,
    /// Cached free space.
    Inactive,
    /// Any other state string.
    Other(StrId),
}

impl BlockState {
    /// The state name as the fixture counts use it.
    pub fn name(self, strings: &SnapStrings) -> String {
        match self {
            BlockState::ActiveAllocated => "active_allocated".into(),
            BlockState::ActivePendingFree => "active_pending_free".into(),
            BlockState::Inactive => "inactive".into(),
            BlockState::Other(s) => strings.get(s).to_string(),
        }
    }
}

/// One segment of the end state (torch-snapshot.md §3.2).
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    /// Device ordinal.
    pub device: i64,
    /// Base address.
    pub address: u64,
    /// Bytes reserved from the driver.
    pub total_size: u64,
    /// Σ size of `active_allocated` blocks, as recorded.
    pub allocated_size: u64,
    /// Σ size of active blocks, as recorded.
    pub active_size: u64,
    /// Σ requested sizes, when recorded (2.1+).
    pub requested_size: Option<u64>,
    /// Raw stream handle.
    pub stream: i64,
    /// `"large"` / `"small"` (id 0 when absent).
    pub segment_type: StrId,
    /// `segment_pool_id`; `(0, 0)` is the default pool.
    pub pool_id: (i64, i64),
    /// Expandable-segments mode.
    pub is_expandable: bool,
    /// Stack of the call that created it, when recorded.
    pub stack: Option<StackId>,
    /// Range of this segment's blocks in [`Snapshot::blocks`].
    pub blocks: std::ops::Range<u32>,
}

/// One block of a segment (torch-snapshot.md §3.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Index of its segment in [`Snapshot::segments`].
    pub segment: u32,
    /// Absolute address (legacy files: computed from the segment base, see `address_computed`).
    pub address: u64,
    /// Rounded size in bytes.
    pub size: u64,
    /// Requested bytes (legacy: `history[0].real_size`; 0 when unknown).
    pub requested_size: u64,
    /// State at dump time.
    pub state: BlockState,
    /// Allocation stack (legacy: `history[0].frames`), when recorded.
    pub stack: Option<StackId>,
    /// True when the block carried a legacy `history` list.
    pub has_history: bool,
    /// True when `address` was computed (legacy block without `address`).
    pub address_computed: bool,
}

/// `START`/`END` of an annotation (torch-snapshot.md §3.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Range opens.
    Start,
    /// Range closes.
    End,
    /// Anything else.
    Other,
}

/// One `external_annotations` item (torch-snapshot.md §3.7).
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    /// Range name (e.g. `Optimizer.step#AdamW.step`).
    pub name: StrId,
    /// START / END.
    pub stage: Stage,
    /// Device ordinal.
    pub device: i64,
    /// µs since the Unix epoch.
    pub time_us: Option<i64>,
}

/// A scalar-ish value of `allocator_settings` or of an unknown top-level key.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingValue {
    /// Integer.
    Int(i128),
    /// Float (`garbage_collection_threshold`).
    Float(f64),
    /// Boolean.
    Bool(bool),
    /// String.
    Str(String),
    /// `None`.
    None,
    /// Nested container, rendered compactly (e.g. `{"1": 0, …}`).
    Nested(String),
}

impl std::fmt::Display for SettingValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingValue::Int(v) => write!(f, "{v}"),
            SettingValue::Float(v) => write!(f, "{v}"),
            SettingValue::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            SettingValue::Str(s) => write!(f, "{s:?}"),
            SettingValue::None => write!(f, "None"),
            SettingValue::Nested(s) => f.write_str(s),
        }
    }
}

/// Whether the file was a dict or the segments-only list (torch-snapshot.md §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TopLevel {
    /// `{segments, device_traces, …}`.
    #[default]
    Dict,
    /// `memory_snapshot()` output: only the segments list.
    SegmentsList,
}

/// How the snapshot was written (torch-snapshot.md §2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Encoding {
    /// `pickle.dump` (protocols 2–5).
    #[default]
    Pickle,
    /// `json.dump` of the same dict or list.
    Json,
}

impl Encoding {
    /// `pickle` or `json`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Pickle => "pickle",
            Encoding::Json => "json",
        }
    }
}

/// Detected format features (torch-snapshot.md §3.10, §5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Features {
    /// Pickle or JSON.
    pub encoding: Encoding,
    /// Pickle protocol (2–5); 0 for a JSON snapshot.
    pub protocol: u8,
    /// Dict or segments-only list.
    pub top_level: TopLevel,
    /// Some entry has `time_us`.
    pub has_time_us: bool,
    /// Some block has a legacy `history`.
    pub has_history: bool,
    /// `external_annotations` key present.
    pub has_annotations: bool,
    /// Some entry has `compile_context`.
    pub has_compile_context: bool,
    /// Some entry has `user_metadata`.
    pub has_user_metadata: bool,
    /// Some frame has FX keys.
    pub has_fx_frames: bool,
    /// `allocator_settings` key present.
    pub has_settings: bool,
}

/// One decoded snapshot.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// Strings, frames, stacks.
    pub pools: SnapPools,
    /// One per `device_traces` slot, in slot order (empty for the list form).
    pub devices: Vec<DeviceTrace>,
    /// End-state segments, all devices, in file order.
    pub segments: Vec<Segment>,
    /// End-state blocks, grouped by segment (see [`Segment::blocks`]).
    pub blocks: Vec<Block>,
    /// `external_annotations`, or `None` when the key is absent.
    pub annotations: Option<Vec<Annotation>>,
    /// `allocator_settings` as `(key, value)` in file order, or `None` when absent.
    pub settings: Option<Vec<(String, SettingValue)>>,
    /// Top-level keys in file order (empty for the list form).
    pub top_keys: Vec<String>,
    /// Unknown top-level keys with a compact rendering ("Other fields").
    pub other_fields: Vec<(String, String)>,
    /// Format features.
    pub features: Features,
    /// Count of each opcode byte seen (debug panel; EXPECTED.json `opcodes` as a set).
    pub opcode_histogram: Vec<u64>,
}

impl Snapshot {
    /// Looks up a setting by key.
    pub fn setting(&self, key: &str) -> Option<&SettingValue> {
        self.settings
            .as_ref()?
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }
    /// The blocks of segment `i`.
    pub fn blocks_of(&self, seg: &Segment) -> &[Block] {
        self.blocks
            .get(seg.blocks.start as usize..seg.blocks.end as usize)
            .unwrap_or(&[])
    }
}

#[cfg(test)]
mod reserve_tests {
    use super::EntryTable;

    /// The room for the rest of a file is an estimate: one no allocator can give is skipped,
    /// not fatal (the columns then grow as entries arrive).
    #[test]
    fn an_impossible_reservation_is_skipped() {
        let mut t = EntryTable::default();
        t.reserve(usize::MAX);
        assert_eq!(t.action.len(), 0);
        assert!(t.action.capacity() < 1 << 20);
    }
}
