//! One item of the timeline: the kernel or host event under the pointer
//! ([`TimelineIndex::item_at`]), the items whose name contains a text ([`TimelineIndex::search`]),
//! and an item's payload.

use super::{us_text, Items, TimelineIndex, TimelineSource};
use crate::model::trace_events::Lane as HostLane;
use crate::protocol::{LaneKind, TimelineItemDto, TimelineSearchDto};

impl TimelineIndex {
    /// The item of lane `lane` under the pointer at `t_ms` (relative): among items overlapping
    /// `[t − slop, t + slop]`, the shortest one containing `t`, else the nearest (ties: the
    /// earlier). `None` when the lane does not exist or nothing is that close.
    pub fn item_at(
        &self,
        src: TimelineSource<'_>,
        lane: u32,
        t_ms: f64,
        slop_ms: f64,
    ) -> Option<TimelineItemDto> {
        let l = self.lanes.get(lane as usize)?;
        let slop = (slop_ms.max(0.0) * 1e6).round() as i64;
        let t = self.abs_ns(t_ms);
        let r = l.spans.range(
            t.saturating_sub(slop),
            t.saturating_add(slop).saturating_add(1),
        );
        let mut best: Option<(i64, i64, u32)> = None; // (distance, length, item)
        for pos in r {
            let (s, e) = l.spans.span(pos);
            let i = l.items[pos];
            let dist = if t < s {
                s - t
            } else if t >= e {
                t - e + i64::from(e > s)
            } else {
                0
            };
            if dist > slop {
                continue;
            }
            let cand = (dist, e - s, i);
            if best.is_none_or(|bb| (cand.0, cand.1) < (bb.0, bb.1)) {
                best = Some(cand);
            }
        }
        let (_, _, i) = best?;
        Some(self.item_dto(src, lane, l.items_of, i))
    }

    /// The items of every lane whose name contains `text` (ASCII case-insensitive; an empty
    /// text matches nothing), in (start, lane, item) order, the first `limit` in full and all
    /// of them counted. Cost: one pass over the names of the rank's items.
    pub fn search(
        &self,
        src: TimelineSource<'_>,
        rank: u32,
        text: &str,
        limit: usize,
    ) -> TimelineSearchDto {
        let needle = text.as_bytes();
        let mut hits: Vec<(i64, u32, u32)> = Vec::new(); // (start, lane, item)
        if !needle.is_empty() {
            for (lane, l) in self.lanes.iter().enumerate() {
                for (pos, &i) in l.items.iter().enumerate() {
                    if contains_ci(Self::name(src, l.items_of, i).as_bytes(), needle) {
                        hits.push((l.spans.span(pos).0, lane as u32, i));
                    }
                }
            }
        }
        let total = hits.len() as u64;
        if hits.len() > limit {
            hits.select_nth_unstable(limit);
            hits.truncate(limit);
        }
        hits.sort_unstable();
        let matches = hits
            .into_iter()
            .map(|(_, lane, i)| self.item_dto(src, lane, self.lanes[lane as usize].items_of, i))
            .collect();
        TimelineSearchDto {
            rank,
            text: text.to_string(),
            total,
            matches,
        }
    }

    fn name<'a>(src: TimelineSource<'a>, of: Items, i: u32) -> &'a str {
        match (of, src.trace) {
            (Items::Kernels, _) => src.kernels.name_of(i as usize),
            (Items::Host, Some(t)) => t.events().get(i as usize).map_or("", |ev| t.text(ev.name)),
            (Items::Host, None) => "",
        }
    }

    pub(in crate::views) fn item_dto(
        &self,
        src: TimelineSource<'_>,
        lane: u32,
        of: Items,
        i: u32,
    ) -> TimelineItemDto {
        let (s, e) = Self::span(src, of, i);
        let step_id = src
            .result
            .steps
            .iter()
            .find(|st| st.window.start_ns <= s && s < st.window.end_ns)
            .map(|st| st.step_id.clone());
        let base = TimelineItemDto {
            lane,
            index: i,
            kind: LaneKind::Host,
            name: String::new(),
            start_ms: self.rel_ms(s),
            start_us: us_text(s),
            dur_us: (e - s) as f64 / 1e3,
            stream: String::new(),
            op_type: String::new(),
            core: String::new(),
            class: "host".into(),
            wait_us: 0.0,
            shapes: String::new(),
            source_row: 0,
            step_id,
        };
        let ix = i as usize;
        match (of, src.trace) {
            (Items::Kernels, _) => {
                let k = src.kernels;
                TimelineItemDto {
                    kind: LaneKind::Device,
                    name: k.name_of(ix).to_string(),
                    stream: k.stream_of(ix).to_string(),
                    op_type: k.text(k.op_type()[ix]).to_string(),
                    core: k.core_of(ix).to_string(),
                    class: k.class()[ix].as_str().to_string(),
                    wait_us: k.wait_ns()[ix] as f64 / 1e3,
                    shapes: match k.text(k.shapes()[ix]).trim() {
                        "N/A" => String::new(),
                        s => s.to_string(),
                    },
                    source_row: k.row_of(ix),
                    ..base
                }
            }
            (Items::Host, Some(t)) => match t.events().get(ix) {
                Some(ev) => TimelineItemDto {
                    name: t.text(ev.name).to_string(),
                    stream: t.thread_text(t.thread_of(ev)).to_string(),
                    op_type: t.text(t.cat_of(ev)).to_string(),
                    core: if t.lane_of(ev) == HostLane::Python {
                        "Python"
                    } else {
                        src.runtime
                    }
                    .into(),
                    ..base
                },
                None => base,
            },
            (Items::Host, None) => base,
        }
    }
}

/// True when `needle` occurs in `hay`, ASCII letters compared without case.
fn contains_ci(hay: &[u8], needle: &[u8]) -> bool {
    needle.len() <= hay.len()
        && hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}
