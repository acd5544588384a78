//! What was dropped, and how its bytes are read.
//!
//! * [`opener`]: the only I/O seam of the core ([`Opener`]); the edges implement it
//!   (`cli` over `std::fs`, `worker` over `FileReaderSync` + `Blob.slice`, tests over memory).
//! * [`chunk_reader`]: a capped read buffer with absolute byte offsets and progress.
//! * [`sqlite`]: read-only SQLite over a random-access byte source (the Ascend DB export).

pub mod chunk_reader;
pub mod gzip;
pub mod inventory;
pub mod kineto;
pub mod opener;
pub mod rank;
pub mod replay;
pub mod select;
#[cfg(any(not(target_arch = "wasm32"), feature = "db"))]
pub mod sqlite;
pub mod summary_file;

pub use chunk_reader::{ChunkReader, Progress};
pub use opener::{InputFile, MemOpener, Opener};
