//! `trace_view.json` → the data size of each HCCL op (communication.md §2.4.2; the rule in the
//! repo's words: docs/rules/communication.md "Slow links"). An op-level HCCL event (`ph` `X`,
//! name `hcom_…`, e.g. `hcom_allReduce__586_0_1`) carries `args.count` and `args.data_type`
//! (`FP32`, …); its size is `count × element bytes` ([`crate::model::comm::op_data_size`]).
//! The task events under it (`Memcpy`, `Notify_Wait`, …) carry `"data type"` and
//! `"size(Byte)"` instead and are not ops.
//!
//! A consumer of the rank's one `trace_view.json` pass (`engine::read::rank` step 2), beside the
//! memory call-stack index and the anomaly timeline: it looks only at events whose `name` starts
//! with `hcom` (a byte compare on the indexed key), so it adds almost nothing to the pass.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use super::object::Event;
use super::scan::{as_str, decimal_text};
use crate::model::comm::op_data_size;

/// The sizes found so far: op name → bytes, the first event of a name kept (file order). An op
/// event whose type has no element size (`INVALID_TYPE`, …) or whose count is not a
/// non-negative integer leaves its op without a size (msprof-analyze's NULL).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HcclSizes {
    /// Op name → bytes.
    pub bytes: BTreeMap<String, u64>,
}

impl HcclSizes {
    /// Looks at one event of the pass (`at`: its byte offset, unused: nothing here is a
    /// problem of the file). Always `Continue`.
    #[inline]
    pub fn indexed_event(&mut self, ev: Event<'_>, _at: u64) -> ControlFlow<()> {
        let Some(([name, args], _)) = ev.fields_dup(["name", "args"]) else {
            return ControlFlow::Continue(());
        };
        let (Some(name), Some(args)) = (name, args) else {
            return ControlFlow::Continue(());
        };
        if name.len() < 5 || !name[1..5].eq_ignore_ascii_case(b"hcom") {
            return ControlFlow::Continue(());
        }
        let Some([Some(count), Some(dtype)]) = ev.args_fields(args, ["count", "data_type"]) else {
            return ControlFlow::Continue(());
        };
        let Some(name) = as_str(name) else {
            return ControlFlow::Continue(());
        };
        if self.bytes.contains_key(name.as_ref()) {
            return ControlFlow::Continue(());
        }
        let count = decimal_text(count).and_then(|t| t.parse::<i64>().ok());
        let size = count
            .zip(as_str(dtype))
            .and_then(|(c, t)| op_data_size(c, &t));
        if let Some(b) = size {
            self.bytes.insert(name.into_owned(), b);
        }
        ControlFlow::Continue(())
    }

    /// Appends the sizes a later byte range of the same file found (formats.md §8.2): a name
    /// this one already has keeps its first size, as one reader would.
    pub fn absorb(&mut self, later: HcclSizes) {
        for (k, v) in later.bytes {
            self.bytes.entry(k).or_insert(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::trace_json::for_each_indexed_event;

    fn sizes_of(text: &str) -> HcclSizes {
        let mut s = HcclSizes::default();
        let mut rdr = crate::ingest::ChunkReader::new(text.as_bytes(), None);
        for_each_indexed_event(
            &mut rdr,
            &"t.json".into(),
            &mut |_| ControlFlow::Continue(()),
            &mut |ev, at| s.indexed_event(ev, at),
        )
        .unwrap();
        s
    }

    #[test]
    fn op_events_give_count_times_element_bytes_and_tasks_are_not_ops() {
        let s = sizes_of(
            r#"[{"name": "hcom_allReduce__586_0_1", "ph": "X", "args": {"connection_id": 1175, "data_type": "FP32", "alg_type": "MESH-RING", "count": 4097000}},
               {"name": "Memcpy", "ph": "X", "args": {"data type": "INVALID_TYPE", "size(Byte)": 2064384}},
               {"name": "hcom_broadcast__1_2_1", "ph": "X", "args": {"data_type": "BFP16", "count": "7"}},
               {"name": "hcom_allReduce__586_0_1", "ph": "X", "args": {"data_type": "INT8", "count": 1}},
               {"name": "hcom_send__1_3_1", "ph": "X", "args": {"data_type": "INVALID_TYPE", "count": 8}},
               {"name": "HCOM_x", "ph": "X", "args": {"data_type": "INT128", "count": -1}}]"#,
        );
        let want: BTreeMap<String, u64> = [
            ("hcom_allReduce__586_0_1".to_string(), 16_388_000),
            ("hcom_broadcast__1_2_1".to_string(), 14),
        ]
        .into();
        assert_eq!(s.bytes, want);
    }

    #[test]
    fn a_later_range_never_overrides_an_earlier_size() {
        let mut a =
            sizes_of(r#"[{"name": "hcom_a__1_1_1", "args": {"data_type": "FP16", "count": 2}}]"#);
        let b = sizes_of(
            r#"[{"name": "hcom_a__1_1_1", "args": {"data_type": "FP32", "count": 2}},
               {"name": "hcom_b__1_2_1", "args": {"data_type": "FP32", "count": 2}}]"#,
        );
        a.absorb(b);
        assert_eq!(a.bytes["hcom_a__1_1_1"], 4);
        assert_eq!(a.bytes["hcom_b__1_2_1"], 8);
        assert_eq!(
            a,
            sizes_of(
                r#"[{"name": "hcom_a__1_1_1", "args": {"data_type": "FP16", "count": 2}},
               {"name": "hcom_a__1_1_1", "args": {"data_type": "FP32", "count": 2}},
               {"name": "hcom_b__1_2_1", "args": {"data_type": "FP32", "count": 2}}]"#
            )
        );
    }
}
