//! X axes of the snapshot curves and their min/max-per-pixel-column downsampling: the rule
//! lives in [`crate::analysis::snapshot::axis`] (the snapshot comparison's overlaid curves
//! use it too, torch-snapshot.md §7.3); re-exported here for the views.

pub use crate::analysis::snapshot::axis::*;
