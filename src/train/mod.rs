//! From a run configuration to a finished fit: the pipeline (load → split → scale → kernel →
//! fit → predict → metrics) and the background runner that talks to the TUI over channels.

pub mod bench;
mod config;
mod faults;
mod messages;
mod pipeline;
pub mod predict;
mod runner;
pub mod sweep;

pub use config::RunConfig;
pub use messages::RunMessage;
pub use pipeline::{run, RunOutcome};
pub use predict::{predict_file, write_predictions, PredictionTable};
pub use runner::{spawn, ChannelObserver, RunHandle};
