//! Interned call stacks (ascend-memory.md §5.3): each distinct `Call stack`
//! string is stored once, with its frames split and interned.
//!
//! Frame order is as written: in real torch_npu output **innermost first**
//! (spec README "call stack order"), so frame 0 is the deepest call. Frames
//! are split on `;\r?\n` and trimmed; empty pieces are dropped.

use super::strings::{StrId, StringPool};

/// Handle of one distinct call-stack string in a [`StackPool`]. `StackId::EMPTY` is `""`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(u32);

impl StackId {
    /// The empty stack `""`.
    pub const EMPTY: StackId = StackId(0);
    /// The index as `usize`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
    /// Rebuilds an id from [`StackId::index`] (for compact `u32` columns).
    pub fn from_index(i: u32) -> StackId {
        StackId(i)
    }
}

/// One parsed frame `<path>(<line>): <function>` (§5.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Source path as written (`\` not normalised here).
    pub path: &'a str,
    /// Line number, 0 when the piece did not match the frame pattern.
    pub line: u32,
    /// Function name, `""` when the piece did not match.
    pub function: &'a str,
}

/// Parses one trimmed frame piece by `^(.*)\((\d+)\): (.*)$` (greedy: the last `(<digits>): `
/// wins). A piece that does not match is `(piece, 0, "")`.
pub fn parse_frame(piece: &str) -> Frame<'_> {
    let b = piece.as_bytes();
    let mut search_end = b.len();
    while let Some(p) = piece[..search_end].rfind("): ") {
        // digits before p, then '('
        let mut i = p;
        while i > 0 && b[i - 1].is_ascii_digit() {
            i -= 1;
        }
        if i < p && i > 0 && b[i - 1] == b'(' {
            if let Ok(line) = piece[i..p].parse::<u32>() {
                return Frame {
                    path: &piece[..i - 1],
                    line,
                    function: &piece[p + 3..],
                };
            }
        }
        search_end = p;
    }
    Frame {
        path: piece,
        line: 0,
        function: "",
    }
}

/// Splits a stack string into trimmed, non-empty frame pieces on `;\r?\n`.
pub fn split_frames(text: &str) -> impl Iterator<Item = &str> {
    text.split(";\n")
        .flat_map(|s| s.split(";\r\n"))
        .map(|s| s.trim_matches(|c: char| c.is_ascii_whitespace()))
        .filter(|s| !s.is_empty())
}

/// Distinct stack strings with their frames.
///
/// Invariant: `frame_ranges.len() == texts.len()`; stack `i`'s frames are
/// `frame_ids[frame_ranges[i].0 .. frame_ranges[i].1]`, in written order.
#[derive(Clone, Debug)]
pub struct StackPool {
    texts: StringPool,
    frames: StringPool,
    frame_ranges: Vec<(u32, u32)>,
    frame_ids: Vec<StrId>,
}

impl Default for StackPool {
    fn default() -> Self {
        Self::new()
    }
}

impl StackPool {
    /// A pool holding only the empty stack.
    pub fn new() -> Self {
        StackPool {
            texts: StringPool::new(),
            frames: StringPool::new(),
            frame_ranges: vec![(0, 0)],
            frame_ids: Vec::new(),
        }
    }

    /// The id of stack `text`, adding and splitting it if new.
    pub fn intern(&mut self, text: &str) -> StackId {
        let id = self.texts.intern(text);
        if id.index() == self.frame_ranges.len() {
            let start = self.frame_ids.len() as u32;
            for piece in split_frames(text) {
                let f = self.frames.intern(piece);
                self.frame_ids.push(f);
            }
            self.frame_ranges.push((start, self.frame_ids.len() as u32));
        }
        StackId(id.index() as u32)
    }

    /// The full stack string exactly as read.
    pub fn text(&self, id: StackId) -> &str {
        self.texts.get(StrId::from_index(id.0))
    }

    /// Number of frames of `id`.
    pub fn frame_count(&self, id: StackId) -> usize {
        self.frame_ranges
            .get(id.index())
            .map(|(a, b)| (b - a) as usize)
            .unwrap_or(0)
    }

    /// The frame pieces of `id`, innermost first in real data.
    pub fn frames(&self, id: StackId) -> impl Iterator<Item = &str> + '_ {
        let (a, b) = self.frame_ranges.get(id.index()).copied().unwrap_or((0, 0));
        self.frame_ids[a as usize..b as usize]
            .iter()
            .map(|f| self.frames.get(*f))
    }

    /// Number of distinct stacks (including the empty one).
    pub fn len(&self) -> usize {
        self.frame_ranges.len()
    }

    /// Always false: the empty stack is always present.
    pub fn is_empty(&self) -> bool {
        self.frame_ranges.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_parse_and_split() {
        let f = parse_frame("/home/u/imagenet_script/main.py(354): train");
        assert_eq!(f.path, "/home/u/imagenet_script/main.py");
        assert_eq!(f.line, 354);
        assert_eq!(f.function, "train");
        let g = parse_frame("aten::add(0): kernel_launch");
        assert_eq!(
            (g.path, g.line, g.function),
            ("aten::add", 0, "kernel_launch")
        );
        let h = parse_frame("<string>(1): <module>");
        assert_eq!((h.path, h.line), ("<string>", 1));
        let bad = parse_frame("something odd");
        assert_eq!((bad.path, bad.line, bad.function), ("something odd", 0, ""));
        let weird = parse_frame("a(1): b(2): c");
        assert_eq!(
            (weird.path, weird.line, weird.function),
            ("a(1): b", 2, "c")
        );

        let mut p = StackPool::new();
        let s = p.intern("a.py(1): f;\r\nb.py(2): g;\n c.py(3): h ");
        assert_eq!(
            p.frames(s).collect::<Vec<_>>(),
            ["a.py(1): f", "b.py(2): g", "c.py(3): h"]
        );
        assert_eq!(p.intern("a.py(1): f;\r\nb.py(2): g;\n c.py(3): h "), s);
        assert_eq!(p.frame_count(StackId::EMPTY), 0);
        assert_eq!(p.intern(""), StackId::EMPTY);
    }
}
