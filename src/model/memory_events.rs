//! One rank's `operator_memory.csv` rows as columns (ascend-memory.md §4, §8).
//!
//! Rows stay in file order (one per CSV record; nothing filtered). Times are
//! exact `i64` nanoseconds; `alloc_time_us` keeps the Python-`float()` value
//! of the cell for parity (§4.3). Optional numbers are stored as `f64` with a
//! private NaN payload for "null" (8 bytes per cell), read back as `Option<f64>`.

use super::strings::StrId;

const NULL_BITS: u64 = 0x7ff8_0000_0000_0bad;

/// Encodes an optional f64 into one column cell.
fn enc(v: Option<f64>) -> f64 {
    v.unwrap_or(f64::from_bits(NULL_BITS))
}
/// Decodes one column cell.
fn dec(v: f64) -> Option<f64> {
    (v.to_bits() != NULL_BITS).then_some(v)
}
const NULL_NS: i64 = i64::MIN;
fn enc_ns(v: Option<i64>) -> i64 {
    v.unwrap_or(NULL_NS)
}
fn dec_ns(v: i64) -> Option<i64> {
    (v != NULL_NS).then_some(v)
}

/// The allocator totals of one sample, MiB: allocated, reserved, active.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Totals {
    /// `… Total Allocated(MB)`.
    pub allocated: Option<f64>,
    /// `… Total Reserved(MB)`.
    pub reserved: Option<f64>,
    /// `… Total Active(MB)` (absent from the 10-column form).
    pub active: Option<f64>,
}

/// One row as read, before it goes into the table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MemoryEvent {
    /// `Name`, interned in the rank's string pool.
    pub name: StrId,
    /// `Size(KB)`, signed KiB.
    pub size_kb: f64,
    /// `Allocation Time(us)` exactly, ns.
    pub alloc_time_ns: i64,
    /// `float(Allocation Time(us))`, µs (parity).
    pub alloc_time_us: f64,
    /// `Release Time(us)`, ns; `None` = not released in the capture.
    pub release_time_ns: Option<i64>,
    /// `Active Release Time(us)`, ns.
    pub active_release_time_ns: Option<i64>,
    /// `Duration(us)`, µs.
    pub duration_us: Option<f64>,
    /// `Active Duration(us)`, µs.
    pub active_duration_us: Option<f64>,
    /// `Allocation Total …(MB)`.
    pub alloc_totals: Totals,
    /// `Release Total …(MB)`.
    pub release_totals: Totals,
    /// `Stream Ptr` as text (`StrId::EMPTY` when absent).
    pub stream_ptr: StrId,
    /// `Device Type`.
    pub device_type: StrId,
    /// 1-based physical line of the record's first line (header = 1).
    pub line: u64,
    /// A time cell was in exponent form (spreadsheet damage, `MEM-CSV-005`).
    pub precision_lost: bool,
}

/// Columns of one rank's memory events, in file order.
///
/// Invariant: every column has `len()` entries; every time is within
/// `±base::arith::TIME_LIMIT_NS` ([`MemoryEvent::times_in_range`]).
#[derive(Clone, Debug, Default)]
pub struct MemoryEventTable {
    name: Vec<StrId>,
    size_kb: Vec<f64>,
    alloc_time_ns: Vec<i64>,
    alloc_time_us: Vec<f64>,
    release_time_ns: Vec<i64>,
    active_release_time_ns: Vec<i64>,
    duration_us: Vec<f64>,
    active_duration_us: Vec<f64>,
    alloc_totals: Vec<[f64; 3]>,
    release_totals: Vec<[f64; 3]>,
    stream_ptr: Vec<StrId>,
    device_type: Vec<StrId>,
    line: Vec<u64>,
    precision_lost: Vec<bool>,
    rejected: u64,
}

fn enc_totals(t: Totals) -> [f64; 3] {
    [enc(t.allocated), enc(t.reserved), enc(t.active)]
}
fn dec_totals(t: [f64; 3]) -> Totals {
    Totals {
        allocated: dec(t[0]),
        reserved: dec(t[1]),
        active: dec(t[2]),
    }
}

impl MemoryEvent {
    /// `Ok` when the allocation, release and active-release times lie within the model's
    /// time range (`±base::arith::TIME_LIMIT_NS`): then lags and lifetimes never overflow, and
    /// no input time can collide with the table's `i64::MIN` "not released" encoding.
    pub fn times_in_range(&self) -> Result<(), crate::base::arith::OutOfRange> {
        use crate::base::arith::time_ns;
        time_ns(self.alloc_time_ns)?;
        for t in [self.release_time_ns, self.active_release_time_ns]
            .into_iter()
            .flatten()
        {
            time_ns(t)?;
        }
        Ok(())
    }
}

