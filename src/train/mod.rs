//! From a run configuration to a finished fit: the pipeline (load → split → scale → kernel →
//! fit → predict → metrics) and the background runner that talks to the TUI over channels.

mod config;

pub use config::RunConfig;
