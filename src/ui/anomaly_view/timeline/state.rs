//! The state of one timeline ([`Tl`]): the shown ranks and their stacking, the view window,
//! the selection, the pointer and the search results, as signals (cheap to copy), with the
//! questions every part asks of them (where a rank's lane is shown, the current window, the
//! pixel ↔ time map).

use leptos::html::Canvas;
use leptos::prelude::*;

use super::detail::Sel;
use super::draw::{end_ms, Geom, XMap};
use crate::protocol::{StepBandDto, TimelineDto, TimelineFlowsDto, TimelineItemDto};
use crate::ui::state::AppState;
use crate::ui::widgets::zoom::PanDrag;
use crate::views::timeline_axis::clamp_view;
use crate::views::timeline_multi::{align, stack, Alignment, Part, Stacked};

/// Hover tooltip: position (CSS px) and lines.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Hover {
    pub x: f64,
    pub y: f64,
    pub lines: Vec<String>,
}

/// Search matches over the shown ranks: (rank, item in its rank's times), by shown start.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Matches {
    pub text: String,
    pub total: u64,
    pub items: Vec<(u32, TimelineItemDto)>,
}

/// The stacked timeline and, per part, its position in the shown ranks.
pub(super) type Shown = Option<(Stacked, Vec<usize>)>;

/// A request waiting for its rank's worker: (window in the rank's ms, width px).
pub(super) type Wish = (Option<(f64, f64)>, u32);

/// Every signal of one timeline.
#[derive(Clone, Copy)]
pub(super) struct Tl {
    pub state: AppState,
    pub canvas: NodeRef<Canvas>,
    /// Rank folder index (the reference rank when several are shown).
    pub rank: u32,
    /// Shown ranks: this one first (the reference), then every other rank with kernels.
    pub ranks: Memo<Vec<u32>>,
    /// Per shown rank: its last reply.
    pub parts: RwSignal<Vec<Option<TimelineDto>>>,
    /// Per shown rank: its steps (from its first, full-range reply).
    pub steps_of: RwSignal<Vec<Option<Vec<StepBandDto>>>>,
    /// Per shown rank: a request is in flight.
    pub busy: StoredValue<Vec<bool>>,
    /// Per shown rank: the request that waits for the one in flight.
    pub pending: StoredValue<Vec<Option<Wish>>>,
    /// Per shown rank: its shift onto the reference rank's times.
    pub aligns: Memo<Vec<Alignment>>,
    pub shown: Memo<Shown>,
    /// The stacked timeline as drawn.
    pub dto: Memo<Option<TimelineDto>>,
    /// Visible window (shown ms); None = everything.
    pub view: RwSignal<Option<(f64, f64)>>,
    /// The selected kernel or host event.
    pub item: RwSignal<Option<Sel>>,
    /// The selection's launch links (with its rank).
    pub flows: RwSignal<Option<(u32, TimelineFlowsDto)>>,
    pub hover: RwSignal<Option<Hover>>,
    pub error: RwSignal<Option<String>>,
    pub drag: StoredValue<Option<PanDrag>>,
    /// The time under the pointer (the keys zoom around it).
    pub last_t: StoredValue<Option<f64>>,
    pub frame_scheduled: StoredValue<bool>,
    pub draw_ms: RwSignal<f64>,
    /// `draw_ms` as the status line shows it: at most twice a second.
    pub draw_ms_shown: RwSignal<f64>,
    pub draw_ms_at: StoredValue<f64>,
    pub boxes_drawn: RwSignal<usize>,
    pub geom: RwSignal<Geom>,
    /// Dragging the gutter's edge: (x at down, label width at down).
    pub gutter_drag: StoredValue<Option<(f64, f64)>>,
    /// Dragging the resize handle: (client y at down, lane height at down).
    pub resize_drag: StoredValue<Option<(f64, f64)>>,
    pub found: RwSignal<Option<Matches>>,
    /// The current search match.
    pub cur: RwSignal<Option<usize>>,
}

