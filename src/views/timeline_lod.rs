//! Level-of-detail merging of one timeline lane (see [`super::timeline`]).
//!
//! Rule (in start order): an item joins the current box when it starts less than one pixel
//! after the box's end (`start − end < px`; overlaps always join), unless the box is already
//! [`MAX_BOX_PX`] pixels long and the item does not overlap it — so sub-pixel structure is
//! merged, and a box never hides more than a few pixels of the lane. A box carries the item
//! count, the busy time (union of its items) and its longest item (ties: the first).
//!
//! [`merge_spans`] states the rule plainly (the reference the tests compare against);
//! [`LaneSpans::merged`] gives the same boxes in O(log n + items/64 + boxes·64): runs of 64
//! items are summarised once (max end, union, largest inner gap, longest item), and a run
//! that provably joins the current box without splitting it is absorbed whole.

/// A box closes once it is this many pixels long (unless the next item overlaps it).
pub const MAX_BOX_PX: f64 = 4.0;

/// Items per summarised run.
const CHUNK: usize = 64;

/// A merged run of items of one lane (what one drawn box stands for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergedBox {
    /// First item's start, ns.
    pub start_ns: i64,
    /// Max end of the items, ns.
    pub end_ns: i64,
    /// Number of items.
    pub count: u32,
    /// Union of the items inside the box, ns.
    pub busy_ns: i64,
    /// Position of the longest item (in the input order; ties: the first).
    pub longest: usize,
}

/// Builds boxes item by item.
struct Merger {
    px: f64,
    cap: f64,
    out: Vec<MergedBox>,
    longest_len: i64,
}

impl Merger {
    fn new(px: f64, cap: f64) -> Self {
        Merger {
            px,
            cap,
            out: Vec::new(),
            longest_len: 0,
        }
    }

    fn push(&mut self, s: i64, e: i64, pos: usize) {
        let e = e.max(s);
        let (px, cap) = (self.px, self.cap);
        match self.out.last_mut() {
            Some(b)
                if ((s - b.end_ns) as f64) < px
                    && !(s >= b.end_ns && (b.end_ns - b.start_ns) as f64 >= cap) =>
            {
                b.busy_ns += (e - s.max(b.end_ns)).max(0);
                b.end_ns = b.end_ns.max(e);
                b.count += 1;
                if e - s > self.longest_len {
                    self.longest_len = e - s;
                    b.longest = pos;
                }
            }
            _ => {
                self.longest_len = e - s;
                self.out.push(MergedBox {
                    start_ns: s,
                    end_ns: e,
                    count: 1,
                    busy_ns: e - s,
                    longest: pos,
                });
            }
        }
    }

    /// Absorbs the run starting at `first` (position `pos`) when every one of its items
    /// would join the current box without a split; returns whether it did.
    fn absorb(&mut self, c: &Chunk, first: i64, pos: usize, len: usize) -> bool {
        let Some(b) = self.out.last_mut() else {
            return false;
        };
        // Inside: the run ends before the box does (nested host events under a long one):
        // every item joins by overlap and adds nothing to the union.
        let inside = c.max_end < b.end_ns;
        // After: the run starts at or after the box's end, within a pixel, has no inner gap of
        // a pixel, and the box stays shorter than the cap until its last item.
        let after = first >= b.end_ns
            && ((first - b.end_ns) as f64) < self.px
            && (c.max_gap as f64) < self.px
            && ((c.max_end.max(b.end_ns) - b.start_ns) as f64) < self.cap;
        if !(inside || after) {
            return false;
        }
        if after {
            b.busy_ns += c.union_ns;
            b.end_ns = b.end_ns.max(c.max_end);
        }
        b.count += len as u32;
        if c.longest_len > self.longest_len {
            self.longest_len = c.longest_len;
            b.longest = pos + c.longest_off as usize;
        }
        true
    }
}

/// Merges spans `(start, end)` given in start order for pixels of `px_ns` and boxes closing
/// at `max_box_ns` (see the module doc). O(n); the plain statement of the rule.
pub fn merge_spans(
    spans: impl IntoIterator<Item = (i64, i64)>,
    px_ns: f64,
    max_box_ns: f64,
) -> Vec<MergedBox> {
    let mut m = Merger::new(px_ns, max_box_ns);
    for (pos, (s, e)) in spans.into_iter().enumerate() {
        m.push(s, e, pos);
    }
    m.out
}

/// Summary of one run of [`CHUNK`] items.
#[derive(Clone, Copy, Debug)]
struct Chunk {
    max_end: i64,
    union_ns: i64,
    /// Largest `start − running max end` over the run's items after the first.
    max_gap: i64,
    longest_off: u32,
    longest_len: i64,
}

