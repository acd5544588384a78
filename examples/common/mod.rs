//! Helpers shared by the example generators (not an example itself: Cargo only builds
//! `examples/*.rs` and `examples/*/main.rs`). Their random source is
//! `proflens::engine::synth::XorShift`.

/// Prints `usage` and exits 0 when the command line asks for help (`-h`, `--help`), so a
/// generator never takes `--help` for an output path (it used to create a `--help/` folder).
pub fn exit_on_help(usage: &str) {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{usage}");
        std::process::exit(0);
    }
}
