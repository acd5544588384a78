//! Work on spare threads, natively, with the result of the sequential code: [`beside`] runs
//! a second closure on its own thread; [`map`] is an order-keeping parallel map: natively, the items are cut into `threads` runs of
//! consecutive items, each mapped on its own scoped thread, and the results are joined in item
//! order; on wasm32 (no threads in a worker) and for one thread it is the plain sequential map.
//! The result is the same either way: `f` sees each item once and the order never depends on
//! scheduling.

/// `items.iter().map(f).collect()`, on up to `threads` threads natively (at least one item
/// per thread).
pub fn map<T: Sync, R: Send>(threads: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    #[cfg(not(target_arch = "wasm32"))]
    if threads > 1 && items.len() > 1 {
        let per = items.len().div_ceil(threads.min(items.len()));
        let f = &f;
        return std::thread::scope(|s| {
            let mut runs = items.chunks(per);
            let first = runs.next().unwrap_or(&[]);
            let rest: Vec<_> = runs
                .map(|run| s.spawn(move || run.iter().map(f).collect::<Vec<R>>()))
                .collect();
            let mut out: Vec<R> = first.iter().map(f).collect();
            out.reserve(items.len() - out.len());
            for h in rest {
                out.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            }
            out
        });
    }
    let _ = threads;
    items.iter().map(f).collect()
}

/// Runs `spare` on a second thread beside `main` when `threads` > 1 (natively), else not at
/// all: `(Some(spare's value), main's value)` or `(None, main's value)`. For work whose value
/// is the same computed now or later (a cache the exports would otherwise fill).
pub fn beside<A: Send, B>(
    threads: usize,
    spare: impl FnOnce() -> A + Send,
    main: impl FnOnce() -> B,
) -> (Option<A>, B) {
    #[cfg(not(target_arch = "wasm32"))]
    if threads > 1 {
        return std::thread::scope(|s| {
            let h = s.spawn(spare);
            let b = main();
            let a = h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            (Some(a), b)
        });
    }
    let _ = (threads, spare);
    (None, main())
}

#[cfg(test)]
mod tests {
    use super::{beside, map};

    #[test]
    fn beside_runs_the_spare_work_only_with_a_spare_thread() {
        assert_eq!(beside(1, || 1, || 2), (None, 2));
        assert_eq!(beside(2, || 1, || 2), (Some(1), 2));
    }

    #[test]
    fn same_as_the_sequential_map_for_any_thread_count() {
        for n in [0usize, 1, 2, 3, 7, 64, 101] {
            let items: Vec<u64> = (0..n as u64).map(|i| i * 2_654_435_761 % 1_000).collect();
            let want: Vec<u64> = items.iter().map(|x| x * x + 1).collect();
            for threads in [1, 2, 3, 4, 8, 200] {
                assert_eq!(
                    map(threads, &items, |x| x * x + 1),
                    want,
                    "n {n} threads {threads}"
                );
            }
        }
    }
}
