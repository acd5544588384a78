//! Hostile snapshot pickles: every class ends in an exact problem or a located
//! error, with the decoder's memory bounded by what it keeps — measured by a counting global
//! allocator (peak bytes allocated during the decode) and by the decoder's own accounting
//! (`Decoded::stats`).

mod snapshot_common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;

use proflens::base::Problems;
use proflens::engine::read::snapshot::{
    analyse, SnapshotOptions, SnapshotRun, MAX_ANALYSED_DEVICES,
};
use proflens::ingest::InputFile;
use proflens::parse::pickle::opcodes as op;
use proflens::parse::pickle::writer::PickleWriter;
use proflens::parse::pickle::{
    read_snapshot_bytes, Decoded, PickleError, PickleErrorKind, GENERIC_CAP, MAX_MARKS, MAX_STACK,
};
use snapshot_common::hostile;

/// Counts live heap bytes and their high-water mark.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Relaxed) + l.size();
            PEAK.fetch_max(now, Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Every test of this file holds this lock for its whole run, so a measured section sees no
/// allocations of other tests (the harness runs tests on several threads).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Runs `f` and returns its result with the peak heap bytes it added above the bytes live
/// before it (call with [`serial`] held).
fn peak_during<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.load(Relaxed);
    PEAK.store(base, Relaxed);
    let r = f();
    (r, PEAK.load(Relaxed).saturating_sub(base))
}

fn decode(name: &str, bytes: &[u8]) -> (Result<Decoded, PickleError>, usize) {
    let (r, peak) = peak_during(|| read_snapshot_bytes(name, bytes));
    eprintln!("{name}: {} bytes, decoder peak {peak} bytes", bytes.len());
    (r, peak)
}

fn messages(p: &Problems, code: &str) -> Vec<String> {
    p.kept()
        .iter()
        .filter(|x| x.code == code)
        .map(|x| x.message.clone())
        .collect()
}

const MIB: usize = 1 << 20;

/// The analysis of a decoded file with the CLI defaults.
fn analysed(name: &str, bytes: &[u8], d: Decoded) -> SnapshotRun {
    let file = InputFile {
        path: name.into(),
        size: bytes.len() as u64,
    };
    analyse(
        &file,
        d.snapshot,
        d.problems,
        &SnapshotOptions::spec_defaults(),
    )
}

#[test]
fn memo_indices_that_jump_by_a_million_cost_one_slot_each() {
    let _serial = serial();
    // 20 KB: on the old decoder this aborted the process (an 8 GiB memo allocation).
    let bytes = hostile::memo_bomb(4000);
    assert!(bytes.len() < 21_000, "{}", bytes.len());
    let (r, peak) = decode("memo.pickle", &bytes);
    let d = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        d.stats.memo_entries,
        4000 + 2,
        "4000 jumps + the dict and the list"
    );
    assert!(
        d.stats.memo_slots <= 2 * d.stats.memo_entries + 64,
        "{:?}",
        d.stats
    );
    assert!(peak < 2 * MIB, "peak {peak} bytes for a 20 KB file");
    assert_eq!(d.snapshot.segments.len(), 0);
}

#[test]
fn a_trace_list_referenced_a_thousand_times_is_kept_and_analysed_once() {
    let _serial = serial();
    // On the old decoder every reference deep-copied the trace (6 GB for 100k entries × 1000).
    let bytes = hostile::shared_trace(10_000, 1000);
    let (r, peak) = decode("shared.pickle", &bytes);
    let d = r.unwrap_or_else(|e| panic!("{e}"));
    let s = &d.snapshot;
    assert_eq!(s.devices.len(), 1000);
    assert_eq!(s.devices[0].entries.len(), 10_000);
    assert_eq!(s.devices[0].same_as, None);
    assert!(s.devices[1..]
        .iter()
        .all(|t| t.entries.is_empty() && t.same_as == Some(0)));
    // 10k entries ≈ 0.4 MB of columns; 1000 copies would be ≈ 400 MB.
    assert!(peak < 8 * MIB, "peak {peak} bytes");
    assert_eq!(
        messages(&d.problems, "SNAP-SHARED-TRACE"),
        [
            "the trace list of device 0 is referenced 1000 times in `device_traces` (also as \
          device 1, 2, 3, 4, 5, …): the same list object, not 999 more traces; its 10000 \
          entries are analysed once, as device 0"
        ]
    );
    let run = analysed("shared.pickle", &bytes, d);
    assert_eq!(run.devices.len(), 1, "one analysis, not 1000");
    assert_eq!(run.devices[0].device, 0);
}

