//! The inventory of a drop as the session builds it from the file list the page sends.

use crate::ingest::inventory::Inventory;
use crate::ingest::replay::Heads;
use crate::ingest::{InputFile, Opener};
use crate::parse::metadata::read_side_files_keeping_heads;

/// The inventory of a drop's file list (inventory steps 1 and 2: names, then the side files
/// read through `opener`) and the heads of its traces step 2 read (for a run through
/// [`Resume`]); no data file is parsed.
pub fn inventory_of(
    files: &[crate::protocol::FileMeta],
    opener: &dyn Opener,
) -> (Inventory, Heads) {
    let mut inv = inventory_of_paths(files);
    let heads = read_side_files_keeping_heads(&mut inv, opener);
    (inv, heads)
}

/// Inventory step 1 of a drop's file list: what the names and sizes alone say.
pub fn inventory_of_paths(files: &[crate::protocol::FileMeta]) -> Inventory {
    let inputs: Vec<InputFile> = files
        .iter()
        .map(|f| InputFile {
            path: f.path.clone(),
            size: f.size,
        })
        .collect();
    Inventory::from_paths(&inputs)
}
