//! Writes the hostile snapshot pickles (memo, depth and size bombs) at full size into a folder, for
//! `/usr/bin/time -v target/release/proflens snapshot FILE --json DIR/x.json`:
//!
//! `cargo run --release --example snapshot_bombs -- DIR/bombs`
//!
//! The builders are the ones `tests/snapshot_hostile.rs` uses at small sizes.

#[path = "../tests/snapshot_common/hostile.rs"]
mod hostile;

use proflens::parse::pickle::opcodes as op;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "/tmp/bombs".into());
    std::fs::create_dir_all(&dir).expect("output folder");
    let t0 = 1_700_000_000_000_000i128;
    let files: Vec<(&str, Box<dyn Fn() -> Vec<u8>>)> = vec![
        ("memo_1k.pickle", Box::new(|| hostile::memo_bomb(200))),
        ("memo_20k.pickle", Box::new(|| hostile::memo_bomb(4000))),
        (
            "shared_trace.pickle",
            Box::new(|| hostile::shared_trace(100_000, 1000)),
        ),
        (
            "nested_lists_10m.pickle",
            Box::new(|| hostile::nested_lists(10_000_000)),
        ),
        (
            "nested_tuples_10m.pickle",
            Box::new(|| hostile::nested_tuples(10_000_000)),
        ),
        (
            "dup_100m.pickle",
            Box::new(|| hostile::repeated(&[op::NONE], op::DUP, 100_000_000)),
        ),
        (
            "mark_100m.pickle",
            Box::new(|| hostile::repeated(&[], op::MARK, 100_000_000)),
        ),
        (
            "unfinished_10m.pickle",
            Box::new(|| hostile::unfinished_entries(10_000_000)),
        ),
        (
            "empty_tuples_10m.pickle",
            Box::new(|| hostile::empty_tuples(10_000_000)),
        ),
        (
            "stuck_handles_10m.pickle",
            Box::new(|| hostile::stuck_handles(10_000_000)),
        ),
        (
            "range.pickle",
            Box::new(move || {
                hostile::trace(&[
                    ("alloc", 0x1000, 1 << 62, 0, Some(t0)),
                    ("alloc", 0x2000, 1 << 62, u64::MAX as i128, Some(t0 + 1)),
                    ("alloc", 0x3000, 1 << 62, 0, Some(i64::MAX as i128)),
                    (
                        "free_completed",
                        0x1000,
                        1 << 62,
                        0,
                        Some(i64::MIN as i128 + 1),
                    ),
                ])
            }),
        ),
    ];
    for (name, make) in files {
        let bytes = make();
        let path = format!("{dir}/{name}");
        std::fs::write(&path, &bytes).expect("write");
        println!("{path}: {} bytes", bytes.len());
    }
}
