//! Native edge: argument parsing, the `std::fs` opener, writing files, exit codes.

/// Runs the CLI with `args` (without the program name); returns the process exit code:
/// 0 clean, 1 results with problems, 2 nothing usable or bad usage.
pub fn main(args: Vec<String>) -> i32 {
    match args.first().map(String::as_str) {
        Some("--version") => {
            println!("proflens {}", env!("CARGO_PKG_VERSION"));
            0
        }
        _ => {
            eprintln!("usage: proflens <memory|anomaly|snapshot> ...");
            2
        }
    }
}
