//! One run, start to finish, with no terminal in sight, as named stages that a test can call
//! one by one: prepare (load → split → scale) → admit (memory, time) → fit → score → baseline
//! → record. Both faces call `run` or `run_to_end` (the workbench through `runner`, on a
//! thread of its own), and so do sweeps and `ovk replay --verify`. `--cv K` runs the stages
//! on K folds of the training part first (`cv`).

mod admit;
mod baseline;
mod cv;
mod fit;
mod record;
mod score;
mod stream;

use std::time::Instant;

use ndarray::Array2;

pub use cv::{estimate, mean_sd};

use super::RunConfig;
use crate::data::{self, PrepareOptions, Prepared};
use crate::kernels::Kernel;
use crate::methods::{Method, Observer, Phase, TraceRecord};
use crate::session::{RunStatus, SessionRecord};
use crate::{OvkError, Result};

/// The start of a note that is a warning (the CLI prints it as one, the workbench tints it).
pub const WARNING: &str = "warning: ";

/// A finished run: the session record and the matrices to save beside it.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The run's record, as `session.json` will hold it.
    pub record: SessionRecord,
    /// (name, matrix): saved as `<name>.npy`; `record.matrices` maps the same names to files.
    pub matrices: Vec<(String, Array2<f64>)>,
}

impl RunOutcome {
    /// The matrix saved under `name`, if the run produced one.
    pub fn matrix(&self, name: &str) -> Option<&Array2<f64>> {
        self.matrices
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, m)| m)
    }
}

/// How a run ended: with its session, or cancelled with what it had — its configuration, the
/// trace so far and its notes, as a record whose status says so.
#[derive(Debug, Clone)]
pub enum Ended {
    /// The run finished: its record and matrices.
    Finished(Box<RunOutcome>),
    /// The run was cancelled: the record of what it had.
    Cancelled(Box<SessionRecord>),
}

/// Run `config` to completion, reporting progress to `obs`; a cancel is `OvkError::Cancelled`.
pub fn run(config: &RunConfig, obs: &mut dyn Observer) -> Result<RunOutcome> {
    match run_to_end(config, obs)? {
        Ended::Finished(o) => Ok(*o),
        Ended::Cancelled(_) => Err(OvkError::Cancelled),
    }
}

/// Run `config` (its `--cv` folds first), keeping a cancelled run's record.
pub fn run_to_end(config: &RunConfig, obs: &mut dyn Observer) -> Result<Ended> {
    match config.cv {
        Some(k) => cv::run_cv(config, k, obs),
        None => run_once(config, obs),
    }
}

