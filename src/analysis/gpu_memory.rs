//! Memory counters of a GPU rank (issue 10 "Memory counters"): with `profile_memory=True` the
//! trace holds `[memory]` instant events, each giving the allocator's `Total Allocated` and
//! `Total Reserved` after one allocation or free. Per device (`Device Type`, `Device Id`)
//! this keeps the step curve of both totals over time and their peaks.
//!
//! The samples are already in the model (one per event); a series holds indices into them,
//! never copies. A peak is the largest value with its first time (ties: the earliest).

use crate::model::gpu::{GpuTrace, MemorySample};

/// One device's memory curve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceMemory {
    /// `Device Type` (0 = CPU, 1 = CUDA; -1 when absent).
    pub device_type: i64,
    /// `Device Id` (-1 for the CPU / when absent).
    pub device_id: i64,
    /// Indices into [`GpuTrace::memory`], in time order.
    pub samples: Vec<usize>,
    /// Peak `Total Allocated` (bytes) and its time (ns, file clock).
    pub peak_allocated: (i64, i64),
    /// Peak `Total Reserved` (bytes) and its time (ns, file clock).
    pub peak_reserved: (i64, i64),
    /// Allocations (`Bytes` > 0) and frees (`Bytes` < 0) seen.
    pub allocs: u64,
    /// Frees seen.
    pub frees: u64,
}

impl DeviceMemory {
    /// The samples of this device as `(ts_ns, allocated, reserved)`.
    pub fn curve<'a>(&'a self, t: &'a GpuTrace) -> impl Iterator<Item = (i64, i64, i64)> + 'a {
        self.samples.iter().map(|&i| {
            let m: &MemorySample = &t.memory[i];
            (m.ts_ns, m.total_allocated, m.total_reserved)
        })
    }
}

/// Memory curves per device, sorted by `(device type, device id)`; empty without samples.
pub fn per_device(t: &GpuTrace) -> Vec<DeviceMemory> {
    let mut out: Vec<DeviceMemory> = Vec::new();
    for (i, m) in t.memory.iter().enumerate() {
        let d = match out
            .iter_mut()
            .position(|d| (d.device_type, d.device_id) == (m.device_type, m.device_id))
        {
            Some(k) => &mut out[k],
            None => {
                out.push(DeviceMemory {
                    device_type: m.device_type,
                    device_id: m.device_id,
                    samples: Vec::new(),
                    peak_allocated: (m.total_allocated, m.ts_ns),
                    peak_reserved: (m.total_reserved, m.ts_ns),
                    allocs: 0,
                    frees: 0,
                });
                out.last_mut().expect("just pushed")
            }
        };
        d.samples.push(i);
        if m.total_allocated > d.peak_allocated.0 {
            d.peak_allocated = (m.total_allocated, m.ts_ns);
        }
        if m.total_reserved > d.peak_reserved.0 {
            d.peak_reserved = (m.total_reserved, m.ts_ns);
        }
        match m.bytes.signum() {
            1 => d.allocs += 1,
            -1 => d.frees += 1,
            _ => {}
        }
    }
    out.sort_by_key(|d| (d.device_type, d.device_id));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn peaks_per_device_with_the_earliest_time_of_a_tie() {
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
            (v[0].device_type, v[0].device_id, v[0].samples.len()),
            (0, -1, 1)
        );
        let gpu = &v[1];
        assert_eq!(gpu.peak_allocated, (1536, 30));
        assert_eq!(gpu.peak_reserved, (4096, 40));
        assert_eq!((gpu.allocs, gpu.frees), (3, 1));
        assert_eq!(
            gpu.curve(&t).collect::<Vec<_>>(),
            [
                (10, 512, 2048),
                (30, 1536, 2048),
                (40, 512, 4096),
                (50, 1536, 4096)
            ]
        );
    }
}
