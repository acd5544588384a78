//! The native [`Opener`]: files under one root folder on disk.
//!
//! The walk never stops at one bad entry ("native file-system edges"): an
//! unreadable folder, a broken or looping symbolic link, or a folder standing where an input
//! file is expected (`trace_view.json/`) becomes one located [`Problem`] in
//! [`FsOpener::walk_problems`] and the walk goes on with the rest.

use std::collections::HashSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::base::{Position, Problem, Severity};
use crate::ingest::inventory::classify;
use crate::ingest::{InputFile, Opener};

/// Problem codes of the walk.
pub mod codes {
    /// A folder (or one of its entries) could not be read: its files are not listed.
    pub const UNREADABLE: &str = "FS-WALK-001";
    /// A symbolic link points nowhere: skipped.
    pub const BROKEN_LINK: &str = "FS-WALK-002";
    /// A symbolic link leads back to a folder already walked (a loop): not followed again.
    pub const LINK_LOOP: &str = "FS-WALK-003";
    /// A folder has the name of an input file (`trace_view.json/`): it is not that file.
    pub const DIR_AS_FILE: &str = "FS-WALK-004";
    /// Neither a file nor a folder (socket, FIFO, device): skipped.
    pub const NOT_A_FILE: &str = "FS-WALK-005";
}

/// Opens files relative to `root`; lists them the way a browser folder drop would
/// (paths relative to the root's parent, so the dropped folder's name is the first segment).
#[derive(Clone, Debug)]
pub struct FsOpener {
    base: PathBuf,
    root: PathBuf,
    problems: Vec<Problem>,
}

impl FsOpener {
    /// Walks `root` recursively and returns the opener and the inventory, sorted by path.
    /// A single file gives a one-file inventory. Symbolic links are followed (a link to a
    /// folder already walked is a loop and is not followed again).
    ///
    /// Entries that cannot be listed are not errors: they are in [`FsOpener::walk_problems`]
    /// (with the path relative to the root's parent), and the rest of the tree is listed.
    ///
    /// Errors: `root` itself missing or unreadable.
    pub fn walk(root: &Path) -> io::Result<(FsOpener, Vec<InputFile>)> {
        FsOpener::walk_under(root, None)
    }

    /// [`FsOpener::walk`] with the paths relative to `base` instead of the root's parent (the
    /// cluster path: a rank folder listed as the whole run's walk lists it, so rank id and
    /// role are decided with the same parent folders). `base` must hold `root`.
    ///
    /// Errors: `root` missing or unreadable; `root` not inside `base` (`InvalidInput`).
    pub fn walk_under(root: &Path, base: Option<&Path>) -> io::Result<(FsOpener, Vec<InputFile>)> {
        let root = root.canonicalize()?;
        let base = match base {
            Some(b) => {
                let b = b.canonicalize()?;
                if !root.starts_with(&b) {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("not inside {}", b.display()),
                    ));
                }
                b
            }
            None => default_base(&root, false),
        };
        let mut files = Vec::new();
        let mut problems = Vec::new();
        let meta = fs::metadata(&root)?;
        if meta.is_file() {
            files.push(InputFile {
                path: rel(&base, &root),
                size: meta.len(),
            });
        } else {
            // The root must be listable; below it, a failure is one problem.
            fs::read_dir(&root)?;
            let mut seen = HashSet::new();
            seen.insert(root.clone());
            let mut stack = vec![root.clone()];
            while let Some(dir) = stack.pop() {
                walk_dir(
                    &base,
                    &dir,
                    &mut seen,
                    &mut stack,
                    &mut files,
                    &mut problems,
                );
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        problems.sort_by(|a, b| a.at.file.cmp(&b.at.file));
        Ok((
            FsOpener {
                base,
                root,
                problems,
            },
            files,
        ))
    }

    /// The file or folder on disk of `rel`, a path relative to the walk's base (as the
    /// inventory names it; `""` is the base).
    pub fn disk_path(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.base.clone()
        } else {
            self.base.join(rel)
        }
    }

    /// The walked root, canonical.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// What the walk could not list (unreadable folders, broken links, loops, folders named
    /// like input files), in path order. The CLI prints them and counts them as warnings.
    pub fn walk_problems(&self) -> &[Problem] {
        &self.problems
    }
}

