//! What is live after any entry (torch-snapshot.md §7.6), attributed (§7.5) and laid out as an
//! icicle (§7.7); one record's stack. Labels and links come from
//! [`crate::analysis::snapshot::labels`] (the exports' [`Labeler`]) and
//! [`crate::analysis::snapshot::links`], so they read as in the exports.
//!
//! Cost per query: one pass over the lifetime table (`live_sets` with one point:
//! O(records)), then O(|live| log |live|) for the sort and the groups. Measured on a
//! 1.5M-entry generated snapshot with `examples/snapshot_bench --views` (see ARCHITECTURE.md).

use rustc_hash::FxHashMap as HashMap;

use crate::analysis::snapshot::attribution::{
    contributors, prefix_tree, Attributor, Contributor, TreeNode,
};
use crate::analysis::snapshot::device::{annotation_spans, open_at};
use crate::analysis::snapshot::frame_filter::{is_python, memoryviz_hidden};
use crate::analysis::snapshot::labels::{
    origin_name, percent_of_point, site_kind_name, stack_kind_name, Labeler, TREE_NON_PYTHON,
    TREE_ROOT,
};
use crate::analysis::snapshot::lifetimes::{Lifetimes, Semantics};
use crate::analysis::snapshot::live::{bytes_of, live_sets};
use crate::base::format::bytes_exact;
use crate::base::sort::u64_key;
use crate::model::snapshot::{FrameId, NO_STACK};
use crate::protocol::snapshot::{
    SnapContributorDto, SnapFrameDto, SnapLiveDto, SnapLiveQuery, SnapStackDto, SnapTensorDto,
    SnapTreeNodeDto,
};

use super::{rel_ms, trace, SnapshotData};

/// Icicle nodes narrower than this fraction of the root are folded into their parent.
pub const TREE_MIN_FRACTION: f64 = 0.001;
/// At most this many icicle nodes are sent.
pub const TREE_MAX_NODES: usize = 4000;

/// Display helpers bound to one snapshot and the current settings.
pub struct Frames<'a> {
    labeler: Labeler<'a>,
    attr: Attributor<'a>,
    /// [`memoryviz_hidden`] by frame, computed once per frame (a live view names the same
    /// few hundred frames thousands of times).
    hidden: rustc_hash::FxHashMap<FrameId, bool>,
}

impl<'a> Frames<'a> {
    /// Helpers over `data`'s snapshot with its settings.
    pub fn new(data: &SnapshotData<'a>) -> Self {
        Frames {
            labeler: data.labeler(),
            attr: Attributor::new(&data.snap.pools, &data.analysis.rule)
                .with_root(data.analysis.project_root.as_deref()),
            hidden: Default::default(),
        }
    }

    /// One frame with its label, link and classification.
    pub fn frame(&mut self, f: FrameId) -> SnapFrameDto {
        let (file, _, name) = self.labeler.snap.pools.frame_text(f);
        SnapFrameDto {
            label: self.labeler.frame(f),
            link: self.labeler.frame_link(f),
            hidden: *self
                .hidden
                .entry(f)
                .or_insert_with(|| memoryviz_hidden(name, file)),
            native: is_native(file),
            project: self.attr.is_project_frame(f),
        }
    }

    /// A contributor group as a payload; `height` is the point's height (for the percentage).
    pub fn contributor(&mut self, c: &Contributor, height: i64) -> SnapContributorDto {
        SnapContributorDto {
            site: self.labeler.site(c),
            link: self.labeler.link(c),
            site_kind: site_kind_name(c.kind).to_string(),
            origin: origin_name(c.origin).to_string(),
            bytes: c.bytes,
            percent: percent_of_point(c, height),
            tensors: c.tensors,
            first_alloc_index: c.first_alloc_idx,
            chain: c.chain.iter().map(|&f| self.frame(f)).collect(),
        }
    }

    /// The site label of record `r` of `lt` alone (the tensor list's, a band's, a block's).
    pub fn record_site(&mut self, lt: &Lifetimes, r: u32) -> String {
        let c = contributors_of_one(lt, r, &mut self.attr);
        self.labeler.site(&c)
    }

    /// The attributor (sites per stack, cached).
    pub fn attributor(&mut self) -> &mut Attributor<'a> {
        &mut self.attr
    }
}

