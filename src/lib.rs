//! ovk — learning with operator-valued (matrix-valued) kernels.
//!
//! The numerical engine (`data`, `kernels`, `linalg`, `methods`, `metrics`, `session`, `train`)
//! knows nothing of its two faces: the terminal workbench (`tui`) and the headless commands
//! (`cli`). Both run fits through `train` and read results through `session`; besides, they
//! read the declarations that become flags, config keys and fields (`methods::registry`,
//! `ParamSpec`, `kernels::KernelSpec`, `data::DataConfig`), and the workbench calls `data`
//! directly to preview a table and `data::prepare` with `kernels::median_distance` to show the
//! median σ before a fit. The mathematics of the methods is in docs/methods.md.

pub mod cli;
pub mod data;
pub mod error;
pub mod kernels;
pub mod linalg;
pub mod methods;
pub mod metrics;
pub mod session;
pub mod train;
pub mod tui;

pub use error::{OvkError, Result};
