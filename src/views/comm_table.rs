//! The Communication tab's table helpers over its payloads (`protocol::comm`): row orders for
//! the sortable tables, the text filter of the per-op table, the stacked-bar parts of a time
//! row, and the heatmap's hit test and cell labels. Pure, natively tested; the UI only renders.

use crate::protocol::comm::{CommArrivalDto, CommMatrixDto, CommTimeDto};

/// The parts of a time row's stacked bar, in order: transit, wait outside synchronization,
/// synchronization, idle (ms). They add up to the elapse: HCCL's wait holds the
/// synchronization, and elapse = transit + wait + idle (communication.md §1.2).
pub fn stack(t: &CommTimeDto) -> [f64; 4] {
    [
        t.transit_ms,
        (t.wait_ms - t.sync_ms).max(0.0),
        t.sync_ms,
        t.idle_ms,
    ]
}

/// Names of the stacked-bar parts.
pub const STACK_NAMES: [&str; 4] = ["transit", "wait (not sync)", "synchronization", "idle"];

fn time_key(t: &CommTimeDto, key: &str) -> f64 {
    match key {
        "ops" => t.n_ops as f64,
        "elapse" => t.elapse_ms,
        "transit" => t.transit_ms,
        "wait" => t.wait_ms,
        "sync" => t.sync_ms,
        "idle" => t.idle_ms,
        "wait_ratio" => t.wait_ratio,
        "sync_ratio" => t.sync_ratio,
        _ => t.rank as f64,
    }
}

/// The order of `rows` by column `key` (`rank`, `ops`, `elapse`, `transit`, `wait`, `sync`,
/// `idle`, `wait_ratio`, `sync_ratio`), ties by rank; descending when `desc`.
pub fn time_order(rows: &[&CommTimeDto], key: &str, desc: bool) -> Vec<usize> {
    let mut ix: Vec<usize> = (0..rows.len()).collect();
    ix.sort_by(|&a, &b| {
        let (x, y) = (time_key(rows[a], key), time_key(rows[b], key));
        let o = if desc {
            y.total_cmp(&x)
        } else {
            x.total_cmp(&y)
        };
        o.then(rows[a].rank.cmp(&rows[b].rank))
    });
    ix
}

fn arrival_key(a: &CommArrivalDto, key: &str) -> f64 {
    match key {
        "ranks" => a.n_ranks as f64,
        "last" => a.last_rank as f64,
        "last_elapse" => a.last_elapse_ms,
        "max_elapse" => a.max_elapse_ms,
        "mean" => a.mean_elapse_ms,
        "start_spread" => a.start_spread_us.unwrap_or(f64::NEG_INFINITY),
        _ => a.spread_ms,
    }
}

/// The per-op rows of `(step, group)` whose op name contains `q` (case-insensitive; empty:
/// all), ordered by `key` (`spread` by default, `ranks`, `last`, `last_elapse`,
/// `max_elapse`, `mean`, `start_spread`, `op`), descending when `desc`; ties in report order.
pub fn arrival_order(
    rows: &[CommArrivalDto],
    step: &str,
    group: &str,
    q: &str,
    key: &str,
    desc: bool,
) -> Vec<usize> {
    let q = q.trim().to_lowercase();
    let mut ix: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, a)| a.step == step && a.group == group)
        .filter(|(_, a)| q.is_empty() || a.op.to_lowercase().contains(&q))
        .map(|(i, _)| i)
        .collect();
    ix.sort_by(|&a, &b| {
        let o = match key {
            "op" => rows[a].op.cmp(&rows[b].op),
            _ => arrival_key(&rows[a], key).total_cmp(&arrival_key(&rows[b], key)),
        };
        if desc {
            o.reverse()
        } else {
            o
        }
    });
    ix
}

/// The block `(col, row)` of `m` under the point `(x, y)` of a plot `w × h` px wide (blocks
/// drawn as squares of `min(w / cols, h / rows)` px from the top left); `None` outside.
pub fn hit(m: &CommMatrixDto, x: f64, y: f64, w: f64, h: f64) -> Option<(u32, u32)> {
    let side = cell_px(m, w, h);
    if x < 0.0 || y < 0.0 || side <= 0.0 {
        return None;
    }
    let (c, r) = ((x / side) as u32, (y / side) as u32);
    (c < m.cols && r < m.rows).then_some((c, r))
}

/// The side of one block on a plot `w × h` px.
pub fn cell_px(m: &CommMatrixDto, w: f64, h: f64) -> f64 {
    if m.cols == 0 || m.rows == 0 {
        return 0.0;
    }
    (w / m.cols as f64).min(h / m.rows as f64)
}

/// The global ranks a block covers on one axis: `(first, last)` of positions
/// `start + k·block ..` clamped to the axis.
pub fn block_ranks(m: &CommMatrixDto, start: u32, k: u32) -> Option<(i64, i64)> {
    let a = (start + k * m.block) as usize;
    let b = (a + m.block as usize).min(m.axis.len()).checked_sub(1)?;
    Some((*m.axis.get(a)?, *m.axis.get(b)?))
}

/// Whether the window's cells get their values written in them: at most 16 ranks visible on
/// each side, one link a cell (MindStudio Insight's rule, docs/rules/communication.md §8).
pub fn labels_shown(m: &CommMatrixDto) -> bool {
    m.block == 1 && m.cols <= 16 && m.rows <= 16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(rank: i64, elapse: f64) -> CommTimeDto {
        CommTimeDto {
            step: "s".into(),
            group: "g".into(),
            rank,
            n_ops: 1,
            elapse_ms: elapse,
            transit_ms: 0.00658,
            wait_ms: 2.31228,
            sync_ms: 1.12432,
            idle_ms: 0.60686,
            wait_ratio: 0.9972,
            sync_ratio: 0.9942,
        }
    }

    #[test]
    fn the_stack_adds_up_to_the_elapse() {
        // docs/rules/communication.md §5: MSI-ST, rank 1 of the default group.
        let r = t(1, 2.92572);
        let s = stack(&r);
        assert!((s.iter().sum::<f64>() - 2.92572).abs() < 1e-12);
        assert!((s[1] - 1.18796).abs() < 1e-12);
    }

    #[test]
    fn orders_and_hits() {
        let rows = [t(3, 1.0), t(0, 5.0), t(1, 1.0)];
        let refs: Vec<&CommTimeDto> = rows.iter().collect();
        assert_eq!(time_order(&refs, "elapse", true), vec![1, 2, 0]);
        assert_eq!(time_order(&refs, "rank", false), vec![1, 2, 0]);
        let m = CommMatrixDto {
            axis: (0..40).collect(),
            block: 4,
            cols: 10,
            rows: 10,
            ..Default::default()
        };
        assert_eq!(hit(&m, 15.0, 39.0, 100.0, 200.0), Some((1, 3)));
        assert_eq!(hit(&m, 101.0, 0.0, 100.0, 200.0), None);
        assert_eq!(block_ranks(&m, 36, 0), Some((36, 39)));
        assert_eq!(block_ranks(&m, 0, 9), Some((36, 39)));
        assert!(!labels_shown(&m));
    }
}
