//! Stage 6, record: the session — configuration, split, trace, metrics, the baseline's, the
//! model `ovk predict` loads and the matrices the faces show — from the stages before it.

use std::collections::BTreeMap;

use ndarray::Array2;

use super::admit::Admitted;
use super::baseline::{behind_baseline, Baseline};
use super::fit::Fitted;
use super::score::Scored;
use crate::data::Prepared;
use crate::kernels::{format_bytes, peak_rss_bytes, Kernel};
use crate::methods::{Method, Params};
use crate::session::details::{key, Memory};
use crate::session::{
    self, ClassRecord, KernelRecord, ModelRecord, Optimistic, RunStatus, SessionRecord, Split,
    Timings,
};
use crate::train::{RunConfig, RunOutcome};
use crate::{OvkError, Result};

/// Wall-clock seconds of the stages, measured by `run`.
pub(super) struct Clock {
    pub load_s: f64,
    pub total_s: f64,
}

/// What the stages before the record produced.
pub(super) struct Stages {
    pub(crate) prepared: Prepared,
    pub kernel: Kernel,
    pub admitted: Admitted,
    pub(crate) target_notes: Vec<String>,
    pub fitted: Fitted,
    pub scored: Scored,
    pub baseline: Baseline,
    pub clock: Clock,
}

