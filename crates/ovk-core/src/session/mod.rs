//! Saved sessions: a directory `<store>/<id>/` with `session.json` and numpy-readable `.npy`
//! matrices, written atomically; listing, loading, and the printed summary of
//! `ovk replay --print` (re-running a session for `--verify` is `cli::replay`, through `train`).

pub mod compare;
pub mod details;
mod durable;
mod load;
mod locate;
mod model;
mod model_checks;
mod naming;
pub(crate) mod npy_claims;
pub mod output;
mod record;
mod store;
mod summary;
pub mod sweep_table;
mod temporaries;
mod upgrade;

pub use crate::metrics::MetricMap;
pub use crate::util::text::display_safe;
pub use details::{Details, SavedDiagnostics};
pub use load::{load, Loaded};
pub use locate::locate_data;
pub use locate::Located;
pub use model::load_model;
pub(crate) use model::load_model_sized;
pub use naming::{new_id, now_rfc3339, slug};
pub use output::{Output, OutputRules};
pub use record::CvEstimate;
pub use record::FoldAssignment;
pub use record::{
    fingerprint, model_matrix_name, ClassRecord, CvStat, KernelRecord, Metrics, ModelRecord,
    Optimistic, RunStatus, SessionRecord, Split, Timings, SCHEMA,
};
pub use store::{save_record, Listing, Store, Summary};
pub use summary::summary_text;
pub use temporaries::abandon;
pub use temporaries::Abandoned;
pub use upgrade::config_as_run;
