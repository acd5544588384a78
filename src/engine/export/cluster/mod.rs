//! The cluster path (`docs/cluster-summary.md`): per-target rank summaries from the
//! store's analysis values ([`summary`]) and their reduce into one cluster summary
//! ([`reduce`]), and the summary's per-rank table ([`ranks_table`]). The format itself is
//! plain data in `protocol::cluster`.
pub mod ranks_table;
pub mod reduce;
pub mod summary;
