//! Several ranks on one timeline, aligned by step ("a real timeline"): the lanes of
//! each rank stacked under each other, each rank's times shifted so that one chosen step
//! starts at the same x.
//!
//! Every rank's [`TimelineDto`] is in ms relative to its own origin (its first step start,
//! else its first kernel: `views::timeline`). Aligning on step `S` shifts rank `r` by
//! `offset_r` = the start of `S` in rank `r`'s relative time, so the shown time is
//! `t_view = t_rank − offset_r` and `S` starts at 0 in every rank; a rank without `S` keeps
//! offset 0 (its first step, or first kernel, at 0) and is reported. The view window `(a, b)`
//! is asked of rank `r` as `(a + offset_r, b + offset_r)` ([`rank_window`]).
//!
//! [`stack`] joins the ranks' replies into one [`TimelineDto`] the single-rank drawing code
//! draws unchanged: lanes in rank order (labels prefixed with the rank's name), times shifted,
//! names re-indexed, the step row of the first rank (the reference), bubble marks only when
//! there is one rank (a bubble band is drawn across every lane). One rank with offset 0
//! stacks to its own reply, labels unprefixed.

use crate::protocol::{StepBandDto, TimelineDto};

/// Where one rank is aligned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Alignment {
    /// Shift, ms: `t_view = t_rank − offset_ms`.
    pub offset_ms: f64,
    /// False when the rank has no step of the chosen id (offset 0 then).
    pub found: bool,
}

/// The step ids to align on: the ids of every rank's steps, in order of first appearance
/// (first rank first), each once.
pub fn step_ids(ranks: &[&[StepBandDto]]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for steps in ranks {
        for s in steps.iter() {
            if !out.contains(&s.step_id) {
                out.push(s.step_id.clone());
            }
        }
    }
    out
}

/// The alignment of each rank on step `step_id` (its first step of that id); `None` aligns
/// every rank on its own origin (offset 0).
pub fn align(ranks: &[&[StepBandDto]], step_id: Option<&str>) -> Vec<Alignment> {
    ranks
        .iter()
        .map(|steps| match step_id {
            None => Alignment {
                offset_ms: 0.0,
                found: true,
            },
            Some(id) => match steps.iter().find(|s| s.step_id == id) {
                Some(s) => Alignment {
                    offset_ms: s.start_ms,
                    found: true,
                },
                None => Alignment {
                    offset_ms: 0.0,
                    found: false,
                },
            },
        })
        .collect()
}

/// The window to ask of a rank shifted by `offset_ms` for the view window `view`.
pub fn rank_window(view: (f64, f64), offset_ms: f64) -> (f64, f64) {
    (view.0 + offset_ms, view.1 + offset_ms)
}

/// One rank's reply and how it is shown.
#[derive(Clone, Copy, Debug)]
pub struct Part<'a> {
    /// The rank's name in the gutter (`rank 0`, `actor/rank 1`).
    pub label: &'a str,
    /// Its last reply.
    pub dto: &'a TimelineDto,
    /// Its shift, ms.
    pub offset_ms: f64,
}

/// The stacked timeline and where each of its lanes comes from.
#[derive(Clone, Debug, PartialEq)]
pub struct Stacked {
    /// One timeline: lane `i` has id `i`.
    pub dto: TimelineDto,
    /// Per stacked lane: (part index, the lane's id in that rank).
    pub lanes: Vec<(usize, u32)>,
    /// Per part: (first stacked lane, lane count).
    pub groups: Vec<(usize, usize)>,
}

impl Stacked {
    /// The stacked lane of lane `lane` of part `part`.
    pub fn lane_of(&self, part: usize, lane: u32) -> Option<u32> {
        self.lanes
            .iter()
            .position(|&(p, l)| p == part && l == lane)
            .map(|i| i as u32)
    }
}

fn shift(v: &mut [f64], by: f64) {
    if by != 0.0 {
        v.iter_mut().for_each(|x| *x -= by);
    }
}

