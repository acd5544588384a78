//! Generation-checked slots for containers under construction (torch-snapshot.md §5.1).
//!
//! A slot lives from the container's `EMPTY_DICT`/`EMPTY_LIST` until its parent
//! consumes it and no stale copy of its handle can remain on the VM stack; then the memo slot that pointed at it is rewritten (to a frame
//! id, a stack id or a tombstone) and the slot is reused. The generation makes
//! a stale handle an error instead of silent corruption.

/// Sentinel for "no memo index" / "no cached result".
pub(super) const NONE: u32 = u32::MAX;

/// One slot: the object under construction, its memo index and a cached result.
#[derive(Debug, Default)]
pub(super) struct Slot<T> {
    pub gen: u32,
    pub live: bool,
    /// Memo index that refers to this object, or [`NONE`].
    pub memo: u32,
    /// Result cached after the first consumption, or [`NONE`].
    pub done: u32,
    /// Lowest VM stack position a handle to this object was pushed at.
    pub min_pos: u32,
    /// Already scheduled for release.
    pub deferred: bool,
    pub val: T,
}

/// A free-listed arena of [`Slot`]s.
#[derive(Debug)]
pub(super) struct Slab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<T: Default> Slab<T> {
    /// A fresh slot: `(slot, generation)`.
    pub fn alloc(&mut self) -> (u32, u32) {
        if let Some(i) = self.free.pop() {
            let s = &mut self.slots[i as usize];
            s.live = true;
            (i, s.gen)
        } else {
            self.slots.push(Slot {
                gen: 0,
                live: true,
                memo: NONE,
                done: NONE,
                min_pos: u32::MAX,
                deferred: false,
                val: T::default(),
            });
            ((self.slots.len() - 1) as u32, 0)
        }
    }

    /// The live slot `slot` of generation `gen`.
    #[inline]
    pub fn get(&mut self, slot: u32, gen: u32) -> Result<&mut Slot<T>, String> {
        match self.slots.get_mut(slot as usize) {
            Some(s) if s.live && s.gen == gen => Ok(s),
            _ => Err("reference to a container that was already consumed".into()),
        }
    }

    /// The lowest stack position of a handle to the live `slot` (`u32::MAX` if freed).
    #[inline]
    pub fn min_pos(&self, slot: u32) -> u32 {
        self.slots
            .get(slot as usize)
            .filter(|s| s.live)
            .map_or(0, |s| s.min_pos)
    }

    /// Marks the live `slot` as scheduled for release; false if it already was (or is not live).
    #[inline]
    pub fn mark_deferred(&mut self, slot: u32) -> bool {
        match self.slots.get_mut(slot as usize) {
            Some(s) if s.live && !s.deferred => {
                s.deferred = true;
                true
            }
            _ => false,
        }
    }

    /// Frees `slot` (its handles become stale); true if it was live. Freeing twice is harmless.
    pub fn release(&mut self, slot: u32) -> bool {
        if let Some(s) = self.slots.get_mut(slot as usize) {
            if s.live {
                s.live = false;
                s.gen = s.gen.wrapping_add(1);
                s.memo = NONE;
                s.done = NONE;
                s.min_pos = u32::MAX;
                s.deferred = false;
                s.val = T::default();
                self.free.push(slot);
                return true;
            }
        }
        false
    }
}