/// The folder a walk of `root` (canonical) lists its paths relative to: the root's parent, so
/// the paths start with the root's own name (a dropped `ASCEND_PROFILER_OUTPUT` folder is the
/// rank folder, as in the page). For a file in an `ASCEND_PROFILER_OUTPUT` folder, and for an
/// output folder given with other inputs (`several`), the rank folder's parent, so the paths
/// keep the rank folder's name: its rank id, and two such folders stay two ranks.
pub fn default_base(root: &Path, several: bool) -> PathBuf {
    let parent = |p: &Path| {
        p.parent()
            .map_or_else(|| p.to_path_buf(), Path::to_path_buf)
    };
    let is_output = |p: &Path| p.file_name().is_some_and(|n| n == "ASCEND_PROFILER_OUTPUT");
    if root.is_file() {
        match root.parent() {
            Some(o) if is_output(o) => parent(&parent(o)),
            _ => parent(root),
        }
    } else if several && is_output(root) {
        parent(&parent(root))
    } else {
        parent(root)
    }
}

/// The deepest folder holding every one of `dirs` (canonical paths).
pub fn common_ancestor(dirs: &[PathBuf]) -> Option<PathBuf> {
    let mut it = dirs.iter();
    let mut common = it.next()?.clone();
    for d in it {
        while !d.starts_with(&common) {
            common = common.parent()?.to_path_buf();
        }
    }
    Some(common)
}

/// Lists one folder: files into `files`, sub-folders onto `stack`, failures into `problems`.
fn walk_dir(
    base: &Path,
    dir: &Path,
    seen: &mut HashSet<PathBuf>,
    stack: &mut Vec<PathBuf>,
    files: &mut Vec<InputFile>,
    problems: &mut Vec<Problem>,
) {
    let problem = |code, path: &Path, message: String| {
        Problem::new(
            Severity::Warning,
            code,
            Position::file(rel(base, path)),
            message,
        )
    };
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            problems.push(problem(
                codes::UNREADABLE,
                dir,
                format!("cannot list this folder ({e}): the files inside it are not analysed"),
            ));
            return;
        }
    };
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                problems.push(problem(
                    codes::UNREADABLE,
                    dir,
                    format!("cannot read an entry of this folder ({e}): the rest is listed"),
                ));
                continue;
            }
        };
        let path = entry.path();
        let link = entry.file_type().map(|t| t.is_symlink()).unwrap_or(false);
        // `fs::metadata` follows links: the kind of what the entry stands for.
        let meta = match fs::metadata(&path) {
            Ok(m) => m,
            Err(e) if link => {
                problems.push(problem(
                    codes::BROKEN_LINK,
                    &path,
                    format!("symbolic link that cannot be followed ({e}): skipped"),
                ));
                continue;
            }
            Err(e) => {
                problems.push(problem(
                    codes::UNREADABLE,
                    &path,
                    format!("cannot read its metadata ({e}): skipped"),
                ));
                continue;
            }
        };
        if meta.is_dir() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if classify(&name).is_some() {
                problems.push(problem(
                    codes::DIR_AS_FILE,
                    &path,
                    format!("a folder where the input file {name} is expected: not read as that file; the rank folder is analysed without it"),
                ));
            }
            let real = fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if !seen.insert(real.clone()) {
                problems.push(problem(
                    codes::LINK_LOOP,
                    &path,
                    format!(
                        "leads to a folder already listed ({}): not followed again",
                        real.display()
                    ),
                ));
                continue;
            }
            stack.push(path);
        } else if meta.is_file() {
            files.push(InputFile {
                path: rel(base, &path),
                size: meta.len(),
            });
        } else {
            problems.push(problem(
                codes::NOT_A_FILE,
                &path,
                "neither a file nor a folder (socket, pipe or device): skipped".to_string(),
            ));
        }
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

    fn open_from(&self, path: &str, offset: u64) -> io::Result<Box<dyn io::Read + '_>> {
        use std::io::Seek;
        let mut f = fs::File::open(self.base.join(path))?;
        f.seek(io::SeekFrom::Start(offset))?;
        Ok(Box::new(f))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_that_cannot_be_listed_is_one_problem() {
        // Listing a file fails (ENOTDIR) for any user, root included: the same path as a
        // mode-000 folder for a normal user.
        let dir = std::env::temp_dir().join(format!("proflens_walk_unit_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("not_a_dir");
        std::fs::write(&file, "x").unwrap();
        let (mut seen, mut stack, mut files, mut problems) =
            (HashSet::new(), Vec::new(), Vec::new(), Vec::new());
        walk_dir(
            &dir,
            &file,
            &mut seen,
            &mut stack,
            &mut files,
            &mut problems,
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(files.is_empty() && stack.is_empty());
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].code, codes::UNREADABLE);
        assert_eq!(&*problems[0].at.file, "not_a_dir");
        assert!(problems[0].message.starts_with("cannot list this folder ("));
    }
}