impl SnapshotData<'_> {
    /// The live set after the entry at `q.x` on `q.axis` (Index: that entry; Time: the last
    /// entry at or before that time), with contributors, the `q.limit` largest tensors and
    /// the icicle. Active semantics (a block is live until `free_completed`), as the report.
    ///
    /// # Errors
    ///
    /// Unknown device slot, or a device without trace entries.
    pub fn live_at(&self, q: &SnapLiveQuery) -> Result<SnapLiveDto, String> {
        let (d, axis, _) = self.device_on(q.slot, q.axis)?;
        let lt = &d.lifetimes;
        let t = trace(self.snap, d);
        // A device without trace entries has only its end state: every record is live there.
        let (index, live) = match t {
            Some(_) => {
                let index = axis
                    .entry_at(q.x)
                    .ok_or_else(|| format!("device {} has no trace entries", d.device))?;
                let live = live_sets(lt, &[index], Semantics::Active)
                    .pop()
                    .unwrap_or_default();
                (index, live)
            }
            None => (0, (0..lt.len() as u32).collect::<Vec<u32>>()),
        };
        let empty = crate::model::snapshot::EntryTable::default();
        let e = t.map(|t| &t.entries).unwrap_or(&empty);
        let first_us = e.first_time_us();
        let level = |v: &[i64], base: i64| v.get(index).copied().unwrap_or(base);
        let c = &d.curves;
        let (allocated, active, reserved) = (
            level(&c.allocated, c.baseline_allocated),
            level(&c.active, c.baseline_active),
            level(&c.reserved, c.baseline_reserved),
        );
        let mut fr = Frames::new(self);
        let height = match self.analysis.curve {
            crate::analysis::snapshot::curves::CurveKind::Allocated => allocated,
            crate::analysis::snapshot::curves::CurveKind::Active => active,
            crate::analysis::snapshot::curves::CurveKind::Reserved => reserved,
        };
        let groups = contributors(lt, &live, fr.attributor(), self.analysis.frame_depth);
        let top = self.top;
        let more = groups.get(top..).unwrap_or(&[]);
        let more_sites = (more.len() as u64, more.iter().map(|c| c.bytes).sum());
        let contributors = groups
            .iter()
            .take(top)
            .map(|c| fr.contributor(c, height))
            .collect();
        let mut order = live.clone();
        // Largest first, then by record.
        crate::base::sort::sort_by_i64_pair(&mut order, |r| {
            (!u64_key(lt.size[r as usize]), r as i64)
        });
        let tensors = order
            .iter()
            .take(q.limit as usize)
            .map(|&r| {
                let ru = r as usize;
                let c = contributors_of_one(lt, r, fr.attributor());
                let alloc_index = (!lt.is_pre(ru)).then_some(lt.alloc_idx[ru]);
                SnapTensorDto {
                    record: r,
                    bytes: lt.size[ru],
                    addr: format!("0x{:x}", lt.addr[ru]),
                    memoryviz_name: format!("b'{:x}_{}'", lt.addr[ru], lt.version[ru]),
                    alloc_index,
                    alloc_time_ms: alloc_index
                        .and_then(|i| rel_ms(first_us, e.time_us(i as usize))),
                    site: fr.labeler.site(&c),
                    link: fr.labeler.link(&c),
                    stack_kind: stack_kind_name(lt.stack_kind[ru]).to_string(),
                }
            })
            .collect();
        let snap = self.snap;
        let nodes = prefix_tree(lt, &live, &snap.pools);
        let tree = layout(&nodes, &mut fr);
        let stream = e
            .stream_values()
            .get(e.stream().get(index).copied().unwrap_or(0) as usize)
            .copied()
            .unwrap_or(0);
        let entry = match e.action().get(index) {
            Some(a) => format!(
                "{} {} at 0x{:x} (stream {stream})",
                a.name(),
                bytes_exact(e.size().get(index).copied().unwrap_or(0) as i64),
                e.addr().get(index).copied().unwrap_or(0),
            ),
            None => "end state (the snapshot has no trace for this device)".to_string(),
        };
        let annotations = match e.time_us(index) {
            Some(tu) => open_at(&annotation_spans(snap, d.device), tu, snap),
            None => Vec::new(),
        };
        Ok(SnapLiveDto {
            target: self.target,
            slot: q.slot,
            index: index as u32,
            time_ms: rel_ms(first_us, e.time_us(index)),
            entry,
            allocated_bytes: allocated,
            active_bytes: active,
            reserved_bytes: reserved,
            annotations,
            live_bytes: bytes_of(lt, &live),
            live_tensors: live.len() as u64,
            tensors,
            contributors,
            more_sites,
            tree,
        })
    }

    /// The full stack of record `record` of device slot `slot`, innermost frame first.
    ///
    /// # Errors
    ///
    /// Unknown device slot or record.
    pub fn stack(&self, slot: u32, record: u32) -> Result<SnapStackDto, String> {
        let d = self.device(slot)?;
        let lt = &d.lifetimes;
        let r = record as usize;
        if r >= lt.len() {
            return Err(format!("device slot {slot} has no record {record}"));
        }
        let stack = lt.stack[r];
        let pools = &self.snap.pools;
        let frames: &[FrameId] = if stack == NO_STACK {
            &[]
        } else {
            pools.stacks.get(stack)
        };
        let mut fr = Frames::new(self);
        Ok(SnapStackDto {
            record,
            bytes: lt.size[r],
            addr: format!("0x{:x}", lt.addr[r]),
            memoryviz_name: format!("b'{:x}_{}'", lt.addr[r], lt.version[r]),
            stack_kind: stack_kind_name(lt.stack_kind[r]).to_string(),
            frames: frames.iter().map(|&f| fr.frame(f)).collect(),
        })
    }
}

