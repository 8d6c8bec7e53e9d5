//! ovk — learning with operator-valued (matrix-valued) kernels.
//!
//! The numerical engine (`data`, `kernels`, `linalg`, `methods`, `metrics`, `session`, `train`)
//! knows nothing of its two faces: the terminal workbench (`tui`) and the headless commands
//! (`cli`). Both drive the engine through `train` and read results through `session`.

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
