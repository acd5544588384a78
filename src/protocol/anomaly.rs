//! Messages of the steps, bubbles and anomalies analysis (issue 3, anomaly.md).
//! Re-exported from [`crate::protocol`].