/// The session of a finished run.
pub(super) fn record(
    method: &dyn Method,
    config: &RunConfig,
    stages: Stages,
) -> Result<RunOutcome> {
    let Stages {
        prepared,
        kernel,
        admitted,
        target_notes,
        fitted,
        scored,
        baseline,
        clock,
    } = stages;
    let Fitted {
        fit,
        trace,
        notes: observed_notes,
        target_scaler,
        y_test,
        fit_s,
        ..
    } = fitted;
    let mut details = fit.details;
    details.extend(scored.details);
    // Measured at the end of the run: the process's peak so far, beside the estimate the run
    // was admitted on.
    let memory = Memory {
        estimated_peak_bytes: Some(admitted.estimate),
        estimated_peak: Some(format_bytes(admitted.estimate)),
        process_peak_rss_bytes: peak_rss_bytes(),
        process_base_rss_bytes: admitted.base_rss,
        process: None,
    };
    details.insert(key::MEMORY.into(), memory.to_json());
    details.insert("estimate".into(), admitted.guidance.to_json());

    // What `ovk predict` needs: the model's parts, saved as `model_<name>` matrices, and the
    // transformations in front of it.
    let parts = fit.model.into_parts();
    let model = ModelRecord {
        kind: parts.kind.clone(),
        settings: parts.settings.clone(),
        arrays: parts.arrays.iter().map(|(n, _)| n.clone()).collect(),
        scaler: prepared.scaler.clone(),
        feature_dtypes: prepared.feature_dtypes.clone(),
        class: prepared
            .class_column
            .clone()
            .zip(prepared.class_values.clone())
            .map(|((column, dtype), values)| ClassRecord {
                column,
                dtype,
                values,
            }),
        class_coding: config.data.class_coding,
        fill: prepared.fill.clone(),
        target_scaler,
    };
    let mut matrices = fit.matrices;
    matrices.push(("predictions_test".to_string(), scored.pred_test));
    matrices.push(("targets_test".to_string(), y_test));
    for (name, a) in parts.arrays {
        matrices.push((session::model_matrix_name(&name), a));
    }
    check_finite(&matrices)?;

    let mut notes = admitted.notes;
    notes.extend(data_notes(&prepared, target_notes));
    notes.extend(observed_notes);
    notes.extend(baseline.skipped);
    notes.extend(baseline.note);
    if let Some(b) = &baseline.metrics {
        notes.extend(behind_baseline(
            prepared.task,
            method.name(),
            &scored.metrics.test,
            &b.test,
        ));
    }
    for n in fit.notes {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    let optimistic = fit.chose_on_test.map(|what| Optimistic {
        parts: vec!["test".into()],
        reason: format!("{what} on the test rows (--select-on test)"),
    });
    let mut record = base_record(method, config, &prepared, kernel, trace, notes);
    record.iterations = fit.iterations;
    record.converged = fit.converged;
    record.objective = fit.objective;
    record.metrics = scored.metrics;
    record.baseline = baseline.metrics;
    record.timings = Timings {
        load_s: clock.load_s,
        fit_s,
        predict_s: scored.predict_s,
        total_s: clock.total_s,
    };
    record.matrices = matrices
        .iter()
        .map(|(n, _)| (n.clone(), format!("{n}.npy")))
        .collect::<BTreeMap<_, _>>();
    record.details = details;
    record.model = Some(model);
    record.optimistic = optimistic;
    Ok(RunOutcome { record, matrices })
}

/// The record of a run as far as its data and configuration go: everything but what the fit
/// produced (which a cancelled run does not have).
pub(super) fn base_record(
    method: &dyn Method,
    config: &RunConfig,
    prepared: &Prepared,
    kernel: Kernel,
    trace: Vec<crate::methods::TraceRecord>,
    notes: Vec<String>,
) -> SessionRecord {
    let name = config.name.clone().unwrap_or_else(|| config.default_name());
    let train = prepared.train_rows.clone();
    let rows_of = |keep: bool| -> Vec<usize> {
        (0..prepared.labeled.len())
            .filter(|&i| prepared.labeled[i] == keep)
            .map(|i| prepared.train_rows[i])
            .collect()
    };
    let semi = prepared.labeled.iter().any(|&l| !l);
    let mut split = Split {
        seed: config.data.seed,
        test_fraction: config.data.test_fraction,
        train,
        test: prepared.test_rows.clone(),
        labeled: semi.then(|| rows_of(true)),
        unlabeled: semi.then(|| rows_of(false)),
        id: None,
        folds: None,
    };
    split.id = Some(split.fingerprint(&prepared.info.sha256));
    SessionRecord {
        schema: session::SCHEMA.to_string(),
        id: session::new_id(&name),
        name,
        created: session::now_rfc3339(),
        ovk_version: env!("CARGO_PKG_VERSION").to_string(),
        dataset: prepared.info.clone(),
        task: prepared.task,
        method: method.name().to_string(),
        kernel: KernelRecord {
            spec: recorded_kernel(config, prepared),
            resolved: kernel,
        },
        params: filled_params(method, &config.params),
        scale: config.data.scale,
        split,
        feature_names: prepared.feature_names.clone(),
        output_names: prepared.output_names.clone(),
        trace,
        iterations: 0,
        converged: false,
        objective: None,
        metrics: Default::default(),
        baseline: None,
        timings: Default::default(),
        matrices: BTreeMap::new(),
        details: serde_json::Map::new(),
        notes,
        config: {
            // The encoding is part of the run: a replay encodes the same levels.
            let mut c = config.clone();
            c.kernel = recorded_kernel(config, prepared);
            if !prepared.categories.is_empty() {
                c.data.categories = Some(prepared.categories.clone());
            }
            c
        },
        model: None,
        status: RunStatus::Finished,
        kept: true,
        optimistic: None,
        cv: None,
        cv_baseline: None,
    }
}

/// The kernel as chosen, with a precomputed kernel's Gram files as read (absolute paths and
/// SHA-256, so a replay finds them from anywhere and refuses a changed one).
fn recorded_kernel(config: &RunConfig, prepared: &Prepared) -> crate::kernels::KernelSpec {
    let mut spec = config.kernel.clone();
    if !prepared.grams.is_empty() {
        spec.gram = prepared.grams.clone();
    }
    if prepared.gram_ids.is_some() {
        spec.gram_ids = prepared.gram_ids.clone();
    }
    spec
}

/// A NaN in a learned matrix means the fit diverged: refuse to save it as a result.
fn check_finite(matrices: &[(String, Array2<f64>)]) -> Result<()> {
    for (name, m) in matrices {
        if m.iter().any(|v| !v.is_finite()) {
            return Err(OvkError::numerical(format!(
                "the learned matrix '{name}' has NaN or infinite entries — the fit diverged; \
                 increase --lambda or check the data for extreme values"
            )));
        }
    }
    Ok(())
}

/// What the data stage did to the rows and columns, in the user's words, with the notes on
/// the targets.
fn data_notes(prepared: &Prepared, target_notes: Vec<String>) -> Vec<String> {
    let mut notes = Vec::new();
    if prepared.imputed_rows > 0 {
        notes.push(format!(
            "{} row(s) had missing feature cells filled in from the training rows (numeric: \
             column mean; text: most frequent value)",
            prepared.imputed_rows
        ));
    }
    if prepared.dropped_rows > 0 {
        notes.push(format!(
            "{} row(s) with a missing cell were dropped",
            prepared.dropped_rows
        ));
    }
    notes.extend(target_notes);
    for (column, why) in &prepared.left_out {
        notes.push(format!(
            "`{column}` is not a feature: {why} (name it in --features to use it)"
        ));
    }
    for c in &prepared.categories {
        notes.push(format!(
            "`{}` is text: one-hot encoded into {} features ({})",
            c.column,
            c.levels.len(),
            c.levels.join(", ")
        ));
    }
    notes
}

/// Every hyperparameter with its default filled in, so a session states exactly what ran.
fn filled_params(method: &dyn Method, given: &Params) -> Params {
    let resolved = given.resolve(method.params());
    let mut out = Params::new();
    for spec in method.params() {
        if let Some(v) = resolved.get(spec.key) {
            out.set(spec.key, v);
        }
    }
    out
}