/// True for a native (C++) frame of `file`: neither a Python source (`.py`) nor a `<…>`
/// pseudo-file (`<frozen runpy>`, `<string>`); C++ frames read `??` or a `.cpp`/`.h` path.
pub fn is_native(file: &str) -> bool {
    !is_python(file) && !file.starts_with('<')
}

/// The site group of one record (for the tensor list's site label and link).
pub fn contributors_of_one(lt: &Lifetimes, r: u32, attr: &mut Attributor<'_>) -> Contributor {
    let mut v = contributors(lt, &[r], attr, 0);
    v.swap_remove(0)
}

/// Lays out the prefix tree as an icicle: children of a node sorted by bytes (largest
/// left), each child's offset = parent offset + bytes of its left siblings. Nodes below
/// [`TREE_MIN_FRACTION`] of the root are dropped (their bytes stay in the parent's width),
/// and at most [`TREE_MAX_NODES`] nodes are kept, widest first by depth order.
pub fn layout(nodes: &[TreeNode], fr: &mut Frames<'_>) -> Vec<SnapTreeNodeDto> {
    let Some(root) = nodes.first() else {
        return Vec::new();
    };
    let min = (root.bytes as f64 * TREE_MIN_FRACTION).ceil() as u64;
    let mut children: HashMap<u32, Vec<u32>> = HashMap::default();
    for (i, n) in nodes.iter().enumerate().skip(1) {
        if n.bytes >= min.max(1) {
            children.entry(n.parent).or_default().push(i as u32);
        }
    }
    for v in children.values_mut() {
        // Largest first, then by node.
        crate::base::sort::sort_by_i64_pair(v, |i| (!u64_key(nodes[i as usize].bytes), i as i64));
    }
    let mut out = vec![SnapTreeNodeDto {
        parent: 0,
        depth: 0,
        label: TREE_ROOT.into(),
        link: None,
        offset: 0,
        bytes: root.bytes,
        tensors: root.tensors,
    }];
    // Breadth-first, so a cap drops the deepest, narrowest nodes first.
    let mut queue = std::collections::VecDeque::from([(0u32, 0u32, 0u64)]); // (node, out id, offset)
    while let Some((node, out_id, offset)) = queue.pop_front() {
        let mut x = offset;
        for &c in children.get(&node).map(|v| v.as_slice()).unwrap_or(&[]) {
            if out.len() >= TREE_MAX_NODES {
                break;
            }
            let n = &nodes[c as usize];
            let (label, link) = match n.frame {
                Some(f) => {
                    let f = fr.frame(f);
                    (f.label, f.link)
                }
                None => (TREE_NON_PYTHON.to_string(), None),
            };
            out.push(SnapTreeNodeDto {
                parent: out_id,
                depth: n.depth,
                label,
                link,
                offset: x,
                bytes: n.bytes,
                tensors: n.tensors,
            });
            queue.push_back((c, (out.len() - 1) as u32, x));
            x += n.bytes;
        }
    }
    out
}
