//! ovk-core — learning with operator-valued (matrix-valued) kernels: the engine of `ovk`.
//!
//! The numerical engine is layered; a module uses only those listed before it (checked by
//! `crates/ovk-core/tests/layering.rs`):
//!
//! 1. `util` — a seeded generator, NaN-tolerant JSON readers, text helpers (`error` too);
//! 2. `linalg` — dense linear algebra (faer behind ndarray);
//! 3. `kernels` — kernel functions, Gram matrices, low-rank factors, graphs, memory budgets;
//! 4. `data` — tables, column roles, splits, scaling;
//! 5. `methods` — the learning methods and their `ParamSpec`s;
//! 6. `metrics` — scores (`MetricMap`), paired tests of cross-validated runs;
//!    `inspect` — reading learned matrices (correlation view, orderings of the outputs);
//! 7. `config` — `RunConfig`, a run fully specified;
//! 8. `session` — saved runs: records, matrices, the store;
//! 9. `train` — the pipeline that turns a `RunConfig` into a session, and sweeps.
//!
//! It knows nothing of its two faces, the terminal workbench and the headless commands (the
//! `ovk` crate): this crate depends on no terminal or argument-parsing library. The mathematics
//! of the methods is in docs/methods.md; the crates and what each may use in
//! docs/architecture.md.
//!
//! A library user starts from the re-exports below: a [`RunConfig`] (one run, fully
//! specified) fitted by [`run`] into a [`RunOutcome`] while an [`Observer`] watches, saved runs
//! read through a [`Store`] as [`SessionRecord`]s, and [`predict_file`] scoring new rows with a
//! saved model. Each module holds the rest of its layer; what is not `pub` is internal.

#![deny(missing_docs)]

pub mod config;
pub mod data;
pub mod error;
pub mod inspect;
pub mod kernels;
pub mod linalg;
pub mod methods;
pub mod metrics;
pub mod session;
pub mod train;
pub mod util;

pub use config::RunConfig;
pub use error::{ErrorKind, OvkError, Result};
pub use methods::{MethodName, Observer, Silent};
pub use session::{SessionRecord, Store};
pub use train::{predict_file, run, PredictionTable, RunOutcome};
