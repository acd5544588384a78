//! Pre-interned snapshot keys (torch-snapshot.md §3): the key and value strings the decoder
//! compares by id ([`Keys`]), the entry keys with a bit in `EntryObj::mask` ([`ENTRY_KEYS`]) and
//! the bits `Builder::set_field` routes by (one table lookup per entry key).

use crate::model::snapshot::{Action, SnapStrings, StrId};

macro_rules! keys {
    ($($field:ident),* $(,)?) => {
        /// Pre-interned key and value strings, compared by id.
        #[allow(non_snake_case)]
        pub(crate) struct Keys { $(pub $field: StrId,)* pub actions: Vec<(StrId, Action)>, pub na: StrId, entry_table: Vec<u8> }
        impl Keys {
            /// Bit of an entry key in [`EntryObj::mask`] (order of `ENTRY_KEYS`), by table lookup.
            pub fn entry_bit(&self, key: StrId) -> Option<usize> {
                match self.entry_table.get(key.0 as usize) {
                    Some(&c) if c > 0 => Some(c as usize - 1),
                    _ => None,
                }
            }
            pub fn new(s: &mut SnapStrings) -> Keys {
                let actions = Action::ALL.iter().filter(|a| **a != Action::Unknown)
                    .map(|a| (s.intern(a.name()), *a)).collect();
                let mut k = Keys { $($field: s.intern(stringify!($field)),)* actions, na: s.intern("N/A"), entry_table: Vec::new() };
                let ids = [k.action, k.addr, k.size, k.stream, k.time_us, k.frames, k.compile_context,
                           k.user_metadata, k.device_free, k.forward_frames, k.category];
                let max = ids.iter().map(|i| i.0 as usize).max().unwrap_or(0);
                k.entry_table = vec![0; max + 1];
                for (bit, id) in ids.iter().enumerate() {
                    k.entry_table[id.0 as usize] = bit as u8 + 1;
                }
                k
            }
        }
    };
}

keys!(
    action,
    addr,
    size,
    stream,
    time_us,
    frames,
    compile_context,
    user_metadata,
    device_free,
    forward_frames,
    category,
    filename,
    name,
    line,
    fx_node_op,
    fx_node_name,
    fx_node_target,
    fx_original_trace,
    device,
    address,
    total_size,
    allocated_size,
    active_size,
    requested_size,
    segment_type,
    segment_pool_id,
    is_expandable,
    blocks,
    state,
    history,
    real_size,
    stage,
    segments,
    device_traces,
    allocator_settings,
    external_annotations,
    active_allocated,
    active_pending_free,
    active_awaiting_free,
    inactive,
    START,
    END
);

/// Entry keys with a bit in [`EntryObj::mask`], in bit order.
pub(super) const ENTRY_KEYS: [&str; 11] = [
    "action",
    "addr",
    "size",
    "stream",
    "time_us",
    "frames",
    "compile_context",
    "user_metadata",
    "device_free",
    "forward_frames",
    "category",
];

// Bits of `ENTRY_KEYS` that `set_field` routes (the others only set their mask bit).
pub(super) const BIT_ACTION: usize = 0;
pub(super) const BIT_ADDR: usize = 1;
pub(super) const BIT_SIZE: usize = 2;
pub(super) const BIT_STREAM: usize = 3;
pub(super) const BIT_TIME_US: usize = 4;
pub(super) const BIT_FRAMES: usize = 5;
pub(super) const BIT_COMPILE_CONTEXT: usize = 6;
pub(super) const BIT_USER_METADATA: usize = 7;
pub(super) const BIT_DEVICE_FREE: usize = 8;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routed_bits_name_their_keys() {
        let named = [
            (BIT_ACTION, "action"),
            (BIT_ADDR, "addr"),
            (BIT_SIZE, "size"),
            (BIT_STREAM, "stream"),
            (BIT_TIME_US, "time_us"),
            (BIT_FRAMES, "frames"),
            (BIT_COMPILE_CONTEXT, "compile_context"),
            (BIT_USER_METADATA, "user_metadata"),
            (BIT_DEVICE_FREE, "device_free"),
        ];
        for (bit, name) in named {
            assert_eq!(ENTRY_KEYS[bit], name);
        }
        let mut strings = SnapStrings::default();
        let k = Keys::new(&mut strings);
        assert_eq!(k.entry_bit(k.time_us), Some(BIT_TIME_US));
        assert_eq!(k.entry_bit(k.user_metadata), Some(BIT_USER_METADATA));
        assert_eq!(k.entry_bit(k.filename), None);
    }
}
