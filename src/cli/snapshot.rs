//! `proflens snapshot`: not built yet (its issue is open).

/// Arguments of `proflens snapshot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input path.
    pub input: std::path::PathBuf,
}

/// Runs the subcommand; returns the exit code.
pub fn run(_args: Args) -> i32 {
    eprintln!("proflens snapshot: not implemented yet");
    super::EXIT_NOTHING
}
