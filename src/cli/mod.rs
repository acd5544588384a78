//! Native edge: argument parsing (clap), the `std::fs` opener, writing files,
//! exit codes. One submodule per subcommand; each only wires the engine to files.

use clap::{Parser, Subcommand};

pub mod analyze;
pub mod anomaly;
pub mod fs_opener;
pub mod memory;
pub mod snapshot;

/// Exit code: everything analysed, no problems.
pub const EXIT_CLEAN: i32 = 0;
/// Exit code: results written, with problems (listed on stderr).
pub const EXIT_PROBLEMS: i32 = 1;
/// Exit code: nothing could be analysed, or bad usage.
pub const EXIT_NOTHING: i32 = 2;

/// proflens: streaming analysis of Ascend profiler folders and PyTorch memory snapshots.
#[derive(Parser, Debug)]
#[command(name = "proflens", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Ascend memory events: operator_memory.csv rows matched to call stacks (ascend-memory.md).
    Memory(memory::Args),
    /// Steps, device bubbles and anomalies (anomaly.md).
    Anomaly(anomaly::Args),
    /// Memory-snapshot peaks from a PyTorch allocator snapshot pickle (torch-snapshot.md).
    Snapshot(snapshot::Args),
    /// Every analysis the inputs allow, from one read per file, into one folder.
    Analyze(analyze::Args),
}

/// Runs the CLI with `args` (without the program name); returns the process exit code
/// ([`EXIT_CLEAN`], [`EXIT_PROBLEMS`] or [`EXIT_NOTHING`]).
pub fn main(args: Vec<String>) -> i32 {
    let cli = match Cli::try_parse_from(std::iter::once("proflens".to_string()).chain(args)) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_NOTHING
            } else {
                EXIT_CLEAN
            };
            let _ = e.print();
            return code;
        }
    };
    match cli.command {
        Command::Memory(a) => memory::run(a),
        Command::Anomaly(a) => anomaly::run(a),
        Command::Snapshot(a) => snapshot::run(a),
        Command::Analyze(a) => analyze::run(a),
    }
}
