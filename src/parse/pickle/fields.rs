//! Field-level decoding of snapshot dicts (torch-snapshot.md §3.2–3.8, §5.2).
//!
//! One scratch struct per typed dict; `Builder::set_field` routes each key/value
//! pair; the `to_*` methods produce model rows with the §5.2 type checks.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::model::snapshot::{
    Action, Annotation, Block, BlockState, DeviceTrace, EntryRow, Frame, Segment, SnapStrings,
    StackId, Stage, StrId, NO_STACK, NO_TIME,
};

use super::keys::*;
use super::ranges::{Ranges, Stream, MAX_TOTAL_BYTES};
use super::vm::Val;

mod route;

/// An integer field value.
enum Int {
    Ok(i128),
    Missing,
    NotInt,
    TooWide,
}

#[inline]
fn int(v: Val, bigs: &[i128]) -> Int {
    match v {
        Val::Int(i) => Int::Ok(i as i128),
        Val::Big(i) => bigs.get(i as usize).map_or(Int::NotInt, |v| Int::Ok(*v)),
        Val::Bool(b) => Int::Ok(b as i128),
        Val::TooWide => Int::TooWide,
        Val::Missing => Int::Missing,
        _ => Int::NotInt,
    }
}

#[inline]
fn u64_of(v: Val, bigs: &[i128]) -> Option<u64> {
    match int(v, bigs) {
        Int::Ok(i) => u64::try_from(i).ok(),
        _ => None,
    }
}

#[inline]
fn i64_of(v: Val, bigs: &[i128]) -> Option<i64> {
    match int(v, bigs) {
        Int::Ok(i) => i64::try_from(i).ok(),
        _ => None,
    }
}

/// Why `v` is not a usable integer of field `field` (`signed`: the i64 range, else
/// 0 … 2^64−1), in words for a problem message (such values became 0 silently).
fn unusable(field: &str, v: Val, bigs: &[i128], signed: bool) -> String {
    let range = if signed {
        "−2^63 … 2^63−1"
    } else {
        "0 … 2^64−1"
    };
    let found = match (int(v, bigs), v) {
        (Int::Ok(i), _) => format!("{i}"),
        (Int::TooWide, _) => "an integer wider than 16 bytes".to_string(),
        (Int::Missing, _) => "an undefined memo reference".to_string(),
        (_, Val::Float(f)) => format!("the float {f}"),
        (_, Val::Str(_)) => "a string".to_string(),
        (_, Val::None) => "None".to_string(),
        _ => "not a number".to_string(),
    };
    format!("`{field}` is {found}, not an integer in {range}")
}

/// Scratch of one trace entry.
#[derive(Debug)]
pub(crate) struct EntryObj {
    pub action: Val,
    pub addr: Val,
    pub size: Val,
    pub stream: Val,
    pub time_us: Val,
    pub device_free: Val,
    pub stack: Option<StackId>,
    pub compile: StrId,
    pub meta: StrId,
    pub mask: u32,
    pub unknown_keys: Vec<StrId>,
}

impl Default for EntryObj {
    fn default() -> Self {
        EntryObj {
            action: Val::Missing,
            addr: Val::Missing,
            size: Val::Missing,
            stream: Val::Missing,
            time_us: Val::Missing,
            device_free: Val::Missing,
            stack: None,
            compile: StrId(0),
            meta: StrId(0),
            mask: 0,
            unknown_keys: Vec::new(),
        }
    }
}