impl Tl {
    /// The signals of the timeline of `rank` (`multi`: every analysed rank stacked, aligned on
    /// step `align_on`); binds the view to the URL hash and shows everything again when the
    /// mode or the step changes.
    pub fn new(rank: u32, multi: RwSignal<bool>, align_on: RwSignal<Option<String>>) -> Self {
        let state = expect_context::<AppState>();
        let canvas = NodeRef::<Canvas>::new();
        let ranks = Memo::new(move |_| {
            let mut v = vec![rank];
            if multi.get() {
                state.anomaly.with(|m| {
                    v.extend(
                        m.values()
                            .filter(|s| s.kernels > 0 && s.rank != rank)
                            .map(|s| s.rank),
                    )
                });
            }
            v
        });
        let parts = RwSignal::new(Vec::<Option<TimelineDto>>::new());
        let steps_of = RwSignal::new(Vec::<Option<Vec<StepBandDto>>>::new());
        let busy = StoredValue::new(Vec::<bool>::new());
        let pending = StoredValue::new(Vec::<Option<Wish>>::new());
        let aligns = Memo::new(move |_| {
            let n = ranks.with(|r| r.len());
            steps_of.with(|st| {
                let lists: Vec<&[StepBandDto]> = (0..n)
                    .map(|i| st.get(i).and_then(|o| o.as_deref()).unwrap_or(&[]))
                    .collect();
                align(&lists, align_on.get().as_deref())
            })
        });
        let shown: Memo<Shown> = Memo::new(move |_| {
            let rs = ranks.get();
            let al = aligns.get();
            let labels: Vec<String> = rs.iter().map(|&r| rank_label(state, r)).collect();
            parts.with(|ps| {
                let mut pos = Vec::new();
                let mut list = Vec::new();
                for (i, d) in ps.iter().enumerate() {
                    if let (Some(d), Some(label)) = (d, labels.get(i)) {
                        pos.push(i);
                        list.push(Part {
                            label,
                            dto: d,
                            offset_ms: al.get(i).map_or(0.0, |a| a.offset_ms),
                        });
                    }
                }
                stack(&list).map(|s| (s, pos))
            })
        });
        let dto = Memo::new(move |_| shown.with(|s| s.as_ref().map(|(s, _)| s.dto.clone())));

        let view = RwSignal::new(None::<(f64, f64)>);
        // Kept in the URL hash (`tl.x=rank:a,b`), so a reload + re-drop or a link restores it.
        crate::ui::route::use_route().bind_scoped(crate::ui::route::TL_X, rank, view);
        // Another mode or step shifts the shown times: show everything again.
        Effect::new(move |prev: Option<()>| {
            multi.track();
            align_on.track();
            if prev.is_some() {
                view.set(None);
            }
        });
        Tl {
            state,
            canvas,
            rank,
            ranks,
            parts,
            steps_of,
            busy,
            pending,
            aligns,
            shown,
            dto,
            view,
            item: RwSignal::new(None),
            flows: RwSignal::new(None),
            hover: RwSignal::new(None),
            error: RwSignal::new(None),
            drag: StoredValue::new(None),
            last_t: StoredValue::new(None),
            frame_scheduled: StoredValue::new(false),
            draw_ms: RwSignal::new(0.0),
            draw_ms_shown: RwSignal::new(0.0),
            draw_ms_at: StoredValue::new(f64::NEG_INFINITY),
            boxes_drawn: RwSignal::new(0),
            geom: RwSignal::new(Geom::default()),
            gutter_drag: StoredValue::new(None),
            resize_drag: StoredValue::new(None),
            found: RwSignal::new(None),
            cur: RwSignal::new(None),
        }
    }

