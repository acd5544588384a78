//! UI-ready plain data computed in the worker: downsampled curves,
//! sorted and filtered table orders, grouped sites, display formatting. Natively tested; no
//! browser types. The worker turns these into [`crate::protocol`] payloads.
//!
//! * [`curve`]: per-pixel-column min/max of step series (so 1M samples draw as ~1000 columns).
//! * [`table`]: the row order of a big table for one sort + filter, computed once and paged.
//! * [`anomaly`], [`anomaly_bubbles`], [`anomaly_structure`]: the steps / bubbles view ;
//!   [`cross_rank`]: the cross-rank table over every worker's rank summaries (anomaly.md §13.4).
//! * [`format`]: human units for display.
//! * [`zoom`]: zoom and pan of every chart's x window (wheel, drag, keys).
//! * [`view_state`]: the URL-fragment view state (`tab=memory&rank=1&…`), parsed and written.
//! * [`snapshot_segmap`]: the segment map strips of the allocator state view.
//! * [`snapshot`]: every payload of the snapshot tab (summary, curves, live sets,
//!   stacks, segments, the allocator state), pure functions of the decoded snapshot and its
//!   device analyses, labelled by [`crate::analysis::snapshot::labels`] as the exports are.
//! * [`snapshot_axis`], [`snapshot_bands`], [`band_grid`]: snapshot curves and the Active Memory
//!   Timeline (stacked per-allocation bands, level of detail, hit-tests).
//! * [`timeline`], [`timeline_axis`]: level-of-detail lanes of the steps/bubbles timeline, ticks, hit-tests;
//!   [`timeline_flows`]: the launch → kernel links of a selected item; [`timeline_multi`]: several
//!   ranks stacked and aligned by step.
//! * [`cluster`], [`cluster_table`], [`heatmap`], [`virtual_list`]: the cluster view of a
//!   cluster summary: its payload, the rank table's order, the rank × step heatmap,
//!   the windowing of virtual lists.
//! * [`notices`]: the words where the browser sets the limit: a worker that stopped mid-job (a
//!   trap on a large input is said as out of memory, with the CLI as the way out), a download
//!   past 2 GiB.
//! * [`compare`], [`compare_table`]: the Compare tab: the diff document laid out as
//!   figures, delta tables and overlaid curves; the tables' sort, filter and cell texts.

pub mod anomaly;
pub mod anomaly_bubbles;
pub mod anomaly_structure;
pub mod band_grid;
pub mod cluster;
pub mod cluster_table;
pub mod comm;
pub mod comm_table;
pub mod compare;
pub mod compare_table;
pub mod cross_rank;
pub mod curve;
pub mod format;
pub mod gpu;
pub mod heatmap;
pub mod memory;
pub mod notices;
pub mod snapshot;
pub mod snapshot_axis;
pub mod snapshot_bands;
pub mod snapshot_segmap;
pub mod table;
pub mod timeline;
pub mod timeline_axis;
pub mod timeline_flows;
pub mod timeline_lod;
pub mod timeline_multi;
pub mod view_state;
pub mod virtual_list;
pub mod zoom;
