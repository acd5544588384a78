use super::*;
use crate::analysis::snapshot::device::{analyze, AnalysisOptions, PointKind};
use crate::model::snapshot::{Action, Snapshot, NO_STACK, NO_TIME};
use crate::model::snapshot_testing::SnapshotBuilder;

const MIB: u64 = 1 << 20;
const BASE: u64 = 0x1000_0000;

/// One 10 MiB segment, at the end: five 1 MiB allocated blocks, each followed by 1 MiB of
/// inactive space (5 MiB free, largest 1 MiB). Before the OOM the trace maps and frees a
/// 20 MiB segment when `released` (reserved peaks at 30 MiB), then raises an OOM.
fn snapshot(request: u64, device_free: u64, released: bool) -> Snapshot {
    let mut b = SnapshotBuilder::new();
    if released {
        b.entry(
            0,
            Action::SegmentAlloc,
            0x9000_0000,
            20 * MIB,
            NO_STACK,
            NO_TIME,
        )
        .entry(
            0,
            Action::SegmentFree,
            0x9000_0000,
            20 * MIB,
            NO_STACK,
            NO_TIME,
        );
    }
    b.oom(request, device_free);
    let blocks: Vec<_> = (0..10)
        .map(|k| {
            if k % 2 == 0 {
                (MIB, MIB, BlockState::ActiveAllocated, None)
            } else {
                (MIB, 0, BlockState::Inactive, None)
            }
        })
        .collect();
    b.segment(0, BASE, &blocks);
    b.finish()
}

fn explained(snap: &Snapshot) -> OomExplanation {
    let a = analyze(snap, &snap.devices[0], &AnalysisOptions::spec_defaults());
    let p = a.points.iter().find(|p| p.kind == PointKind::Oom).unwrap();
    p.oom_explanation.clone().unwrap()
}

#[test]
fn fragmentation_when_the_free_bytes_are_scattered() {
    let e = explained(&snapshot(3 * MIB, 0, false));
    assert_eq!(e.cause, OomCause::Fragmentation);
    assert_eq!((e.requested, e.device_free), (3 * MIB, Some(0)));
    assert_eq!(
        (e.reserved, e.allocated, e.active),
        (10 * MIB, 5 * MIB, 5 * MIB)
    );
    assert_eq!((e.cached_free, e.largest_free), (5 * MIB, MIB));
    assert_eq!(
        e.segments,
        vec![SegmentFree {
            address: BASE,
            size: 10 * MIB,
            stream: 0,
            largest_free: MIB,
            free: 5 * MIB
        }]
    );
    assert_eq!(
        e.sentence,
        "Fragmentation: the allocator's segments on this stream had 5.00 MiB free and the driver \
         0 B, enough for the 3.00 MiB request together, but the largest contiguous free block was 1.00 MiB."
    );
}

#[test]
fn truly_full_when_even_all_free_bytes_are_too_few() {
    let e = explained(&snapshot(8 * MIB, MIB, false));
    assert_eq!(e.cause, OomCause::TrulyFull);
    assert_eq!(e.peak_reserved, 10 * MIB);
    assert_eq!(
        e.sentence,
        "Memory truly full: live tensors held 5.00 MiB of the 10.0 MiB reserved, only 5.00 MiB \
         was free in its segments and 1.00 MiB in the driver, less than the 8.00 MiB request."
    );
}

#[test]
fn another_process_when_released_memory_is_gone() {
    let e = explained(&snapshot(8 * MIB, MIB, true));
    assert_eq!(e.cause, OomCause::OtherProcess);
    assert_eq!(
        (e.index, e.peak_reserved, e.reserved),
        (2, 30 * MIB, 10 * MIB)
    );
    assert_eq!(
        e.sentence,
        "Another process (or memory outside this allocator) took the memory: this allocator once \
         reserved 30.0 MiB and now holds 10.0 MiB, yet the driver had only 1.00 MiB free for the \
         8.00 MiB request."
    );
    // Had the driver still had the 20 MiB released (plus what it had), it is memory full /
    // fragmentation territory instead: 8 MiB fits in 5 MiB cached + 21 MiB free.
    assert_eq!(
        explained(&snapshot(8 * MIB, 21 * MIB, true)).cause,
        OomCause::Fragmentation
    );
}
