//! [`Builder::set_field`]: each key/value pair of a typed dict routed into its scratch struct,
//! with the §5.2 type checks (segments, blocks, the top-level dict); values no rule reads are
//! rendered as short text.

use crate::model::snapshot::{BlockState, SettingValue, Stage, StrId};
use crate::parse::pickle::keys::*;
use crate::parse::pickle::memo::Memo;
use crate::parse::pickle::ranges::Stream;
use crate::parse::pickle::schema::{Builder, Kind, Role};
use crate::parse::pickle::vm::{Obj, Val};

use super::{i64_of, int, u64_of, unusable, Int};

impl Builder {
    /// Routes one key/value pair into the typed dict `o`.
    pub(in crate::parse::pickle) fn set_field(
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
            let s = self.segment(o)?;
            s.blocks = b;
            s.shaped = true;
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
                _ if key == kt => {
                    s.total_size = u64_field("total_size");
                    s.shaped = true;
                }
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
    pub(in crate::parse::pickle) fn render(&self, v: Val, depth: usize, budget: usize) -> String {
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
