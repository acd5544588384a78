//! Source links and display paths for snapshot reports (torch-snapshot.md §7.8).
//!
//! Recorded paths are normalised (`\` → `/`), then remapped by the first
//! matching user prefix (recorded prefix → local root or repository path),
//! then turned into a link of the chosen style.

/// How source locations are linked (`--link-style`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LinkStyle {
    /// `vscode://file/<abs>:<line>`.
    #[default]
    Vscode,
    /// `cursor://file/<abs>:<line>`.
    Cursor,
    /// `<repo>/blob/<commit>/<rel>#L<line>` (needs `repo_url`; paths relative to `project_root`).
    Github,
    /// `file://<abs>` (no line: the scheme cannot carry one).
    File,
    /// Plain text.
    None,
}

impl LinkStyle {
    /// Parses `vscode|cursor|github|file|none`.
    pub fn parse(s: &str) -> Option<LinkStyle> {
        Some(match s {
            "vscode" => LinkStyle::Vscode,
            "cursor" => LinkStyle::Cursor,
            "github" => LinkStyle::Github,
            "file" => LinkStyle::File,
            "none" => LinkStyle::None,
            _ => return None,
        })
    }
}

/// Link options of the report (`--project-root`, `--link-style`, `--repo-url`, `--commit`, `--map`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkOptions {
    /// Link style.
    pub style: LinkStyle,
    /// Project root as recorded (or after mapping); display paths are relative to it.
    pub project_root: Option<String>,
    /// Repository URL for `github` links, e.g. `https://github.com/o/r`.
    pub repo_url: Option<String>,
    /// Commit or branch for `github` links (default `main`).
    pub commit: Option<String>,
    /// Path-prefix mapping: recorded prefix → replacement (first match wins).
    pub path_map: Vec<(String, String)>,
}

fn norm(p: &str) -> String {
    p.replace('\\', "/")
}

impl LinkOptions {
    /// The recorded path after normalisation and mapping.
    pub fn mapped(&self, filename: &str) -> String {
        let p = norm(filename);
        for (from, to) in &self.path_map {
            let from = norm(from);
            if !from.is_empty() && p.starts_with(&from) {
                return format!("{}{}", norm(to), &p[from.len()..]);
            }
        }
        p
    }

    /// Path relative to the project root, if the file is under it.
    pub fn relative(&self, filename: &str) -> Option<String> {
        let p = self.mapped(filename);
        let root = norm(self.project_root.as_deref()?);
        let root = root.trim_end_matches('/');
        p.strip_prefix(root)
            .filter(|r| r.starts_with('/'))
            .map(|r| r.trim_start_matches('/').to_string())
    }

    /// Path shown in reports: relative to the project root when possible, else as mapped.
    pub fn display(&self, filename: &str) -> String {
        self.relative(filename)
            .unwrap_or_else(|| self.mapped(filename))
    }

    /// The link of `filename:line`, or `None` (style `none`, or `github` outside the root).
    pub fn link(&self, filename: &str, line: u32) -> Option<String> {
        let p = self.mapped(filename);
        if p.starts_with('<') || p == "??" || p.is_empty() {
            return None;
        }
        // Windows drive paths become /C:/… in URLs.
        let abs = if p.as_bytes().get(1) == Some(&b':') {
            format!("/{p}")
        } else {
            p.clone()
        };
        let url_path = || encode_path(&ensure_slash(&abs));
        match self.style {
            LinkStyle::Vscode => Some(format!("vscode://file{}:{line}", url_path())),
            LinkStyle::Cursor => Some(format!("cursor://file{}:{line}", url_path())),
            LinkStyle::File => Some(format!("file://{}", url_path())),
            LinkStyle::Github => {
                let repo = self.repo_url.as_deref()?.trim_end_matches('/');
                if !(repo.starts_with("https://") || repo.starts_with("http://"))
                    || repo
                        .chars()
                        .any(|c| c.is_whitespace() || "()<>\"`\\".contains(c))
                {
                    return None;
                }
                let rel = self.relative(filename).or_else(|| {
                    (!p.starts_with('/') && !abs.starts_with('/')).then(|| p.clone())
                })?;
                let commit = encode_path(self.commit.as_deref().unwrap_or("main"));
                Some(format!(
                    "{repo}/blob/{commit}/{}#L{line}",
                    encode_path(&rel)
                ))
            }
            LinkStyle::None => None,
        }
    }
}

/// Percent-encodes a recorded path for a URL: everything but letters, digits and
/// `-._~/:@!$&'*+,;=` (so spaces, parentheses, `<>`, `%`, `#`, `?` and non-ASCII bytes cannot end
/// or alter a link, in Markdown or HTML).
fn encode_path(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    for &b in p.as_bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/:@!$&'*+,;=".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn ensure_slash(p: &str) -> String {
    if p.starts_with('/') {
        p.to_string()
    } else {
        format!("/{p}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_by_style() {
        let mut o = LinkOptions {
            project_root: Some("/home/u/proj".into()),
            repo_url: Some("https://github.com/o/r".into()),
            commit: Some("abc123".into()),
            ..Default::default()
        };
        assert_eq!(
            o.link("/home/u/proj/m/a.py", 42).unwrap(),
            "vscode://file/home/u/proj/m/a.py:42"
        );
        assert_eq!(o.display("/home/u/proj/m/a.py"), "m/a.py");
        o.style = LinkStyle::Github;
        assert_eq!(
            o.link("/home/u/proj/m/a.py", 42).unwrap(),
            "https://github.com/o/r/blob/abc123/m/a.py#L42"
        );
        assert_eq!(o.link("/usr/lib/x.py", 1), None);
        o.style = LinkStyle::File;
        assert_eq!(
            o.link("C:\\research\\a.py", 3).unwrap(),
            "file:///C:/research/a.py"
        );
        o.style = LinkStyle::Cursor;
        o.path_map = vec![("/remote/job/".into(), "/home/u/proj/".into())];
        assert_eq!(
            o.link("/remote/job/b.py", 7).unwrap(),
            "cursor://file/home/u/proj/b.py:7"
        );
        assert_eq!(o.display("/remote/job/b.py"), "b.py");
        o.style = LinkStyle::None;
        assert_eq!(o.link("/home/u/proj/m/a.py", 42), None);
    }

    #[test]
    fn hostile_paths_are_percent_encoded_and_repo_urls_need_http() {
        let mut o = LinkOptions::default();
        assert_eq!(
            o.link("/a b/x).py<img src=x>#?%é", 3).unwrap(),
            "vscode://file/a%20b/x%29.py%3Cimg%20src=x%3E%23%3F%25%C3%A9:3"
        );
        o.style = LinkStyle::Github;
        o.repo_url = Some("javascript:alert(1)//".into());
        assert_eq!(o.link("m/a.py", 1), None);
        o.repo_url = Some("https://github.com/o/r".into());
        o.commit = Some("main) [x](javascript:y".into());
        assert_eq!(
            o.link("m/a (1).py", 1).unwrap(),
            "https://github.com/o/r/blob/main%29%20%5Bx%5D%28javascript:y/m/a%20%281%29.py#L1"
        );
    }
}
