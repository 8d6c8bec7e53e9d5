//! Bytes → a `.toml` file → the run-config parser (`ovk run --config`) and the sweep-config
//! parser (`ovk sweep --config`, with its `{ log|lin = [a, b], n = N }` ranges and grid
//! expansion), then every configuration through `build_run_config`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ovk::cli::{build_run_config, expand, read_config, read_grid};

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    let path = common::scratch("config").join("config.toml");
    std::fs::write(&path, data).expect("write input");
    match read_config(&path) {
        Ok(raw) => {
            // Errors here are about option values (flags or keys), which need not name the file.
            if let Err(e) = build_run_config(&raw) {
                assert_eq!(e.exit_code(), 2, "{e:?}");
                assert!(!e.to_string().trim().is_empty());
            }
        }
        Err(e) => common::check_refusal(&e, &["config.toml"]),
    }
    match read_grid(&path) {
        Ok(grid) => {
            for raw in expand(&grid) {
                if let Err(e) = build_run_config(&raw) {
                    assert_eq!(e.exit_code(), 2, "{e:?}");
                    assert!(!e.to_string().trim().is_empty());
                }
            }
        }
        Err(e) => common::check_refusal(&e, &["config.toml"]),
    }
});
