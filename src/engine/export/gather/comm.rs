//! The communication analysis gathered over workers: the cross-rank rules need every rank's
//! tables, so each worker sends, once, the per-rank tables it read ([`part`]: every held
//! rank's [`RankComm`], and every held GPU rank's NCCL kernels with its view index and rank
//! id), and one worker decodes all parts ([`join`]) into the inputs `proflens comm` analyses
//! from one store: the same ranks (sorted by the analysis), and the kernels in the store's
//! GPU rank order with the same rank fallback (`engine::export::comm::gpu_kernels`). So the
//! joined report equals the CLI's by construction, whatever the split over workers.

use crate::base::wire::{Dec, DecResult, Enc};
use crate::engine::store::{view_order, Store};
use crate::model::comm::{
    CommBandRow, CommLinkRow, CommTimeRow, NcclKernel, PacketBin, ParallelGroup, RankComm, Section,
};

pub(crate) const TABLES: &[u8] = b"PLCOMM2\n";

fn section(e: &mut Enc, s: Option<Section>) {
    e.u8(match s {
        None => 0,
        Some(Section::P2p) => 1,
        Some(Section::Collective) => 2,
    });
}

fn opt_str(e: &mut Enc, s: Option<&str>) {
    e.bool(s.is_some());
    if let Some(s) = s {
        e.str(s);
    }
}

fn time_row(e: &mut Enc, o: &CommTimeRow) {
    e.str(&o.step);
    section(e, o.section);
    e.str(&o.op);
    e.str(&o.group);
    e.opt_f64(o.start_us);
    for x in [
        o.elapse_ms,
        o.transit_ms,
        o.wait_ms,
        o.sync_ms,
        o.idle_ms,
        o.wait_ratio,
        o.sync_ratio,
    ] {
        e.f64(x);
    }
}

fn rank_comm(e: &mut Enc, r: &RankComm) {
    e.i64(r.rank);
    e.str(&r.label);
    e.bool(r.has_time);
    e.bool(r.has_matrix);
    e.u64(r.ops.len() as u64);
    r.ops.iter().for_each(|o| time_row(e, o));
    e.u64(r.file_totals.len() as u64);
    r.file_totals.iter().for_each(|o| time_row(e, o));
    e.u64(r.bands.len() as u64);
    for b in &r.bands {
        e.u32(b.op);
        e.str(&b.transport);
        for x in [b.size_mb, b.time_ms, b.bandwidth_gbps, b.large_packet_ratio] {
            e.f64(x);
        }
        e.u64(b.bins.len() as u64);
        for p in &b.bins {
            e.str(&p.size_key);
            e.f64(p.count);
            e.f64(p.time_ms);
        }
    }
    e.u64(r.links.len() as u64);
    for l in &r.links {
        for s in [
            &l.step,
            &l.kind,
            &l.group,
            &l.src,
            &l.dst,
            &l.transport,
            &l.op_name,
        ] {
            e.str(s);
        }
        section(e, l.section);
        for x in [l.size_mb, l.time_ms, l.bandwidth_gbps] {
            e.f64(x);
        }
    }
    e.u64(r.groups.len() as u64);
    for g in &r.groups {
        e.str(&g.id);
        e.str(&g.name);
        e.u64(g.global_ranks.len() as u64);
        g.global_ranks.iter().for_each(|&x| e.i64(x));
    }
    e.bool(r.has_sizes);
    e.u64(r.op_bytes.len() as u64);
    for (op, b) in &r.op_bytes {
        e.str(op);
        e.u64(*b);
    }
}

fn kernel(e: &mut Enc, k: &NcclKernel) {
    e.i64(k.rank);
    opt_str(e, k.pg_name.as_deref());
    opt_str(e, k.collective.as_deref());
    e.opt_i64(k.group_size);
    opt_str(e, k.dtype.as_deref());
    e.opt_i64(k.in_nelems);
    e.opt_i64(k.out_nelems);
    e.i64(k.stream);
    e.f64(k.ts_us);
    e.f64(k.dur_us);
}

/// Round 0 of the communication join: every rank `store` holds with communication tables
/// (as `engine::export::comm::report` takes them: read, not cancelled, with a file read), then
/// every GPU rank with NCCL kernels as `(view index, rank id, kernels)`.
///
/// # Errors
///
/// A held rank was cancelled.
pub fn part(store: &Store) -> Result<Vec<u8>, String> {
    let reads = store
        .comm_ranks()
        .map_err(|_| "the communication read was cancelled".to_string())?;
    let mut e = Enc::new(TABLES);
    let tables: Vec<&RankComm> = reads
        .iter()
        .filter(|r| r.tables.has_time || r.tables.has_matrix)
        .map(|r| &r.tables)
        .collect();
    e.u64(tables.len() as u64);
    tables.iter().for_each(|r| rank_comm(&mut e, r));
    let gpu: Vec<_> = store
        .anomaly_indexed()
        .into_iter()
        .filter_map(|(i, r)| Some((i, r.ok()?)))
        .filter_map(|(i, r)| Some((i, r, r.gpu.as_ref()?)))
        .collect();
    e.u64(gpu.len() as u64);
    for (i, r, g) in gpu {
        e.u32(i);
        e.opt_i64(r.meta.rank_id);
        opt_str(&mut e, r.meta.role.as_deref());
        e.str(&r.dir_name);
        e.str(r.meta.inputs.first().map_or("", String::as_str));
        e.u64(g.nccl.len() as u64);
        g.nccl.iter().for_each(|k| kernel(&mut e, k));
    }
    Ok(e.buf)
}

