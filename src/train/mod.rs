//! From a run configuration to a finished fit: the pipeline (load → split → scale → kernel →
//! fit → predict → metrics) and the background runner that talks to the TUI over channels.

pub mod bench;
mod config;
pub mod estimate;
mod faults;
mod messages;
mod pipeline;
mod runner;
pub mod sweep;

pub use config::RunConfig;
pub use messages::RunMessage;
pub use pipeline::{run, RunOutcome};
pub use runner::{spawn, ChannelObserver, RunHandle};
