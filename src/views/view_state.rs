//! The page's view state as a URL fragment: an ordered list of `key=value`
//! pairs, e.g. `tab=memory&rank=1&mem.x=12.5,40.1&mem.q=matmul`. Pure data, no browser types:
//! the UI (`ui::route`) reads it from and writes it to `location.hash`.
//!
//! Parsing never fails and never panics: pairs are split on `&`, a pair without `=` has an
//! empty value, `%XX` escapes and `+` (space) are decoded, invalid UTF-8 is replaced, empty
//! keys are dropped, a repeated key keeps its last value (at the position of the first).
//! Keys this version does not know are kept, so a link written by a newer version survives a
//! round trip. Typed reads ([`HashValue`]) return `None` for a malformed value instead of
//! failing: a bad `rank=abc` is simply ignored.
//!
//! Encoding keeps the fragment readable: letters, digits and `-._~,:/()!*'@;$` stay as they are;
//! `&`, `=`, `#`, `%`, `+`, spaces, controls and non-ASCII bytes are `%XX`-escaped.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, CONTROLS};

/// Bytes escaped in keys and values (everything else printable stays readable).
const ESCAPED: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'&')
    .add(b'+')
    .add(b'<')
    .add(b'=')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Longest fragment parsed, bytes; the rest is ignored (a pasted link is never this long).
pub const MAX_FRAGMENT: usize = 8 * 1024;

/// The view state: ordered `key → value` pairs (keys unique).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ViewState {
    pairs: Vec<(String, String)>,
}

fn decode(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

fn encode(s: &str) -> String {
    utf8_percent_encode(s, ESCAPED).to_string()
}

impl ViewState {
    /// An empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses a fragment, with or without its leading `#` (never fails; see the module doc).
    pub fn parse(fragment: &str) -> Self {
        let mut end = fragment.len().min(MAX_FRAGMENT);
        while !fragment.is_char_boundary(end) {
            end -= 1;
        }
        let s = fragment.get(..end).unwrap_or("");
        let s = s.strip_prefix('#').unwrap_or(s);
        let mut out = ViewState::new();
        for pair in s.split('&') {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let k = decode(k);
            if k.trim().is_empty() {
                continue;
            }
            out.set(&k, decode(v));
        }
        out
    }

    /// The fragment without its `#` (empty when there is no pair).
    pub fn to_fragment(&self) -> String {
        self.pairs
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect::<Vec<_>>()
            .join("&")
    }

    /// The raw value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key` read as `T`; `None` when absent or malformed.
    pub fn get_as<T: HashValue>(&self, key: &str) -> Option<T> {
        self.get(key).and_then(T::from_hash)
    }

    /// Sets `key` (kept at its position when present, else appended). Returns whether
    /// anything changed.
    pub fn set(&mut self, key: &str, value: impl Into<String>) -> bool {
        let value = value.into();
        match self.pairs.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) if *v == value => false,
            Some((_, v)) => {
                *v = value;
                true
            }
            None => {
                self.pairs.push((key.to_string(), value));
                true
            }
        }
    }

    /// Sets `key` from a typed value; `None` (or a value with no text form) removes it.
    pub fn put<T: HashValue>(&mut self, key: &str, value: Option<&T>) -> bool {
        match value.and_then(|v| v.to_hash()) {
            Some(s) => self.set(key, s),
            None => self.remove(key),
        }
    }

    /// Removes `key`; returns whether it was present.
    pub fn remove(&mut self, key: &str) -> bool {
        let n = self.pairs.len();
        self.pairs.retain(|(k, _)| k != key);
        n != self.pairs.len()
    }

    /// Removes every key starting with `prefix` (a view's namespace such as `"mem."`).
    pub fn remove_prefix(&mut self, prefix: &str) -> bool {
        let n = self.pairs.len();
        self.pairs.retain(|(k, _)| !k.starts_with(prefix));
        n != self.pairs.len()
    }

    /// Copies every pair of `other` into `self` (other's values win).
    pub fn merge(&mut self, other: &ViewState) {
        for (k, v) in &other.pairs {
            self.set(k, v.clone());
        }
    }

    /// The pairs in order.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// No pair at all.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }
}

/// A value that can live in the fragment. Implemented for numbers, strings, `bool` and ranges.
pub trait HashValue: Sized {
    /// The text form; `None` when the value cannot be written (then the key is removed).
    fn to_hash(&self) -> Option<String>;
    /// Reads the text form; `None` when malformed.
    fn from_hash(s: &str) -> Option<Self>;
}

macro_rules! int_value {
    ($($t:ty),*) => {$(
        impl HashValue for $t {
            fn to_hash(&self) -> Option<String> {
                Some(self.to_string())
            }
            fn from_hash(s: &str) -> Option<Self> {
                s.trim().parse().ok()
            }
        }
    )*};
}
int_value!(u32, u64, i64, usize);

