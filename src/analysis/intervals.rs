//! Interval maths of anomaly.md §5.1–5.4 and §5.7.2, in i64 ns: clip, merge
//! (touching intervals merge), busy union, per-window gap metrics, overlap ratios.

use crate::model::kernels::KernelTable;

/// A half-open time interval `[start_ns, end_ns)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Interval {
    /// Start in ns.
    pub start_ns: i64,
    /// End in ns.
    pub end_ns: i64,
}

impl Interval {
    /// Builds `[start, end)`.
    pub fn new(start_ns: i64, end_ns: i64) -> Self {
        Interval { start_ns, end_ns }
    }
    /// `max(0, end − start)` in ns. Model times are within `±base::arith::TIME_LIMIT_NS`, so
    /// this never saturates for them; an open end (`i64::MAX`) saturates instead of wrapping.
    pub fn len_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns).max(0)
    }
    /// The part inside `w`, or `None` when empty (§5.1 clip).
    pub fn clip(&self, w: Interval) -> Option<Interval> {
        let s = self.start_ns.max(w.start_ns);
        let e = self.end_ns.min(w.end_ns);
        (e > s).then_some(Interval::new(s, e))
    }
}

/// §5.3 exactly: drop `end ≤ start`, sort by `(start, end)`, sweep merging when
/// `start ≤ current.end` (touching intervals merge). Returns disjoint segments in order.
pub fn merge(mut v: Vec<Interval>) -> Vec<Interval> {
    v.retain(|i| i.end_ns > i.start_ns);
    v.sort_unstable();
    // In place: `v[..kept]` is the union so far (no second buffer of the input's size).
    let mut kept = 0;
    for j in 0..v.len() {
        let i = v[j];
        if kept > 0 && i.start_ns <= v[kept - 1].end_ns {
            v[kept - 1].end_ns = v[kept - 1].end_ns.max(i.end_ns);
        } else {
            v[kept] = i;
            kept += 1;
        }
    }
    v.truncate(kept);
    // The union keeps only what it holds, not the input's room.
    v.shrink_to_fit();
    v
}

/// The `n` longest of `v` (ties: earlier start first), longest first: a selection of the `n`,
/// then a sort of those only.
pub fn longest(v: &[Interval], n: usize) -> Vec<Interval> {
    crate::base::top_n::top_n_by(v, n, |a, b| {
        b.len_ns()
            .cmp(&a.len_ns())
            .then(a.start_ns.cmp(&b.start_ns))
    })
}

/// Total length of disjoint segments, ns.
pub fn total_len(segs: &[Interval]) -> i64 {
    segs.iter().map(Interval::len_ns).sum()
}

/// Merged busy segments of the kernels selected by `keep` (all streams in one set, §5.1).
/// A kernel overrunning the next kernel of its stream counts up to that start
/// (`KernelTable::busy_end_ns`, a Decision), so busy never exceeds the window.
pub fn kernel_union(t: &KernelTable, mut keep: impl FnMut(usize) -> bool) -> Vec<Interval> {
    // Sized once for the kernels kept (a filtered collect grows by doubling, to up to twice
    // their room, before `merge` shrinks it).
    let n = (0..t.len()).filter(|&i| keep(i)).count();
    let mut v = Vec::with_capacity(n);
    v.extend(
        (0..t.len())
            .filter(|&i| keep(i))
            .map(|i| Interval::new(t.start_ns()[i], t.busy_end_ns(i))),
    );
    merge(v)
}

/// The busy union as the table states it, without clipping overruns (`end_ns`): the "raw"
/// figure reported beside the headline busy union when `KernelTable::overruns` is not empty.
pub fn raw_kernel_union(t: &KernelTable) -> Vec<Interval> {
    merge(
        (0..t.len())
            .map(|i| Interval::new(t.start_ns()[i], t.end_ns(i)))
            .collect(),
    )
}

/// The parts of sorted disjoint `segs` inside `w` (clip of a union = union of clips, §5.1).
pub fn clip_segments(segs: &[Interval], w: Interval) -> Vec<Interval> {
    let first = segs.partition_point(|s| s.end_ns <= w.start_ns);
    segs[first..]
        .iter()
        .take_while(|s| s.start_ns < w.end_ns)
        .filter_map(|s| s.clip(w))
        .collect()
}