impl EntryObj {
    /// The model row, or why the entry is unusable (§5.2). The second value is
    /// the name of an unknown action.
    ///
    /// Sizes are admitted against the file's byte budget, times and streams range-checked
    /// (`ranges.rs`; `at` = byte offset for the tallies).
    pub fn to_row(
        &self,
        k: &Keys,
        bigs: &[i128],
        ranges: &mut Ranges,
        at: u64,
    ) -> Result<(EntryRow, Option<StrId>), String> {
        let (action, unknown) = match self.action {
            Val::Str(s) => match k.actions.iter().find(|(id, _)| *id == s) {
                Some((_, a)) => (*a, None),
                None => (Action::Unknown, Some(s)),
            },
            Val::Missing => return Err("no `action`".into()),
            _ => return Err("`action` is not a string".into()),
        };
        let strict = matches!(
            action,
            Action::Alloc | Action::FreeRequested | Action::FreeCompleted
        );
        let field = |v: Val, name: &str| -> Result<u64, String> {
            match int(v, bigs) {
                Int::Ok(i) => u64::try_from(i).map_err(|_| format!("`{name}` is {i}, not ≥ 0")),
                Int::Missing if !strict => Ok(0),
                Int::Missing => Err(format!("no `{name}`")),
                Int::NotInt => Err(format!("`{name}` is not an integer")),
                Int::TooWide => Err(format!("`{name}` is an integer too wide (> 16 bytes)")),
            }
        };
        let size = field(self.size, "size")?;
        let addr = match (action, self.addr) {
            (Action::Oom | Action::Snapshot | Action::Unknown, v) => u64_of(v, bigs).unwrap_or(0),
            (_, v) => field(v, "addr")?,
        };
        let device_free = u64_of(self.device_free, bigs);
        if let Some(f) = device_free.filter(|&f| f > MAX_TOTAL_BYTES as u64) {
            return Err(format!(
                "`device_free` is {f}, beyond 2^60 bytes (1 EiB): not a real size"
            ));
        }
        ranges.admit(&[size])?;
        let stream = match int(self.stream, bigs) {
            Int::Missing => 0,
            Int::Ok(i) => ranges.stream(Stream::of(Some(i)), at),
            _ => ranges.stream(Stream::Unusable, at),
        };
        let time_us = match int(self.time_us, bigs) {
            Int::Missing => NO_TIME,
            Int::Ok(i) => ranges.time(Some(i), at).unwrap_or(NO_TIME),
            _ => ranges.time(None, at).unwrap_or(NO_TIME),
        };
        Ok((
            EntryRow {
                action,
                addr,
                size,
                stream,
                time_us,
                stack: self.stack.unwrap_or(NO_STACK),
                compile_ctx: self.compile,
                user_meta: self.meta,
                device_free,
            },
            unknown,
        ))
    }
}

/// Scratch of one frame dict.
#[derive(Debug, Default)]
pub(crate) struct FrameObj {
    pub filename: StrId,
    pub name: StrId,
    pub line: u32,
    pub fx: Option<StrId>,
}

impl FrameObj {
    pub fn to_frame(&self) -> Frame {
        Frame {
            filename: self.filename,
            line: self.line,
            name: self.name,
            fx: self.fx,
        }
    }
}

/// Scratch of one segment dict.
#[derive(Debug, Default)]
pub(crate) struct SegmentObj {
    pub device: i64,
    pub address: u64,
    pub total_size: u64,
    pub allocated_size: u64,
    pub active_size: u64,
    pub requested_size: Option<u64>,
    pub stream: i64,
    pub segment_type: StrId,
    pub pool_id: (i64, i64),
    pub is_expandable: bool,
    pub stack: Option<StackId>,
    pub blocks: Vec<Block>,
    /// The first field that held no usable integer (`device`, `address`, a size): the
    /// segment is skipped with a `SNAP-FIELD` warning instead of being read as 0.
    pub unusable: Option<String>,
    /// A segment's own key (`total_size` or `blocks`) was seen: a dict with neither is not a
    /// segment (a Chrome trace's event list read as the list of segments).
    pub shaped: bool,
}

impl SegmentObj {
    pub fn to_segment(&self, blocks: std::ops::Range<u32>) -> Segment {
        Segment {
            device: self.device,
            address: self.address,
            total_size: self.total_size,
            allocated_size: self.allocated_size,
            active_size: self.active_size,
            requested_size: self.requested_size,
            stream: self.stream,
            segment_type: self.segment_type,
            pool_id: self.pool_id,
            is_expandable: self.is_expandable,
            stack: self.stack,
            blocks,
        }
    }
}

/// Scratch of one block dict.
#[derive(Debug)]
pub(crate) struct BlockObj {
    pub address: Option<u64>,
    pub size: u64,
    pub requested_size: Option<u64>,
    pub state: BlockState,
    pub stack: Option<StackId>,
    pub history: Option<(Option<u64>, Option<StackId>)>,
}

impl Default for BlockObj {
    fn default() -> Self {
        BlockObj {
            address: None,
            size: 0,
            requested_size: None,
            state: BlockState::Other(StrId(0)),
            stack: None,
            history: None,
        }
    }
}

impl BlockObj {
    pub fn to_block(&self) -> Block {
        let (h_size, h_stack) = self.history.unwrap_or((None, None));
        Block {
            segment: 0,
            address: self.address.unwrap_or(0),
            size: self.size,
            requested_size: self.requested_size.or(h_size).unwrap_or(0),
            state: self.state,
            stack: self.stack.or(h_stack),
            has_history: self.history.is_some(),
            address_computed: self.address.is_none(),
        }
    }
}

/// Scratch of one legacy `history` item.
#[derive(Debug, Default)]
pub(crate) struct HistoryObj {
    pub real_size: Option<u64>,
    pub stack: Option<StackId>,
}

/// A legacy `history` list: only the newest item (index 0) matters.
#[derive(Debug, Default)]
pub(crate) struct HistoryListObj {
    pub first: Option<(Option<u64>, Option<StackId>)>,
    pub count: u32,
}

/// Scratch of one annotation dict.
#[derive(Debug)]
pub(crate) struct AnnotationObj {
    pub name: StrId,
    pub stage: Stage,
    pub device: i64,
    pub time_us: Option<i64>,
}

