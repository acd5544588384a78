//! Field-level decoding of snapshot dicts (torch-snapshot.md §3.2–3.8, §5.2).
//!
//! One scratch struct per typed dict; `Builder::set_field` routes each key/value
//! pair; the `to_*` methods produce model rows with the §5.2 type checks.

use std::collections::{HashMap, HashSet};

use crate::model::snapshot::{
    Action, Annotation, Block, BlockState, DeviceTrace, EntryRow, Frame, Segment, SettingValue,
    SnapStrings, StackId, Stage, StrId, NO_STACK, NO_TIME,
};

use super::keys::*;
use super::memo::Memo;
use super::ranges::{Ranges, Stream, MAX_TOTAL_BYTES};
use super::schema::{Builder, Kind, Role};
use super::vm::{Obj, Val};

/// An integer field value.
enum Int {
    Ok(i128),
    Missing,
    NotInt,
    TooWide,
}

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

fn u64_of(v: Val, bigs: &[i128]) -> Option<u64> {
    match int(v, bigs) {
        Int::Ok(i) => u64::try_from(i).ok(),
        _ => None,
    }
}

fn i64_of(v: Val, bigs: &[i128]) -> Option<i64> {
    match int(v, bigs) {
        Int::Ok(i) => i64::try_from(i).ok(),
        _ => None,
    }
}

/// Why `v` is not a usable integer of field `field` (`signed`: the i64 range, else
/// 0 … 2^64−1), in words for a problem message (issue 11: such values became 0 silently).
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

/// One device trace under construction.
#[derive(Debug)]
pub(crate) struct DevBuild {
    pub trace: DeviceTrace,
    key_sets: Vec<(u32, Vec<StrId>)>,
    /// Hash index of `key_sets` once there are more than [`KEY_SET_SCAN`].
    key_index: HashSet<(u32, Vec<StrId>)>,
    unknown_actions: Vec<(StrId, u64)>,
    unknown_index: HashMap<StrId, usize>,
}

