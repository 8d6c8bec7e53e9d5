//! Stage 5, baseline: the identity-output-kernel method (krr) on the same rows, kernel and λ —
//! what every method is judged against — skipped, and said so, when it would not fit. A
//! multi-view method's baseline sees the columns its views hold, as the method does.

use ndarray::{Array2, ArrayView2, Axis};

use super::admit::peak_estimate;
use super::fit::{in_data_units, Fitted};
use super::score::labeled_part;
use crate::data::Task;
use crate::kernels::{check_fits_or, InputRank};
use crate::methods::{self, Method, Observer, Params, Problem, ProblemShape};
use crate::metrics;
use crate::session::{MetricMap, Metrics};
use crate::train::RunConfig;
use crate::{OvkError, Result};

/// The baseline's scores, or why it was skipped.
pub(super) struct Baseline {
    pub metrics: Option<Metrics>,
    pub skipped: Option<String>,
    /// Which columns it used, when not all the features.
    pub note: Option<String>,
}

/// krr fits the labeled rows only, so a semi-supervised method's `--input-rank` is capped at
/// their count (a rank-ℓ factor of ℓ rows is the exact kernel).
pub(super) fn baseline(
    method: &dyn Method,
    f: &mut Fitted,
    n_labeled: usize,
    obs: &dyn Observer,
    config: &RunConfig,
) -> Result<Baseline> {
    if method.name() == "krr" {
        return Ok(Baseline {
            metrics: None,
            skipped: None,
            note: None,
        });
    }
    let krr = methods::find(methods::MethodName::Krr);
    if let InputRank::Rank(r) = f.problem.kernel_spec.input_rank {
        f.problem.kernel_spec.input_rank = InputRank::Rank(r.min(n_labeled.max(1)));
    }
    let narrowed = on_view_columns(method, f)?;
    let (problem, x_test) = match &narrowed {
        Some((p, x, _)) => (p, x),
        None => (&f.problem, &f.x_test),
    };
    let note = narrowed.as_ref().map(|n| n.2.clone());
    let shape = ProblemShape {
        n_test: x_test.nrows(),
        ..ProblemShape::of(problem)
    };
    let need = peak_estimate(krr, &shape, &Params::new())
        .map_err(|e| OvkError::input(format!("the krr baseline was skipped: {e}")))
        .and_then(|b| check_fits_or(b, "the krr baseline", "skipped"));
    if let Err(e) = need {
        return Ok(Baseline {
            metrics: None,
            skipped: Some(e.to_string()),
            note,
        });
    }
    Ok(Baseline {
        metrics: baseline_scores(krr, config, f, problem, x_test.view(), obs)?,
        skipped: None,
        note,
    })
}

/// A multi-view method never sees the features outside every view, so its baseline must not
/// either (else the comparison is unfair): the problem and test inputs on the views' columns,
/// the kernel resolved on them, and a note saying so. `None` when the views hold every feature.
fn on_view_columns(
    method: &dyn Method,
    f: &Fitted,
) -> Result<Option<(Problem, Array2<f64>, String)>> {
    let p = &f.problem;
    if !method.multi_view() || p.views.is_empty() {
        return Ok(None);
    }
    let d = p.x.ncols();
    let mut cols: Vec<usize> = p
        .views
        .iter()
        .flat_map(|v| v.columns.iter().copied())
        .filter(|&c| c < d)
        .collect();
    cols.sort_unstable();
    cols.dedup();
    if cols.is_empty() || cols.len() == d {
        return Ok(None);
    }
    let mut narrowed = p.clone();
    narrowed.x = p.x.select(Axis(1), &cols);
    narrowed.kernel = p.kernel_spec.resolve(narrowed.x.view())?;
    narrowed.feature_names = cols
        .iter()
        .filter_map(|&c| p.feature_names.get(c).cloned())
        .collect();
    narrowed.views = Vec::new();
    let note = format!(
        "the krr baseline used the {} feature columns the views hold (of {d}), as {} does",
        cols.len(),
        method.name()
    );
    Ok(Some((narrowed, f.x_test.select(Axis(1), &cols), note)))
}

/// krr's scores at the run's λ (or krr's default when the method has none).
fn baseline_scores(
    krr: &dyn Method,
    config: &RunConfig,
    f: &Fitted,
    problem: &Problem,
    x_test: ArrayView2<f64>,
    obs: &dyn Observer,
) -> Result<Option<Metrics>> {
    let (task, coding) = (f.problem.task, config.data.class_coding);
    let lambda = match config.params.0.get("lambda") {
        Some(v) => Params::new().with("lambda", v.clone()),
        None => Params::new(),
    };
    if krr.params().iter().all(|s| s.key != "lambda") {
        return Ok(None);
    }
    // The fit stage took the held-out rows back: the baseline chooses nothing on them.
    debug_assert!(problem.holdout.is_none());
    // A baseline that fails (e.g. an ill-posed λ for plain ridge) is omitted, not fatal; a
    // cancel stops it like the fit (the caller sees the observer's flag).
    let Ok(fit) = krr.fit(problem, &lambda, &mut CancelOnly(obs)) else {
        return Ok(None);
    };
    let fit = in_data_units(fit, f.target_scaler.as_ref());
    let rows = problem.labeled_rows();
    let (x_lab, y_lab) = labeled_part(&problem.x, f.y_train(), &rows);
    let score = |y: ArrayView2<f64>, x: ArrayView2<f64>| -> Result<MetricMap> {
        if y.nrows() == 0 {
            return Ok(MetricMap::new());
        }
        let yhat = fit.model.predict(x)?;
        Ok(metrics::scores(task, coding, y, yhat.view()))
    };
    Ok(Some(Metrics {
        train: score(y_lab.view(), x_lab.view())?,
        test: score(f.y_test.view(), x_test)?,
        unlabeled: None,
    }))
}

/// A note when the baseline beat the method on the test rows by more than 1 % of its score:
/// the method is judged against it, and a user who sees it lose should know where to look.
pub(super) fn behind_baseline(
    task: Task,
    method: &str,
    got: &MetricMap,
    base: &MetricMap,
) -> Option<String> {
    let (key, higher_is_better) = metrics::primary(task);
    let (g, b) = (*got.get(key)?, *base.get(key)?);
    let margin = 0.01 * b.abs();
    let behind = if higher_is_better {
        g < b - margin
    } else {
        g > b + margin
    };
    behind.then(|| {
        format!(
            "the krr baseline (identity output kernel, same input kernel) scored better on the \
             test rows: {key} {b:.4} against {method}'s {g:.4}; {method}'s hyperparameters may \
             be far from their best on these data — choose them with `ovk sweep --cv 3`"
        )
    })
}

/// The baseline's progress is not the run's: only a cancel passes through.
struct CancelOnly<'a>(&'a dyn Observer);

impl Observer for CancelOnly<'_> {
    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}