/// Stacks the parts' replies (see the module doc). No part: `None`.
pub fn stack(parts: &[Part<'_>]) -> Option<Stacked> {
    let first = parts.first()?;
    let one = parts.len() == 1;
    let mut dto = TimelineDto {
        rank: first.dto.rank,
        origin_ms: first.dto.origin_ms,
        full_range_ms: first.dto.full_range_ms,
        x_range_ms: first.dto.x_range_ms,
        width_px: first.dto.width_px,
        lanes: Vec::new(),
        steps: Vec::new(),
        bubbles: Vec::new(),
        names: Vec::new(),
    };
    let mut lanes = Vec::new();
    let mut groups = Vec::new();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (p, part) in parts.iter().enumerate() {
        let off = part.offset_ms;
        let d = part.dto;
        lo = lo.min(d.full_range_ms.0 - off);
        hi = hi.max(d.full_range_ms.1 - off);
        let base = dto.names.len() as u32;
        dto.names.extend(d.names.iter().cloned());
        groups.push((dto.lanes.len(), d.lanes.len()));
        for l in &d.lanes {
            let mut l = l.clone();
            lanes.push((p, l.id));
            l.id = dto.lanes.len() as u32;
            if !one {
                l.label = format!("{} · {}", part.label, l.label);
            }
            shift(&mut l.boxes.start_ms, off);
            shift(&mut l.boxes.end_ms, off);
            if base > 0 {
                l.boxes.name.iter_mut().for_each(|n| *n += base);
            }
            dto.lanes.push(l);
        }
    }
    dto.full_range_ms = (lo, hi);
    let off = first.offset_ms;
    dto.x_range_ms = (first.dto.x_range_ms.0 - off, first.dto.x_range_ms.1 - off);
    dto.steps = first
        .dto
        .steps
        .iter()
        .map(|s| StepBandDto {
            start_ms: s.start_ms - off,
            end_ms: s.end_ms - off,
            ..s.clone()
        })
        .collect();
    if one {
        dto.bubbles = first
            .dto
            .bubbles
            .iter()
            .map(|b| {
                let mut b = b.clone();
                b.start_ms -= off;
                b.end_ms -= off;
                b
            })
            .collect();
    }
    Some(Stacked { dto, lanes, groups })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{BubbleMarkDto, LaneBoxesDto, LaneDto, LaneKind};

    fn step(index: u32, id: &str, start_ms: f64, end_ms: f64) -> StepBandDto {
        StepBandDto {
            index,
            step_id: id.into(),
            start_ms,
            end_ms,
            busy_union_ms: 0.0,
            underfeed_ratio: 0.0,
        }
    }

    fn dto(rank: u32, steps: Vec<StepBandDto>, boxes: &[(f64, f64)], name: &str) -> TimelineDto {
        TimelineDto {
            rank,
            origin_ms: 1000.0 * rank as f64,
            full_range_ms: (0.0, 100.0),
            x_range_ms: (10.0, 20.0),
            width_px: 800,
            lanes: vec![LaneDto {
                id: 0,
                label: "stream 7".into(),
                kind: LaneKind::Device,
                total: boxes.len() as u64,
                in_window: boxes.len() as u64,
                boxes: LaneBoxesDto {
                    start_ms: boxes.iter().map(|b| b.0).collect(),
                    end_ms: boxes.iter().map(|b| b.1).collect(),
                    count: vec![1; boxes.len()],
                    busy: vec![1.0; boxes.len()],
                    class: vec![0; boxes.len()],
                    name: vec![0; boxes.len()],
                },
            }],
            steps,
            bubbles: vec![BubbleMarkDto {
                index: 0,
                bubble_id: "s:global:0".into(),
                scope: "global".into(),
                start_ms: 5.0,
                end_ms: 6.0,
                labels: vec![],
                significant: true,
                merged: 1,
            }],
            names: vec![name.into()],
        }
    }

    #[test]
    fn offsets_put_the_chosen_step_at_zero_in_every_rank() {
        let r0 = [
            step(0, "ProfilerStep#4", 0.0, 30.0),
            step(1, "ProfilerStep#5", 30.0, 62.5),
        ];
        let r1 = [
            step(0, "ProfilerStep#5", 0.0, 41.0),
            step(1, "ProfilerStep#6", 41.0, 80.0),
        ];
        let r2 = [step(0, "ProfilerStep#4", 0.0, 12.25)];
        let ranks: [&[StepBandDto]; 3] = [&r0, &r1, &r2];
        assert_eq!(
            step_ids(&ranks),
            vec!["ProfilerStep#4", "ProfilerStep#5", "ProfilerStep#6"]
        );
        let a = align(&ranks, Some("ProfilerStep#5"));
        let got: Vec<(f64, bool)> = a.iter().map(|a| (a.offset_ms, a.found)).collect();
        assert_eq!(got, vec![(30.0, true), (0.0, true), (0.0, false)]);
        // Step 5 starts at 0 in rank 0 and rank 1: t_view = t_rank − offset.
        assert_eq!(r0[1].start_ms - a[0].offset_ms, 0.0);
        assert_eq!(r1[0].start_ms - a[1].offset_ms, 0.0);
        // The view (−5, 5) is asked of rank 0 as (25, 35), of rank 1 as itself.
        assert_eq!(rank_window((-5.0, 5.0), a[0].offset_ms), (25.0, 35.0));
        assert_eq!(rank_window((-5.0, 5.0), a[1].offset_ms), (-5.0, 5.0));
        let none = align(&ranks, None);
        assert!(none.iter().all(|a| a.offset_ms == 0.0 && a.found));
    }

    #[test]
    fn one_rank_stacks_to_its_own_reply() {
        let d = dto(
            3,
            vec![step(0, "ProfilerStep#1", 0.0, 50.0)],
            &[(1.0, 2.0)],
            "k",
        );
        let s = stack(&[Part {
            label: "rank 3",
            dto: &d,
            offset_ms: 0.0,
        }])
        .unwrap();
        assert_eq!(s.dto, d);
        assert_eq!(s.lanes, vec![(0, 0)]);
        assert_eq!(s.groups, vec![(0, 1)]);
        assert!(stack(&[]).is_none());
    }

    #[test]
    fn two_ranks_stack_shifted_with_labels_and_names_reindexed() {
        let a = dto(
            0,
            vec![step(0, "S1", 0.0, 40.0), step(1, "S2", 40.0, 90.0)],
            &[(41.0, 45.0)],
            "ka",
        );
        let b = dto(
            1,
            vec![step(0, "S2", 0.0, 55.0)],
            &[(0.5, 3.0), (10.0, 12.0)],
            "kb",
        );
        let al = align(&[&a.steps, &b.steps], Some("S2"));
        let s = stack(&[
            Part {
                label: "rank 0",
                dto: &a,
                offset_ms: al[0].offset_ms,
            },
            Part {
                label: "rank 1",
                dto: &b,
                offset_ms: al[1].offset_ms,
            },
        ])
        .unwrap();
        let d = &s.dto;
        let labels: Vec<&str> = d.lanes.iter().map(|l| l.label.as_str()).collect();
        assert_eq!(labels, vec!["rank 0 · stream 7", "rank 1 · stream 7"]);
        assert_eq!(d.lanes.iter().map(|l| l.id).collect::<Vec<_>>(), vec![0, 1]);
        assert_eq!(s.lanes, vec![(0, 0), (1, 0)]);
        assert_eq!(s.groups, vec![(0, 1), (1, 1)]);
        assert_eq!(s.lane_of(1, 0), Some(1));
        assert_eq!(s.lane_of(2, 0), None);
        // Rank 0 shifted by 40 ms: its box at 41 ms is at 1 ms, beside rank 1's at 0.5 ms.
        assert_eq!(d.lanes[0].boxes.start_ms, vec![1.0]);
        assert_eq!(d.lanes[1].boxes.start_ms, vec![0.5, 10.0]);
        assert_eq!(d.names, vec!["ka", "kb"]);
        assert_eq!(d.lanes[1].boxes.name, vec![1, 1]);
        // Full range: union of (0−40, 100−40) and (0, 100); steps of the reference rank.
        assert_eq!(d.full_range_ms, (-40.0, 100.0));
        assert_eq!(d.x_range_ms, (-30.0, -20.0));
        let steps: Vec<(&str, f64, f64)> = d
            .steps
            .iter()
            .map(|s| (s.step_id.as_str(), s.start_ms, s.end_ms))
            .collect();
        assert_eq!(steps, vec![("S1", -40.0, 0.0), ("S2", 0.0, 50.0)]);
        assert!(d.bubbles.is_empty());
    }
}