fn limit(e: PickleError) -> (&'static str, usize, u64) {
    match e.kind {
        PickleErrorKind::Limit { what, limit } => (what, limit, e.offset()),
        other => panic!("expected a limit error, got {other:?}"),
    }
}

#[test]
fn deep_nesting_stops_at_the_stack_bound_with_a_located_error() {
    let _serial = serial();
    let depth = MAX_STACK as u32 + 10;
    let bytes = hostile::nested_lists(depth);
    let (r, peak) = decode("nested.pickle", &bytes);
    let e = r.expect_err("over the stack bound");
    // PROTO 4 (2 bytes), EMPTY_DICT, "x" (3 bytes); the dict and "x" are 2 values, so the
    // (MAX_STACK − 1)-th list, at byte 6 + MAX_STACK − 2, is the value over the bound.
    let first_list = 2 + 1 + 3;
    let at = (first_list + MAX_STACK - 2) as u64;
    assert_eq!(
        limit(e.clone()),
        ("values on the pickle stack", MAX_STACK, at)
    );
    assert_eq!(
        e.to_string(),
        format!(
            "nested.pickle: The pickle at byte {at} holds more than {MAX_STACK} values on the \
             pickle stack; proflens stops there to keep memory bounded. Real memory snapshots \
             stay far below this: the file is corrupt or was crafted to exhaust memory."
        )
    );
    // The stack and the generic nodes of 2^18 lists; the old decoder went on.
    assert!(peak < 32 * MIB, "peak {peak} bytes");
}

#[test]
fn dup_and_mark_bombs_stop_at_their_bounds() {
    let _serial = serial();
    let bytes = hostile::repeated(&[op::NONE], op::DUP, MAX_STACK as u64 + 5);
    let (r, peak) = decode("dup.pickle", &bytes);
    // PROTO (2), NONE (1): the stack holds 1 + k values after the k-th DUP at byte 2 + k.
    assert_eq!(
        limit(r.expect_err("dup bomb")),
        (
            "values on the pickle stack",
            MAX_STACK,
            2 + MAX_STACK as u64
        )
    );
    assert!(peak < 16 * MIB, "peak {peak} bytes");
    let bytes = hostile::repeated(&[], op::MARK, MAX_MARKS as u64 + 5);
    let (r, peak) = decode("mark.pickle", &bytes);
    assert_eq!(
        limit(r.expect_err("mark bomb")),
        ("nested MARKs", MAX_MARKS, 2 + MAX_MARKS as u64)
    );
    assert!(peak < MIB, "peak {peak} bytes");
    // Below the bounds both decode (the values are simply dropped at STOP).
    let ok = hostile::repeated(&[op::NONE], op::DUP, 1000);
    let e = read_snapshot_bytes("dup-ok.pickle", &ok).expect_err("a dict above values");
    assert!(matches!(e.kind, PickleErrorKind::NotSnapshot { .. }), "{e}");
}

#[test]
fn containers_opened_and_never_finished_stop_at_the_open_bound() {
    let _serial = serial();
    let bytes = hostile::unfinished_entries(70_000);
    let (r, peak) = decode("open.pickle", &bytes);
    let (what, bound, _) = limit(r.expect_err("open containers"));
    assert_eq!(
        (what, bound),
        ("snapshot containers under construction", 1 << 16)
    );
    assert!(peak < 48 * MIB, "peak {peak} bytes");
    let ok = hostile::unfinished_entries(1000);
    let d = read_snapshot_bytes("open-ok.pickle", &ok).unwrap();
    assert!(d.stats.max_open_containers >= 1000);
}

