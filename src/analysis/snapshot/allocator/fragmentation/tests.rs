use super::super::{AllocatorHistory, State};
use super::*;
use crate::analysis::snapshot::lifetimes;
use crate::model::snapshot::{BlockState, NO_STACK, NO_TIME};
use crate::model::snapshot_testing::SnapshotBuilder;

/// One 8 KiB segment at 0x10000: [a 1 KiB alloc][1 KiB free][b 2 KiB pending free][4 KiB free]
/// at the end; the trace allocates 3 KiB (c) then frees it, so the largest recent request is
/// 3 KiB: the 1 KiB hole is hard, the 4 KiB tail soft, b is stream-pending.
#[test]
fn classes_on_a_built_segment() {
    let mut b = SnapshotBuilder::new();
    b.alloc(0x10000, 1000, NO_STACK) // 0: a (1024-byte block)
        .alloc(0x10800, 2048, NO_STACK) // 1: b
        .entry(0, Action::FreeRequested, 0x10800, 2048, NO_STACK, NO_TIME) // 2
        .alloc(0x11000, 3000, NO_STACK) // 3: c
        .free(0x11000, 3000); // 4, 5
    b.segment(
        0,
        0x10000,
        &[
            (1024, 1000, BlockState::ActiveAllocated, None),
            (1024, 0, BlockState::Inactive, None),
            (2048, 2048, BlockState::ActivePendingFree, None),
            (4096, 0, BlockState::Inactive, None),
        ],
    );
    let snap = b.finish();
    let dev = &snap.devices[0];
    let lt = lifetimes::build(&snap, dev);
    let h = AllocatorHistory::build(&snap, dev, &lt, 2);
    assert_eq!(h.mismatches, 0);
    let at = |i| h.state_after(dev, Some(i)).segment_map();
    let end = at(5);
    let f = classify(&end, largest_recent_request(dev, Some(5)));
    assert_eq!(f.largest_recent_request, 3072);
    assert_eq!(
        (f.reserved, f.allocated, f.active, f.inactive),
        (8192, 1024, 3072, 5120)
    );
    assert_eq!((f.hard, f.soft, f.stream), (1024, 4096, 2048));
    assert_eq!(f.largest_inactive, 4096);
    assert_eq!(f.internal_waste, 24);
    assert!((f.external_ratio - 0.2).abs() < 1e-12);
    // After entry 3, c (3000 requested → a 3072-byte block re-created by undoing its free) sits
    // at 0x11000: the tail splits into c and 1 KiB; nothing recent is as large as 3 KiB free.
    let m3 = at(3);
    let states: Vec<(u64, u64, BlockState)> = m3.segments[0]
        .blocks
        .iter()
        .map(|b| (b.address, b.size, b.state))
        .collect();
    assert_eq!(
        states,
        vec![
            (0x10000, 1024, BlockState::ActiveAllocated),
            (0x10400, 1024, BlockState::Inactive),
            (0x10800, 2048, BlockState::ActivePendingFree),
            (0x11000, 3072, BlockState::ActiveAllocated),
            (0x11c00, 1024, BlockState::Inactive),
        ]
    );
    let f3 = classify(&m3, largest_recent_request(dev, Some(3)));
    assert_eq!((f3.hard, f3.soft, f3.stream), (2048, 0, 2048));
    // After entry 1, b is allocated again (its free_requested undone), nothing pending.
    let f1 = classify(&at(1), largest_recent_request(dev, Some(1)));
    assert_eq!(f1.largest_recent_request, 2048);
    assert_eq!((f1.hard, f1.soft, f1.stream), (1024, 4096, 0));
    assert_eq!(f1.allocated, 3072);
    // Before the first entry: the whole segment is free, no recent request (all soft).
    let f0 = classify(&h.state_after(dev, None).segment_map(), 0);
    assert_eq!((f0.hard, f0.soft, f0.inactive), (0, 8192, 8192));
    let _ = State::default();
}
