use super::*;
use crate::analysis::snapshot::curves;
use crate::model::snapshot::{Action, BlockState, NO_TIME};
use crate::model::snapshot_testing::SnapshotBuilder;

#[test]
fn pre_records_from_frees_and_end_blocks() {
    let mut b = SnapshotBuilder::new();
    let s = b.stack(&[("a.py", 1, "f")]);
    b.alloc(0x100, 10, s) // 0
        .entry(0, Action::FreeCompleted, 0x900, 7, NO_STACK, NO_TIME) // 1: unmatched → PRE
        .alloc(0x200, 20, s) // 2
        .free(0x100, 10) // 3, 4
        .entry(0, Action::SegmentAlloc, 0x1000, 100, NO_STACK, NO_TIME); // 5
                                                                         // End state: 0x200 live in trace; 0x300 is an older allocation (PRE, 30 requested).
    b.segment(
        0,
        0x200,
        &[
            (32, 20, BlockState::ActiveAllocated, None),
            (64, 30, BlockState::ActiveAllocated, Some(s)),
            (4, 0, BlockState::Inactive, None),
        ],
    );
    let snap = b.finish();
    let lt = build(&snap, &snap.devices[0]);
    assert_eq!(lt.len(), 4);
    assert_eq!(lt.unmatched_free_completed, 1);
    // record order: alloc 0x100, PRE 0x900, alloc 0x200, PRE block 0x220
    assert_eq!(lt.alloc_idx, vec![0, PRE, 2, PRE]);
    assert_eq!(lt.req_free_idx, vec![3, NEVER, NEVER, NEVER]);
    assert_eq!(lt.done_free_idx, vec![4, 1, NEVER, NEVER]);
    assert_eq!(lt.stack_kind[3], StackKind::Block);
    assert_eq!(lt.addr[3], 0x220);
    assert_eq!(lt.block_size, vec![(3, 64)]);
    let c = curves::build(&snap, &snap.devices[0], &lt);
    assert_eq!(c.baseline_active, 37);
    assert_eq!(c.active, vec![47, 40, 60, 60, 50, 50]);
    assert_eq!(c.allocated, vec![47, 40, 60, 50, 50, 50]);
    // reserved: end 100 (segment sum) − net 100 = 0 before; +100 at entry 5.
    assert_eq!(c.reserved, vec![0, 0, 0, 0, 0, 100]);
    assert_eq!(c.max(curves::CurveKind::Active), (60, Some(2)));
}

#[test]
fn lost_free_and_versions() {
    let mut b = SnapshotBuilder::new();
    b.alloc(0x10, 5, NO_STACK)
        .alloc(0x10, 6, NO_STACK)
        .free(0x10, 6)
        .alloc(0x10, 7, NO_STACK);
    let snap = b.finish();
    let lt = build(&snap, &snap.devices[0]);
    assert_eq!(lt.lost_frees, 1);
    assert_eq!(lt.flags[0] & FLAG_LOST_FREE, FLAG_LOST_FREE);
    assert_eq!(lt.done_free_idx, vec![1, 3, NEVER]);
    assert_eq!(lt.version, vec![0, 0, 1]);
}