/// One lane's items as sorted spans with running max ends and run summaries.
#[derive(Clone, Debug, Default)]
pub struct LaneSpans {
    start: Vec<i64>,
    end: Vec<i64>,
    /// `reach[k]` = max end of items `0..=k` (non-decreasing).
    reach: Vec<i64>,
    chunks: Vec<Chunk>,
}

impl LaneSpans {
    /// From spans in start order (an end before its start is taken as the start).
    pub fn new(spans: impl IntoIterator<Item = (i64, i64)>) -> Self {
        let (start, end): (Vec<i64>, Vec<i64>) =
            spans.into_iter().map(|(s, e)| (s, e.max(s))).unzip();
        let mut m = i64::MIN;
        let reach = end
            .iter()
            .map(|&e| {
                m = m.max(e);
                m
            })
            .collect();
        let chunks = start
            .chunks(CHUNK)
            .zip(end.chunks(CHUNK))
            .map(|(ss, es)| {
                let mut c = Chunk {
                    max_end: es[0],
                    union_ns: es[0] - ss[0],
                    max_gap: i64::MIN,
                    longest_off: 0,
                    longest_len: es[0] - ss[0],
                };
                for j in 1..ss.len() {
                    let (s, e) = (ss[j], es[j]);
                    c.max_gap = c.max_gap.max(s - c.max_end);
                    c.union_ns += (e - s.max(c.max_end)).max(0);
                    c.max_end = c.max_end.max(e);
                    if e - s > c.longest_len {
                        c.longest_len = e - s;
                        c.longest_off = j as u32;
                    }
                }
                c
            })
            .collect();
        LaneSpans {
            start,
            end,
            reach,
            chunks,
        }
    }

    /// Number of items.
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// True when the lane has no item.
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// Largest end, when the lane has items.
    pub fn max_end(&self) -> Option<i64> {
        self.reach.last().copied()
    }

    /// Span of item `pos`.
    pub fn span(&self, pos: usize) -> (i64, i64) {
        (self.start[pos], self.end[pos])
    }

    /// Positions `a..b` that may overlap `[x0, x1)`: from the first item whose running max
    /// end passes `x0` to the last starting before `x1` (binary searches).
    pub fn range(&self, x0: i64, x1: i64) -> std::ops::Range<usize> {
        let a = self.reach.partition_point(|&r| r <= x0);
        let b = a + self.start[a..].partition_point(|&s| s < x1);
        a..b
    }

    /// Positions of the items that start in `[x0, x1)` (binary searches on the starts).
    pub fn starting_in(&self, x0: i64, x1: i64) -> std::ops::Range<usize> {
        let a = self.start.partition_point(|&s| s < x0);
        let b = a + self.start[a..].partition_point(|&s| s < x1);
        a..b
    }

    /// The innermost item holding instant `t` (`start ≤ t < end`): the latest-starting one
    /// (items are in `(start, longer first)` order, so equal starts give the shorter), found
    /// by walking back from `t` over at most `max_steps` items.
    pub fn innermost_at(&self, t: i64, max_steps: usize) -> Option<usize> {
        let b = self.start.partition_point(|&s| s <= t);
        (0..b)
            .rev()
            .take(max_steps)
            .find(|&p| self.end[p] > t && self.start[p] <= t)
    }

    /// True when item `pos` is drawn in `[x0, x1)`: it ends after `x0` (a zero-length item:
    /// starts at or after `x0`) and starts before `x1`.
    pub fn visible(&self, pos: usize, x0: i64, x1: i64) -> bool {
        let (s, e) = self.span(pos);
        s < x1 && (e > x0 || (s >= x0 && e == s))
    }

    /// The boxes of the window `[x0, x1)` for pixels of `px_ns` (boxes close at
    /// [`MAX_BOX_PX`] pixels) and the number of visible items. `longest` is a lane position.
    pub fn merged(&self, x0: i64, x1: i64, px_ns: f64) -> (Vec<MergedBox>, u64) {
        let (boxes, visible, _) = self.merged_runs(x0, x1, px_ns);
        (boxes, visible)
    }

