//! `kernel_details.csv` / `op_summary*.csv` reader (src/parse/csv/kernel_details.rs) and the
//! kernel table it builds (src/model/kernels.rs: sort, stream keys).
//!
//! Input: the bytes of the file.
#![no_main]

use libfuzzer_sys::fuzz_target;
use proflens::base::Problems;
use proflens::model::kernels::KernelTableBuilder;
use proflens::parse::csv::kernel_details::read;
use proflens_fuzz::{go_on, render_problems};

fuzz_target!(|data: &[u8]| {
    let mut builder = KernelTableBuilder::new();
    let mut problems = Problems::new();
    let res = read(
        data,
        "r_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv",
        Some(data.len() as u64),
        &mut builder,
        &mut problems,
        &mut go_on,
    );
    match res {
        Ok(info) => assert!(info.rows_kept <= info.rows_read),
        Err(e) => {
            let _ = e.to_string();
        }
    }
    let table = builder.finish();
    let _ = table.len();
    render_problems(&problems);
});
