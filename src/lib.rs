//! ovk — learning with operator-valued (matrix-valued) kernels.
//!
//! The numerical engine is layered; a module uses only those listed before it (check:
//! `grep -rn "crate::<module>" src/<lower module>` finds nothing):
//!
//! 1. `util` — a seeded generator, NaN-tolerant JSON readers, text helpers (`error` too);
//! 2. `linalg` — dense linear algebra (faer behind ndarray);
//! 3. `kernels` — kernel functions, Gram matrices, low-rank factors, graphs, memory budgets;
//! 4. `data` — tables, column roles, splits, scaling;
//! 5. `methods` — the learning methods and their `ParamSpec`s;
//! 6. `metrics` — scores (`MetricMap`);
//! 7. `config` — `RunConfig`, a run fully specified;
//! 8. `session` — saved runs: records, matrices, the store;
//! 9. `train` — the pipeline that turns a `RunConfig` into a session, sweeps, benchmarks.
//!
//! It knows nothing of its two faces: the terminal workbench (`tui`) and the headless commands
//! (`cli`). Both run fits through `train` and read results through `session`; besides, they
//! read the declarations that become flags, config keys and fields (`methods::registry`,
//! `ParamSpec`, `kernels::KernelSpec`, `data::DataConfig`), and the workbench calls `data`
//! directly to preview a table and `data::prepare` with `kernels::median_distance` to show the
//! median σ before a fit. The mathematics of the methods is in docs/methods.md.

pub mod cli;
pub mod config;
pub mod data;
pub mod error;
pub mod kernels;
pub mod linalg;
pub mod methods;
pub mod metrics;
pub mod session;
pub mod train;
pub mod tui;
pub mod util;

pub use error::{OvkError, Result};
