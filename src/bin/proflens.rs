//! `proflens` command-line interface (native). See `proflens --help`.

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    std::process::exit(proflens::cli::main(std::env::args().skip(1).collect()));
}

#[cfg(target_arch = "wasm32")]
fn main() {}
