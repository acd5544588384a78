//! Attribution of live memory to sites, call chains and a prefix tree (torch-snapshot.md §7.5, §7.7).
//!
//! The **site** of a record is the first frame of its stack (innermost first)
//! that passes the MemoryViz filter, is a `.py` file and satisfies the project
//! rule; fallbacks: the first Python frame, the named frame that names the operation
//! (autograd node, then ATen operator, never the caching allocator's own frames when another
//! is named), `<no stack>`.
//! Sites are computed once per distinct stack (stacks are interned).

use rustc_hash::FxHashMap;
use rustc_hash::FxHashMap as HashMap;

use crate::model::snapshot::{FrameId, SnapPools, StackId, NO_STACK};

use super::frame_filter::{is_python, memoryviz_hidden, native_site_rank, ProjectRule};
use super::lifetimes::{Lifetimes, StackKind};

/// How a site was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SiteKind {
    /// A project frame (the rule of §7.5).
    Project,
    /// Fallback 1: the first Python frame.
    Python,
    /// Fallback 2: a named frame (an autograd node, an ATen operator, then any frame; §7.5).
    Named,
    /// No usable frame.
    NoStack,
}

/// Site and call chain of one stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteInfo {
    /// The site frame, if any.
    pub site: Option<FrameId>,
    /// How it was found.
    pub kind: SiteKind,
    /// The first 5 project frames, innermost first (the "call chain").
    pub chain: Vec<FrameId>,
}

/// Computes and caches [`SiteInfo`] per stack.
pub struct Attributor<'a> {
    pools: &'a SnapPools,
    rule: &'a ProjectRule,
    root: Option<String>,
    cache: HashMap<StackId, SiteInfo>,
    project: HashMap<FrameId, bool>,
}

/// Chain length of §7.5.
pub const CHAIN_LEN: usize = 5;

impl<'a> Attributor<'a> {
    /// A new attributor over `pools` with `rule`.
    pub fn new(pools: &'a SnapPools, rule: &'a ProjectRule) -> Self {
        Attributor {
            pools,
            rule,
            root: None,
            cache: HashMap::default(),
            project: HashMap::default(),
        }
    }

    /// Restricts project frames to those under `root` (`--project-root`; `\\` → `/`).
    pub fn with_root(mut self, root: Option<&str>) -> Self {
        self.root = root
            .map(|r| r.replace('\\', "/").trim_end_matches('/').to_string() + "/")
            .filter(|r| r.len() > 1);
        self
    }

    /// The pools.
    pub fn pools(&self) -> &'a SnapPools {
        self.pools
    }

    /// True when frame `f` passes the MemoryViz filter, is Python and is project code.
    pub fn is_project_frame(&mut self, f: FrameId) -> bool {
        if let Some(&b) = self.project.get(&f) {
            return b;
        }
        let (file, _, name) = self.pools.frame_text(f);
        let under_root = match &self.root {
            Some(r) => file.replace('\\', "/").starts_with(r.as_str()),
            None => true,
        };
        let b = !memoryviz_hidden(name, file)
            && is_python(file)
            && under_root
            && self.rule.is_user_path(file);
        self.project.insert(f, b);
        b
    }

    /// Site of `stack` (cached).
    pub fn site(&mut self, stack: StackId) -> SiteInfo {
        if let Some(s) = self.cache.get(&stack) {
            return s.clone();
        }
        let frames = if stack == NO_STACK {
            &[][..]
        } else {
            self.pools.stacks.get(stack)
        };
        let chain: Vec<FrameId> = frames
            .iter()
            .copied()
            .filter(|&f| self.is_project_frame(f))
            .take(CHAIN_LEN)
            .collect();
        let visible = |f: &FrameId| {
            let (file, _, name) = self.pools.frame_text(*f);
            !memoryviz_hidden(name, file)
        };
        let info = if let Some(&f) = chain.first() {
            SiteInfo {
                site: Some(f),
                kind: SiteKind::Project,
                chain: chain.clone(),
            }
        } else if let Some(&f) = frames
            .iter()
            .filter(|f| visible(f))
            .find(|f| is_python(self.pools.frame_text(**f).0))
        {
            SiteInfo {
                site: Some(f),
                kind: SiteKind::Python,
                chain: vec![f],
            }
        } else if let Some(&f) = frames
            .iter()
            .filter(|f| visible(f))
            .filter(|f| !self.pools.frame_text(**f).2.is_empty())
            .min_by_key(|f| native_site_rank(self.pools.frame_text(**f).2))
        {
            SiteInfo {
                site: Some(f),
                kind: SiteKind::Named,
                chain: vec![f],
            }
        } else {
            SiteInfo {
                site: None,
                kind: SiteKind::NoStack,
                chain: Vec::new(),
            }
        };
        self.cache.insert(stack, info.clone());
        info
    }
}

/// Where a group of live records comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// Allocated inside the window.
    InWindow,
    /// Allocated before recording; stack known (end block or free site).
    PreKnownStack,
    /// Allocated before recording; no stack.
    PreNoStack,
}

/// Bytes held by one site (or one k-frame chain) at one point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contributor {
    /// Site frame (None: `<no stack>`).
    pub site: Option<FrameId>,
    /// How the site was found.
    pub kind: SiteKind,
    /// Origin of the records.
    pub origin: Origin,
    /// Grouping key frames (the site alone, or the k-frame chain).
    pub key: Vec<FrameId>,
    /// Call chain of the largest record (first 5 project frames, innermost first).
    pub chain: Vec<FrameId>,
    /// Requested bytes.
    pub bytes: u64,
    /// Number of live records (tensors).
    pub tensors: u64,
    /// Earliest alloc index among its in-window records.
    pub first_alloc_idx: Option<u32>,
    /// Stack kind of the largest record.
    pub stack_kind: StackKind,
}

