//! Bytes → a table file → the loader the CLI uses: `load_table` (the TUI's preview) and
//! `prepare` with default roles (`ovk run`). Input starting with Parquet's magic `PAR1` is
//! written as `.parquet`; otherwise as `.csv`, or `.tsv` when the first byte is odd.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovk_core::data::{load_table, prepare, DataConfig, PrepareOptions};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let name = if data.starts_with(b"PAR1") {
        "input.parquet"
    } else if data.first().is_some_and(|b| b & 1 == 1) {
        "input.tsv"
    } else {
        "input.csv"
    };
    let path = common::scratch("table").join(name);
    std::fs::write(&path, data).expect("write input");
    match load_table(&path, 5) {
        Ok(t) => assert!(t.n_rows > 0 && !t.columns.is_empty()),
        Err(e) => common::check_refusal(&e, &[name]),
    }
    if let Err(e) = prepare(&DataConfig::new(&path), PrepareOptions::default()) {
        common::check_refusal(&e, &[name]);
    }
});