#[test]
fn empty_generic_containers_count_against_the_generic_cap() {
    let _serial = serial();
    let bytes = hostile::empty_tuples(1_000_000);
    let (r, peak) = decode("tuples.pickle", &bytes);
    let d = r.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        messages(&d.problems, "SNAP-GENERIC-CAP"),
        [format!(
            "unrecognised parts of the pickle exceed {GENERIC_CAP} items; the rest is not kept"
        )]
    );
    assert_eq!(d.stats.generic_items, GENERIC_CAP, "{:?}", d.stats);
    // 2^18 nodes of 32 bytes (+ the Vec's doubling); the old decoder kept all 1M.
    assert!(peak < 24 * MIB, "peak {peak} bytes");
}

#[test]
fn sizes_times_and_streams_near_the_integer_limits_are_checked_where_they_enter() {
    let _serial = serial();
    let t0 = 1_700_000_000_000_000i128;
    let bytes = hostile::trace(&[
        ("alloc", 0x1000, 1 << 58, 0, Some(t0)),
        ("alloc", 0x2000, 1 << 58, u64::MAX as i128, Some(t0 + 1)),
        // Old decoder: Σ sizes past i64::MAX — a debug panic, a wrapped peak in release.
        ("alloc", 0x3000, 1 << 62, 0, Some(t0 + 2)),
        ("alloc", 0x4000, 1 << 62, 0, Some(i64::MAX as i128)),
        (
            "free_completed",
            0x1000,
            1 << 58,
            0,
            Some(i64::MIN as i128 + 1),
        ),
        ("alloc", 0x5000, 512, 0, Some(t0 + 5)),
    ]);
    let d = read_snapshot_bytes("range.pickle", &bytes).unwrap_or_else(|e| panic!("{e}"));
    let dev = &d.snapshot.devices[0];
    assert_eq!(dev.entries.len(), 4);
    assert_eq!(dev.bad_entries, 2);
    let e = messages(&d.problems, "SNAP-ENTRY");
    assert_eq!(e.len(), 2);
    assert_eq!(
        e[0],
        "device 0: trace entry after entry 2 skipped: size 4611686018427387904 would take the \
         bytes kept from this file past 2^60 (1 EiB, far beyond any device): not a real size"
    );
    // The 2^64 − 1 stream stays distinct from stream 0.
    assert_eq!(dev.entries.stream_values(), &[0, -1]);
    let r = messages(&d.problems, "SNAP-RANGE");
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(
        r[0].starts_with(
            "1 `time_us` values lie outside ±2^61 µs or are not integers (first value \
             -9223372036854775807); those entries are kept without a time — byte offsets: 1 \
             (first at "
        ),
        "{}",
        r[0]
    );
    assert!(
        r[1].starts_with(
            "1 `stream` values are 2^63 or more (first value 18446744073709551615, a handle \
             written as unsigned); each is kept as its 64-bit pattern (shown as stream -1), \
             distinct from stream 0 — byte offsets: 1 (first at "
        ),
        "{}",
        r[1]
    );
    assert_eq!(dev.entries.time_us(2), None, "the free's time was dropped");
    // The whole pipeline runs (a debug build panics on any overflow) with exact figures.
    let opts = SnapshotOptions::spec_defaults();
    let run = analysed("range.pickle", &bytes, d);
    let j = run.json(&opts.report);
    let dj = &j.devices[0];
    assert_eq!(dj.streams, 2);
    assert_eq!(dj.in_window_replay.peak_bytes, 1 << 59);
    assert_eq!(dj.max_allocated.bytes, 1 << 59);
    let md = run.markdown(&opts.report);
    assert!(md.contains("(576,460,752,303,423,488 bytes)"), "{md}");
}

#[test]
fn a_million_segment_devices_are_not_a_million_analyses() {
    let _serial = serial();
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.dict().unwrap();
    w.str("segments").unwrap();
    w.list().unwrap();
    w.mark().unwrap();
    for d in 0..(MAX_ANALYSED_DEVICES as i128 + 36) {
        w.dict().unwrap();
        w.mark().unwrap();
        for (k, v) in [("device", d), ("address", 0x1000), ("total_size", 4096)] {
            w.str(k).unwrap();
            w.int(v).unwrap();
        }
        w.str("blocks").unwrap();
        w.list().unwrap();
        w.setitems().unwrap();
    }
    w.appends().unwrap();
    w.setitem().unwrap();
    let bytes = w.stop().unwrap();
    let d = read_snapshot_bytes("segs.pickle", &bytes).unwrap();
    let run = analysed("segs.pickle", &bytes, d);
    assert_eq!(run.devices.len(), MAX_ANALYSED_DEVICES);
    assert_eq!(
        messages(&run.problems, "SNAP-DEVICES"),
        [
            "36 devices are not analysed (devices 64, 65, 66, 67, 68, …): only devices 0 to \
          4294967295 can be, and at most 64 per snapshot"
        ]
    );
}

