//! The tab registry: one [`ViewEntry`] per tab of the result area, in tab order, each with a
//! predicate on the inventory, so a new analysis adds a tab with one line. Read by the page
//! layout ([`super::app`]) and by the URL state ([`super::route`]: tab names, applying a link).

use leptos::prelude::*;

use super::state::{AppState, Tab};
use crate::protocol::{AnalysisKind, InventoryDto};

/// One tab of the result area.
pub struct ViewEntry {
    /// The tab.
    pub tab: Tab,
    /// Label on the tab.
    pub label: &'static str,
    /// Whether the tab applies to what was dropped.
    pub applies: fn(&InventoryDto) -> bool,
}

fn always(_: &InventoryDto) -> bool {
    true
}

fn has_memory(inv: &InventoryDto) -> bool {
    inv.ranks.iter().any(|r| {
        r.analyses
            .iter()
            .any(|a| a.analysis == AnalysisKind::Memory && a.can_run)
    })
}

/// The view registry, in tab order.
pub const VIEWS: &[ViewEntry] = &[
    ViewEntry {
        tab: Tab::Cluster,
        label: "Cluster",
        applies: has_summaries,
    },
    ViewEntry {
        tab: Tab::Inventory,
        label: "Inventory",
        applies: always,
    },
    ViewEntry {
        tab: Tab::Memory,
        label: "Memory events",
        applies: has_memory,
    },
    ViewEntry {
        tab: Tab::Problems,
        label: "Problems",
        applies: always,
    },
    ViewEntry {
        tab: Tab::Anomaly,
        label: "Steps & bubbles",
        applies: has_anomaly,
    },
    ViewEntry {
        tab: Tab::Comm,
        label: "Communication",
        applies: has_comm,
    },
    ViewEntry {
        tab: Tab::Snapshot,
        label: "Memory snapshot",
        applies: has_snapshots,
    },
    ViewEntry {
        tab: Tab::Compare,
        label: "Compare",
        applies: can_compare,
    },
];

/// Something the Compare tab can compare: a rank folder with steps, or a snapshot file.
pub fn can_compare(inv: &InventoryDto) -> bool {
    has_anomaly(inv) || has_snapshots(inv)
}

fn has_anomaly(inv: &InventoryDto) -> bool {
    inv.ranks.iter().any(|r| {
        r.analyses
            .iter()
            .any(|a| a.analysis == AnalysisKind::Anomaly && a.can_run)
    })
}

/// A rank folder with communication files (`communication.json` or
/// `communication_matrix.json`), or a GPU rank (its NCCL collectives; the tab is shown once
/// the join found some, [`shown`]).
fn has_comm(inv: &InventoryDto) -> bool {
    inv.ranks.iter().any(|r| {
        r.analyses
            .iter()
            .any(|a| a.analysis == AnalysisKind::Comm && a.can_run)
    })
}

fn has_snapshots(inv: &InventoryDto) -> bool {
    !inv.snapshots.is_empty()
}

fn has_summaries(inv: &InventoryDto) -> bool {
    !inv.summaries.is_empty()
}

/// Whether tab `v` is shown: its predicate on the inventory, or, for the cluster tab, a
/// cluster view kept while a rank opened from it is shown, or, for the Communication tab,
/// GPU collectives found in the ranks' traces.
pub fn shown(v: &ViewEntry, inv: &InventoryDto, state: &AppState) -> bool {
    (v.applies)(inv)
        || (v.tab == Tab::Cluster && state.cluster.with(|c| c.is_some()))
        || (v.tab == Tab::Comm
            && state.comm.with(
                |c| matches!(c, super::state::CommStatus::Ready(o) if !o.collectives.is_empty()),
            ))
}
