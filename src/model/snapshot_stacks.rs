//! Interning pools of one decoded memory snapshot: strings, frames and stacks
//! (torch-snapshot.md §2.3, §7.1).
//!
//! Real snapshots share frame dicts and frame lists heavily (984,474 frame
//! references over 551 distinct frames and 152 distinct stacks in one fixture),
//! so every frame is stored once by content `(filename, line, name, fx)` and
//! every stack once by its frame-id sequence. Stacks are **innermost first**:
//! index 0 is the deepest call (spec README "call stack order").

use rustc_hash::FxHashMap as HashMap;

/// Interned UTF-8 string of one snapshot; index into its [`SnapStrings`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct StrId(pub u32);

/// Interned frame; index into [`FrameTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FrameId(pub u32);

/// Interned stack (a frame-id sequence, innermost first); index into [`StackPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct StackId(pub u32);

/// String pool: equal ids mean equal strings. Id 0 is always the empty string.
#[derive(Clone, Debug)]
pub struct SnapStrings {
    texts: Vec<Box<str>>,
    index: HashMap<Box<str>, StrId>,
}

impl Default for SnapStrings {
    fn default() -> Self {
        let mut s = SnapStrings {
            texts: Vec::new(),
            index: HashMap::default(),
        };
        s.intern("");
        s
    }
}

impl SnapStrings {
    /// Returns the id of `text`, adding it if new.
    pub fn intern(&mut self, text: &str) -> StrId {
        if let Some(&id) = self.index.get(text) {
            return id;
        }
        let id = StrId(self.texts.len() as u32);
        self.texts.push(text.into());
        self.index.insert(text.into(), id);
        id
    }
    /// The id of `text` if it was interned.
    pub fn find(&self, text: &str) -> Option<StrId> {
        self.index.get(text).copied()
    }
    /// The text of `id` (`""` for an id of another pool).
    pub fn get(&self, id: StrId) -> &str {
        self.texts.get(id.0 as usize).map(|s| &**s).unwrap_or("")
    }
    /// Number of distinct strings.
    pub fn len(&self) -> usize {
        self.texts.len()
    }
    /// Always false: the empty string is interned at creation.
    pub fn is_empty(&self) -> bool {
        self.texts.is_empty()
    }
}

/// One frame `{filename, line, name}` (torch-snapshot.md §3.4) with the optional FX text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// Source file as recorded (may be `??` for C++ frames without debug info, or a Windows path).
    pub filename: StrId,
    /// Line number (0 when unknown).
    pub line: u32,
    /// Function name.
    pub name: StrId,
    /// FX augmentation (`fx_original_trace`, else `fx_node_name`), when recorded.
    pub fx: Option<StrId>,
}

/// Distinct frames by content.
#[derive(Clone, Debug, Default)]
pub struct FrameTable {
    frames: Vec<Frame>,
    index: HashMap<Frame, FrameId>,
}

impl FrameTable {
    /// Returns the id of `frame`, adding it if new.
    pub fn intern(&mut self, frame: Frame) -> FrameId {
        if let Some(&id) = self.index.get(&frame) {
            return id;
        }
        let id = FrameId(self.frames.len() as u32);
        self.frames.push(frame);
        self.index.insert(frame, id);
        id
    }
    /// The frame of `id`, if it exists.
    pub fn get(&self, id: FrameId) -> Option<&Frame> {
        self.frames.get(id.0 as usize)
    }
    /// Number of distinct frames.
    pub fn len(&self) -> usize {
        self.frames.len()
    }
    /// True when no frame was interned.
    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }
}

/// Distinct stacks by content, stored flat: all frame ids in one vector with offsets.
#[derive(Clone, Debug)]
pub struct StackPool {
    flat: Vec<FrameId>,
    starts: Vec<u32>,
    index: HashMap<Box<[FrameId]>, StackId>,
}

impl Default for StackPool {
    fn default() -> Self {
        StackPool {
            flat: Vec::new(),
            starts: vec![0],
            index: HashMap::default(),
        }
    }
}

impl StackPool {
    /// Returns the id of the stack `frames` (innermost first), adding it if new.
    pub fn intern(&mut self, frames: &[FrameId]) -> StackId {
        if let Some(&id) = self.index.get(frames) {
            return id;
        }
        let id = StackId((self.starts.len() - 1) as u32);
        self.flat.extend_from_slice(frames);
        self.starts.push(self.flat.len() as u32);
        self.index.insert(frames.into(), id);
        id
    }
    /// The frames of `id`, innermost first (empty for an unknown id).
    pub fn get(&self, id: StackId) -> &[FrameId] {
        let i = id.0 as usize;
        match (self.starts.get(i), self.starts.get(i + 1)) {
            (Some(&a), Some(&b)) => self.flat.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }
    /// Number of distinct stacks.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }
    /// True when no stack was interned.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The three pools of one snapshot.
#[derive(Clone, Debug, Default)]
pub struct SnapPools {
    /// Interned strings (file names, function names, actions, annotation names…).
    pub strings: SnapStrings,
    /// Distinct frames.
    pub frames: FrameTable,
    /// Distinct stacks.
    pub stacks: StackPool,
}

impl SnapPools {
    /// Frame `id` as `(filename, line, name)` text; `("", 0, "")` for an unknown id.
    pub fn frame_text(&self, id: FrameId) -> (&str, u32, &str) {
        match self.frames.get(id) {
            Some(f) => (
                self.strings.get(f.filename),
                f.line,
                self.strings.get(f.name),
            ),
            None => ("", 0, ""),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacks_are_interned_by_content() {
        let mut p = StackPool::default();
        let a = p.intern(&[FrameId(1), FrameId(2)]);
        let b = p.intern(&[FrameId(1)]);
        let c = p.intern(&[FrameId(1), FrameId(2)]);
        let e = p.intern(&[]);
        assert_eq!(a, c);
        assert_ne!(a, b);
        assert_eq!(p.len(), 3);
        assert_eq!(p.get(a), &[FrameId(1), FrameId(2)]);
        assert_eq!(p.get(e), &[] as &[FrameId]);
        assert_eq!(p.get(StackId(99)), &[] as &[FrameId]);
    }
}
