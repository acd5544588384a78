//! `operator_memory.csv` reader (src/parse/csv/operator_memory.rs) in default and parity
//! mode, over the generic CSV table (src/parse/csv/table.rs).
//!
//! Input: the bytes of the file. Checks: the row counts add up.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::base::Problems;
use proflens::model::memory_events::MemoryEventTable;
use proflens::model::strings::StringPool;
use proflens::parse::csv::operator_memory::{read, CsvMode};
use proflens_fuzz::{go_on, render_problems};

fuzz_target!(|data: &[u8]| {
    for mode in [CsvMode::Default, CsvMode::Parity] {
        let mut strings = StringPool::new();
        let mut table = MemoryEventTable::new();
        let mut problems = Problems::new();
        let mut src = data;
        let res = read(
            &mut src,
            "r_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv",
            Some(data.len() as u64),
            mode,
            &mut strings,
            &mut table,
            &mut problems,
            &mut go_on,
        );
        match res {
            Ok(stats) => {
                assert!(stats.rows_kept + stats.rows_skipped <= stats.rows_in);
                assert_eq!(table.len() as u64, stats.rows_kept);
            }
            Err(e) => {
                let _ = e.to_string();
            }
        }
        render_problems(&problems);
    }
});
