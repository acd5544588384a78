//! The allocator state at chosen entries of every real snapshot: the checkpointed
//! history of `analysis::snapshot::allocator` against (a) an independent brute-force replay
//! written here — the end-state segments undone entry by entry from the last one, no
//! checkpoints — and (b) the forward lifetime table: the handed-out blocks after entry `i`
//! are exactly the records live after `i` (active semantics), their requested bytes the
//! active curve, and the segments sum to the reserved curve.

mod snapshot_common;

use std::collections::{BTreeMap, HashMap};

use proflens::analysis::snapshot::allocator::{AllocatorHistory, BlockAt, SegmentMap, DEFAULT_K};
use proflens::analysis::snapshot::lifetimes::{self, Semantics};
use proflens::analysis::snapshot::{curves, live::live_sets};
use proflens::model::snapshot::{Action, BlockState, DeviceTrace, Snapshot};
use snapshot_common::{decode_bytes, fixture_dir, fixture_names};

/// Brute force: (segments by base → (size, stream)), (blocks by address → (size, requested,
/// pending)) after entry `i`, by undoing entries n−1 … i+1 from the end state.
type Segs = BTreeMap<u64, (u64, i64)>;
type Blocks = BTreeMap<u64, (u64, u64, bool)>;

fn brute(snap: &Snapshot, dev: &DeviceTrace, i: usize) -> (Segs, Blocks) {
    let mut segs = Segs::new();
    let mut blocks = Blocks::new();
    for s in snap
        .segments
        .iter()
        .filter(|s| s.device == dev.device as i64)
    {
        segs.insert(s.address, (s.total_size, s.stream));
        for b in snap.blocks_of(s) {
            match b.state {
                BlockState::ActiveAllocated => {
                    blocks.insert(b.address, (b.size, b.requested_size, false));
                }
                BlockState::ActivePendingFree => {
                    blocks.insert(b.address, (b.size, b.requested_size, true));
                }
                _ => {}
            }
        }
    }
    let t = &dev.entries;
    for e in (i + 1..t.len()).rev() {
        let (a, size) = (t.addr()[e], t.size()[e]);
        let stream = t.stream_values()[t.stream()[e] as usize];
        match t.action()[e] {
            Action::Alloc => {
                blocks.remove(&a);
            }
            Action::FreeRequested => {
                if let Some(b) = blocks.get_mut(&a) {
                    b.2 = false;
                }
            }
            Action::FreeCompleted => {
                let rounded = size.max(1).div_ceil(512) * 512;
                blocks.insert(a, (rounded, size, true));
            }
            Action::SegmentAlloc | Action::SegmentMap => {
                // Remove [a, a+size) from the segment holding a.
                let (&s0, &(sz, st)) = segs.range(..=a).next_back().expect("segment");
                segs.remove(&s0);
                if a > s0 {
                    segs.insert(s0, (a - s0, st));
                }
                if a + size < s0 + sz {
                    segs.insert(a + size, (s0 + sz - a - size, st));
                }
            }
            Action::SegmentFree => {
                segs.insert(a, (size, stream));
            }
            Action::SegmentUnmap => {
                let (mut lo, mut hi) = (a, a + size);
                if let Some((&s0, &(sz, st))) = segs.range(..a).next_back() {
                    if s0 + sz == a && st == stream {
                        segs.remove(&s0);
                        lo = s0;
                    }
                }
                if let Some((&s0, &(sz, st))) = segs.range(a..).next() {
                    if s0 == hi && st == stream {
                        segs.remove(&s0);
                        hi = s0 + sz;
                    }
                }
                segs.insert(lo, (hi - lo, stream));
            }
            _ => {}
        }
    }
    (segs, blocks)
}

fn held(map: &SegmentMap) -> Vec<&BlockAt> {
    map.segments
        .iter()
        .flat_map(|s| &s.blocks)
        .filter(|b| b.state != BlockState::Inactive)
        .collect()
}

