//! Stage 3, fit: the problem the method sees (the training part only; held-out rows only when
//! the user asked to choose on them), the targets scaled for it, and the fit itself, watched.

use std::time::Instant;

use ndarray::Array2;

use crate::data::{Prepared, Scaler};
use crate::kernels::Kernel;
use crate::methods::{self, Method, Observer, Problem, TargetScaled, TraceRecord};
use crate::train::faults::{fit_watched, Unfinished};
use crate::train::RunConfig;
use crate::Result;

/// A finished fit and everything later stages need from it.
pub(super) struct Fitted {
    pub problem: Problem,
    /// Held-out inputs and targets (the targets in the data's units): the pipeline scores on
    /// them; the method never saw the targets unless `--select-on test`.
    pub x_test: Array2<f64>,
    pub y_test: Array2<f64>,
    pub fit: methods::Fit,
    pub trace: Vec<TraceRecord>,
    pub notes: Vec<String>,
    pub target_scaler: Option<Scaler>,
    /// The training targets in the data's units, when the fit saw scaled ones.
    pub(crate) y_train_data: Option<Array2<f64>>,
    pub fit_s: f64,
}

impl Fitted {
    /// The training targets in the data's units.
    pub fn y_train(&self) -> &Array2<f64> {
        self.y_train_data.as_ref().unwrap_or(&self.problem.y)
    }
}

/// Fit `method` on the training part of `prepared`, with `kernel` resolved on it.
pub(super) fn fit(
    method: &dyn Method,
    prepared: &mut Prepared,
    kernel: Kernel,
    config: &RunConfig,
    obs: &mut dyn Observer,
) -> std::result::Result<Fitted, Unfinished> {
    let mut problem = problem_of(prepared, kernel, config);
    let mut x_test = std::mem::take(&mut prepared.x_test);
    let mut y_test = std::mem::take(&mut prepared.y_test);

    // --target-scale: the fit sees scaled targets; every score uses the file's own.
    let target_scaler = Scaler::fit_targets(problem.y.view(), config.data.target_scale);
    let y_train_data = target_scaler.as_ref().map(|t| {
        let kept = problem.y.clone();
        t.apply(&mut problem.y);
        kept
    });
    if config.select_on.is_test() {
        // The paper's protocol, asked for by name: the method may choose on the held-out rows
        // (in the units it fits in); their metrics are then marked optimistic.
        let mut y = y_test.clone();
        if let Some(t) = &target_scaler {
            t.apply(&mut y);
        }
        problem = problem.with_holdout(std::mem::take(&mut x_test), y);
    }

    let t_fit = Instant::now();
    let watched = fit_watched(method, &problem, &config.params, obs);
    let fit_s = t_fit.elapsed().as_secs_f64();
    let (fit, trace, notes) = match watched {
        Ok(w) => (w.fit, w.trace, w.notes),
        Err(u) => return Err(u),
    };
    if let Some(h) = problem.holdout.take() {
        x_test = h.x;
    }
    let fit = in_data_units(fit, target_scaler.as_ref());
    y_test = if y_test.nrows() == x_test.nrows() {
        y_test
    } else {
        Array2::zeros((0, problem.y.ncols()))
    };
    Ok(Fitted {
        problem,
        x_test,
        y_test,
        fit,
        trace,
        notes,
        target_scaler,
        y_train_data,
        fit_s,
    })
}

/// The training part as a method sees it. The matrices move (with 10⁵ outputs a copy is
/// 100+ MB).
fn problem_of(prepared: &mut Prepared, kernel: Kernel, config: &RunConfig) -> Problem {
    Problem {
        x: std::mem::take(&mut prepared.x_train),
        y: std::mem::take(&mut prepared.y_train),
        labeled: prepared.labeled.clone(),
        holdout: None,
        kernel,
        kernel_spec: config.kernel.clone(),
        task: prepared.task,
        feature_names: prepared.feature_names.clone(),
        output_names: prepared.output_names.clone(),
        views: prepared.views.clone(),
        seed: config.data.seed,
    }
}

/// A fit on scaled targets, answering in the data's units: its model, and the predictions it
/// made itself (a semi-supervised method's unlabeled rows).
pub(super) fn in_data_units(fit: methods::Fit, target: Option<&Scaler>) -> methods::Fit {
    let Some(t) = target else {
        return fit;
    };
    let mut matrices = fit.matrices;
    for (name, m) in matrices.iter_mut() {
        if name.starts_with("predictions_") {
            t.invert(m);
        }
    }
    methods::Fit {
        model: TargetScaled::wrap(fit.model, Some(t)),
        matrices,
        ..fit
    }
}

/// Predictions of `model` on `x`, or an empty matrix of `m` columns when there are no rows.
pub(super) fn predict_rows(
    model: &dyn methods::Model,
    x: ndarray::ArrayView2<f64>,
    m: usize,
) -> Result<Array2<f64>> {
    if x.nrows() == 0 {
        Ok(Array2::zeros((0, m)))
    } else {
        model.predict(x)
    }
}
