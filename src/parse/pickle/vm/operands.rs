//! Operand lengths of the opcodes: the fast path's table ([`QUICK_LEN`]) and the full rule
//! ([`operand_len`]), and the `LONG1`/`LONG4` integers ([`decode_long`]).

use crate::parse::pickle::opcodes as op;

/// [`QUICK_LEN`]: not on the fast path (refused, unsupported, or a 4/8-byte length prefix).
pub(super) const SLOW: u8 = 0xff;
/// [`QUICK_LEN`]: a 1-byte length prefix, then that many bytes.
pub(super) const PREFIX1: u8 = 0xfe;

/// Per opcode byte, the operand length of the data opcodes the VM's fast path decodes without
/// the class check and [`operand_len`] (the same lengths; a unit test compares every byte).
pub(super) const QUICK_LEN: [u8; 256] = {
    let mut t = [SLOW; 256];
    let zero = [
        op::MARK,
        op::STOP,
        op::POP,
        op::POP_MARK,
        op::DUP,
        op::NONE,
        op::APPEND,
        op::DICT,
        op::EMPTY_DICT,
        op::APPENDS,
        op::LIST,
        op::EMPTY_LIST,
        op::SETITEM,
        op::TUPLE,
        op::EMPTY_TUPLE,
        op::SETITEMS,
        op::TUPLE1,
        op::TUPLE2,
        op::TUPLE3,
        op::NEWTRUE,
        op::NEWFALSE,
        op::EMPTY_SET,
        op::ADDITEMS,
        op::FROZENSET,
        op::MEMOIZE,
    ];
    let mut i = 0;
    while i < zero.len() {
        t[zero[i] as usize] = 0;
        i += 1;
    }
    t[op::PROTO as usize] = 1;
    t[op::BININT1 as usize] = 1;
    t[op::BINGET as usize] = 1;
    t[op::BINPUT as usize] = 1;
    t[op::BININT2 as usize] = 2;
    t[op::BININT as usize] = 4;
    t[op::LONG_BINGET as usize] = 4;
    t[op::LONG_BINPUT as usize] = 4;
    t[op::FRAME as usize] = 8;
    t[op::BINFLOAT as usize] = 8;
    t[op::SHORT_BINUNICODE as usize] = PREFIX1;
    t[op::SHORT_BINBYTES as usize] = PREFIX1;
    t[op::LONG1 as usize] = PREFIX1;
    t
};

/// Operand length of `code` given the bytes after it: `Ok(None)` if the length
/// header itself is incomplete.
pub(super) fn operand_len(code: u8, rest: &[u8]) -> Result<Option<usize>, String> {
    let fixed = |n: usize| Ok(Some(n));
    match code {
        op::PROTO | op::BININT1 | op::BINGET | op::BINPUT => fixed(1),
        op::BININT2 => fixed(2),
        op::BININT | op::LONG_BINGET | op::LONG_BINPUT => fixed(4),
        op::FRAME | op::BINFLOAT => fixed(8),
        op::SHORT_BINUNICODE | op::SHORT_BINBYTES | op::LONG1 => match rest.first() {
            Some(&n) => Ok(Some(1 + n as usize)),
            None => Ok(None),
        },
        op::BINUNICODE | op::BINBYTES => match rest.get(..4) {
            Some(b) => Ok(Some(
                4 + u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize,
            )),
            None => Ok(None),
        },
        op::LONG4 => match rest.get(..4) {
            Some(b) => {
                let n = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                if n < 0 {
                    return Err("LONG4 with a negative byte count".into());
                }
                Ok(Some(4 + n as usize))
            }
            None => Ok(None),
        },
        op::BINUNICODE8 | op::BINBYTES8 => match rest.get(..8) {
            Some(b) => {
                let mut a = [0u8; 8];
                a.copy_from_slice(b);
                let n = u64::from_le_bytes(a);
                usize::try_from(n)
                    .ok()
                    .and_then(|n| n.checked_add(8))
                    .map(Some)
                    .ok_or_else(|| format!("string length {n} does not fit in memory"))
            }
            None => Ok(None),
        },
        _ => fixed(0),
    }
}

/// Little-endian two's-complement integer of up to 16 bytes; `None` if wider
/// (after dropping redundant sign bytes).
pub(in crate::parse::pickle) fn decode_long(digits: &[u8]) -> Option<i128> {
    if digits.is_empty() {
        return Some(0);
    }
    let negative = digits[digits.len() - 1] & 0x80 != 0;
    let pad = if negative { 0xff } else { 0x00 };
    let mut n = digits.len();
    while n > 16 && digits[n - 1] == pad {
        n -= 1;
    }
    if n > 16 {
        return None;
    }
    let mut buf = [pad; 16];
    buf[..n].copy_from_slice(&digits[..n]);
    let v = i128::from_le_bytes(buf);
    // Dropping pad bytes must not flip the sign.
    if (v < 0) != negative {
        return None;
    }
    Some(v)
}

#[cfg(test)]
mod tests {
    use super::decode_long;

    #[test]
    fn quick_lengths_agree_with_the_class_and_operand_len() {
        use super::{operand_len, PREFIX1, QUICK_LEN, SLOW};
        use crate::parse::pickle::opcodes::{class, Class};
        let rest = [7u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let mut quick = 0;
        for code in 0..=255u8 {
            let want = operand_len(code, &rest);
            match QUICK_LEN[code as usize] {
                SLOW => continue,
                PREFIX1 => assert_eq!(want, Ok(Some(8)), "opcode {code:#x}"),
                n => assert_eq!(want, Ok(Some(n as usize)), "opcode {code:#x}"),
            }
            assert_eq!(
                class(code),
                Class::Data,
                "opcode {code:#x} is not a data opcode"
            );
            quick += 1;
        }
        assert_eq!(quick, 38);
    }

    #[test]
    fn long1_two_complement() {
        assert_eq!(decode_long(&[]), Some(0));
        assert_eq!(decode_long(&[0xff]), Some(-1));
        assert_eq!(decode_long(&[0x00, 0x80]), Some(-32768));
        assert_eq!(decode_long(&[0xff, 0x00]), Some(255));
        // 2^64 needs 9 bytes
        let mut b = vec![0u8; 8];
        b.push(1);
        assert_eq!(decode_long(&b), Some(1i128 << 64));
        assert_eq!(decode_long(&[0u8; 17]), Some(0));
        let mut wide = vec![0u8; 16];
        wide.push(1);
        assert_eq!(decode_long(&wide), None);
    }
}
