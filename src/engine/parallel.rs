//! Every core, natively: the targets of a drop (rank folders, snapshot files) run
//! on `threads` scoped threads, each target read once by [`super::read::run_target`]; the
//! results go into the [`Store`] by target, so output order never depends on scheduling.
//!
//! Native only (`std::thread` does not exist on `wasm32-unknown-unknown`; the browser
//! spreads targets over its worker pool instead). Targets are taken largest input first, so
//! one big rank does not start last. When there are more threads than targets, each target
//! gets the spare ones for its one large trace ([`run_target_ranges`]: a GPU rank's Kineto
//! trace or an Ascend rank's `trace_view.json` is cut into byte ranges, formats.md §8.2); the
//! output is the same.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::contract::{Progress, Target};
use super::read::{run_target_ranges, TargetEntry};
use super::store::Store;
use crate::ingest::inventory::Inventory;
use crate::ingest::Opener;
use crate::parse::kineto::ranges::{Ranges, MIN_RANGE_BYTES};

/// Threads to use by default: the machine's available parallelism (1 when unknown).
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn input_bytes(inv: &Inventory, t: Target) -> u64 {
    match t {
        Target::Rank(i) => inv.ranks[i as usize].files.iter().map(|f| f.size).sum(),
        Target::Snapshot(i) => inv.snapshots[i as usize].size,
        Target::Summary(i) => inv.summaries[i as usize].size,
    }
}

/// Runs every planned target of `inv` ([`super::read::Plan::targets`]) into `store` on up
/// to `threads` threads (at least one). `on_progress` is called from the worker threads;
/// a `Break` cancels the target being read and no further target is started.
pub fn run_inventory(
    store: &mut Store,
    inv: &Inventory,
    opener: &(dyn Opener + Sync),
    threads: usize,
    on_progress: &(dyn Fn(&Progress<'_>) -> ControlFlow<()> + Sync),
) {
    run_inventory_with(store, inv, opener, threads, on_progress, &|_, _| {});
}

/// [`run_inventory`] where one file's byte range gets its own reader from
/// `min_range_bytes` on (default [`MIN_RANGE_BYTES`]; tests cut small files).
pub fn run_inventory_ranges(
    store: &mut Store,
    inv: &Inventory,
    opener: &(dyn Opener + Sync),
    threads: usize,
    min_range_bytes: u64,
    on_progress: &(dyn Fn(&Progress<'_>) -> ControlFlow<()> + Sync),
) {
    run_inventory_full(
        store,
        inv,
        opener,
        (threads, min_range_bytes),
        on_progress,
        &|_, _| {},
    );
}

/// [`run_inventory`], calling `on_target(t, true)` on the worker thread just before target `t`
/// starts and `on_target(t, false)` just after it ends (the CLI's per-target wall time: the
/// core reads no clock).
pub fn run_inventory_with(
    store: &mut Store,
    inv: &Inventory,
    opener: &(dyn Opener + Sync),
    threads: usize,
    on_progress: &(dyn Fn(&Progress<'_>) -> ControlFlow<()> + Sync),
    on_target: &(dyn Fn(Target, bool) + Sync),
) {
    let budget = (threads, MIN_RANGE_BYTES);
    run_inventory_full(store, inv, opener, budget, on_progress, on_target);
}

/// [`run_inventory_with`] with `(threads, min_range_bytes)`.
fn run_inventory_full(
    store: &mut Store,
    inv: &Inventory,
    opener: &(dyn Opener + Sync),
    (threads, min_range_bytes): (usize, u64),
    on_progress: &(dyn Fn(&Progress<'_>) -> ControlFlow<()> + Sync),
    on_target: &(dyn Fn(Target, bool) + Sync),
) {
    let mut targets = store.plan().targets(inv);
    // Largest first; ties by target order (stable sort), so the schedule is deterministic.
    crate::base::sort::sort_by_key(&mut targets, |t| std::cmp::Reverse(input_bytes(inv, *t)));
    let all = threads.max(1);
    let threads = threads.clamp(1, targets.len().max(1));
    // The spare threads, dealt to the targets largest first: target k reads with `share(k)`.
    let share = |k: usize| all / threads + usize::from(k < all % threads);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let done: Mutex<Vec<(Target, TargetEntry)>> = Mutex::new(Vec::with_capacity(targets.len()));
    let plan = store.plan();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let k = next.fetch_add(1, Ordering::Relaxed);
                let Some(&t) = targets.get(k) else { return };
                let mut cb = |p: &Progress<'_>| {
                    let c = on_progress(p);
                    if c.is_break() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    c
                };
                on_target(t, true);
                let ranges = Ranges {
                    threads: share(k),
                    min_range_bytes,
                };
                let entry = run_target_ranges(plan, inv, t, opener, ranges, &mut cb);
                on_target(t, false);
                if let Some(e) = entry {
                    if let Ok(mut d) = done.lock() {
                        d.push((t, e));
                    }
                }
            });
        }
    });
    let done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    for (t, e) in done {
        store.insert(t, e);
    }
}
