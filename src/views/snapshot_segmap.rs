//! The segment map of the allocator state view: one address-ordered strip per
//! segment, blocks laid out as rectangles of a strip `width` units wide. Blocks narrower
//! than `min_w` units are merged with their neighbours into one rectangle, coloured by the
//! state holding most of its bytes (so a strip of 6,000 blocks still draws at most
//! `width / min_w` rectangles and no block disappears).

use crate::protocol::snapshot_allocator::SnapSegmentMapDto;

/// One rectangle of a strip, in strip units (`0 ..= width`).
#[derive(Clone, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x: f64,
    /// Width.
    pub w: f64,
    /// `allocated`, `pending_free` or `inactive`: the state of most bytes under it.
    pub state: &'static str,
    /// First block under it (index into the segment's `blocks`).
    pub first: usize,
    /// Blocks under it.
    pub count: usize,
}

fn state_key(s: &str) -> usize {
    match s {
        "allocated" => 0,
        "pending_free" => 1,
        _ => 2,
    }
}

const STATES: [&str; 3] = ["allocated", "pending_free", "inactive"];

/// The rectangles of segment `seg` in a strip `width` units wide, merging blocks narrower
/// than `min_w` units.
pub fn strip(seg: &SnapSegmentMapDto, width: f64, min_w: f64) -> Vec<Rect> {
    let total = seg.total_bytes.max(1) as f64;
    let scale = width / total;
    let mut out: Vec<Rect> = Vec::new();
    let mut acc: Option<(Rect, [u64; 3])> = None;
    for (i, b) in seg.blocks.iter().enumerate() {
        let x = b.offset as f64 * scale;
        let w = b.bytes as f64 * scale;
        let k = state_key(&b.state);
        if w >= min_w {
            if let Some((r, _)) = acc.take() {
                out.push(r);
            }
            out.push(Rect {
                x,
                w,
                state: STATES[k],
                first: i,
                count: 1,
            });
            continue;
        }
        let (r, bytes) = acc.get_or_insert_with(|| {
            (
                Rect {
                    x,
                    w: 0.0,
                    state: STATES[k],
                    first: i,
                    count: 0,
                },
                [0; 3],
            )
        });
        bytes[k] += b.bytes;
        r.w = x + w - r.x;
        r.count += 1;
        let top = (0..3).max_by_key(|&j| (bytes[j], 3 - j)).unwrap_or(k);
        r.state = STATES[top];
        if r.w >= min_w {
            if let Some((r, _)) = acc.take() {
                out.push(r);
            }
        }
    }
    if let Some((r, _)) = acc.take() {
        out.push(r);
    }
    out
}

/// The rectangle of `rects` under strip position `x` (None in a gap or outside).
pub fn hit(rects: &[Rect], x: f64) -> Option<usize> {
    let i = rects.partition_point(|r| r.x + r.w <= x);
    rects.get(i).filter(|r| r.x <= x).map(|_| i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::snapshot_allocator::SnapBlockDto;

    fn block(offset: u64, bytes: u64, state: &str) -> SnapBlockDto {
        SnapBlockDto {
            address: format!("0x{offset:x}"),
            offset,
            bytes,
            requested_bytes: bytes,
            state: state.into(),
            stream: 0,
            record: None,
            memoryviz_name: None,
            site: None,
            exact: true,
        }
    }

    fn seg(blocks: Vec<SnapBlockDto>) -> SnapSegmentMapDto {
        SnapSegmentMapDto {
            address: "0x0".into(),
            total_bytes: blocks.iter().map(|b| b.bytes).sum(),
            stream: 0,
            pool: Some((0, 0)),
            expandable: false,
            allocated_bytes: 0,
            pending_bytes: 0,
            inactive_bytes: 0,
            largest_free_bytes: 0,
            blocks,
        }
    }

    #[test]
    fn wide_blocks_keep_their_place_and_tiny_ones_merge() {
        // 1000 bytes on 100 units: 500 allocated, then ten 10-byte blocks (1 unit each:
        // 7 inactive, 3 pending), then 400 pending.
        let mut b = vec![block(0, 500, "allocated")];
        for k in 0..10 {
            let st = if k < 7 { "inactive" } else { "pending_free" };
            b.push(block(500 + 10 * k, 10, st));
        }
        b.push(block(600, 400, "pending_free"));
        let r = strip(&seg(b), 100.0, 4.0);
        let got: Vec<(f64, f64, &str, usize, usize)> = r
            .iter()
            .map(|r| (r.x, r.w, r.state, r.first, r.count))
            .collect();
        assert_eq!(
            got,
            vec![
                (0.0, 50.0, "allocated", 0, 1),
                (50.0, 4.0, "inactive", 1, 4),
                (54.0, 4.0, "inactive", 5, 4),
                (58.0, 2.0, "pending_free", 9, 2),
                (60.0, 40.0, "pending_free", 11, 1),
            ]
        );
        assert_eq!(hit(&r, 10.0), Some(0));
        assert_eq!(hit(&r, 55.0), Some(2));
        assert_eq!(hit(&r, 99.9), Some(4));
        assert_eq!(hit(&r, 100.0), None);
    }
}
