//! How a fit reports progress and learns it should stop. The TUI's observer forwards records
//! over a channel; the CLI's draws a progress line; tests collect records in a Vec.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::{OvkError, Result};

/// The stages of a run, for progress gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Reading and preparing the data.
    Loading,
    /// Computing the input Gram matrix.
    Gram,
    /// The k-nearest-neighbour graph over the inputs (vvmr on a factor): in the Gram slot.
    Graph,
    /// A low-rank factor of a kernel (Nyström, incomplete Cholesky): in the Gram slot.
    Factor,
    /// A factor's sums ZᵀZ and ZᵀY over the table read in batches (the streamed route): in the
    /// Gram slot.
    Sums,
    /// An eigendecomposition or factorisation before iterating.
    Decomposition,
    /// The method's iterations (steps count trace records).
    Iterating,
    /// A path of fits (λ values, ranks): steps count fits, not iterations. In the Iterating slot.
    Path,
    /// Predicting and scoring the train and test rows.
    Predicting,
    /// Writing the session.
    Saving,
}

impl Phase {
    /// A short lower-case name for gauges ("Gram matrix", "λ path" …).
    pub fn label(self) -> &'static str {
        match self {
            Phase::Loading => "loading data",
            Phase::Gram => "Gram matrix",
            Phase::Graph => "k-NN graph",
            Phase::Factor => "landmarks",
            Phase::Sums => "streamed sums",
            Phase::Decomposition => "decomposition",
            Phase::Iterating => "iterations",
            Phase::Path => "λ path",
            Phase::Predicting => "predicting",
            Phase::Saving => "saving",
        }
    }
}

/// One iteration (or one λ of a path) as recorded in the session's trace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceRecord {
    /// Iteration number (1-based), or index along a path.
    pub iter: usize,
    /// The paper's objective at this iterate.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub objective: f64,
    /// The method's convergence measure (relative residual, ‖B − B_p‖, gradient norm …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residual: Option<f64>,
    /// Step size actually taken (methods with a step).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
    /// λ of this record (on a regularisation path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// Validation (test-part) metric at this iterate, when the method computes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub val_metric: Option<f64>,
    /// Milliseconds since the fit started.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub elapsed_ms: f64,
    /// Method-specific extra series (e.g. `rank`, `certificate`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty", flatten)]
    pub extra: BTreeMap<String, f64>,
}

/// Receives a fit's progress (phases, trace records, notes) and tells it when to stop.
pub trait Observer {
    /// A new phase begins; `total` is the expected number of steps when known (for an ETA).
    fn phase(&mut self, _phase: Phase, _total: Option<usize>) {}
    /// One iteration (or path point) finished.
    fn record(&mut self, _rec: &TraceRecord) {}
    /// Progress inside a phase that has no trace records (landmarks of a low-rank factor,
    /// row blocks of a Gram matrix): `done` of `total` steps.
    fn step(&mut self, _done: usize, _total: usize) {}
    /// A remark for the user (a halved step, an escaped saddle, a fallback taken).
    fn note(&mut self, _msg: &str) {}
    /// Before the fit: the floor seconds this machine needs for the long phases that report
    /// no steps (the Gram matrix, the eigendecompositions), so a face can show how far along
    /// they are.
    fn estimate(&mut self, _phases: &[(Phase, f64)]) {}
    /// True when the fit should stop (checked by `check_cancel` once per iteration).
    fn is_cancelled(&self) -> bool {
        false
    }
}

/// Returns `Err(Cancelled)` when the observer asks to stop: call it once per iteration.
pub fn check_cancel(obs: &dyn Observer) -> Result<()> {
    if obs.is_cancelled() {
        Err(OvkError::Cancelled)
    } else {
        Ok(())
    }
}

/// The one trace record of a fit solved in one step, once its objective is known to be finite.
pub(crate) fn record_solved(
    obs: &mut dyn Observer,
    objective: f64,
    residual: Option<f64>,
    clock: &Clock,
) -> Result<()> {
    super::ensure_finite("objective", objective)?;
    obs.record(&TraceRecord {
        iter: 1,
        objective,
        residual,
        elapsed_ms: clock.ms(),
        ..Default::default()
    });
    Ok(())
}

/// An observer that ignores everything (benchmarks, internal refits).
pub struct Silent;
impl Observer for Silent {}

/// Keeps every record, note, phase and step (tests, and the pipeline's trace).
#[derive(Default)]
pub struct Collect {
    /// Trace records, in order.
    pub records: Vec<TraceRecord>,
    /// Notes, in order.
    pub notes: Vec<String>,
    /// Phases begun, in order.
    pub phases: Vec<Phase>,
    /// `(done, total)` of every step reported inside a phase.
    pub steps: Vec<(usize, usize)>,
}

impl Observer for Collect {
    fn phase(&mut self, phase: Phase, _total: Option<usize>) {
        self.phases.push(phase);
    }
    fn record(&mut self, rec: &TraceRecord) {
        self.records.push(rec.clone());
    }
    fn step(&mut self, done: usize, total: usize) {
        self.steps.push((done, total));
    }
    fn note(&mut self, msg: &str) {
        self.notes.push(msg.to_string());
    }
}

/// Milliseconds since the fit began, for `TraceRecord::elapsed_ms`.
pub struct Clock(Instant);

impl Clock {
    /// A clock started now.
    pub fn start() -> Self {
        Clock(Instant::now())
    }
    /// Milliseconds since `start`.
    pub fn ms(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1e3
    }
}
