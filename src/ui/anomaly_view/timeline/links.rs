//! The selection's launch links (`AnomalyQuery::Flows`, views::timeline_flows): asked once per
//! selection, never per frame, and drawn as arrows from the host lane to the device lane in
//! shown lanes and times (only the selection's own links).

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::draw::{end_ms, Arrow};
use super::state::Tl;
use crate::protocol::{AnomalyQuery, AnomalyReply, LaneKind};

/// Asks for the links of each new selection.
pub(super) fn install(tl: Tl) {
    let Tl {
        item, flows, error, ..
    } = tl;
    Effect::new(move |_| {
        let Some(s) = item.get() else {
            flows.set(None);
            return;
        };
        spawn_local(async move {
            let req = AnomalyQuery::Flows {
                rank: s.rank,
                lane: s.item.lane,
                index: s.item.index,
                limit: 50,
            };
            match crate::ui::anomaly_view::ask(req).await {
                Ok(AnomalyReply::Flows(f)) => {
                    let _ = flows.try_set(Some((s.rank, f)));
                }
                Ok(other) => {
                    let _ = error.try_set(Some(crate::ui::client::unexpected(
                        crate::ui::client::anomaly_reply_name(&other),
                    )));
                }
                Err(e) => {
                    let _ = error.try_set(Some(e));
                }
            }
        });
    });
}

/// The selection's arrows in shown lanes and times.
pub(super) fn arrows(tl: Tl) -> Vec<Arrow> {
    let Some(sel) = tl.item.get_untracked() else {
        return Vec::new();
    };
    let device = sel.item.kind == LaneKind::Device;
    tl.flows.with_untracked(|f| {
        let Some((r, f)) = f.as_ref().filter(|(r, f)| {
            *r == sel.rank && f.lane == sel.item.lane && f.index == sel.item.index
        }) else {
            return Vec::new();
        };
        f.flows
            .iter()
            .filter_map(|l| {
                let h = tl.to_view(*r, l.host.lane, l.host.start_ms, end_ms(&l.host))?;
                let d = tl.to_view(*r, l.device.lane, l.device.start_ms, end_ms(&l.device))?;
                let shift = h.1 - l.host.start_ms;
                Some(Arrow {
                    from_lane: h.0,
                    from_ms: l.from_ms + shift,
                    to_lane: d.0,
                    to_ms: l.to_ms + shift,
                    partner: if device { h } else { d },
                })
            })
            .collect()
    })
}
