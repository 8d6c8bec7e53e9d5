//! The integration tests, one binary (linking ovk and polars once instead of once per file);
//! one module per area, so `cargo test --release --test it okl_solvers::` runs one file.
//! Shared scaffolding is in `tests/common` (`crate::common::…`). Apart: `tests/prop` (property
//! tests watched by a tracking allocator) and `tests/cancel_frees.rs` (a counting allocator).
//!
//! Adding a test file: put it in `tests/it/NAME.rs`, add `mod NAME;` below (sorted), and take
//! helpers from `crate::common` (no `mod binary;`/`#[path]` of its own).

#[path = "../common/mod.rs"]
mod common;

mod cli_bench;
mod cli_conventions;
mod cli_input_rank;
mod cli_options;
mod cli_run;
mod cli_sweep;
mod collect_bounds;
mod compare_runs;
mod completions;
mod data_encode;
mod data_errors;
mod data_prepare;
mod doc_commands;
mod e2e_tui;
mod example_sessions;
mod figures;
mod gen_formats;
mod honest_study;
mod hostile_inputs;
mod hostile_outputs;
mod kde_fit;
mod kde_solve;
mod kill_during_save;
mod lowrank_gpmix;
mod lowrank_input;
mod lowrank_large;
mod lowrank_okl;
mod lowrank_qn;
mod lowrank_vvmr_kde;
mod method_configs;
mod metrics_values;
mod mvml_core;
mod mvml_fit;
mod numerical_faults;
mod okl_solvers;
mod one_reader;
mod paper_quick;
mod plain_messages;
mod plan_shell;
mod precomputed;
mod predict_blocks;
mod predict_sessions;
mod research_formats;
mod resource_limits;
mod session_inputs;
mod session_store;
mod session_summary;
mod signal_exits;
mod sparse_features;
mod stale_saves;
mod streamed_route;
mod sweep_search;
mod sweep_spawn;
mod tampered_models;
mod target_scale;
mod travel_sessions;
mod tui_diag;
mod tui_render;
mod tui_search;
mod tui_study;
mod tui_views;
mod view_baseline;
mod vvmr_solve;
mod worker_fit;