    /// [`merged`](Self::merged) plus the number of 64-item runs absorbed whole.
    fn merged_runs(&self, x0: i64, x1: i64, px_ns: f64) -> (Vec<MergedBox>, u64, usize) {
        let mut m = Merger::new(px_ns, MAX_BOX_PX * px_ns);
        let mut runs = 0;
        let r = self.range(x0, x1);
        let mut visible = 0u64;
        let mut i = r.start;
        while i < r.end {
            if i % CHUNK == 0 && i + CHUNK <= r.end && self.start[i] >= x0 {
                if let Some(c) = self.chunks.get(i / CHUNK) {
                    if m.absorb(c, self.start[i], i, CHUNK) {
                        runs += 1;
                        visible += CHUNK as u64;
                        i += CHUNK;
                        continue;
                    }
                }
            }
            if self.visible(i, x0, x1) {
                m.push(self.start[i], self.end[i], i);
                visible += 1;
            }
            i += 1;
        }
        (m.out, visible, runs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_joins_gaps_below_one_pixel_and_counts_the_union() {
        let spans = [(0, 10), (10, 20), (25, 30), (100, 101)];
        // px 10, boxes never close: the 5 ns gap joins, the 70 ns gap does not.
        let m = merge_spans(spans, 10.0, f64::INFINITY);
        let mb = |start_ns, end_ns, count, busy_ns, longest| MergedBox {
            start_ns,
            end_ns,
            count,
            busy_ns,
            longest,
        };
        assert_eq!(m, vec![mb(0, 30, 3, 25, 0), mb(100, 101, 1, 1, 3)]);
        // px 5: a gap of exactly one pixel stays a gap; touching spans still join.
        let m = merge_spans(spans, 5.0, f64::INFINITY);
        assert_eq!(
            m,
            vec![
                mb(0, 20, 2, 20, 0),
                mb(25, 30, 1, 5, 2),
                mb(100, 101, 1, 1, 3)
            ]
        );
        // Boxes closing at 15 ns: [0,20) is full when [25,30) arrives (no overlap): new box.
        let m = merge_spans(spans, 10.0, 15.0);
        assert_eq!(
            m,
            vec![
                mb(0, 20, 2, 20, 0),
                mb(25, 30, 1, 5, 2),
                mb(100, 101, 1, 1, 3)
            ]
        );
        // Overlaps never double count and always join; the longest item is the 14 ns one.
        let m = merge_spans([(0, 10), (5, 8), (6, 20)], 0.0, 1.0);
        assert_eq!(m, vec![mb(0, 20, 3, 20, 2)]);
        assert!(merge_spans(std::iter::empty(), 1.0, 4.0).is_empty());
    }

    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: u64) -> i64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n) as i64
        }
    }

    #[test]
    fn run_summaries_give_exactly_the_boxes_of_the_plain_rule() {
        // Dense runs, gaps of every size, a few long and overlapping items, zero lengths.
        let mut rng = Lcg(7);
        let mut t = 0i64;
        let mut spans = Vec::new();
        for k in 0..20_000 {
            t += match k % 997 {
                0 => 5_000_000,
                _ => rng.below(if k % 3 == 0 { 3_000 } else { 300 }),
            };
            let len = match rng.below(50) {
                0 if k % 5 == 0 => 200_000_000,
                0 => 2_000_000,
                1 => 0,
                _ => rng.below(2_000),
            };
            spans.push((t, t + len));
        }
        let lane = LaneSpans::new(spans.iter().copied());
        let (lo, hi) = (spans[0].0, spans.iter().map(|s| s.1).max().unwrap());
        let mut windows = vec![(lo, hi)];
        for k in 0..40 {
            let a = lo + (hi - lo) / 40 * k;
            windows.push((a, a + (hi - lo) / (1 + k * 7)));
        }
        let mut runs = 0;
        for (x0, x1) in windows {
            for width in [10u32, 300, 1600, 50_000] {
                let px = (x1 - x0) as f64 / width as f64;
                let (got, n, r) = lane.merged_runs(x0, x1, px);
                runs += r;
                let vis: Vec<usize> = (0..spans.len())
                    .filter(|&i| lane.visible(i, x0, x1))
                    .collect();
                let mut want = merge_spans(vis.iter().map(|&i| spans[i]), px, MAX_BOX_PX * px);
                for b in &mut want {
                    b.longest = vis[b.longest];
                }
                assert_eq!(got, want, "window {x0}..{x1} width {width}");
                assert_eq!(n as usize, vis.len());
            }
        }
        assert!(runs > 1000, "whole runs absorbed: {runs}");
        // Nested only: one long item and 10,000 short ones inside it (host events under a
        // python function): every run after the first is absorbed as "inside".
        let mut nested = vec![(0i64, 1_000_000_000i64)];
        nested.extend((0..10_000).map(|k| (k * 1000 + 1, k * 1000 + 500)));
        let lane = LaneSpans::new(nested.iter().copied());
        let (got, n, r) = lane.merged_runs(0, 1_000_000_000, 1_000_000.0);
        assert_eq!(
            got,
            merge_spans(nested.iter().copied(), 1_000_000.0, 4_000_000.0)
        );
        assert_eq!(
            (got.len(), got[0].count, got[0].busy_ns, n),
            (1, 10_001, 1_000_000_000, 10_001)
        );
        assert_eq!(r, 10_001 / CHUNK - 1);
    }
}
