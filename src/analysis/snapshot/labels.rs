//! The words of the snapshot report (torch-snapshot.md §7.5 sites, §7.7 tree labels, §7.8
//! display paths and links, §7.9 layout names): point kinds, origins, site kinds, stack kinds,
//! frame and site labels. One module, named by both the exports (`report::snapshot_json`,
//! `report::snapshot_md`, `report::snapshot_diff`) and the snapshot tab (`views::snapshot`), so
//! the page reads exactly as the exports. Plain text only (no serde: `analysis` never names it).

use crate::model::snapshot::{FrameId, Snapshot, TopLevel};

use super::attribution::{Contributor, Origin, SiteKind};
use super::device::PointKind;
use super::lifetimes::StackKind;
use super::links::LinkOptions;

/// The note every report carries (§4 item 9).
pub const INVISIBLE_MEMORY_NOTE: &str = "Memory outside the caching allocator (NCCL/HCCL buffers, library workspaces, \
the CUDA/NPU context) does not appear in a snapshot. Trace sizes are requested bytes, slightly below \
max_memory_allocated() (rounded blocks).";

/// The label of a prefix tree's root (§7.7).
pub const TREE_ROOT: &str = "<root>";
/// The label of a prefix-tree node without a Python frame (§7.7).
pub const TREE_NON_PYTHON: &str = "<non-python>";

/// Snake-case name of a point kind (§7.9).
pub fn point_kind_name(k: PointKind) -> &'static str {
    match k {
        PointKind::GlobalPeak => "global_peak",
        PointKind::Peak => "peak",
        PointKind::Oom => "oom",
        PointKind::End => "end",
    }
}

/// Snake-case name of an origin (§7.5 PRE buckets).
pub fn origin_name(o: Origin) -> &'static str {
    match o {
        Origin::InWindow => "in_window",
        Origin::PreKnownStack => "pre_known_stack",
        Origin::PreNoStack => "pre_no_stack",
    }
}

/// Snake-case name of a site kind (§7.5).
pub fn site_kind_name(k: SiteKind) -> &'static str {
    match k {
        SiteKind::Project => "project",
        SiteKind::Python => "python",
        SiteKind::Named => "named",
        SiteKind::NoStack => "no_stack",
    }
}

/// Snake-case name of a stack kind (§7.2: which stack a record carries).
pub fn stack_kind_name(k: StackKind) -> &'static str {
    match k {
        StackKind::Alloc => "alloc",
        StackKind::FreeSite => "free_site",
        StackKind::Block => "block",
        StackKind::None => "none",
    }
}

/// The top-level shape of the file (§3.10).
pub fn top_level_name(t: TopLevel) -> &'static str {
    match t {
        TopLevel::Dict => "dict",
        TopLevel::SegmentsList => "list (segments only)",
    }
}

/// The format features present (§5.3), in report order, as the page lists them.
pub fn feature_names(snap: &Snapshot) -> Vec<&'static str> {
    let f = &snap.features;
    [
        (f.has_time_us, "time_us"),
        (f.has_history, "legacy history"),
        (f.has_annotations, "annotations"),
        (f.has_compile_context, "compile_context"),
        (f.has_user_metadata, "user_metadata"),
        (f.has_fx_frames, "FX frames"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

/// A contributor's share of a point of `height` bytes, in percent (0 when `height` ≤ 0).
pub fn percent_of_point(c: &Contributor, height: i64) -> f64 {
    if height > 0 {
        c.bytes as f64 * 100.0 / height as f64
    } else {
        0.0
    }
}

/// Labels of frames and sites for one snapshot under the current link options (§7.8).
pub struct Labeler<'a> {
    /// The snapshot (pools).
    pub snap: &'a Snapshot,
    /// Link options.
    pub links: &'a LinkOptions,
}

/// A contributor's site as its parts: display path, line and function (`None` without a site).
pub type SiteParts = (Option<String>, Option<u32>, Option<String>);

impl Labeler<'_> {
    /// `function @ path:line` of a frame.
    pub fn frame(&self, f: FrameId) -> String {
        let (file, line, name) = self.snap.pools.frame_text(f);
        format!("{name} @ {}:{line}", self.links.display(file))
    }

    /// The link of a frame (`None` for style `none`, pseudo-files, `??`).
    pub fn frame_link(&self, f: FrameId) -> Option<String> {
        let (file, line, _) = self.snap.pools.frame_text(f);
        self.links.link(file, line)
    }

    /// Site label of a contributor (§7.5; PRE records say "allocated before recording").
    pub fn site(&self, c: &Contributor) -> String {
        let base = match c.site {
            Some(f) => self.frame(f),
            None => "<no stack>".to_string(),
        };
        match c.origin {
            Origin::InWindow => base,
            Origin::PreKnownStack if c.kind == SiteKind::NoStack => {
                "allocated before recording, no stack".into()
            }
            Origin::PreKnownStack => format!("{base} (allocated before recording)"),
            Origin::PreNoStack => "allocated before recording, no stack".into(),
        }
    }

    /// Link of a contributor's site.
    pub fn link(&self, c: &Contributor) -> Option<String> {
        self.frame_link(c.site?)
    }

    /// The display path, line and function of a contributor's site.
    pub fn site_parts(&self, c: &Contributor) -> SiteParts {
        match c.site {
            Some(f) => {
                let (file, line, name) = self.snap.pools.frame_text(f);
                (
                    Some(self.links.display(file)),
                    Some(line),
                    Some(name.to_string()),
                )
            }
            None => (None, None, None),
        }
    }

    /// The label of a prefix-tree node at `depth` with `frame` (§7.7).
    pub fn tree_node(&self, depth: u32, frame: Option<FrameId>) -> String {
        match (depth, frame) {
            (0, _) => TREE_ROOT.into(),
            (_, Some(f)) => self.frame(f),
            (_, None) => TREE_NON_PYTHON.into(),
        }
    }
}
