//! What the page says where the browser, not proflens, sets the limit: a worker that stops in
//! the middle of a job ([`worker_stopped`]) and a download the browser may refuse
//! ([`export_status`]); and whether a GPU rank without device events is a cut file
//! ([`no_device_events`]).
//!
//! A worker's stop (an uncaught error, a wasm trap) is said with the browser's message, and,
//! when it looks like running out of memory, why and what to do instead.
//! A wasm32 worker has at most 4 GiB of memory. When an allocation fails, Rust aborts and the
//! browser reports only a trap (`RuntimeError: unreachable`), which tells a user nothing. A
//! trap, or a message that names memory, on a job whose input is large ([`LARGE_INPUT`]) or
//! whose worker last reported a large memory ([`LARGE_HELD`]) is said as most likely out of
//! memory, with the input's size and the CLI (which has no such limit) as the way out.

use crate::base::format::bytes;

/// Whether the limitation of [`no_device_events`] says the device records are missing although
/// the host launched device work (`analysis::gpu_rank::device_records_lost`): no capture advice
/// then.
pub use crate::analysis::gpu_rank::device_records_lost;
/// Whether a GPU rank without device events had its file cut before the first one, and the
/// limitation that says so (`analysis::gpu_rank::no_device_events`): the page's rank card and
/// Steps tab lead with the cut, never with capture advice.
pub use crate::analysis::gpu_rank::no_device_events;

/// Input bytes of a job from which a trap is most likely out of memory: a GPU rank holds
/// about its input's size in the worker (docs/perf), so 1 GiB of input is a quarter of the
/// 4 GiB and above that a trap is far likelier memory than a bug.
pub const LARGE_INPUT: u64 = 1 << 30;
/// Worker memory at its last report from which a trap is most likely out of memory.
pub const LARGE_HELD: u64 = 2 << 30;

/// The failure text of a job whose worker stopped with `message`; `input` is the bytes of
/// the job's files, `held` the worker's wasm memory at its last report (bytes).
pub fn worker_stopped(message: &str, input: u64, held: Option<u64>) -> String {
    let m = message.to_ascii_lowercase();
    let trap_or_memory = m.contains("unreachable") || m.contains("memory");
    let large = input >= LARGE_INPUT || held.is_some_and(|h| h >= LARGE_HELD);
    if !(trap_or_memory && large) {
        return format!("worker stopped: {message}");
    }
    let held = held
        .filter(|&h| h > 0)
        .map(|h| {
            format!(
                ", and the worker held {} at its last report",
                bytes(h as f64)
            )
        })
        .unwrap_or_default();
    format!(
        "worker stopped: {message}. It most likely ran out of memory: a browser worker has at most 4 GiB, this input is {}{held}. Analyse it with the CLI (`proflens analyze FOLDER`), which has no such limit.",
        bytes(input as f64)
    )
}

/// A download over this many bytes may be refused by the browser without a word to the page
/// (Chromium drops a `Blob` download past 2 GiB).
pub const LARGE_DOWNLOAD: u64 = 2 << 30;

/// The status line after the export file `name` handed `bytes` to the browser: its size, and
/// past [`LARGE_DOWNLOAD`] that the browser may refuse it and what to do then.
pub fn export_status(name: &str, bytes: u64) -> String {
    let size = crate::base::format::bytes(bytes as f64);
    if bytes > LARGE_DOWNLOAD {
        format!("{name}: {size} handed to the browser. A browser may refuse a download over 2 GiB without saying so: if no file arrives, use a smaller export (CSV) or the CLI (`proflens`), which writes any size.")
    } else {
        format!("{name} written ({size}).")
    }
}

#[cfg(test)]
mod tests {
    use super::{export_status, worker_stopped};

    #[test]
    fn a_download_past_2_gib_says_the_browser_may_refuse_it() {
        assert_eq!(
            export_status("memory.csv", 2_080_000_000),
            "memory.csv written (1.94 GiB)."
        );
        assert_eq!(
            export_status("memory.json", 2_700_000_000),
            "memory.json: 2.51 GiB handed to the browser. A browser may refuse a download over 2 GiB without saying so: if no file arrives, use a smaller export (CSV) or the CLI (`proflens`), which writes any size."
        );
    }

    #[test]
    fn a_trap_on_a_large_input_is_said_as_memory_with_the_way_out() {
        assert_eq!(
            worker_stopped("Uncaught RuntimeError: unreachable", 4_519_529_368, Some(3_000_000)),
            "worker stopped: Uncaught RuntimeError: unreachable. It most likely ran out of memory: a browser worker has at most 4 GiB, this input is 4.21 GiB, and the worker held 2.86 MiB at its last report. Analyse it with the CLI (`proflens analyze FOLDER`), which has no such limit."
        );
        // A worker that last reported 3 GiB on a small input: memory too.
        assert!(
            worker_stopped("Uncaught RuntimeError: unreachable", 10, Some(3 << 30))
                .contains("ran out of memory")
        );
    }

    #[test]
    fn other_stops_keep_the_browsers_words() {
        // A small input: a trap is not guessed to be memory.
        assert_eq!(
            worker_stopped(
                "Uncaught RuntimeError: unreachable",
                5 << 20,
                Some(40 << 20)
            ),
            "worker stopped: Uncaught RuntimeError: unreachable"
        );
        // A large input that stopped for another reason.
        assert_eq!(
            worker_stopped("Uncaught TypeError: x is undefined", 3 << 30, None),
            "worker stopped: Uncaught TypeError: x is undefined"
        );
    }
}
