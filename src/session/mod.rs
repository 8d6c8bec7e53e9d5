//! Saved sessions: a directory `<store>/<id>/` with `session.json` and numpy-readable `.npy`
//! matrices, written atomically; listing, loading and replay.

mod durable;
mod load;
mod locate;
mod model;
mod naming;
pub(crate) mod nan;
mod npy_claims;
mod record;
mod store;
mod summary;

pub use load::{load, Loaded};
pub use locate::{locate_data, Located};
pub use model::load_model;
pub use naming::{new_id, now_rfc3339, slug};
pub use record::{
    model_matrix_name, ClassRecord, KernelRecord, MetricMap, Metrics, ModelRecord, SessionRecord,
    Split, Timings, SCHEMA,
};
pub use store::{save_record, Listing, Store, Summary};
pub use summary::summary_text;