fn dec_section(d: &mut Dec<'_>) -> DecResult<Option<Section>> {
    Ok(match d.u8()? {
        1 => Some(Section::P2p),
        2 => Some(Section::Collective),
        _ => None,
    })
}

fn dec_opt_str(d: &mut Dec<'_>) -> DecResult<Option<String>> {
    Ok(match d.bool()? {
        true => Some(d.str()?.to_string()),
        false => None,
    })
}

fn dec_time_row(d: &mut Dec<'_>) -> DecResult<CommTimeRow> {
    Ok(CommTimeRow {
        step: d.str()?.into(),
        section: dec_section(d)?,
        op: d.str()?.into(),
        group: d.str()?.into(),
        start_us: d.opt_f64()?,
        elapse_ms: d.f64()?,
        transit_ms: d.f64()?,
        wait_ms: d.f64()?,
        sync_ms: d.f64()?,
        idle_ms: d.f64()?,
        wait_ratio: d.f64()?,
        sync_ratio: d.f64()?,
    })
}

fn dec_rank(d: &mut Dec<'_>) -> DecResult<RankComm> {
    let mut r = RankComm {
        rank: d.i64()?,
        label: d.str()?.into(),
        has_time: d.bool()?,
        has_matrix: d.bool()?,
        ..Default::default()
    };
    for _ in 0..d.count(60)? {
        r.ops.push(dec_time_row(d)?);
    }
    for _ in 0..d.count(60)? {
        r.file_totals.push(dec_time_row(d)?);
    }
    for _ in 0..d.count(44)? {
        let mut b = CommBandRow {
            op: d.u32()?,
            transport: d.str()?.into(),
            size_mb: d.f64()?,
            time_ms: d.f64()?,
            bandwidth_gbps: d.f64()?,
            large_packet_ratio: d.f64()?,
            bins: Vec::new(),
        };
        for _ in 0..d.count(24)? {
            b.bins.push(PacketBin {
                size_key: d.str()?.into(),
                count: d.f64()?,
                time_ms: d.f64()?,
            });
        }
        r.bands.push(b);
    }
    for _ in 0..d.count(81)? {
        let s: Vec<String> = (0..7)
            .map(|_| d.str().map(String::from))
            .collect::<DecResult<_>>()?;
        let mut it = s.into_iter();
        let mut next = || it.next().unwrap_or_default();
        r.links.push(CommLinkRow {
            step: next(),
            kind: next(),
            group: next(),
            src: next(),
            dst: next(),
            transport: next(),
            op_name: next(),
            section: dec_section(d)?,
            size_mb: d.f64()?,
            time_ms: d.f64()?,
            bandwidth_gbps: d.f64()?,
        });
    }
    for _ in 0..d.count(24)? {
        let id = d.str()?.into();
        let name = d.str()?.into();
        let n = d.count(8)?;
        let global_ranks = (0..n).map(|_| d.i64()).collect::<DecResult<_>>()?;
        r.groups.push(ParallelGroup {
            id,
            name,
            global_ranks,
        });
    }
    r.has_sizes = d.bool()?;
    for _ in 0..d.count(16)? {
        let op = d.str()?.to_string();
        r.op_bytes.insert(op, d.u64()?);
    }
    Ok(r)
}

fn dec_kernel(d: &mut Dec<'_>) -> DecResult<NcclKernel> {
    Ok(NcclKernel {
        rank: d.i64()?,
        pg_name: dec_opt_str(d)?,
        collective: dec_opt_str(d)?,
        group_size: d.opt_i64()?,
        dtype: dec_opt_str(d)?,
        in_nelems: d.opt_i64()?,
        out_nelems: d.opt_i64()?,
        stream: d.i64()?,
        ts_us: d.f64()?,
        dur_us: d.f64()?,
        scope: Default::default(),
        trace: Default::default(),
    })
}

/// Every worker's [`part`] decoded: the ranks' tables (any order: the analysis sorts them)
/// and the NCCL kernels in the store's GPU rank order, each with its rank id (a rank without
/// one: its position among the GPU ranks, as `engine::export::comm::gpu_kernels`).
///
/// # Errors
///
/// A part that is not a communication part, or cut.
pub fn join(parts: &[Vec<u8>]) -> Result<(Vec<RankComm>, Vec<NcclKernel>), String> {
    /// One GPU rank of a part: view index, rank id, role, trace name, trace file, kernels.
    type Held = (
        u32,
        Option<i64>,
        Option<String>,
        String,
        String,
        Vec<NcclKernel>,
    );
    let mut ranks = Vec::new();
    let mut gpu: Vec<Held> = Vec::new();
    for p in parts {
        let mut d = Dec::new(p, TABLES)?;
        for _ in 0..d.count(26)? {
            ranks.push(dec_rank(&mut d)?);
        }
        for _ in 0..d.count(13)? {
            let i = d.u32()?;
            let id = d.opt_i64()?;
            let role = dec_opt_str(&mut d)?;
            let dir_name = d.str()?.to_string();
            let trace = d.str()?.to_string();
            let ks = (0..d.count(38)?)
                .map(|_| dec_kernel(&mut d))
                .collect::<DecResult<Vec<_>>>()?;
            gpu.push((i, id, role, dir_name, trace, ks));
        }
    }
    crate::base::sort::sort_by_key(&mut gpu, |g| view_order(g.0));
    let held: Vec<_> = gpu
        .iter()
        .enumerate()
        .map(|(k, g)| crate::engine::export::comm::GpuRankKernels {
            rank: g.1.unwrap_or(k as i64),
            role: g.2.as_deref().unwrap_or(""),
            dir_name: &g.3,
            trace: &g.4,
            kernels: &g.5,
        })
        .collect();
    Ok((ranks, crate::engine::export::comm::scoped_kernels(&held)))
}
