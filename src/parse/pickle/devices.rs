//! `device_traces` slots (torch-snapshot.md §3.1): one slot per device, a list that is
//! the same pickle object as an earlier slot's becomes an alias (never a copy), slots beyond
//! [`MAX_DEVICES`] are counted, not kept.

use crate::base::{Position, Problem, Severity};
use crate::model::snapshot::DeviceTrace;

use super::schema::{Builder, Role};
use super::vm::{Obj, Val};

/// Most `device_traces` slots kept (a process sees at most a few dozen devices). Each slot costs
/// a few hundred bytes even when empty, so a list of a million empty lists would otherwise cost
/// 200× its file; slots beyond this are counted (`SNAP-LAYOUT`) and not kept.
pub const MAX_DEVICES: usize = 1 << 10;

/// One trace list that several `device_traces` slots refer to.
pub(super) struct SharedTrace {
    pub source: u32,
    pub aliases: Vec<u32>,
    pub first_at: u64,
}

impl Builder {
    /// Appends `item` to `device_traces` (the next slot).
    pub(super) fn append_trace_slot(&mut self, item: Val) {
        let pos = self.dt_len;
        self.dt_len = self.dt_len.saturating_add(1);
        if pos as usize >= MAX_DEVICES {
            self.devices_beyond += 1;
            return;
        }
        match item {
            Val::Obj(Obj {
                role: Role::TraceList(d),
                ..
            }) if d == pos => {}
            Val::Obj(Obj {
                role: Role::TraceList(d),
                ..
            }) => {
                // The same list object again: an alias, never a copy (a 100k-entry
                // list referenced 1000 times stays one list).
                self.device_mut(pos).trace.same_as = Some(d);
                let at = self.offset;
                match self.shared.iter_mut().find(|s| s.source == d) {
                    Some(s) => s.aliases.push(pos),
                    None => self.shared.push(SharedTrace {
                        source: d,
                        aliases: vec![pos],
                        first_at: at,
                    }),
                }
            }
            _ => {
                self.device_mut(pos);
                self.warn(
                    "SNAP-LAYOUT",
                    format!(
                        "device_traces[{pos}] is not a list of trace entries; treated as empty"
                    ),
                );
            }
        }
    }

    /// One problem per trace list that several `device_traces` slots share (`SNAP-SHARED-TRACE`).
    fn report_shared(&mut self) {
        for s in std::mem::take(&mut self.shared) {
            let n = s.aliases.len();
            let entries = self
                .devices
                .get(s.source as usize)
                .map_or(0, |d| d.trace.entries.len());
            let list: Vec<String> = s.aliases.iter().take(5).map(|a| a.to_string()).collect();
            let more = if n > 5 { ", …" } else { "" };
            let at = Position::file(self.file.as_str()).at_byte(s.first_at);
            self.problems.push(Problem::new(
                Severity::Warning,
                "SNAP-SHARED-TRACE",
                at,
                format!(
                    "the trace list of device {src} is referenced {total} times in `device_traces` \
                     (also as device {list}{more}): the same list object, not {n} more traces; its \
                     {entries} entries are analysed once, as device {src}",
                    src = s.source,
                    total = n + 1,
                    list = list.join(", "),
                ),
            ));
        }
    }

    /// Finished device traces, in slot order.
    pub fn take_devices(&mut self) -> Vec<DeviceTrace> {
        self.report_shared();
        if self.devices_beyond > 0 {
            let n = self.devices_beyond;
            self.problems.push(Problem::new(
                Severity::Warning,
                "SNAP-LAYOUT",
                Position::file(self.file.as_str()),
                format!(
                    "`device_traces` has {} slots; only the first {MAX_DEVICES} are kept, \
                     {n} slots after them are not decoded",
                    self.dt_len
                ),
            ));
        }
        let n = (self.dt_len as usize)
            .max(self.devices.len())
            .min(MAX_DEVICES);
        self.device_mut(n.saturating_sub(1) as u32);
        let devs = std::mem::take(&mut self.devices);
        devs.into_iter()
            .take(n)
            .map(|d| d.finish(&self.pools.strings, &self.k))
            .collect()
    }
}
