//! The native [`Opener`]: files under one root folder on disk.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ingest::{InputFile, Opener};

/// Opens files relative to `root`; lists them the way a browser folder drop would
/// (paths relative to the root's parent, so the dropped folder's name is the first segment).
#[derive(Clone, Debug)]
pub struct FsOpener {
    base: PathBuf,
}

impl FsOpener {
    /// Walks `root` recursively (files only, symlinks not followed) and returns the opener and
    /// the inventory, sorted by path. A single file gives a one-file inventory.
    ///
    /// Errors: `root` unreadable.
    pub fn walk(root: &Path) -> io::Result<(FsOpener, Vec<InputFile>)> {
        let root = root.canonicalize()?;
        let base = root
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| root.clone());
        let mut files = Vec::new();
        let meta = fs::metadata(&root)?;
        if meta.is_file() {
            files.push(InputFile {
                path: rel(&base, &root),
                size: meta.len(),
            });
        } else {
            let mut stack = vec![root.clone()];
            while let Some(dir) = stack.pop() {
                for entry in fs::read_dir(&dir)? {
                    let entry = entry?;
                    let ft = entry.file_type()?;
                    let path = entry.path();
                    if ft.is_dir() {
                        stack.push(path);
                    } else if ft.is_file() {
                        let size = entry.metadata()?.len();
                        files.push(InputFile {
                            path: rel(&base, &path),
                            size,
                        });
                    }
                }
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok((FsOpener { base }, files))
    }
}

fn rel(base: &Path, path: &Path) -> String {
    let r = path.strip_prefix(base).unwrap_or(path);
    r.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

impl Opener for FsOpener {
    fn open(&self, path: &str) -> io::Result<Box<dyn io::Read + '_>> {
        let f = fs::File::open(self.base.join(path))?;
        Ok(Box::new(f))
    }
}
