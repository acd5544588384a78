//! Bytes → typed records, streaming, no analysis. One submodule per input
//! format (formats.md). Parsers read through [`crate::ingest::ChunkReader`],
//! keep only what analyses need, and report row-level trouble as
//! [`crate::base::Problem`]s beside their results.

pub mod pickle;
