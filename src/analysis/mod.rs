//! Pure functions over `model` tables: no I/O, no clocks, no serde. Each
//! submodule names the spec sections whose rules it implements.

pub mod snapshot;
