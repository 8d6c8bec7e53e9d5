//! The property tests (proptest), in one binary of their own: the allocator that remembers the
//! largest request (`common::support`) must see only these small inputs, never the method
//! tests' Gram matrices. `PROPTEST_CASES=2000 cargo test --release --test prop loader::` runs
//! more cases of one module.

#[path = "../common/mod.rs"]
mod common;

mod config;
mod loader;
mod session;

#[global_allocator]
static ALLOC: common::support::Tracking = common::support::Tracking;
