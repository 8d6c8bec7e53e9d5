//! Saved sessions: a directory `<store>/<id>/` with `session.json` and numpy-readable `.npy`
//! matrices, written atomically; listing, loading, and the printed summary of
//! `ovk replay --print` (re-running a session for `--verify` is `cli::replay`, through `train`).

mod durable;
mod load;
mod locate;
mod model;
mod naming;
pub(crate) mod nan;
mod npy_claims;
pub mod output;
mod record;
mod store;
mod summary;

pub use load::{load, Loaded};
pub use locate::{locate_data, Located};
pub use model::load_model;
pub use naming::{display_safe, new_id, now_rfc3339, safe_name, slug, text_safe, MAX_NAME_CHARS};
pub use output::{Output, OutputRules};
pub use record::{
    model_matrix_name, ClassRecord, KernelRecord, MetricMap, Metrics, ModelRecord, SessionRecord,
    Split, Timings, SCHEMA,
};
pub use store::{save_record, Listing, Store, Summary};
pub use summary::summary_text;