/// Length of `w ∩ union(segs)` for sorted disjoint `segs`, ns.
pub fn covered_ns(segs: &[Interval], w: Interval) -> i64 {
    let first = segs.partition_point(|s| s.end_ns <= w.start_ns);
    segs[first..]
        .iter()
        .take_while(|s| s.start_ns < w.end_ns)
        .filter_map(|s| s.clip(w))
        .map(|s| s.len_ns())
        .sum()
}

/// §5.7.2 `ratio(T, X)`: `None` when `|T| ≤ 0`; `0.0` when nothing of X lies in T;
/// else `|union(clip(X, T))| / |T|`.
pub fn overlap_ratio(t: Interval, xs: impl IntoIterator<Item = Interval>) -> Option<f64> {
    if t.len_ns() <= 0 {
        return None;
    }
    let pieces: Vec<Interval> = xs.into_iter().filter_map(|x| x.clip(t)).collect();
    if pieces.is_empty() {
        return Some(0.0);
    }
    Some(total_len(&merge(pieces)) as f64 / t.len_ns() as f64)
}

/// Gap metrics of one window (§5.4), ns. `bubbles` are the internal bubbles in order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct WindowMetrics {
    /// The window `[S, E)`.
    pub window: Interval,
    /// `max(0, E − S)`.
    pub service_ns: i64,
    /// Busy union inside the window.
    pub busy_ns: i64,
    /// `max(0, service − busy)`.
    pub underfeed_ns: i64,
    /// `busy`-based ratio: `underfeed / service` (1.0 for an empty window with service > 0; 0 if service is 0).
    pub underfeed_ratio: f64,
    /// `max(0, M[0].start − S)`, or the whole service when nothing is busy.
    pub prelaunch_ns: i64,
    /// `max(0, E − M[last].end)` (0 when nothing is busy).
    pub tail_ns: i64,
    /// Internal bubbles `[L.end, R.start]` between consecutive merged segments (empty once
    /// [`WindowMetrics::without_bubble_list`] dropped them: the counts below stay).
    pub bubbles: Vec<Interval>,
    /// First and last busy segment bounds, when any.
    pub busy_extent: Option<Interval>,
    /// Number, Σ length and largest length of the internal bubbles, ns.
    gaps: (usize, i64, i64),
}

impl WindowMetrics {
    /// Number of internal bubbles.
    pub fn bubble_count(&self) -> usize {
        self.gaps.0
    }
    /// Σ internal bubble durations, ns.
    pub fn internal_total_ns(&self) -> i64 {
        self.gaps.1
    }
    /// Largest internal bubble, ns (0 if none).
    pub fn largest_internal_ns(&self) -> i64 {
        self.gaps.2
    }
    /// The same metrics without the list of bubbles (their count, total and largest stay):
    /// for windows whose bubbles no view or export lists (structures and their parts).
    pub fn without_bubble_list(mut self) -> Self {
        self.bubbles = Vec::new();
        self
    }
}

/// §5.4 for window `w` over the globally merged busy segments `segs`.
pub fn window_metrics(segs: &[Interval], w: Interval) -> WindowMetrics {
    let service = w.len_ns();
    let m = clip_segments(segs, w);
    if m.is_empty() {
        return WindowMetrics {
            window: w,
            service_ns: service,
            busy_ns: 0,
            underfeed_ns: service,
            underfeed_ratio: if service > 0 { 1.0 } else { 0.0 },
            prelaunch_ns: service,
            tail_ns: 0,
            bubbles: Vec::new(),
            busy_extent: None,
            gaps: (0, 0, 0),
        };
    }
    let busy = total_len(&m);
    let underfeed = (service - busy).max(0);
    let first = m[0];
    let last = m[m.len() - 1];
    // Sized exactly (kept with the window's metrics, one list per step, structure and part).
    let gaps = |p: &&[Interval]| p[1].start_ns > p[0].end_ns;
    let mut bubbles = Vec::with_capacity(m.windows(2).filter(gaps).count());
    bubbles.extend(
        m.windows(2)
            .filter(gaps)
            .map(|p| Interval::new(p[0].end_ns, p[1].start_ns)),
    );
    WindowMetrics {
        window: w,
        service_ns: service,
        busy_ns: busy,
        underfeed_ns: underfeed,
        underfeed_ratio: if service > 0 {
            underfeed as f64 / service as f64
        } else {
            0.0
        },
        prelaunch_ns: (first.start_ns - w.start_ns).max(0),
        tail_ns: (w.end_ns - last.end_ns).max(0),
        gaps: (
            bubbles.len(),
            total_len(&bubbles),
            bubbles.iter().map(Interval::len_ns).max().unwrap_or(0),
        ),
        bubbles,
        busy_extent: Some(Interval::new(first.start_ns, last.end_ns)),
    }
}

