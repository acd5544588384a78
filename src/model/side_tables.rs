//! Small side inputs of the anomaly analysis: `communication.json` ops
//! (anomaly.md §1.4) and `step_trace_time.csv` rows (§1.5). Times in ns.

/// One communication op of `communication.json` (§1.4), `Total Op Info` excluded.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CommOp {
    /// Step key as written (`step50`, `step`).
    pub step_key: String,
    /// `collective` or `p2p`.
    pub group_kind: String,
    /// Op key before `@`.
    pub collective_name: String,
    /// Op key after `@` (empty when absent).
    pub group_name: String,
    /// `Start Timestamp(us)` in ns (kernel clock).
    pub start_ns: i64,
    /// `Elapse Time(ms)` in ms.
    pub elapse_ms: f64,
    /// `Wait Time(ms)`.
    pub wait_ms: f64,
    /// `Wait Time Ratio`.
    pub wait_ratio: f64,
    /// `Synchronization Time(ms)`.
    pub sync_ms: f64,
    /// `Synchronization Time Ratio`.
    pub sync_ratio: f64,
    /// `Transit Time(ms)`.
    pub transit_ms: f64,
    /// `Idle Time(ms)`.
    pub idle_ms: f64,
    /// Bytes moved: `(SDMA if present else HCCS+PCIE+SIO) + RDMA` × 1,048,576 (§1.4 Decision).
    pub message_size_bytes: f64,
    /// Transport keys with non-zero `Transit Size(MB)`.
    pub transport_types: Vec<String>,
    /// `(transport, Bandwidth(GB/s))` for transports with non-zero size.
    pub bandwidth_gbps: Vec<(String, f64)>,
    /// The op's data size for the slow-link rule (`count × element bytes` of its HCCL op event
    /// in `trace_view.json` or its `COMMUNICATION_OP` row, communication.md §2.4.2); `None`
    /// when unknown.
    pub data_size: Option<u64>,
}

/// One row of `step_trace_time.csv` (§1.5), values in ns (µs text parsed exactly).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StepTraceRow {
    /// `Step` as written (may be empty).
    pub step: String,
    /// 1-based physical line.
    pub line: u64,
    /// `Computing`.
    pub computing_ns: Option<i64>,
    /// `Communication(Not Overlapped)`.
    pub comm_not_overlapped_ns: Option<i64>,
    /// `Communication`.
    pub communication_ns: Option<i64>,
    /// `Free`.
    pub free_ns: Option<i64>,
    /// `Stage`.
    pub stage_ns: Option<i64>,
    /// `Bubble`.
    pub bubble_ns: Option<i64>,
    /// `Preparing` (2025+ files).
    pub preparing_ns: Option<i64>,
}
