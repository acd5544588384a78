//! Launch timing of a bubble's next kernel (anomaly.md §5.6 bubble windows on GPUs):
//! did the host launch the kernel that ends the bubble only after the device had gone idle
//! (**late**: the bubble is host-bound — launch lag, Python, sync on the host) or before it
//! (**early**: the kernel was already queued and waited on something on the device side —
//! a dependency on another stream, an event wait, a collective, the launch queue)?
//!
//! Needs the kernel's launch time (`KernelTable::launch_ns`: the start of the runtime call
//! with the same `correlation` on GPUs, `engine::read::gpu`); windows whose next kernel has none get
//! no timing. **Decision:** the launch call's *start* is compared with the bubble's start
//! (`launch ≥ start` = late), because the runtime call may return after the kernel started.

use super::intervals::Interval;
use crate::model::kernels::KernelTable;

/// Whether the next kernel's launch came after the device went idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Launched at or after the bubble's start: the device waited for the host.
    LateHostBound,
    /// Launched before the bubble started: queued, waiting on a device-side dependency.
    EarlyQueueOrDependency,
}

impl Timing {
    /// Spelling in the JSON (`late_host_bound`, `early_queue_or_dependency`).
    pub fn as_str(self) -> &'static str {
        match self {
            Timing::LateHostBound => "late_host_bound",
            Timing::EarlyQueueOrDependency => "early_queue_or_dependency",
        }
    }
}

/// The launch of the kernel right after one bubble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextLaunch {
    /// Row of the kernel in the kernel table.
    pub kernel: usize,
    /// Start of its launching runtime call, ns.
    pub launch_ns: i64,
    /// `launch − bubble start`, ns: > 0 late by that much, < 0 queued that long before.
    pub lead_ns: i64,
    /// The verdict.
    pub timing: Timing,
}

/// The launch timing of the kernel `after` that ends bubble `gap`, when its launch is known.
pub fn next_launch(k: &KernelTable, gap: Interval, after: Option<usize>) -> Option<NextLaunch> {
    let kernel = after?;
    let launch_ns = k.launch_ns(kernel)?;
    let lead_ns = launch_ns - gap.start_ns;
    Some(NextLaunch {
        kernel,
        launch_ns,
        lead_ns,
        timing: if lead_ns >= 0 {
            Timing::LateHostBound
        } else {
            Timing::EarlyQueueOrDependency
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::kernels::{KernelRow, KernelTableBuilder};

    #[test]
    fn late_early_and_unknown() {
        let mut b = KernelTableBuilder::new();
        for (start, launch) in [(0, Some(-5)), (100, Some(60)), (200, Some(40)), (300, None)] {
            b.push(&KernelRow {
                name: "k".into(),
                core_raw: "KERNEL".into(),
                start_ns: start,
                dur_ns: 10,
                stream: "7".into(),
                launch_ns: launch,
                ..Default::default()
            });
        }
        let k = b.finish();
        let gap = |s, e| Interval::new(s, e);
        let late = next_launch(&k, gap(10, 100), Some(1)).unwrap();
        assert_eq!((late.lead_ns, late.timing), (50, Timing::LateHostBound));
        let early = next_launch(&k, gap(110, 200), Some(2)).unwrap();
        assert_eq!(
            (early.lead_ns, early.timing),
            (-70, Timing::EarlyQueueOrDependency)
        );
        // exactly at the start is late (the device was idle when the host launched)
        assert_eq!(
            next_launch(&k, gap(60, 100), Some(1)).unwrap().timing,
            Timing::LateHostBound
        );
        assert_eq!(next_launch(&k, gap(210, 300), Some(3)), None);
        assert_eq!(next_launch(&k, gap(210, 300), None), None);
    }
}
