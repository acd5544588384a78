//! Rank id, role and folder ordering rules of one capture folder, from names
//! alone (ascend-memory.md §3, anomaly.md §1.6). The JSON side files are read
//! by `parse::metadata`; their facts come back here through [`RankFacts`].
//!
//! Pure functions: no I/O. `ingest::inventory` applies them to a drop.

use serde::Serialize;

/// What kind of capture folder a rank comes from (formats.md §11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureKind {
    /// A folder whose name ends in `ascend_pt` (torch_npu; ascend-memory.md §2.1).
    AscendPt,
    /// A folder whose name ends in `ascend_ms` (MindSpore; an extension, §2.2).
    AscendMs,
    /// An `ASCEND_PROFILER_OUTPUT/` folder without a capture folder around it.
    LooseOutput,
    /// Loose files (e.g. a bare `operator_memory.csv`) dropped without any folder (§2.2).
    LooseFiles,
    /// One PyTorch profiler (Kineto) trace file of a GPU rank (formats.md §8; `ingest::kineto`).
    Kineto,
}

/// Where the rank id came from (ascend-memory.md §3.1, priority order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankSource {
    /// 1: the file name `profiler_info_<N>.json` (the parity rule).
    InfoFileName,
    /// 2: the `rank_id` field inside `profiler_info*.json`.
    InfoField,
    /// 3: a `rank<N>` / `rank_<N>` / `rank-<N>` token in the folder name.
    FolderName,
    /// 4: `0` because exactly one rank folder was found.
    SingleFolder,
    /// Kineto: `distributedInfo.rank` of the trace (`ingest::kineto`).
    DistributedInfo,
    /// Kineto: a `rank<N>` token of the trace file name.
    FileName,
    /// Kineto: neither; the first number no other trace of the role uses, in path order.
    Order,
    /// Not determinable: the folder is skipped (`MEM-DISC-003`).
    Unknown,
}

impl RankSource {
    /// Human name used in the `MEM-DISC-002` message.
    pub fn describe(self) -> &'static str {
        match self {
            RankSource::InfoFileName => "the profiler_info file name",
            RankSource::InfoField => "the rank_id field of profiler_info",
            RankSource::FolderName => "the folder name",
            RankSource::SingleFolder => "the only rank folder (default 0)",
            RankSource::DistributedInfo => "distributedInfo.rank of the trace",
            RankSource::FileName => "the trace file name",
            RankSource::Order => {
                "the order of the traces (no distributedInfo in the head, no rank in the name)"
            }
            RankSource::Unknown => "nowhere",
        }
    }
}

/// Where the role came from (ascend-memory.md §3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RoleSource {
    /// `profiler_metadata.json` top-level `role` (truthy).
    Metadata,
    /// The name of the folder that contains the capture folder.
    ParentFolder,
    /// Neither is known: the role is `unknown`.
    Unknown,
}

/// Returns the capture kind if a path segment names a capture folder:
/// ends with the literal `ascend_pt` (no underscore required, §2.1) or `ascend_ms` (§2.2).
pub fn capture_kind(segment: &str) -> Option<CaptureKind> {
    if segment.ends_with("ascend_pt") {
        Some(CaptureKind::AscendPt)
    } else if segment.ends_with("ascend_ms") {
        Some(CaptureKind::AscendMs)
    } else {
        None
    }
}

/// Parity rank id from a file name (upstream `_get_rank_id`, §3.1): the name must start with
/// `profiler_info_` and end with `.json`; the text between is read as Python `int()` does
/// (surrounding whitespace, optional sign, `_` between digits). `None` = not an integer.
pub fn rank_from_info_file_name(name: &str) -> Option<i64> {
    let mid = name.strip_prefix("profiler_info_")?.strip_suffix(".json")?;
    python_int(mid)
}

/// Python `int(str)` for base 10: trims whitespace, optional sign, digits with single `_`
/// separators between digits. Values that do not fit in i64 are `None`.
pub fn python_int(s: &str) -> Option<i64> {
    let s = s.trim();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || digits.starts_with('_') || digits.ends_with('_') {
        return None;
    }
    let mut v: i64 = 0;
    let mut prev_underscore = false;
    for c in digits.chars() {
        if c == '_' {
            if prev_underscore {
                return None;
            }
            prev_underscore = true;
            continue;
        }
        prev_underscore = false;
        let d = c.to_digit(10)? as i64;
        v = v.checked_mul(10)?.checked_add(d)?;
    }
    Some(if neg { -v } else { v })
}