impl HashValue for f64 {
    /// Shortest text that reads back to the same `f64`; non-finite values are not written.
    fn to_hash(&self) -> Option<String> {
        self.is_finite().then(|| format!("{self}"))
    }
    fn from_hash(s: &str) -> Option<Self> {
        s.trim().parse::<f64>().ok().filter(|v| v.is_finite())
    }
}

impl HashValue for String {
    fn to_hash(&self) -> Option<String> {
        (!self.is_empty()).then(|| self.clone())
    }
    fn from_hash(s: &str) -> Option<Self> {
        Some(s.to_string())
    }
}

impl HashValue for bool {
    fn to_hash(&self) -> Option<String> {
        Some(if *self { "1" } else { "0" }.to_string())
    }
    fn from_hash(s: &str) -> Option<Self> {
        match s.trim() {
            "1" | "true" | "yes" => Some(true),
            "0" | "false" | "no" => Some(false),
            _ => None,
        }
    }
}

/// A range `a,b` (e.g. a zoom window in ms); reads require `a < b`, both finite.
impl HashValue for (f64, f64) {
    fn to_hash(&self) -> Option<String> {
        Some(format!("{},{}", self.0.to_hash()?, self.1.to_hash()?))
    }
    fn from_hash(s: &str) -> Option<Self> {
        let (a, b) = s.split_once(',')?;
        let (a, b) = (f64::from_hash(a)?, f64::from_hash(b)?);
        (a < b).then_some((a, b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_order_and_unknown_keys() {
        let s = ViewState::parse("#tab=memory&rank=1&mem.x=12.5,40.1&mem.q=matmul&future=v2");
        assert_eq!(s.get("tab"), Some("memory"));
        assert_eq!(s.get_as::<u32>("rank"), Some(1));
        assert_eq!(s.get_as::<(f64, f64)>("mem.x"), Some((12.5, 40.1)));
        assert_eq!(s.get("future"), Some("v2"));
        assert_eq!(
            s.to_fragment(),
            "tab=memory&rank=1&mem.x=12.5,40.1&mem.q=matmul&future=v2"
        );
    }

    #[test]
    fn special_characters_are_escaped_and_read_back() {
        let mut s = ViewState::new();
        s.set("mem.q", "a&b=c #d+e%f ü main.py(354)");
        let f = s.to_fragment();
        assert_eq!(f, "mem.q=a%26b%3Dc%20%23d%2Be%25f%20%C3%BC%20main.py(354)");
        assert_eq!(ViewState::parse(&f), s);
        // `+` is a space when read (form encoding), `%2B` a plus.
        assert_eq!(ViewState::parse("q=a+b%2Bc").get("q"), Some("a b+c"));
    }

    #[test]
    fn malformed_input_never_panics_and_is_ignored_piecewise() {
        for bad in [
            "",
            "#",
            "&&&",
            "=",
            "==x",
            "#=1&tab",
            "%",
            "%E",
            "%ZZ=1",
            "a=%FF%FE",
            "rank=abc",
            "x=1,",
            "x=,",
            "x=5,1",
            "x=nan,inf",
            "ü=ö",
            "a=b=c",
        ] {
            let s = ViewState::parse(bad);
            let _ = s.to_fragment();
            assert_eq!(s.get_as::<u32>("rank"), None, "{bad}");
            assert_eq!(s.get_as::<(f64, f64)>("x"), None, "{bad}");
        }
        assert_eq!(ViewState::parse("tab").get("tab"), Some(""));
        assert_eq!(ViewState::parse("a=b=c").get("a"), Some("b=c"));
        assert_eq!(ViewState::parse("a=%FF").get("a"), Some("\u{FFFD}"));
        // Cut inside a multi-byte character: no panic.
        let long = format!("q={}", "é".repeat(MAX_FRAGMENT));
        assert!(ViewState::parse(&long).get("q").unwrap().len() < MAX_FRAGMENT);
    }

    #[test]
    fn repeated_keys_keep_the_last_value_at_the_first_position() {
        let s = ViewState::parse("a=1&b=2&a=3");
        assert_eq!(s.to_fragment(), "a=3&b=2");
    }

    #[test]
    fn put_remove_and_prefix() {
        let mut s = ViewState::parse("tab=memory&mem.x=1,2&mem.row=7&tl.x=3,4");
        assert!(s.put::<u32>("mem.row", Some(&8)));
        assert!(!s.put::<u32>("mem.row", Some(&8)));
        assert!(!s.put::<String>("mem.q", Some(&String::new())));
        assert!(!s.put::<f64>("y", Some(&f64::NAN)));
        assert!(s.remove_prefix("mem."));
        assert_eq!(s.to_fragment(), "tab=memory&tl.x=3,4");
        assert!(s.put::<(f64, f64)>("tl.x", None));
        assert_eq!(s.to_fragment(), "tab=memory");
    }

    #[test]
    fn floats_round_trip_exactly() {
        for v in [0.1, 1_700_000_000_123.456, -3.25e-7, 12.5] {
            assert_eq!(f64::from_hash(&v.to_hash().unwrap()), Some(v));
        }
    }
}