/// Percentile with linear interpolation (R type 7, §5.16); 0 for an empty slice.
pub fn percentile(values: &[f64], q: f64) -> f64 {
    let mut x: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if x.is_empty() {
        return 0.0;
    }
    crate::base::sort::sort_by(&mut x, f64::total_cmp);
    let h = (x.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(x.len() - 1);
    x[lo] + (h - lo as f64) * (x[hi] - x[lo])
}

/// Arithmetic mean; 0 for an empty slice.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        0.0
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(a: i64, b: i64) -> Interval {
        Interval::new(a, b)
    }

    #[test]
    fn touching_intervals_merge_into_one_bubble_case() {
        // §13.5: [0,10], [10,20], [25,30] → busy 25, one bubble [20,25].
        let m = merge(vec![iv(25, 30), iv(10, 20), iv(0, 10)]);
        assert_eq!(m, vec![iv(0, 20), iv(25, 30)]);
        let wm = window_metrics(&m, iv(0, 30));
        assert_eq!(wm.busy_ns, 25);
        assert_eq!(wm.bubbles, vec![iv(20, 25)]);
        assert_eq!(wm.prelaunch_ns, 0);
        assert_eq!(wm.tail_ns, 0);
        assert_eq!(
            wm.underfeed_ns,
            wm.prelaunch_ns + wm.tail_ns + wm.internal_total_ns()
        );
    }

    #[test]
    fn empty_window_is_all_prelaunch() {
        // §13.5: an empty window of 100 µs → prelaunch = service = 0.1 ms, ratio 1.0, no bubbles.
        let wm = window_metrics(&[], iv(0, 100_000));
        assert_eq!(wm.prelaunch_ns, 100_000);
        assert_eq!(wm.service_ns, 100_000);
        assert_eq!(wm.underfeed_ratio, 1.0);
        assert!(wm.bubbles.is_empty());
        let zero = window_metrics(&[], iv(5, 5));
        assert_eq!(zero.underfeed_ratio, 0.0);
    }

    #[test]
    fn kernel_spanning_a_boundary_is_clipped_to_each_side() {
        let segs = merge(vec![iv(0, 50), iv(80, 120)]);
        let a = window_metrics(&segs, iv(0, 100));
        let b = window_metrics(&segs, iv(100, 200));
        assert_eq!(a.busy_ns, 70);
        assert_eq!(a.tail_ns, 0);
        assert_eq!(b.busy_ns, 20);
        assert_eq!(b.prelaunch_ns, 0);
        assert_eq!(b.tail_ns, 80);
    }

    #[test]
    fn overlap_ratio_rules() {
        assert_eq!(overlap_ratio(iv(5, 5), [iv(0, 10)]), None);
        assert_eq!(overlap_ratio(iv(0, 10), [iv(20, 30)]), Some(0.0));
        assert_eq!(
            overlap_ratio(iv(0, 10), [iv(0, 4), iv(2, 6), iv(8, 20)]),
            Some(0.8)
        );
    }

    #[test]
    fn percentile_type7() {
        assert!((percentile(&[1.0, 2.0, 3.0, 4.0], 0.95) - 3.85).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.9), 7.0);
        assert_eq!(percentile(&[], 0.5), 0.0);
    }
}