impl MemoryEventTable {
    /// Rows [`push`](Self::push) refused (a time out of range).
    pub fn rejected(&self) -> u64 {
        self.rejected
    }
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends one row (file order). Callers check the row's times first with
    /// [`MemoryEvent::times_in_range`] (the CSV reader reports a row outside with its line);
    /// a row that is not in range is not added here and is counted in
    /// [`rejected`](Self::rejected).
    pub fn push(&mut self, e: MemoryEvent) {
        if e.times_in_range().is_err() {
            self.rejected += 1;
            return;
        }
        self.name.push(e.name);
        self.size_kb.push(e.size_kb);
        self.alloc_time_ns.push(e.alloc_time_ns);
        self.alloc_time_us.push(e.alloc_time_us);
        self.release_time_ns.push(enc_ns(e.release_time_ns));
        self.active_release_time_ns
            .push(enc_ns(e.active_release_time_ns));
        self.duration_us.push(enc(e.duration_us));
        self.active_duration_us.push(enc(e.active_duration_us));
        self.alloc_totals.push(enc_totals(e.alloc_totals));
        self.release_totals.push(enc_totals(e.release_totals));
        self.stream_ptr.push(e.stream_ptr);
        self.device_type.push(e.device_type);
        self.line.push(e.line);
        self.precision_lost.push(e.precision_lost);
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.name.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.name.is_empty()
    }
    /// `Name` ids.
    pub fn name(&self) -> &[StrId] {
        &self.name
    }
    /// `Size(KB)`, signed KiB.
    pub fn size_kb(&self) -> &[f64] {
        &self.size_kb
    }
    /// Exact allocation times, ns.
    pub fn alloc_time_ns(&self) -> &[i64] {
        &self.alloc_time_ns
    }
    /// Parity allocation times (`float()` of the cell), µs.
    pub fn alloc_time_us(&self) -> &[f64] {
        &self.alloc_time_us
    }
    /// Release time of row `i`, ns.
    pub fn release_time_ns(&self, i: usize) -> Option<i64> {
        self.release_time_ns.get(i).copied().and_then(dec_ns)
    }
    /// Active release time of row `i`, ns.
    pub fn active_release_time_ns(&self, i: usize) -> Option<i64> {
        self.active_release_time_ns.get(i).copied().and_then(dec_ns)
    }
    /// `Duration(us)` of row `i`.
    pub fn duration_us(&self, i: usize) -> Option<f64> {
        self.duration_us.get(i).copied().and_then(dec)
    }
    /// `Active Duration(us)` of row `i`.
    pub fn active_duration_us(&self, i: usize) -> Option<f64> {
        self.active_duration_us.get(i).copied().and_then(dec)
    }
    /// Allocation totals of row `i`.
    pub fn alloc_totals(&self, i: usize) -> Totals {
        self.alloc_totals
            .get(i)
            .copied()
            .map(dec_totals)
            .unwrap_or_default()
    }
    /// Release totals of row `i`.
    pub fn release_totals(&self, i: usize) -> Totals {
        self.release_totals
            .get(i)
            .copied()
            .map(dec_totals)
            .unwrap_or_default()
    }
    /// `Stream Ptr` ids.
    pub fn stream_ptr(&self) -> &[StrId] {
        &self.stream_ptr
    }
    /// `Device Type` ids.
    pub fn device_type(&self) -> &[StrId] {
        &self.device_type
    }
    /// Physical line numbers.
    pub fn line(&self) -> &[u64] {
        &self.line
    }
    /// Exponent-form time flags.
    pub fn precision_lost(&self) -> &[bool] {
        &self.precision_lost
    }
    /// Approximate heap bytes held by the columns.
    pub fn heap_bytes(&self) -> usize {
        self.len() * (4 + 8 * 8 + 48 + 4 + 4 + 8 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn optional_cells_round_trip_including_real_nan() {
        let mut t = MemoryEventTable::new();
        t.push(MemoryEvent {
            duration_us: Some(f64::NAN),
            release_time_ns: Some(5),
            alloc_totals: Totals {
                allocated: Some(1.5),
                reserved: None,
                active: Some(0.0),
            },
            ..Default::default()
        });
        t.push(MemoryEvent::default());
        assert!(t.duration_us(0).unwrap().is_nan());
        assert_eq!(t.duration_us(1), None);
        assert_eq!(t.release_time_ns(0), Some(5));
        assert_eq!(t.release_time_ns(1), None);
        assert_eq!(t.alloc_totals(0).reserved, None);
        assert_eq!(t.alloc_totals(0).allocated, Some(1.5));
        assert_eq!(t.release_time_ns(7), None);
    }
}
