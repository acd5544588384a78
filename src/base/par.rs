//! Work on spare threads, natively, with the result of the sequential code: [`join`] runs two
//! closures at once, [`beside`] a second one only when a thread is spare; [`map`] is an order-keeping parallel map: natively, the items are cut into `threads` runs of
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
    if threads > 1 && cfg!(not(target_arch = "wasm32")) {
        let (a, b) = join(spare, main);
        return (Some(a), b);
    }
    (None, main())
}

/// Runs `a` on a scoped thread of its own and `b` on this one, and gives both values (a panic
/// in `a` is resumed here); on wasm32 (no threads in a worker) `a` then `b`. The callers choose
/// it when they have a spare thread.
pub fn join<A: Send, B>(a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    #[cfg(not(target_arch = "wasm32"))]
    return std::thread::scope(|s| {
        let h = s.spawn(a);
        let b = b();
        (h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)), b)
    });
    #[cfg(target_arch = "wasm32")]
    (a(), b())
}

#[cfg(test)]
mod tests {
    use super::{beside, join, map};

    #[test]
    fn beside_runs_the_spare_work_only_with_a_spare_thread() {
        assert_eq!(beside(1, || 1, || 2), (None, 2));
        assert_eq!(beside(2, || 1, || 2), (Some(1), 2));
        let here = std::thread::current().id();
        let (there, b) = join(
            || std::thread::current().id(),
            || std::thread::current().id(),
        );
        assert_ne!(there, here, "the first closure runs on a thread of its own");
        assert_eq!(b, here);
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