/// Entries checked per device: the first, the last, the global peak of active, and 9 spread.
fn chosen(n: usize, peak: Option<usize>) -> Vec<usize> {
    let mut v: Vec<usize> = (0..=10).map(|k| (n - 1) * k / 10).collect();
    v.extend(peak);
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn allocator_state_matches_backward_replay_and_lifetimes() {
    let mut checked = 0;
    let mut per_file = Vec::new();
    for name in fixture_names() {
        let bytes = std::fs::read(fixture_dir().join(&name)).unwrap();
        let snap = decode_bytes(&name, &bytes).unwrap().snapshot;
        for dev in snap.devices.iter().filter(|d| !d.entries.is_empty()) {
            let n = dev.entries.len();
            let lt = lifetimes::build(&snap, dev);
            let c = curves::build(&snap, dev, &lt);
            // A small interval, so most checked entries are answered by undoing from a
            // checkpoint, and the default one.
            let small = AllocatorHistory::build(&snap, dev, &lt, 97);
            let dflt = AllocatorHistory::build(&snap, dev, &lt, DEFAULT_K);
            assert_eq!(small.mismatches, 0, "{name}: replay mismatches");
            let points = chosen(n, c.max(curves::CurveKind::Active).1);
            let lives = live_sets(&lt, &points, Semantics::Active);
            for (&i, live) in points.iter().zip(&lives) {
                let st = small.state_after(dev, Some(i));
                assert_eq!(
                    st,
                    dflt.state_after(dev, Some(i)),
                    "{name} @ {i}: K=97 vs K=10000"
                );
                let map = st.segment_map();
                assert!(
                    map.orphans.is_empty(),
                    "{name} @ {i}: blocks outside segments"
                );
                // (a) the brute-force backward replay.
                let (segs, blocks) = brute(&snap, dev, i);
                let got_segs: Segs = map
                    .segments
                    .iter()
                    .map(|s| (s.address, (s.seg.size, s.seg.stream)))
                    .collect();
                assert_eq!(got_segs, segs, "{name} @ {i}: segments");
                let got_blocks: Blocks = held(&map)
                    .iter()
                    .map(|b| {
                        let pending = b.state == BlockState::ActivePendingFree;
                        (b.address, (b.size, b.requested, pending))
                    })
                    .collect();
                assert_eq!(got_blocks, blocks, "{name} @ {i}: blocks");
                // Each segment is covered exactly by its blocks.
                for s in &map.segments {
                    let mut at = s.address;
                    for b in &s.blocks {
                        assert_eq!(b.address, at, "{name} @ {i}: gap in segment map");
                        at += b.size;
                    }
                    assert_eq!(at, s.address + s.seg.size);
                }
                // (b) the forward lifetime table and curves.
                let mut want: Vec<u64> = live.iter().map(|&r| lt.addr[r as usize]).collect();
                want.sort_unstable();
                let got: Vec<u64> = held(&map).iter().map(|b| b.address).collect();
                assert_eq!(got, want, "{name} @ {i}: handed-out blocks vs live records");
                let req: i64 = held(&map).iter().map(|b| b.requested as i64).sum();
                assert_eq!(
                    req, c.active[i],
                    "{name} @ {i}: requested bytes vs active curve"
                );
                assert_eq!(
                    map.reserved() as i64,
                    c.reserved[i],
                    "{name} @ {i}: reserved"
                );
                // Records of the blocks: the live records themselves.
                let recs: HashMap<u64, u32> =
                    live.iter().map(|&r| (lt.addr[r as usize], r)).collect();
                for b in held(&map) {
                    assert_eq!(
                        Some(&b.record),
                        recs.get(&b.address),
                        "{name} @ {i}: record"
                    );
                }
                checked += 1;
            }
            per_file.push((name.clone(), n, small.rows(), dflt.interval()));
        }
    }
    // 11 fixtures have a trace (2 without); each checks ≥ 2 entries.
    assert_eq!(per_file.len(), 11, "{per_file:?}");
    assert!(checked >= 70, "{checked}");
}
