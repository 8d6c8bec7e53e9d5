//! Saved sessions: a directory `<store>/<id>/` with `session.json` and numpy-readable `.npy`
//! matrices, written atomically; listing, loading and replay.

mod clock;
mod record;
mod store;

pub use clock::now_rfc3339;
pub use record::{KernelRecord, MetricMap, Metrics, SessionRecord, Split, Timings, SCHEMA};
pub use store::{load, Listing, Loaded, Store, Summary};

/// The text of `ovk replay --print`.
pub fn summary_text(record: &SessionRecord) -> String {
    format!("{} ({})\n", record.name, record.id)
}