impl Default for AnnotationObj {
    fn default() -> Self {
        AnnotationObj {
            name: StrId(0),
            stage: Stage::Other,
            device: 0,
            time_us: None,
        }
    }
}

impl AnnotationObj {
    pub fn to_annotation(&self) -> Annotation {
        Annotation {
            name: self.name,
            stage: self.stage,
            device: self.device,
            time_us: self.time_us,
        }
    }
}

/// Key sets compared by a scan before [`DevBuild`] builds a hash index (real traces have 1–3).
const KEY_SET_SCAN: usize = 8;

/// Entries of a device trace after which its columns are reserved for the rest of the file
/// ([`DevBuild::reserve_rest`]).
pub(crate) const RESERVE_AFTER: usize = 1 << 16;

/// One device trace under construction.
#[derive(Debug)]
pub(crate) struct DevBuild {
    pub trace: DeviceTrace,
    key_sets: Vec<(u32, Vec<StrId>)>,
    /// Hash index of `key_sets` once there are more than [`KEY_SET_SCAN`].
    key_index: HashSet<(u32, Vec<StrId>)>,
    unknown_actions: Vec<(StrId, u64)>,
    unknown_index: HashMap<StrId, usize>,
    /// Byte offset of the first entry (for [`DevBuild::reserve_rest`]).
    first_at: u64,
}

impl DevBuild {
    pub fn new(device: u32) -> Self {
        DevBuild {
            trace: DeviceTrace {
                device,
                ..Default::default()
            },
            key_sets: Vec::new(),
            key_index: HashSet::default(),
            unknown_actions: Vec::new(),
            unknown_index: HashMap::default(),
            first_at: 0,
        }
    }
    /// Called before each entry is pushed, at byte `at` of a file of `total` bytes: at the
    /// first entry notes where the trace starts; after [`RESERVE_AFTER`] entries reserves the
    /// columns for the rest of the file at the density seen so far (+1/16), so a long trace
    /// grows its columns once instead of by doubling. A trace that ends early keeps spare
    /// room until [`DevBuild::finish`] shrinks the columns.
    #[inline]
    pub fn reserve_rest(&mut self, at: u64, total: u64) {
        let n = self.trace.entries.len();
        if n == 0 {
            self.first_at = at;
        } else if n == RESERVE_AFTER && at > self.first_at && total > at {
            let left = total - at;
            let rest = crate::base::arith::rows_for_rest(n, at - self.first_at, left);
            // At least 8 bytes of pickle per entry, whatever the density said.
            let rest = rest.min(usize::try_from(left / 8).unwrap_or(usize::MAX));
            self.trace.entries.reserve(rest.saturating_add(rest / 16));
        }
    }
    /// Notes the key set of one entry (hashed: a file whose every entry has its own key set
    /// costs linear time, not quadratic).
    pub fn note_keys(&mut self, mask: u32, unknown: &[StrId]) {
        let same = |(m, u): &(u32, Vec<StrId>)| *m == mask && u.as_slice() == unknown;
        if self.key_sets.len() <= KEY_SET_SCAN {
            if !self.key_sets.iter().any(same) {
                self.key_sets.push((mask, unknown.to_vec()));
            }
            return;
        }
        if self.key_index.is_empty() {
            self.key_index.extend(self.key_sets.iter().cloned());
        }
        let k = (mask, unknown.to_vec());
        if !self.key_index.contains(&k) {
            self.key_index.insert(k.clone());
            self.key_sets.push(k);
        }
    }
    /// Counts one entry with an unknown action string (first-appearance order kept).
    pub fn note_unknown_action(&mut self, name: StrId) {
        let next = self.unknown_actions.len();
        let i = *self.unknown_index.entry(name).or_insert(next);
        if i == next {
            self.unknown_actions.push((name, 0));
        }
        self.unknown_actions[i].1 += 1;
    }
    pub fn finish(mut self, strings: &SnapStrings, _k: &Keys) -> DeviceTrace {
        self.trace.entries.shrink_to_fit();
        let mut sets: Vec<String> = self
            .key_sets
            .iter()
            .map(|(mask, unknown)| {
                let mut names: Vec<&str> = ENTRY_KEYS
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| mask & (1 << i) != 0)
                    .map(|(_, n)| *n)
                    .collect();
                names.extend(unknown.iter().map(|s| strings.get(*s)));
                names.sort_unstable();
                names.join(",")
            })
            .collect();
        crate::base::sort::sort(&mut sets);
        sets.dedup();
        self.trace.key_sets = sets;
        self.trace.unknown_actions = self
            .unknown_actions
            .iter()
            .map(|(n, c)| (strings.get(*n).to_string(), *c))
            .collect();
        self.trace
    }
}