/// A frame `(filename, line, name)` list for one alloc entry, plus a hostile annotation and
/// compile context.
fn injection_pickle() -> Vec<u8> {
    let mut w = hostile::open_top(4);
    w.list().unwrap();
    w.list().unwrap();
    w.dict().unwrap();
    w.mark().unwrap();
    for (k, v) in [
        ("action", "alloc"),
        ("compile_context", "x` <script>y</script> `z"),
    ] {
        w.str(k).unwrap();
        w.str(v).unwrap();
    }
    for (k, v) in [("addr", 4096), ("size", 1 << 20), ("stream", 0)] {
        w.str(k).unwrap();
        w.int(v).unwrap();
    }
    w.str("frames").unwrap();
    w.list().unwrap();
    w.dict().unwrap();
    w.mark().unwrap();
    w.str("filename").unwrap();
    w.str("/p/<img src=x onerror=alert(1)>.py").unwrap();
    w.str("name").unwrap();
    w.str("[x](javascript:alert(1))").unwrap();
    w.str("line").unwrap();
    w.int(7).unwrap();
    w.setitems().unwrap();
    w.append().unwrap();
    w.setitems().unwrap();
    w.append().unwrap(); // entry → trace
    w.append().unwrap(); // trace → device_traces
    hostile::close_top(w)
}

#[test]
fn pickle_strings_cannot_inject_markup_into_the_markdown_report() {
    let _serial = serial();
    let bytes = injection_pickle();
    let d = read_snapshot_bytes("inject.pickle", &bytes).unwrap_or_else(|e| panic!("{e}"));
    let opts = SnapshotOptions::spec_defaults();
    let run = analysed("inject.pickle", &bytes, d);
    let md = run.markdown(&opts.report);
    assert!(!md.contains("<img"), "{md}");
    assert!(!md.contains("<script"), "{md}");
    assert!(!md.contains("](javascript:"), "{md}");
    // The names stay readable, escaped; the link target is percent-encoded.
    assert!(
        md.contains(
            "\\[x\\]\\(javascript:alert\\(1\\)\\) @ /p/&lt;img src=x onerror=alert\\(1\\)&gt;.py:7"
        ),
        "{md}"
    );
    assert!(
        md.contains("(vscode://file/p/%3Cimg%20src=x%20onerror=alert%281%29%3E.py:7)"),
        "{md}"
    );
    assert!(
        md.contains("compile context: x\\` &lt;script&gt;y&lt;/script&gt; \\`z"),
        "{md}"
    );
}

#[test]
fn the_real_fixtures_stay_far_below_every_bound() {
    let _serial = serial();
    for name in snapshot_common::fixture_names() {
        let bytes = std::fs::read(snapshot_common::fixture_dir().join(&name)).unwrap();
        let d = read_snapshot_bytes(&name, &bytes).unwrap_or_else(|e| panic!("{e}"));
        let s = d.stats;
        assert!(s.max_stack <= 4096, "{name}: {s:?}");
        assert!(s.max_marks <= 16, "{name}: {s:?}");
        // One `APPENDS` batch of 1000 finished entries waits on the stack.
        assert!(s.max_open_containers <= 1100, "{name}: {s:?}");
        assert!(
            s.memo_slots <= s.memo_entries + 64,
            "{name}: dense memo {s:?}"
        );
        assert_eq!(d.problems.count("SNAP-RANGE"), 0, "{name}");
        assert_eq!(d.problems.count("SNAP-SHARED-TRACE"), 0, "{name}");
        eprintln!("{name}: {s:?}");
    }
}

