//! The timeline's questions to the workers (`AnomalyQuery::Timeline`): per shown rank one
//! request in flight, the newest wish waits; first each rank's full range (its steps align the
//! stacked ranks), then, on every view change, the view plus half a view on each side at the
//! view's pixel density, in the rank's own (shifted) times.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::draw::RIGHT;
use super::state::Tl;
use crate::protocol::{AnomalyQuery, AnomalyReply};
use crate::views::timeline_axis::clamp_view;
use crate::views::timeline_multi::rank_window;

/// Asks the worker of shown rank `pos` for window `want` (its ms; `None` = everything) at
/// `width_px`; when one is in flight, the wish waits (replacing an older one).
fn fetch(tl: Tl, pos: usize, want: Option<(f64, f64)>, width_px: u32) {
    let Tl {
        ranks,
        busy,
        pending,
        error,
        steps_of,
        parts,
        ..
    } = tl;
    let Some(r) = ranks.with_untracked(|v| v.get(pos).copied()) else {
        return;
    };
    if busy.with_value(|b| b.get(pos).copied().unwrap_or(false)) {
        pending.update_value(|p| {
            if let Some(slot) = p.get_mut(pos) {
                *slot = Some((want, width_px));
            }
        });
        return;
    }
    busy.update_value(|b| {
        if let Some(x) = b.get_mut(pos) {
            *x = true;
        }
    });
    spawn_local(async move {
        let (mut want, mut width_px) = (want, width_px);
        loop {
            let req = AnomalyQuery::Timeline {
                rank: r,
                x_range_ms: want,
                width_px,
            };
            match crate::ui::anomaly_view::ask(req).await {
                Ok(AnomalyReply::Timeline(d)) => {
                    let _ = error.try_set(None);
                    // The shown ranks may have changed meanwhile.
                    if ranks.try_with_untracked(|v| v.get(pos) == Some(&d.rank)) == Some(true) {
                        if want.is_none() {
                            let _ = steps_of.try_update(|s| {
                                if let Some(x @ None) = s.get_mut(pos) {
                                    *x = Some(d.steps.clone());
                                }
                            });
                        }
                        let _ = parts.try_update(|p| {
                            if let Some(x) = p.get_mut(pos) {
                                *x = Some(d);
                            }
                        });
                    }
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
            match pending
                .try_update_value(|p| p.get_mut(pos).and_then(Option::take))
                .flatten()
            {
                Some((w, px)) => (want, width_px) = (w, px),
                None => break,
            }
        }
        let _ = busy.try_update_value(|b| {
            if let Some(x) = b.get_mut(pos) {
                *x = false;
            }
        });
    });
}

/// The two effects that keep every shown rank's reply up to date.
pub(super) fn install(tl: Tl) {
    // New shown ranks: fresh slots, and everything of each rank first (its steps align it).
    Effect::new(move |_| {
        let n = tl.ranks.with(|r| r.len());
        tl.parts.set(vec![None; n]);
        tl.steps_of.set(vec![None; n]);
        tl.busy.set_value(vec![false; n]);
        tl.pending.set_value(vec![None; n]);
        let w = tl.width_of();
        let pw = if w > 0.0 {
            (w - tl.geom.get_untracked().label_w - RIGHT).max(10.0) as u32
        } else {
            1200
        };
        for pos in 0..n {
            fetch(tl, pos, None, pw);
        }
    });
    // Ask each rank for the view plus half a view on each side, at the view's pixel density,
    // in its own (shifted) times.
    Effect::new(move |prev: Option<()>| {
        let v = tl.view.get();
        let n = tl.ranks.with(|r| r.len());
        tl.aligns.track();
        let w = tl.width_of();
        let pw = (w - tl.geom.get().label_w - RIGHT).max(10.0);
        if prev.is_none() || w <= 0.0 {
            return; // the first requests are the full ranges above
        }
        let full = tl.full();
        for pos in 0..n {
            match (v, full) {
                (Some(v), Some(full)) => {
                    let v = clamp_view(v, full);
                    let span = v.1 - v.0;
                    let want = clamp_view((v.0 - span / 2.0, v.1 + span / 2.0), full);
                    let px = (pw * (want.1 - want.0) / span)
                        .round()
                        .clamp(10.0, 20_000.0) as u32;
                    fetch(tl, pos, Some(rank_window(want, tl.offset(pos))), px);
                }
                _ => fetch(tl, pos, None, pw as u32),
            }
        }
    });
}
