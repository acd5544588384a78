//! NCCL/RCCL collective kernels of a Kineto trace with their collective args (communication.md
//! §4.1, §4.2), kept beside the device ops in the same read: `Process Group Name`,
//! `Collective name`, `Group size`, `dtype`, `In msg nelems`, `Out msg nelems`. Only kernels
//! whose name carries `nccl`, `rccl` or `cross_device_reduce` are looked at (a second look at
//! their `args`; they are a few per step).

use super::args::int_arg;
use super::split::Table;
use super::KinetoBuilder;
use crate::model::comm::NcclKernel;
use crate::parse::trace_json::object::Event;

/// The collective args read.
const NCCL_KEYS: [&str; 6] = [
    "Process Group Name",
    "Collective name",
    "Group size",
    "dtype",
    "In msg nelems",
    "Out msg nelems",
];

/// True for a kernel event of a collective library (case-insensitive name match).
pub(super) fn is_collective(cat: &str, name: &str) -> bool {
    if !cat.eq_ignore_ascii_case("kernel") {
        return false;
    }
    let n = name.to_ascii_lowercase();
    n.contains("nccl") || n.contains("rccl") || n.contains("cross_device_reduce")
}

fn text(raw: Option<&[u8]>) -> Option<String> {
    match raw {
        Some(r) if r.first() == Some(&b'"') => serde_json::from_slice::<String>(r).ok(),
        Some(r) => std::str::from_utf8(r).ok().map(|s| s.trim().to_string()),
        None => None,
    }
}

fn int(raw: Option<&[u8]>) -> Option<i64> {
    raw.map(|r| int_arg(Some(r))).filter(|&v| v >= 0)
}

impl KinetoBuilder {
    /// Keeps one collective kernel (`ts`, `end` in ns; rank unknown here: −1).
    pub(super) fn nccl<'a>(
        &mut self,
        ev: &Event<'a>,
        args: &'a [u8],
        (ts, end): (i64, i64),
        stream: i64,
        origin: u16,
    ) {
        let [pg, coll, size, dtype, inn, out] =
            ev.args_fields(args, NCCL_KEYS).unwrap_or([None; 6]);
        self.b.t.nccl.push(NcclKernel {
            rank: -1,
            pg_name: text(pg),
            collective: text(coll),
            group_size: int(size),
            dtype: text(dtype),
            in_nelems: int(inn),
            out_nelems: int(out),
            stream,
            ts_us: ts as f64 / 1000.0,
            dur_us: (end - ts) as f64 / 1000.0,
            scope: Default::default(),
            trace: Default::default(),
        });
        self.origins.tag(Table::Nccl, origin, &self.b.t);
    }
}