#[test]
fn handles_left_deep_in_the_stack_do_not_slow_every_later_op() {
    let _serial = serial();
    let bytes = hostile::stuck_handles(20_000);
    let d = read_snapshot_bytes("stuck.pickle", &bytes).unwrap_or_else(|e| panic!("{e}"));
    // The entries were consumed (empty dicts: bad entries), the lists past the device-slot
    // bound became generic; the append loop ran against ≈ 500 waiting slots.
    let bad: u64 = d.snapshot.devices.iter().map(|t| t.bad_entries).sum();
    assert!(bad > 400 && bad <= 600, "{bad}");
    assert!(d.snapshot.devices.len() <= proflens::parse::pickle::MAX_DEVICES);
}

/// A `{"segments": [...]}` pickle: one segment per item of `segs`, each `(key, value)` list
/// written as given, plus one block of `block_size`.
fn segments_pickle(segs: &[Vec<(&str, Option<i128>, Option<f64>)>], block_size: f64) -> Vec<u8> {
    let mut w = PickleWriter::new(Vec::new(), 4).unwrap();
    w.dict().unwrap();
    w.str("segments").unwrap();
    w.list().unwrap();
    w.mark().unwrap();
    for seg in segs {
        w.dict().unwrap();
        w.mark().unwrap();
        for (k, i, f) in seg {
            w.str(k).unwrap();
            match (i, f) {
                (Some(i), _) => w.int(*i).unwrap(),
                (None, Some(f)) => w.float(*f).unwrap(),
                (None, None) => w.none().unwrap(),
            }
        }
        w.str("blocks").unwrap();
        w.list().unwrap();
        w.dict().unwrap();
        w.mark().unwrap();
        w.str("size").unwrap();
        if block_size.fract() == 0.0 {
            w.int(block_size as i128).unwrap();
        } else {
            w.float(block_size).unwrap();
        }
        w.str("state").unwrap();
        w.str("active_allocated").unwrap();
        w.setitems().unwrap();
        w.append().unwrap();
        w.setitems().unwrap();
    }
    w.appends().unwrap();
    w.setitem().unwrap();
    w.stop().unwrap()
}

#[test]
fn segment_fields_that_are_not_integers_are_reported_not_read_as_zero() {
    // A segment `device` beyond i64 or a float size became 0 silently (device 2^64
    // merged with device 0). Now the segment is skipped with its blocks and a SNAP-FIELD
    // warning that says which field held what; the good segment is kept.
    let good = vec![
        ("device", Some(0), None),
        ("address", Some(0x1000), None),
        ("total_size", Some(4096), None),
    ];
    let wide_device = vec![
        ("device", Some(1 << 64), None),
        ("address", Some(0x2000), None),
        ("total_size", Some(4096), None),
    ];
    let float_size = vec![
        ("device", Some(0), None),
        ("address", Some(0x3000), None),
        ("total_size", None, Some(4096.5)),
    ];
    let bytes = segments_pickle(&[good, wide_device, float_size], 512.0);
    let d = read_snapshot_bytes("segs.pickle", &bytes).unwrap();
    assert_eq!(d.snapshot.segments.len(), 1);
    assert_eq!(
        (
            d.snapshot.segments[0].address,
            d.snapshot.segments[0].total_size
        ),
        (0x1000, 4096)
    );
    assert_eq!(
        messages(&d.problems, "SNAP-FIELD"),
        [
            "segment 1 (address 0x2000) skipped with its 1 blocks: `device` is \
             18446744073709551616, not an integer in −2^63 … 2^63−1",
            "segment 1 (address 0x3000) skipped with its 1 blocks: `total_size` is the float \
             4096.5, not an integer in 0 … 2^64−1",
        ]
    );
    // A block size that is not an integer is kept as 0 and said so, with its byte offset.
    let good = vec![
        ("device", Some(0), None),
        ("address", Some(0x1000), None),
        ("total_size", Some(4096), None),
    ];
    let bytes = segments_pickle(&[good], 7.25);
    let d = read_snapshot_bytes("blk.pickle", &bytes).unwrap();
    let p: Vec<_> = d
        .problems
        .kept()
        .iter()
        .filter(|p| p.code == "SNAP-FIELD")
        .collect();
    assert_eq!(p.len(), 1);
    assert_eq!(
        p[0].message,
        "a segment block's `size` is the float 7.25, not an integer in 0 … 2^64−1: taken as 0"
    );
    assert!(p[0].at.byte.is_some());
}