/// Groups `live` records by site (`k == 0`) or by their first `k` project frames,
/// separately for in-window and PRE records; sorted by bytes (descending), then key.
pub fn contributors(
    lt: &Lifetimes,
    live: &[u32],
    attr: &mut Attributor<'_>,
    k: usize,
) -> Vec<Contributor> {
    let mut groups: HashMap<(Origin, Vec<FrameId>, bool), (Contributor, u64)> = HashMap::default();
    for &r in live {
        let r = r as usize;
        let info = attr.site(lt.stack[r]);
        let origin = if !lt.is_pre(r) {
            Origin::InWindow
        } else if lt.stack_kind[r] == StackKind::None {
            Origin::PreNoStack
        } else {
            Origin::PreKnownStack
        };
        let key: Vec<FrameId> = if k == 0 {
            info.site.into_iter().collect()
        } else if info.kind == SiteKind::Project {
            info.chain.iter().copied().take(k).collect()
        } else {
            info.site.into_iter().collect()
        };
        let size = lt.size[r];
        let first = (!lt.is_pre(r)).then_some(lt.alloc_idx[r]);
        let e = groups
            .entry((origin, key.clone(), info.site.is_none()))
            .or_insert_with(|| {
                (
                    Contributor {
                        site: info.site,
                        kind: info.kind,
                        origin,
                        key,
                        chain: info.chain.clone(),
                        bytes: 0,
                        tensors: 0,
                        first_alloc_idx: None,
                        stack_kind: lt.stack_kind[r],
                    },
                    0,
                )
            });
        e.0.bytes += size;
        e.0.tensors += 1;
        e.0.first_alloc_idx = match (e.0.first_alloc_idx, first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if size > e.1 {
            e.1 = size;
            e.0.chain = info.chain.clone();
            e.0.stack_kind = lt.stack_kind[r];
        }
    }
    let mut v: Vec<Contributor> = groups.into_values().map(|(c, _)| c).collect();
    crate::base::sort::sort_by(&mut v, |a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(a.origin.cmp(&b.origin))
            .then(a.key.cmp(&b.key))
    });
    v
}

/// One node of the live-bytes prefix tree (§7.7). Node 0 is the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeNode {
    /// Frame of this level (None: root or `<non-python>`).
    pub frame: Option<FrameId>,
    /// Parent node (root: itself).
    pub parent: u32,
    /// Bytes of the records below this node.
    pub bytes: u64,
    /// Records below this node.
    pub tensors: u64,
    /// Depth (root 0).
    pub depth: u32,
}

/// Builds the prefix tree of `live` records: root = outermost frame, one level per
/// visible Python frame, `<non-python>` (frame `None` at depth 1) for records without any.
///
/// Nodes are numbered in the order their first record reaches them (records in `live`
/// order). Records are first summed per stack (one pass, no hashing of frames), then each
/// distinct stack walks the tree once: the cost is O(live + stacks × depth), not
/// O(live × depth).
pub fn prefix_tree(lt: &Lifetimes, live: &[u32], pools: &SnapPools) -> Vec<TreeNode> {
    // Per distinct stack, in first-appearance order: (stack, bytes, records).
    let mut per_stack: Vec<(StackId, u64, u64)> = Vec::new();
    let mut slot_of: FxHashMap<StackId, usize> = FxHashMap::default();
    let mut total = (0u64, 0u64);
    for &r in live {
        let r = r as usize;
        let (stack, size) = (lt.stack[r], lt.size[r]);
        let i = *slot_of.entry(stack).or_insert_with(|| {
            per_stack.push((stack, 0, 0));
            per_stack.len() - 1
        });
        per_stack[i].1 += size;
        per_stack[i].2 += 1;
        total.0 += size;
        total.1 += 1;
    }
    let mut nodes = vec![TreeNode {
        frame: None,
        parent: 0,
        bytes: total.0,
        tensors: total.1,
        depth: 0,
    }];
    let mut children: FxHashMap<(u32, Option<FrameId>), u32> = FxHashMap::default();
    let mut levels: Vec<Option<FrameId>> = Vec::new();
    // Whether a frame is shown (a visible Python frame), tested once per frame id.
    let mut shown_cache: FxHashMap<FrameId, bool> = FxHashMap::default();
    let mut shown = |f: FrameId| {
        *shown_cache.entry(f).or_insert_with(|| {
            let (file, _, name) = pools.frame_text(f);
            !memoryviz_hidden(name, file) && is_python(file)
        })
    };
    for (stack, bytes, tensors) in per_stack {
        let frames = if stack == NO_STACK {
            &[][..]
        } else {
            pools.stacks.get(stack)
        };
        levels.clear();
        levels.extend(frames.iter().rev().copied().filter(|&f| shown(f)).map(Some));
        if levels.is_empty() {
            levels.push(None);
        }
        let mut cur = 0u32;
        for &f in &levels {
            let depth = nodes[cur as usize].depth + 1;
            let next = *children.entry((cur, f)).or_insert_with(|| {
                nodes.push(TreeNode {
                    frame: f,
                    parent: cur,
                    bytes: 0,
                    tensors: 0,
                    depth,
                });
                (nodes.len() - 1) as u32
            });
            nodes[next as usize].bytes += bytes;
            nodes[next as usize].tensors += tensors;
            cur = next;
        }
    }
    nodes
}
