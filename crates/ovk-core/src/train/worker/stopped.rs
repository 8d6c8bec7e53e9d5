//! The record of a run stopped from outside — by the worker's watchdog, or by the face after
//! killing the worker: its configuration and what was seen of it (trace, notes, a sweep's
//! scored rows), under the job's id.

use std::path::PathBuf;

use super::{Job, Work};
use crate::methods::TraceRecord;
use crate::session::details::key;
use crate::session::{SessionRecord, Store};
use crate::train::sweep::{SweepResult, SweepRow};
use crate::{OvkError, Result};

/// What a watcher of the run has seen of it.
#[derive(Debug, Default, Clone)]
pub(super) struct Seen {
    pub trace: Vec<TraceRecord>,
    pub notes: Vec<String>,
    pub rows: Vec<SweepRow>,
}

/// The stopped run's record.
pub(super) fn stopped_record(job: &Job, seen: &Seen, seconds: f64) -> Result<SessionRecord> {
    let config = job
        .work
        .config()
        .ok_or_else(|| OvkError::input("the sweep has no configurations"))?;
    let mut r = SessionRecord::stopped(&config, seen.trace.clone(), seen.notes.clone(), seconds);
    r.id = job.id.clone();
    if let Work::Sweep { configs, folds, .. } = &job.work {
        r.notes.push(format!(
            "the sweep was cancelled with {} of its {} configurations scored",
            seen.rows.len(),
            configs.len()
        ));
        if !seen.rows.is_empty() {
            let table = SweepResult::interrupted(*folds, seen.rows.clone());
            let value =
                serde_json::to_value(table).map_err(|e| OvkError::internal(e.to_string()))?;
            r.details.insert(key::SWEEP.into(), value);
        }
    }
    Ok(r)
}

/// Record the stopped run in the job's store; its directory.
pub(super) fn record_stopped(job: &Job, seen: &Seen, seconds: f64) -> Result<PathBuf> {
    let record = stopped_record(job, seen, seconds)?;
    Store::open(Some(&job.store))?.save(&record, &[])
}
