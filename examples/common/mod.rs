//! Helpers shared by the example generators (not an example itself: Cargo only builds
//! `examples/*.rs` and `examples/*/main.rs`).

/// A tiny deterministic xorshift64 generator: generated inputs are the same on every run,
/// so benchmark numbers compare across machines and commits.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A value in `0..n` (`0` when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// Prints `usage` and exits 0 when the command line asks for help (`-h`, `--help`), so a
/// generator never takes `--help` for an output path (it used to create a `--help/` folder).
pub fn exit_on_help(usage: &str) {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{usage}");
        std::process::exit(0);
    }
}
