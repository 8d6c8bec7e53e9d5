//! ovk-lab — the papers' experiments and the engine of the benchmarks, on the ovk-core engine,
//! with the one locator of data sets they and the `benches/` share. `ovk paper` and `ovk bench`
//! (in the `ovk` crate's `cli`) are their command-line faces. Kept out of the engine so that
//! the product's library is the methods, not the harness that measures them.

pub mod bench_engine;
pub mod datasets;
pub mod papers;
pub mod synthetic;
