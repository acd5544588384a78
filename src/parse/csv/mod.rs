//! CSV inputs (formats.md §1–2). [`table`] is the generic streaming reader every
//! CSV parser uses: BOM, CRLF/LF, quoted multi-line fields, header resolution by
//! trimmed name, trimmed cells, physical line numbers, short/long rows, progress.

pub mod operator_memory;
pub mod table;

pub use table::{CsvTable, Header, LineEndings, RowRead};
pub mod kernel_details;
pub mod step_trace_time;
