//! From a run configuration to a finished fit: the pipeline (load → split → scale → kernel →
//! fit → predict → metrics), the worker process the workbench runs each fit in (killed on
//! cancel), the thread runner (a fit on its own thread, talking over a channel), and sweeps.
//! The papers' experiments and the benchmarks live in `ovk-lab`.

mod coverage;
pub mod estimate;
mod faults;
pub(crate) mod gram;
mod messages;
mod offset;
mod pipeline;
pub mod predict;
mod reopen;
mod runner;
pub mod search;
pub mod sweep;
mod unused;
pub mod width;
pub mod worker;

pub use crate::config::RunConfig;
pub use messages::RunMessage;
pub use pipeline::{prepare, run, run_to_end, Ended, RunOutcome, WARNING};
pub use predict::{
    predict_file, predict_file_noting, write_predictions, Batching, Prediction, PredictionTable,
    Scored,
};
pub use reopen::read_run;
pub use runner::{spawn, spawn_search, spawn_sweep, RunHandle};
pub(crate) use width::width_warning;
