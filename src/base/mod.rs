//! Shared vocabulary of every layer: positions in input files, problems
//! (diagnostics that did not stop the analysis), units. No dependencies on any
//! other module of the crate.

pub mod arith;
pub mod format;
pub mod par;
pub mod position;
pub mod problem;
pub mod pyfloat;
pub mod side_labels;
pub mod sort;
pub mod top_n;
pub mod units;
pub mod wire;

pub use position::Position;
pub use problem::{Problem, Problems, Severity};
