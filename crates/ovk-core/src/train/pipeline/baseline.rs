//! Stage 5, baseline: the identity-output-kernel method (krr) on the same rows, kernel and λ —
//! what every method is judged against — skipped, and said so, when it would not fit.

use ndarray::ArrayView2;

use super::admit::peak_estimate;
use super::fit::{in_data_units, Fitted};
use super::score::labeled_part;
use crate::data::Task;
use crate::kernels::{check_fits_or, InputRank};
use crate::methods::{self, Method, Observer, Params, ProblemShape};
use crate::metrics;
use crate::session::{MetricMap, Metrics};
use crate::train::RunConfig;
use crate::{OvkError, Result};

/// The baseline's scores, or why it was skipped.
pub(super) struct Baseline {
    pub metrics: Option<Metrics>,
    pub skipped: Option<String>,
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
        });
    }
    let krr = methods::find("krr")?;
    if let InputRank::Rank(r) = f.problem.kernel_spec.input_rank {
        f.problem.kernel_spec.input_rank = InputRank::Rank(r.min(n_labeled.max(1)));
    }
    let shape = ProblemShape {
        n_test: f.x_test.nrows(),
        ..ProblemShape::of(&f.problem)
    };
    let need = peak_estimate(krr, &shape, &Params::new())
        .map_err(|e| OvkError::input(format!("the krr baseline was skipped: {e}")))
        .and_then(|b| check_fits_or(b, "the krr baseline", "skipped"));
    if let Err(e) = need {
        return Ok(Baseline {
            metrics: None,
            skipped: Some(e.to_string()),
        });
    }
    Ok(Baseline {
        metrics: baseline_scores(krr, config, f, obs)?,
        skipped: None,
    })
}

/// krr's scores at the run's λ (or krr's default when the method has none).
fn baseline_scores(
    krr: &dyn Method,
    config: &RunConfig,
    f: &Fitted,
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
    let problem = &f.problem;
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
        test: score(f.y_test.view(), f.x_test.view())?,
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
