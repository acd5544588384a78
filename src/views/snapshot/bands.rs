//! The Active Memory Timeline of one device (torch-snapshot.md §6.1): the pure layout of
//! [`crate::views::snapshot_bands`] over the device's lifetime table and active curve, with
//! each drawn band's site label added (the report's labels, as the tensor list).

use crate::protocol::snapshot::{SnapBandsDto, SnapBandsQuery};
use crate::views::snapshot_bands::{layout, BandParams, MAX_BANDS, MIN_BAND_PX};

use super::live::Frames;
use super::{window, SnapshotData};

impl SnapshotData<'_> {
    /// The stacked per-allocation chart of device slot `q.slot` over `q.range`, `q.width_px`
    /// columns (at most 8192) for a plot `q.height_px` tall.
    ///
    /// # Errors
    ///
    /// Unknown device slot.
    pub fn bands(&self, q: &SnapBandsQuery) -> Result<SnapBandsDto, String> {
        let (d, axis, _) = self.device_on(q.slot, q.axis)?;
        let (x0, x1) = window(axis.full(), q.range);
        let p = BandParams {
            x0,
            x1,
            width: q.width_px.clamp(1, 8192) as usize,
            height_px: q.height_px.clamp(1, 8192) as f64,
            max_bands: MAX_BANDS,
            min_band_px: MIN_BAND_PX,
        };
        let c = &d.curves;
        let mut out = layout(&d.lifetimes, &axis, &c.active, c.baseline_active, &p);
        out.target = self.target;
        out.slot = q.slot;
        let mut fr = Frames::new(self);
        for b in &mut out.bands {
            b.site = fr.record_site(&d.lifetimes, b.record);
        }
        Ok(out)
    }
}