    /// The other analysed ranks with kernels (the stacked mode's switch shows when there are).
    pub fn others(self) -> usize {
        self.state.anomaly.with(|m| {
            m.values()
                .filter(|s| s.kernels > 0 && s.rank != self.rank)
                .count()
        })
    }

    /// The lane-label prefix of rank folder `r`.
    pub fn rank_label(self, r: u32) -> String {
        rank_label(self.state, r)
    }

    /// The shift of shown rank `pos` onto the reference rank's times, ms.
    pub fn offset(self, pos: usize) -> f64 {
        self.aligns
            .with_untracked(|a| a.get(pos).map_or(0.0, |a| a.offset_ms))
    }

    /// Stacked lane → (rank, its lane id, its offset).
    pub fn lane_src(self, l: u32) -> Option<(u32, u32, f64)> {
        self.shown.with_untracked(|s| {
            let (st, pos) = s.as_ref()?;
            let &(p, lane) = st.lanes.get(l as usize)?;
            let pos = *pos.get(p)?;
            Some((
                self.ranks.with_untracked(|r| r[pos]),
                lane,
                self.offset(pos),
            ))
        })
    }

    /// (rank, its lane id, start, end in its ms) → (stacked lane, shown start, shown end).
    pub fn to_view(self, r: u32, lane: u32, s: f64, e: f64) -> Option<(u32, f64, f64)> {
        let pos = self
            .ranks
            .with_untracked(|v| v.iter().position(|&x| x == r))?;
        let off = self.offset(pos);
        self.shown.with_untracked(|st| {
            let (st, pp) = st.as_ref()?;
            let p = pp.iter().position(|&q| q == pos)?;
            Some((st.lane_of(p, lane)?, s - off, e - off))
        })
    }

    /// The full range of the shown timeline, ms.
    pub fn full(self) -> Option<(f64, f64)> {
        self.dto
            .with_untracked(|d| d.as_ref().map(|d| d.full_range_ms))
    }

    /// The window shown now (the full range when not zoomed).
    pub fn current(self) -> Option<(f64, f64)> {
        let full = self.full()?;
        Some(
            self.view
                .get_untracked()
                .map_or(full, |v| clamp_view(v, full)),
        )
    }

    /// The canvas width, CSS px (0 before it is mounted).
    pub fn width_of(self) -> f64 {
        self.canvas
            .get_untracked()
            .map(|c| c.client_width() as f64)
            .unwrap_or(0.0)
    }

    /// Shows window `v` (clamped; the full range is kept as `None`).
    pub fn set_view(self, v: (f64, f64)) {
        if let Some(full) = self.full() {
            let v = clamp_view(v, full);
            self.view.set(if v == full { None } else { Some(v) });
        }
    }

    /// Pixel ↔ time of the current window.
    pub fn xmap(self) -> Option<XMap> {
        self.current()
            .map(|v| XMap::new(v, self.width_of(), self.geom.get_untracked().label_w))
    }

    /// Selects `s` and centres the view on it (search steps, links in the detail panel).
    pub fn show(self, s: Sel) {
        let shown_span = self.to_view(s.rank, s.item.lane, s.item.start_ms, end_ms(&s.item));
        self.item.set(Some(s));
        if let (Some((_, a, b)), Some(v)) = (shown_span, self.current()) {
            let span = v.1 - v.0;
            let span = if b - a > span * 0.5 {
                (b - a) * 4.0
            } else {
                span
            };
            let c = (a + b) / 2.0;
            self.set_view((c - span / 2.0, c + span / 2.0));
        }
    }
}

/// The lane-label prefix of rank folder `r`: short, it goes before every lane label in a
/// 150 px gutter.
fn rank_label(state: AppState, r: u32) -> String {
    state.anomaly.with_untracked(|m| {
        m.get(&r).map_or_else(
            || format!("folder {r}"),
            |s| match s.rank_id {
                Some(id) => format!("rank {id}"),
                None => format!("folder {r}"),
            },
        )
    })
}