/// A `rank<N>`, `rank_<N>` or `rank-<N>` token in a folder name (§3.1 priority 3),
/// case-insensitive; the token must not be preceded by a letter (`frank3` does not count).
pub fn rank_from_folder_name(name: &str) -> Option<i64> {
    let lower = name.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut from = 0;
    while let Some(p) = lower[from..].find("rank") {
        let at = from + p;
        from = at + 4;
        if at > 0 && b[at - 1].is_ascii_alphabetic() {
            continue;
        }
        let mut i = at + 4;
        if i < b.len() && (b[i] == b'_' || b[i] == b'-') {
            i += 1;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i > start {
            if let Ok(v) = lower[start..i].parse::<i64>() {
                return Some(v);
            }
        }
    }
    None
}

/// The parity ordering key of a capture folder's base name (upstream `_extract_timestamp_key`,
/// §3.2): split on `_`; ≥ 4 parts → parts `[-4:-2]` joined by `_`; exactly 3 → part `[-3]`;
/// otherwise the whole name.
///
/// `20260526_085155_ascend_pt` → `20260526_085155`; `rank0_ascend_pt` → `rank0`.
pub fn timestamp_key(base: &str) -> String {
    let parts: Vec<&str> = base.split('_').collect();
    let n = parts.len();
    if n >= 4 {
        format!("{}_{}", parts[n - 4], parts[n - 3])
    } else if n == 3 {
        parts[0].to_string()
    } else {
        base.to_string()
    }
}

/// The facts about one capture folder that the rank/role rules need.
#[derive(Clone, Debug, Default)]
pub struct RankFacts {
    /// Base name of the capture folder (empty for loose files).
    pub folder_name: String,
    /// Names of the `profiler_info*.json` files directly inside, sorted lexicographically.
    pub info_files: Vec<String>,
    /// `rank_id` field read from the chosen `profiler_info*.json`, once side files are read.
    pub info_rank_field: Option<i64>,
    /// Truthy top-level `role` of `profiler_metadata.json`, once side files are read.
    pub metadata_role: Option<String>,
    /// Name of the folder containing the capture folder, when the drop shows it.
    pub parent_name: Option<String>,
}

/// A resolved rank id with its source and the notes to report.
#[derive(Clone, Debug, PartialEq)]
pub struct RankDecision {
    /// The rank id, `None` when it cannot be determined.
    pub rank_id: Option<i64>,
    /// Where it came from.
    pub source: RankSource,
    /// `rank id mismatch` detail (file name vs field), when both exist and disagree.
    pub mismatch: Option<(i64, i64)>,
    /// The chosen `profiler_info` file when there were several (`MEM-DISC-004`).
    pub several_info_files: Option<String>,
}

/// Default-mode rank id (§3.1 table): file name → `rank_id` field → folder-name token →
/// `0` when `single_candidate` → unknown. Negative ids from the file name are not accepted.
pub fn resolve_rank(f: &RankFacts, single_candidate: bool) -> RankDecision {
    let mut several = None;
    let named: Vec<&String> = f
        .info_files
        .iter()
        .filter(|n| n.starts_with("profiler_info_") && n.ends_with(".json"))
        .collect();
    if named.len() > 1 {
        several = named.first().map(|s| s.to_string());
    }
    let from_name = named
        .first()
        .and_then(|n| rank_from_info_file_name(n))
        .filter(|r| *r >= 0);
    let from_field = f.info_rank_field.filter(|r| *r >= 0);
    if let Some(r) = from_name {
        let mismatch = from_field.filter(|b| *b != r).map(|b| (r, b));
        return RankDecision {
            rank_id: Some(r),
            source: RankSource::InfoFileName,
            mismatch,
            several_info_files: several,
        };
    }
    let (rank_id, source) = if let Some(r) = from_field {
        (Some(r), RankSource::InfoField)
    } else if let Some(r) = rank_from_folder_name(&f.folder_name) {
        (Some(r), RankSource::FolderName)
    } else if single_candidate {
        (Some(0), RankSource::SingleFolder)
    } else {
        (None, RankSource::Unknown)
    };
    RankDecision {
        rank_id,
        source,
        mismatch: None,
        several_info_files: several,
    }
}

/// Role by §3.3: a truthy metadata `role`, else the parent folder name, else `unknown`.
pub fn resolve_role(f: &RankFacts) -> (String, RoleSource) {
    if let Some(r) = f.metadata_role.as_ref().filter(|r| !r.is_empty()) {
        return (r.clone(), RoleSource::Metadata);
    }
    match f.parent_name.as_ref().filter(|p| !p.is_empty()) {
        Some(p) => (p.clone(), RoleSource::ParentFolder),
        None => ("unknown".to_string(), RoleSource::Unknown),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_keys_of_the_spec_table() {
        assert_eq!(
            timestamp_key("20260526_085155_ascend_pt"),
            "20260526_085155"
        );
        assert_eq!(
            timestamp_key("host_1234_20250101120000123_ascend_pt"),
            "1234_20250101120000123"
        );
        assert_eq!(timestamp_key("x_ascend_pt"), "x");
        assert_eq!(timestamp_key("xxx_ascend_pt"), "xxx");
        assert_eq!(timestamp_key("rank0_ascend_pt"), "rank0");
        assert_eq!(timestamp_key("fooascend_pt"), "fooascend_pt");
    }

    #[test]
    fn timestamp_key_sort_order() {
        // upstream test: keys compare as plain strings
        let mut names = vec![
            "w_2_20250101120000200_ascend_pt",
            "w_1_20250101120000300_ascend_pt",
            "w_1_20250101120000100_ascend_pt",
        ];
        names.sort_by_key(|n| timestamp_key(n));
        assert_eq!(
            names,
            [
                "w_1_20250101120000100_ascend_pt",
                "w_1_20250101120000300_ascend_pt",
                "w_2_20250101120000200_ascend_pt"
            ]
        );
    }

    #[test]
    fn info_file_names() {
        assert_eq!(rank_from_info_file_name("profiler_info_0.json"), Some(0));
        assert_eq!(rank_from_info_file_name("profiler_info_15.json"), Some(15));
        assert_eq!(rank_from_info_file_name("profiler_info_1_0.json"), Some(10));
        assert_eq!(rank_from_info_file_name("profiler_info.json"), None);
        assert_eq!(rank_from_info_file_name("profiler_info_x.json"), None);
        assert_eq!(rank_from_info_file_name("profiler_info_-1.json"), Some(-1));
    }

    #[test]
    fn folder_tokens() {
        assert_eq!(rank_from_folder_name("rank_3_ascend_pt"), Some(3));
        assert_eq!(rank_from_folder_name("rank0_ascend_pt"), Some(0));
        assert_eq!(rank_from_folder_name("Rank-12_ascend_pt"), Some(12));
        assert_eq!(rank_from_folder_name("frank3_ascend_pt"), None);
        assert_eq!(rank_from_folder_name("20260526_085155_ascend_pt"), None);
    }

    #[test]
    fn rank_priorities_and_mismatch() {
        let mut f = RankFacts {
            folder_name: "rank_3_ascend_pt".into(),
            ..Default::default()
        };
        assert_eq!(resolve_rank(&f, false).rank_id, Some(3));
        assert_eq!(resolve_rank(&f, false).source, RankSource::FolderName);
        f.info_rank_field = Some(5);
        assert_eq!(resolve_rank(&f, false).source, RankSource::InfoField);
        f.info_files = vec!["profiler_info_2.json".into(), "profiler_info_7.json".into()];
        let d = resolve_rank(&f, false);
        assert_eq!(d.rank_id, Some(2));
        assert_eq!(d.mismatch, Some((2, 5)));
        assert_eq!(
            d.several_info_files.as_deref(),
            Some("profiler_info_2.json")
        );
        let g = RankFacts {
            folder_name: "x_ascend_pt".into(),
            ..Default::default()
        };
        assert_eq!(resolve_rank(&g, true).rank_id, Some(0));
        assert_eq!(resolve_rank(&g, false).rank_id, None);
    }

    #[test]
    fn roles() {
        let mut f = RankFacts {
            parent_name: Some("actor_update".into()),
            ..Default::default()
        };
        assert_eq!(
            resolve_role(&f),
            ("actor_update".to_string(), RoleSource::ParentFolder)
        );
        f.metadata_role = Some("rollout".into());
        assert_eq!(resolve_role(&f).1, RoleSource::Metadata);
        assert_eq!(resolve_role(&RankFacts::default()).0, "unknown");
    }
}
