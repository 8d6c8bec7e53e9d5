//! Saved sessions: a directory `<store>/<id>/` with `session.json` and numpy-readable `.npy`
//! matrices, written atomically; listing, loading and replay.

mod record;
mod store;

pub use record::{KernelRecord, MetricMap, Metrics, SessionRecord, Split, Timings, SCHEMA};
pub use store::{load, Listing, Loaded, Store, Summary};
