//! Bytes → a candidates file for kde's pre-image (`--candidates FILE`): Parquet when they start
//! with `PAR1`, else CSV; the output columns asked for are the first line's names (up to three),
//! or `a, b`. `read_candidates` must return a finite, non-empty c×m matrix of those columns or
//! refuse with exit 2 naming the file — through whatever reader it uses, never a panic, an
//! abort or a hang (a FIFO is not written here: the harness `hostile.sh` covers it).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovk_core::methods::kde::candidates::read_candidates;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let parquet = data.starts_with(b"PAR1");
    let name = if parquet { "cand.parquet" } else { "cand.csv" };
    let path = common::scratch("candidates").join(name);
    std::fs::write(&path, data).expect("write input");
    let mut names: Vec<String> = Vec::new();
    if !parquet {
        if let Some(line) = data.split(|&b| b == b'\n').next() {
            names = String::from_utf8_lossy(line)
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .take(3)
                .collect();
        }
    }
    if names.is_empty() {
        names = vec!["a".into(), "b".into()];
    }
    match read_candidates(&path, &names) {
        Ok(c) => {
            assert!(c.nrows() > 0, "no candidates accepted");
            assert_eq!(c.ncols(), names.len());
            assert!(c.iter().all(|v| v.is_finite()), "a non-finite candidate");
        }
        Err(e) => common::check_refusal(&e, &[name]),
    }
});