impl DevBuild {
    pub fn new(device: u32) -> Self {
        DevBuild {
            trace: DeviceTrace {
                device,
                ..Default::default()
            },
            key_sets: Vec::new(),
            key_index: HashSet::new(),
            unknown_actions: Vec::new(),
            unknown_index: HashMap::new(),
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

impl Builder {
    /// Routes one key/value pair into the typed dict `o`.
    pub(super) fn set_field(
        &mut self,
        o: Obj,
        key: Val,
        v: Val,
        memo: &mut Memo,
        bigs: &[i128],
    ) -> Result<(), String> {
        let Val::Str(key) = key else {
            self.warn(
                "SNAP-LAYOUT",
                format!("a non-string key in a {:?} dict; ignored", o.role),
            );
            return Ok(());
        };
        let k = &self.k;
        match o.role {
            Role::Top => self.set_top(key, v),
            Role::Entry => {
                // One table lookup routes the key (bit order of `ENTRY_KEYS`).
                let bit = k.entry_bit(key);
                let na = k.na;
                let stack = if bit == Some(BIT_FRAMES) {
                    self.stack_of(v, memo)?
                } else {
                    None
                };
                let text_id = match (bit, v) {
                    // "N/A" is the default compile_context (§3.5): stored as absent.
                    (Some(BIT_COMPILE_CONTEXT), Val::Str(s)) if s == na => StrId(0),
                    (Some(BIT_COMPILE_CONTEXT | BIT_USER_METADATA), Val::Str(s)) => s,
                    (Some(BIT_COMPILE_CONTEXT | BIT_USER_METADATA), other) => {
                        let t = self.scalar_text(other);
                        self.pools.strings.intern(&t)
                    }
                    _ => StrId(0),
                };
                let e = self.entry(o)?;
                let Some(b) = bit else {
                    e.unknown_keys.push(key);
                    return Ok(());
                };
                e.mask |= 1 << b;
                match b {
                    BIT_ACTION => e.action = v,
                    BIT_ADDR => e.addr = v,
                    BIT_SIZE => e.size = v,
                    BIT_STREAM => e.stream = v,
                    BIT_TIME_US => e.time_us = v,
                    BIT_DEVICE_FREE => e.device_free = v,
                    BIT_FRAMES => e.stack = stack,
                    BIT_COMPILE_CONTEXT => e.compile = text_id,
                    BIT_USER_METADATA => e.meta = text_id,
                    _ => {}
                }
                Ok(())
            }
            Role::Frame => {
                let (kf, kn, kl) = (k.filename, k.name, k.line);
                let fx = key == k.fx_original_trace || key == k.fx_node_name;
                if fx || key == k.fx_node_op || key == k.fx_node_target {
                    self.has_fx = true;
                }
                let is_fx_trace = key == k.fx_original_trace;
                let line = i64_of(v, bigs).unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
                let f = self.frame(o)?;
                match v {
                    Val::Str(s) if key == kf => f.filename = s,
                    Val::Str(s) if key == kn => f.name = s,
                    _ if key == kl => f.line = line,
                    Val::Str(s) if fx && (is_fx_trace || f.fx.is_none()) => f.fx = Some(s),
                    _ => {}
                }
                Ok(())
            }
            Role::Segment => self.set_segment(o, key, v, memo, bigs),
            Role::Block => self.set_block(o, key, v, memo, bigs),
            Role::History => {
                let is_frames = key == k.frames;
                let is_size = key == k.real_size;
                let stack = if is_frames {
                    self.stack_of(v, memo)?
                } else {
                    None
                };
                let h = self.history(o)?;
                if is_frames {
                    h.stack = stack;
                } else if is_size {
                    h.real_size = u64_of(v, bigs);
                }
                Ok(())
            }
            Role::Annotation => {
                let (kn, ks, kd, kt, start, end) =
                    (k.name, k.stage, k.device, k.time_us, k.START, k.END);
                let a = self.annotation(o)?;
                if key == kn {
                    if let Val::Str(s) = v {
                        a.name = s;
                    }
                } else if key == ks {
                    a.stage = match v {
                        Val::Str(s) if s == start => Stage::Start,
                        Val::Str(s) if s == end => Stage::End,
                        _ => Stage::Other,
                    };
                } else if key == kd {
                    a.device = i64_of(v, bigs).unwrap_or(0);
                } else if key == kt {
                    let at = self.offset;
                    let t = match int(v, bigs) {
                        Int::Ok(i) => self.ranges.time(Some(i), at),
                        _ => self.ranges.time(None, at),
                    };
                    self.annotation(o)?.time_us = t;
                }
                Ok(())
            }
            _ => Err(format!("SETITEM on a {:?}", o.role)),
        }
    }

    fn set_segment(
        &mut self,
        o: Obj,
        key: StrId,
        v: Val,
        memo: &mut Memo,
        bigs: &[i128],
    ) -> Result<(), String> {
        let k = &self.k;
        if key == k.frames {
            let s = self.stack_of(v, memo)?;
            self.segment(o)?.stack = s;
        } else if key == k.blocks {
            let b = self.take_block_list(v, memo)?;
            self.segment(o)?.blocks = b;
        } else if key == k.segment_pool_id {
            let pool = self.pair(v, bigs);
            self.segment(o)?.pool_id = pool;
        } else {
            let (kd, ka, kt, kal, kac, kr, ks, kty, ke) = (
                k.device,
                k.address,
                k.total_size,
                k.allocated_size,
                k.active_size,
                k.requested_size,
                k.stream,
                k.segment_type,
                k.is_expandable,
            );
            let s = self.segment(o)?;
            let mut u64_field = |field: &str| match u64_of(v, bigs) {
                Some(u) => u,
                None => {
                    if s.unusable.is_none() {
                        s.unusable = Some(unusable(field, v, bigs, false));
                    }
                    0
                }
            };
            match key {
                _ if key == kd => match i64_of(v, bigs) {
                    Some(d) => s.device = d,
                    None => {
                        if s.unusable.is_none() {
                            s.unusable = Some(unusable("device", v, bigs, true));
                        }
                    }
                },
                _ if key == ka => s.address = u64_field("address"),
                _ if key == kt => s.total_size = u64_field("total_size"),
                _ if key == kal => s.allocated_size = u64_field("allocated_size"),
                _ if key == kac => s.active_size = u64_field("active_size"),
                _ if key == kr => s.requested_size = u64_of(v, bigs),
                _ if key == ks => {
                    let st = match int(v, bigs) {
                        Int::Ok(i) => Stream::of(Some(i)),
                        _ => Stream::Unusable,
                    };
                    let at = self.offset;
                    let h = self.ranges.stream(st, at);
                    self.segment(o)?.stream = h;
                }
                _ if key == kty => {
                    if let Val::Str(t) = v {
                        s.segment_type = t;
                    }
                }
                _ if key == ke => s.is_expandable = matches!(v, Val::Bool(true) | Val::Int(1)),
                _ => {}
            }
        }
        Ok(())
    }

    fn set_block(
        &mut self,
        o: Obj,
        key: StrId,
        v: Val,
        memo: &mut Memo,
        bigs: &[i128],
    ) -> Result<(), String> {
        let k = &self.k;
        if key == k.frames {
            let s = self.stack_of(v, memo)?;
            self.block(o)?.stack = s;
        } else if key == k.history {
            let h = self.take_history(v, memo)?;
            self.block(o)?.history = Some(h.first.unwrap_or((None, None)));
        } else {
            let (ka, ks, kr, kst) = (k.address, k.size, k.requested_size, k.state);
            let states = [
                (k.active_allocated, BlockState::ActiveAllocated),
                (k.active_pending_free, BlockState::ActivePendingFree),
                (k.active_awaiting_free, BlockState::ActivePendingFree),
                (k.inactive, BlockState::Inactive),
            ];
            let b = self.block(o)?;
            if key == ka {
                b.address = u64_of(v, bigs);
            } else if key == ks {
                let size = u64_of(v, bigs);
                b.size = size.unwrap_or(0);
                if size.is_none() {
                    let why = unusable("size", v, bigs, false);
                    self.warn("SNAP-FIELD", format!("a segment block's {why}: taken as 0"));
                }
            } else if key == kr {
                b.requested_size = u64_of(v, bigs);
            } else if key == kst {
                if let Val::Str(s) = v {
                    b.state = states
                        .iter()
                        .find(|(id, _)| *id == s)
                        .map_or(BlockState::Other(s), |(_, st)| *st);
                }
            }
        }
        Ok(())
    }

    fn set_top(&mut self, key: StrId, v: Val) -> Result<(), String> {
        let name = self.text(key).to_string();
        self.top_keys.push(name.clone());
        let k = &self.k;
        let expect = |role: Role| matches!(v, Val::Obj(o) if o.role == role);
        if key == k.segments {
            if !expect(Role::SegmentList) {
                self.warn(
                    "SNAP-LAYOUT",
                    "`segments` is not a list of segment dicts".into(),
                );
            }
        } else if key == k.device_traces {
            if !expect(Role::DeviceTraces) {
                self.warn(
                    "SNAP-LAYOUT",
                    "`device_traces` is not a list of lists".into(),
                );
            }
        } else if key == k.external_annotations {
            self.has_annotations_key = true;
        } else if key == k.allocator_settings {
            let mut out = Vec::new();
            if let Val::Generic(i) = v {
                if let Some(node) = self.generic.get(i as usize) {
                    if node.kind == Kind::Dict {
                        for pair in node.items.chunks_exact(2) {
                            out.push((self.scalar_text(pair[0]), self.setting(pair[1])));
                        }
                    }
                }
            }
            self.settings = Some(out);
        } else {
            let r = self.render(v, 0, 200);
            self.other_fields.push((name, r));
        }
        Ok(())
    }

    fn pair(&self, v: Val, bigs: &[i128]) -> (i64, i64) {
        if let Val::Generic(i) = v {
            if let Some(n) = self.generic.get(i as usize) {
                if let [a, b] = n.items.as_slice() {
                    return (i64_of(*a, bigs).unwrap_or(0), i64_of(*b, bigs).unwrap_or(0));
                }
            }
        }
        (0, 0)
    }

    fn setting(&self, v: Val) -> SettingValue {
        match v {
            Val::Int(i) => SettingValue::Int(i as i128),
            Val::Float(f) => SettingValue::Float(f),
            Val::Bool(b) => SettingValue::Bool(b),
            Val::Str(s) => SettingValue::Str(self.text(s).to_string()),
            Val::None => SettingValue::None,
            other => SettingValue::Nested(self.render(other, 0, 400)),
        }
    }

    /// `compile_context` / `user_metadata` value as text (dicts rendered compactly).
    fn scalar_text(&self, v: Val) -> String {
        match v {
            Val::Str(s) => self.text(s).to_string(),
            Val::None => String::new(),
            other => self.render(other, 0, 200),
        }
    }

    /// Compact Python-like rendering of a value, cut at about `budget` characters.
    pub(super) fn render(&self, v: Val, depth: usize, budget: usize) -> String {
        let mut s = String::new();
        self.render_into(v, depth, budget, &mut s);
        if s.len() > budget {
            let mut cut = budget;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            s.truncate(cut);
            s.push('…');
        }
        s
    }

    fn render_into(&self, v: Val, depth: usize, budget: usize, out: &mut String) {
        use std::fmt::Write;
        if out.len() > budget {
            return;
        }
        match v {
            Val::None => out.push_str("None"),
            Val::Bool(b) => out.push_str(if b { "True" } else { "False" }),
            Val::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Val::Float(f) => {
                let _ = write!(out, "{f}");
            }
            Val::Str(s) => {
                let _ = write!(out, "{:?}", self.text(s));
            }
            Val::Generic(i) if depth < 4 => {
                let Some(n) = self.generic.get(i as usize) else {
                    return;
                };
                let (open, close) = match n.kind {
                    Kind::Dict => ("{", "}"),
                    Kind::List => ("[", "]"),
                    Kind::Tuple => ("(", ")"),
                    Kind::Set => ("{", "}"),
                };
                out.push_str(open);
                let step = if n.kind == Kind::Dict { 2 } else { 1 };
                for (j, chunk) in n.items.chunks(step).enumerate() {
                    if out.len() > budget {
                        break;
                    }
                    if j > 0 {
                        out.push_str(", ");
                    }
                    self.render_into(chunk[0], depth + 1, budget, out);
                    if let Some(val) = chunk.get(1) {
                        out.push_str(": ");
                        self.render_into(*val, depth + 1, budget, out);
                    }
                }
                out.push_str(close);
            }
            Val::Obj(o) => {
                let _ = write!(out, "<{:?}>", o.role);
            }
            _ => out.push('…'),
        }
    }
}
