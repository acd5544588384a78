//! The page-window cache in front of a [`ByteSource`]: SQLite reads one page at a time; the
//! source is read in windows of [`WINDOW`] bytes, and at most [`WINDOWS`] windows are kept
//! (least recently used goes first), so memory is bounded whatever the file size. The header's
//! write/read format bytes (18–19) of a WAL-flagged file are served as 1 (rollback journal):
//! the file is only read, so it needs no WAL (ascend-db.md §1.2).

use std::io;

use super::ByteSource;

/// Bytes per window.
pub const WINDOW: u64 = 256 * 1024;
/// Windows kept.
pub const WINDOWS: usize = 8;

/// A [`ByteSource`] with its window cache.
pub struct Windowed<'a> {
    src: Box<dyn ByteSource + 'a>,
    len: u64,
    wins: Vec<Win>,
    tick: u64,
}

struct Win {
    start: u64,
    bytes: Vec<u8>,
    used: u64,
}

impl<'a> Windowed<'a> {
    /// Wraps `src`.
    pub fn new(src: Box<dyn ByteSource + 'a>) -> Self {
        let len = src.len();
        Windowed {
            src,
            len,
            wins: Vec::new(),
            tick: 0,
        }
    }

    /// The source's size.
    pub fn len(&self) -> u64 {
        self.len
    }

    fn window(&mut self, start: u64) -> io::Result<&Win> {
        self.tick += 1;
        let tick = self.tick;
        if let Some(i) = self.wins.iter().position(|w| w.start == start) {
            self.wins[i].used = tick;
            return Ok(&self.wins[i]);
        }
        let n = WINDOW.min(self.len.saturating_sub(start)) as usize;
        let mut bytes = vec![0u8; n];
        let got = self.src.read_at(start, &mut bytes)?;
        bytes.truncate(got);
        if start == 0 && bytes.len() >= 20 && bytes[18] == 2 && bytes[19] == 2 {
            bytes[18] = 1;
            bytes[19] = 1;
        }
        if self.wins.len() >= WINDOWS {
            if let Some(i) = (0..self.wins.len()).min_by_key(|&i| self.wins[i].used) {
                self.wins.swap_remove(i);
            }
        }
        self.wins.push(Win {
            start,
            bytes,
            used: tick,
        });
        Ok(self.wins.last().expect("just pushed"))
    }

    /// Fills `buf` from `offset`; returns the bytes read (short only at the end of the file).
    pub fn read(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            let at = offset + done as u64;
            if at >= self.len {
                break;
            }
            let start = at / WINDOW * WINDOW;
            let w = self.window(start)?;
            let from = (at - start) as usize;
            if from >= w.bytes.len() {
                break;
            }
            let n = (buf.len() - done).min(w.bytes.len() - from);
            buf[done..done + n].copy_from_slice(&w.bytes[from..from + n]);
            done += n;
        }
        Ok(done)
    }
}
