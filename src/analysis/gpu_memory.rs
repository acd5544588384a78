//! Memory counters of a GPU rank (memory counters): with `profile_memory=True` the
//! trace holds `[memory]` instant events, one per allocation (`Bytes` > 0) or free
//! (`Bytes` < 0). Per device (`Device Type`, `Device Id`) this keeps the curve of allocated
//! and reserved bytes over time and their peaks.
//!
//! * **Allocated**: the event's `Total Allocated` (2023+ traces). Older traces (the 2021
//!   tb_plugin sample) carry only `Bytes`: then allocated is the running Σ `Bytes` of that
//!   device since the capture started — the bytes allocated during the capture and still
//!   live, not counting what was live before it — and [`DeviceMemory::allocated_source`]
//!   says so.
//! * **Reserved**: `Total Reserved` when present, else unknown (`None`).
//! * A peak is the largest value with its first time (ties: the earliest).
//!
//! Samples are in the model already (one per event, sorted by time); a series holds indices
//! into them, never copies.

use crate::model::gpu::GpuTrace;

/// Where a device's allocated curve comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocatedSource {
    /// `Total Allocated` of every sample.
    TotalAllocated,
    /// Running Σ `Bytes` (the trace has no `Total Allocated`).
    BytesSinceCaptureStart,
}

impl AllocatedSource {
    /// `total_allocated` / `bytes_since_capture_start`.
    pub fn as_str(self) -> &'static str {
        match self {
            AllocatedSource::TotalAllocated => "total_allocated",
            AllocatedSource::BytesSinceCaptureStart => "bytes_since_capture_start",
        }
    }
}

/// One device's memory curve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceMemory {
    /// `Device Type` (0 = CPU, 1 = CUDA; -1 when absent).
    pub device_type: i64,
    /// `Device Id` (-1 for the CPU / when absent).
    pub device_id: i64,
    /// How allocated is known.
    pub allocated_source: AllocatedSource,
    /// `(index into GpuTrace::memory, allocated bytes, reserved bytes)`, in time order.
    pub curve: Vec<(usize, i64, Option<i64>)>,
    /// Peak allocated (bytes) and its time (ns, file clock).
    pub peak_allocated: (i64, i64),
    /// Peak reserved (bytes) and its time, when the trace says reserved.
    pub peak_reserved: Option<(i64, i64)>,
    /// Allocations seen (`Bytes` > 0).
    pub allocs: u64,
    /// Frees seen (`Bytes` < 0).
    pub frees: u64,
}

fn raise(peak: &mut Option<(i64, i64)>, v: i64, ts: i64) {
    if peak.is_none_or(|p| v > p.0) {
        *peak = Some((v, ts));
    }
}

/// Memory curves per device, sorted by `(device type, device id)`; empty without samples.
pub fn per_device(t: &GpuTrace) -> Vec<DeviceMemory> {
    // Devices in order of first sample; a device uses `Total Allocated` only when all its
    // samples carry it.
    let mut keys: Vec<(i64, i64)> = Vec::new();
    let mut totals: Vec<bool> = Vec::new();
    for m in &t.memory {
        let k = (m.device_type, m.device_id);
        let j = match keys.iter().position(|x| *x == k) {
            Some(j) => j,
            None => {
                keys.push(k);
                totals.push(true);
                keys.len() - 1
            }
        };
        totals[j] &= m.total_allocated >= 0;
    }
    let mut out: Vec<DeviceMemory> = keys
        .iter()
        .zip(&totals)
        .map(|(&(device_type, device_id), &total)| DeviceMemory {
            device_type,
            device_id,
            allocated_source: if total {
                AllocatedSource::TotalAllocated
            } else {
                AllocatedSource::BytesSinceCaptureStart
            },
            curve: Vec::new(),
            peak_allocated: (0, 0),
            peak_reserved: None,
            allocs: 0,
            frees: 0,
        })
        .collect();
    let mut running = vec![0i64; keys.len()];
    let mut peaks: Vec<Option<(i64, i64)>> = vec![None; keys.len()];
    for (i, m) in t.memory.iter().enumerate() {
        let Some(j) = keys.iter().position(|x| *x == (m.device_type, m.device_id)) else {
            continue;
        };
        let d = &mut out[j];
        running[j] = running[j].saturating_add(m.bytes);
        let allocated = match d.allocated_source {
            AllocatedSource::TotalAllocated => m.total_allocated,
            AllocatedSource::BytesSinceCaptureStart => running[j],
        };
        let reserved = (m.total_reserved >= 0).then_some(m.total_reserved);
        d.curve.push((i, allocated, reserved));
        raise(&mut peaks[j], allocated, m.ts_ns);
        if let Some(r) = reserved {
            raise(&mut d.peak_reserved, r, m.ts_ns);
        }
        match m.bytes.signum() {
            1 => d.allocs += 1,
            -1 => d.frees += 1,
            _ => {}
        }
    }
    for (d, p) in out.iter_mut().zip(peaks) {
        d.peak_allocated = p.unwrap_or((0, 0));
    }
    crate::base::sort::sort_by_key(&mut out, |d| (d.device_type, d.device_id));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::gpu::MemorySample;

    fn sample(ts_ns: i64, dev: i64, bytes: i64, alloc: i64, reserved: i64) -> MemorySample {
        MemorySample {
            ts_ns,
            device_type: if dev < 0 { 0 } else { 1 },
            device_id: dev,
            bytes,
            total_allocated: alloc,
            total_reserved: reserved,
        }
    }

    #[test]
    fn totals_give_the_curve_and_peaks_with_the_earliest_time_of_a_tie() {
        let mut t = GpuTrace::default();
        t.memory = vec![
            sample(10, 0, 512, 512, 2048),
            sample(20, -1, 64, 64, 0),
            sample(30, 0, 1024, 1536, 2048),
            sample(40, 0, -1024, 512, 4096),
            sample(50, 0, 1024, 1536, 4096),
        ];
        let v = per_device(&t);
        assert_eq!(v.len(), 2);
        assert_eq!(
            (v[0].device_type, v[0].device_id, v[0].curve.len()),
            (0, -1, 1)
        );
        let gpu = &v[1];
        assert_eq!(gpu.allocated_source, AllocatedSource::TotalAllocated);
        assert_eq!(gpu.peak_allocated, (1536, 30));
        assert_eq!(gpu.peak_reserved, Some((4096, 40)));
        assert_eq!((gpu.allocs, gpu.frees), (3, 1));
        assert_eq!(
            gpu.curve,
            [
                (0, 512, Some(2048)),
                (2, 1536, Some(2048)),
                (3, 512, Some(4096)),
                (4, 1536, Some(4096))
            ]
        );
    }

    #[test]
    fn without_totals_allocated_is_the_running_sum_of_bytes() {
        let mut t = GpuTrace::default();
        t.memory = vec![
            sample(10, 0, 100, -1, -1),
            sample(20, 0, 50, -1, -1),
            sample(30, 0, -120, -1, -1),
        ];
        let d = &per_device(&t)[0];
        assert_eq!(d.allocated_source, AllocatedSource::BytesSinceCaptureStart);
        assert_eq!(d.curve, [(0, 100, None), (1, 150, None), (2, 30, None)]);
        assert_eq!((d.peak_allocated, d.peak_reserved), ((150, 20), None));
    }
}
