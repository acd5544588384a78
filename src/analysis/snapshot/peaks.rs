//! Prominence-based peaks of a step curve (torch-snapshot.md §7.4).
//!
//! Candidates are the maximal plateaus higher than both neighbouring plateaus.
//! The *topographic prominence* of a candidate is its height above the higher
//! of the two lowest points separating it from any higher plateau on each side
//! (or from the window edges; the level before the first entry — the baseline —
//! is the left edge). A side with nothing on it does not constrain. Computed
//! in O(n) with monotonic stacks. Single-event blips and sawtooth noise get a
//! small prominence and are dropped by `min_prominence`.

/// One peak candidate: a plateau of the curve.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// First entry index of the plateau.
    pub index: usize,
    /// Last entry index of the plateau.
    pub last: usize,
    /// Height (bytes).
    pub height: i64,
    /// Topographic prominence (bytes).
    pub prominence: i64,
}

/// Every local-maximum plateau of `curve` (preceded by `baseline`) with its prominence,
/// in index order. O(n) time.
///
/// Memory: the candidates and two monotonic stacks, nothing per entry. Plateaus are the runs of
/// equal levels, read off `curve` as they are needed: a forward pass finds the local maxima and
/// their left-hand minima, a backward pass their right-hand minima.
pub fn candidates(curve: &[i64], baseline: i64) -> Vec<Candidate> {
    // Forward: (candidate, left-hand min); the baseline is plateau 0 and absorbs the leading
    // entries at its level.
    let mut left = SideMin::default();
    let mut found: Vec<(Candidate, Option<i64>)> = Vec::new();
    let mut prev: Option<i64> = None;
    let (mut level, mut first, mut left_min) = (baseline, usize::MAX, left.push(baseline));
    let mut close =
        |prev: Option<i64>, level: i64, first: usize, left_min, last: usize, next: Option<i64>| {
            let lower_left = prev.is_some_and(|p| p < level);
            let lower_right = next.is_none_or(|n| n < level);
            if lower_left && lower_right {
                let c = Candidate {
                    index: first,
                    last,
                    height: level,
                    prominence: 0,
                };
                found.push((c, left_min));
            }
        };
    for (i, &v) in curve.iter().enumerate() {
        if v == level {
            continue;
        }
        close(prev, level, first, left_min, i.wrapping_sub(1), Some(v));
        prev = Some(level);
        (level, first, left_min) = (v, i, left.push(v));
    }
    close(
        prev,
        level,
        first,
        left_min,
        curve.len().wrapping_sub(1),
        None,
    );
    drop(left);
    // Backward: the right-hand min of each plateau as its run is met, matched by first index.
    let mut right = SideMin::default();
    let mut j = found.len();
    let mut i = curve.len();
    while i > 0 && j > 0 {
        let v = curve[i - 1];
        let mut f = i - 1;
        while f > 0 && curve[f - 1] == v {
            f -= 1;
        }
        let right_min = right.push(v);
        if found[j - 1].0.index == f {
            let (c, left_min) = &mut found[j - 1];
            let base = match (*left_min, right_min) {
                (Some(a), Some(b)) => a.max(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => 0,
            };
            c.prominence = c.height - base;
            j -= 1;
        }
        i = f;
    }
    found.into_iter().map(|(c, _)| c).collect()
}

/// The running "side minimum" of a sequence, one value at a time: for each value, the min of
/// the values strictly between it and the nearest strictly higher value before it (or the
/// start); `None` when that range is empty.
#[derive(Default)]
struct SideMin {
    /// (value, min of the values strictly between the previous element and this one).
    stack: Vec<(i64, Option<i64>)>,
}

impl SideMin {
    fn push(&mut self, v: i64) -> Option<i64> {
        let mut acc: Option<i64> = None;
        while let Some(&(tv, tmin)) = self.stack.last() {
            if tv > v {
                break;
            }
            acc = min_opt(min_opt(acc, tmin), Some(tv));
            self.stack.pop();
        }
        self.stack.push((v, acc));
        acc
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Selection options (reference analyzer defaults: `--top-n 6`, `--min-sep-ms 0.0`, `--dedup-pct 3.0`).
#[derive(Clone, Debug, PartialEq)]
pub struct PeakOptions {
    /// How many peaks to report (besides global max, OOM and end state).
    pub top_n: usize,
    /// Minimum prominence as a fraction of the global maximum (default 0.01).
    pub min_prominence_frac: f64,
    /// Minimum separation between reported peaks, in entries.
    pub min_sep_entries: usize,
    /// Minimum separation between reported peaks, in ms (needs `time_us`).
    pub min_sep_ms: f64,
    /// Height tolerance (percent) under which two peaks with mostly the same live set are one.
    pub dedup_pct: f64,
}

impl PeakOptions {
    /// The reference analyzer's defaults (torch-snapshot.md §7.4, §7.12).
    pub fn spec_defaults() -> Self {
        PeakOptions {
            top_n: 6,
            min_prominence_frac: 0.01,
            min_sep_entries: 0,
            min_sep_ms: 0.0,
            dedup_pct: 3.0,
        }
    }
}

/// Keeps candidates with prominence ≥ `min_prominence_frac × global max`,
/// sorted by height (descending), ties by index.
pub fn prominent(cands: &[Candidate], global_max: i64, opts: &PeakOptions) -> Vec<Candidate> {
    let floor = (global_max.max(0) as f64 * opts.min_prominence_frac).ceil() as i64;
    let mut v: Vec<Candidate> = cands
        .iter()
        .copied()
        .filter(|c| c.prominence >= floor.max(1))
        .collect();
    crate::base::sort::sort_by(&mut v, |a, b| {
        b.height.cmp(&a.height).then(a.index.cmp(&b.index))
    });
    v
}

/// True when `a` and `b` are at least the configured separation apart.
pub fn separated(
    a: usize,
    b: usize,
    time_us: &dyn Fn(usize) -> Option<i64>,
    opts: &PeakOptions,
) -> bool {
    if a.abs_diff(b) < opts.min_sep_entries {
        return false;
    }
    if opts.min_sep_ms > 0.0 {
        if let (Some(ta), Some(tb)) = (time_us(a), time_us(b)) {
            if ((ta - tb).abs() as f64) / 1000.0 < opts.min_sep_ms {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prominence_by_hand() {
        // baseline 0; curve: 0 5 1 3 2 10 4 6 4
        let c = candidates(&[0, 5, 1, 3, 2, 10, 4, 6, 4], 0);
        let got: Vec<(usize, i64, i64)> = c
            .iter()
            .map(|c| (c.index, c.height, c.prominence))
            .collect();
        // 5: higher to the right is 10, min between = 1; left edge min = 0 → base max(0,1)=1 → 4
        // 3: left higher 5 (min between 1), right higher 10 (min between 2) → base 2 → 1
        // 10: left min (to edge) 0, right min to end 4 → base 4 → 6
        // 6: left higher 10, min 4; right: 4 → base 4 → 2
        assert_eq!(got, vec![(1, 5, 4), (3, 3, 1), (5, 10, 6), (7, 6, 2)]);
    }

    /// The definition of the module doc, by brute force (O(n²)): plateaus, local maxima, and
    /// on each side the lowest level before a strictly higher plateau (or the edge).
    fn naive(curve: &[i64], baseline: i64) -> Vec<Candidate> {
        let mut plat: Vec<(i64, usize, usize)> = vec![(baseline, usize::MAX, usize::MAX)];
        for (i, &v) in curve.iter().enumerate() {
            match plat.last_mut() {
                Some(p) if p.0 == v => p.2 = i,
                _ => plat.push((v, i, i)),
            }
        }
        let side = |range: &mut dyn Iterator<Item = usize>, v: i64| -> Option<i64> {
            let mut low: Option<i64> = None;
            for j in range {
                if plat[j].0 > v {
                    break;
                }
                low = Some(low.map_or(plat[j].0, |l| l.min(plat[j].0)));
            }
            low
        };
        let mut out = Vec::new();
        for k in 1..plat.len() {
            let v = plat[k].0;
            if plat[k - 1].0 >= v || plat.get(k + 1).is_some_and(|p| p.0 >= v) {
                continue;
            }
            let l = side(&mut (0..k).rev(), v);
            let r = side(&mut (k + 1..plat.len()), v);
            let base = match (l, r) {
                (Some(a), Some(b)) => a.max(b),
                (Some(a), None) | (None, Some(a)) => a,
                (None, None) => 0,
            };
            out.push(Candidate {
                index: plat[k].1,
                last: plat[k].2,
                height: v,
                prominence: v - base,
            });
        }
        out
    }

    #[test]
    fn equals_the_definition_on_random_curves() {
        // xorshift: deterministic curves of small levels (many ties and plateaus).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..400 {
            let n = (next() % 60) as usize;
            let levels = 2 + (round % 9) as u64;
            let curve: Vec<i64> = (0..n).map(|_| (next() % levels) as i64 - 1).collect();
            let baseline = (next() % levels) as i64 - 1;
            assert_eq!(
                candidates(&curve, baseline),
                naive(&curve, baseline),
                "curve {curve:?} baseline {baseline}"
            );
        }
    }

    #[test]
    fn plateaus_and_rising_end() {
        let c = candidates(&[1, 4, 4, 4, 2, 7], 0);
        let got: Vec<(usize, usize, i64, i64)> = c
            .iter()
            .map(|c| (c.index, c.last, c.height, c.prominence))
            .collect();
        assert_eq!(got, vec![(1, 3, 4, 2), (5, 5, 7, 7)]);
    }

    #[test]
    fn blips_are_dropped() {
        // A 1-byte blip between two higher peaks has prominence 1 < 1% of 300.
        let curve = [0, 200, 100, 100, 101, 100, 300, 0];
        let c = candidates(&curve, 0);
        assert_eq!(c.len(), 3);
        assert_eq!(c[1].prominence, 1);
        let p = prominent(&c, 300, &PeakOptions::spec_defaults());
        let got: Vec<(usize, i64, i64)> = p
            .iter()
            .map(|c| (c.index, c.height, c.prominence))
            .collect();
        assert_eq!(got, vec![(6, 300, 300), (1, 200, 100)]);
    }
}
