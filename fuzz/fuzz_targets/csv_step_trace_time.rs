//! `step_trace_time.csv` reader (src/parse/csv/step_trace_time.rs).
//!
//! Input: the bytes of the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::base::Problems;
use proflens::parse::csv::step_trace_time::read;
use proflens_fuzz::render_problems;

fuzz_target!(|data: &[u8]| {
    let mut problems = Problems::new();
    match read(
        data,
        "r_ascend_pt/ASCEND_PROFILER_OUTPUT/step_trace_time.csv",
        &mut problems,
    ) {
        Ok(rows) => {
            let _ = rows.len();
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    render_problems(&problems);
});