/// The stages once, on the split `config` names.
fn run_once(config: &RunConfig, obs: &mut dyn Observer) -> Result<Ended> {
    // However the run ends (finished, failed, cancelled), the spectrum a fit left for the krr
    // baseline (an n×n eigenbasis, or Z) is not kept past it.
    let _forget = ForgetSpectrum;
    let method = config.checked_method()?;
    if let Some(why) = stream::chosen(method, config)? {
        return stream::run(method, config, why, obs);
    }
    let t_start = Instant::now();
    let base_rss = crate::kernels::rss_bytes();
    obs.phase(Phase::Loading, None);
    let mut prepared = prepare(method, config)?;
    let shape = admit::shape_of(&prepared, config);
    let mut admitted = admit::admit(method, &shape, config)?;
    admitted.base_rss = base_rss;
    if let Some(w) = super::width_warning(
        &config.kernel,
        prepared.x_train.view(),
        &prepared.views,
        config.data.scale,
    ) {
        admitted.notes.insert(0, format!("{WARNING}{w}"));
    }
    for (i, w) in prepared.notes.iter().enumerate() {
        admitted.notes.insert(i, format!("{WARNING}{w}"));
    }
    for note in &admitted.notes {
        obs.note(note);
    }
    obs.estimate(&admitted.guidance.phases);
    let kernel = config.kernel.resolve(prepared.x_train.view())?;
    // The median heuristic's subsample and pair distances are freed now; released, they do not
    // stay resident through the fit (tmc2007: 35 MiB, and okl's peak at r = 1000 that much
    // lower).
    crate::kernels::return_freed_memory();
    let target_notes = target_notes(&prepared, config);
    let load_s = t_start.elapsed().as_secs_f64();
    let stopped = |trace: Vec<TraceRecord>, mut notes: Vec<String>, prepared: &Prepared| {
        notes.splice(0..0, admitted.notes.iter().cloned());
        let clock = record::Clock {
            load_s,
            total_s: t_start.elapsed().as_secs_f64(),
        };
        Ok(Ended::Cancelled(Box::new(cancelled_record(
            method, config, prepared, kernel, trace, notes, clock,
        ))))
    };
    if obs.is_cancelled() {
        return stopped(Vec::new(), Vec::new(), &prepared);
    }

    let mut fitted = match fit::fit(method, &mut prepared, kernel, config, obs) {
        Ok(f) => f,
        Err(u) if matches!(u.error, OvkError::Cancelled) => {
            return stopped(u.trace, u.notes, &prepared)
        }
        Err(u) => return Err(u.error),
    };
    obs.phase(Phase::Predicting, None);
    let scored = score::score(&fitted, &prepared, config.data.class_coding)?;
    let baseline = baseline::baseline(method, &mut fitted, shape.n_labeled, obs, config)?;
    crate::methods::input::forget_cached_spectrum();
    if obs.is_cancelled() {
        let (trace, notes) = (fitted.trace, fitted.notes);
        return stopped(trace, notes, &prepared);
    }
    let clock = record::Clock {
        load_s,
        total_s: t_start.elapsed().as_secs_f64(),
    };
    let stages = record::Stages {
        prepared,
        kernel,
        admitted,
        target_notes,
        fitted,
        scored,
        baseline,
        clock,
    };
    let outcome = record::record(method, config, stages)?;
    Ok(Ended::Finished(Box::new(outcome)))
}

/// Drops the cached spectrum when a run ends on any path.
struct ForgetSpectrum;

impl Drop for ForgetSpectrum {
    fn drop(&mut self) {
        crate::methods::input::forget_cached_spectrum();
    }
}

/// Stage 1, prepare: the file read, its columns given their roles, the rows split and scaled
/// — refused when the method does not handle the task.
pub fn prepare(method: &dyn Method, config: &RunConfig) -> Result<Prepared> {
    let mut prepared = data::prepare(
        &config.data,
        PrepareOptions {
            allow_unlabeled: method.semi_supervised(),
        },
    )?;
    if !method.supports(prepared.task) {
        return Err(OvkError::input(format!(
            "method {} does not handle {} tasks (it handles {})",
            method.name(),
            prepared.task.name(),
            method.supported_tasks()
        )));
    }
    super::gram::attach(&mut prepared, &config.kernel)?;
    // The file's bytes and the columns parsed from it are freed now: released, not kept
    // resident beside the fit (the memory estimate counts the prepared rows alone).
    crate::kernels::return_freed_memory();
    Ok(prepared)
}

/// Notes on the training targets: outputs no labeled row teaches, regression targets far
/// from zero.
fn target_notes(prepared: &Prepared, config: &RunConfig) -> Vec<String> {
    let y = prepared.y_train.view();
    let mut notes = super::coverage::untaught_outputs(y, prepared.task, &prepared.output_names);
    notes.extend(super::offset::far_from_zero(
        y,
        prepared.task,
        &prepared.output_names,
        config.data.target_scale,
    ));
    notes
}

/// The record of a run cancelled after its data were prepared: not kept (the store prunes
/// it with the other unkept runs), no model, no matrices, no metrics.
fn cancelled_record(
    method: &dyn Method,
    config: &RunConfig,
    prepared: &Prepared,
    kernel: Kernel,
    trace: Vec<TraceRecord>,
    notes: Vec<String>,
    clock: record::Clock,
) -> SessionRecord {
    let mut r = record::base_record(method, config, prepared, kernel, trace, notes);
    r.status = RunStatus::Cancelled;
    r.kept = false;
    r.iterations = r.trace.last().map_or(0, |t| t.iter);
    r.objective = r.trace.last().map(|t| t.objective);
    r.timings.load_s = clock.load_s;
    r.timings.total_s = clock.total_s;
    r.timings.fit_s = (clock.total_s - clock.load_s).max(0.0);
    r
}
