//! Scores of predictions against truth: MSE, R², accuracy (argmax), mean AUC over labels,
//! Hamming loss, and the RBF loss of structured outputs. Every function takes rows = points,
//! columns = outputs.

mod classification;
mod diagnostics;
mod paired;
mod ranking;
mod regression;

use ndarray::{Array2, ArrayView2, Axis};

use crate::data::{ClassCoding, Task};
use crate::linalg::select_rows;

/// Metric name → value, as `scores` returns them (`mse`, `r2`, `accuracy`, …).
pub type MetricMap = std::collections::BTreeMap<String, f64>;

pub use classification::{accuracy, hamming_loss};
pub use diagnostics::{
    confusion, diagnostics, output_fit, per_label, LabelScores, OutputFit, PartDiagnostics,
    MAX_CLASSES, MAX_OUTPUTS, SCATTER_OUTPUTS, SCATTER_POINTS,
};
pub use paired::paired_tests;
pub use paired::PairedTest;
pub use ranking::{auc, mean_auc, per_label_auc};
pub use regression::{mse, r2, rbf_loss};

/// The value between the two class codes: 0 for ±1, ½ for 0/1.
pub fn coding_midpoint(coding: ClassCoding) -> f64 {
    match coding {
        ClassCoding::Pm1 => 0.0,
        ClassCoding::ZeroOne => 0.5,
    }
}

/// The metrics that apply to `task`, by name: regression → `mse`, `r2`; multi-class →
/// `accuracy`, `mse`; multi-label → `mean_auc`, `hamming` (threshold at the coding's
/// midpoint), `mse`.
///
/// Rows of `y` containing NaN are unlabeled and skipped. A metric that is undefined on what
/// remains (no rows, no label with both classes, NaN predictions) is left out of the map rather
/// than stored as NaN.
pub fn scores(
    task: Task,
    coding: ClassCoding,
    y: ArrayView2<f64>,
    yhat: ArrayView2<f64>,
) -> MetricMap {
    let mut out = MetricMap::new();
    if y.dim() != yhat.dim() {
        return out;
    }
    let kept = labeled_rows(y, yhat);
    let (y, yhat) = match &kept {
        Some((y, yhat)) => (y.view(), yhat.view()),
        None => (y, yhat),
    };
    let t = coding_midpoint(coding);
    let values: Vec<(&str, f64)> = match task {
        Task::Regression => vec![("mse", mse(y, yhat)), ("r2", r2(y, yhat))],
        Task::Multiclass => vec![("accuracy", accuracy(y, yhat)), ("mse", mse(y, yhat))],
        Task::Multilabel => vec![
            ("mean_auc", mean_auc(y, yhat, t)),
            ("hamming", hamming_loss(y, yhat, t)),
            ("mse", mse(y, yhat)),
        ],
    };
    for (name, v) in values {
        if v.is_finite() {
            out.insert(name.to_string(), v);
        }
    }
    out
}

/// The rows of (y, ŷ) where y has no NaN; `None` when that is every row (no copy).
fn labeled_rows(y: ArrayView2<f64>, yhat: ArrayView2<f64>) -> Option<(Array2<f64>, Array2<f64>)> {
    let keep: Vec<usize> = y
        .axis_iter(Axis(0))
        .enumerate()
        .filter(|(_, row)| row.iter().all(|v| !v.is_nan()))
        .map(|(i, _)| i)
        .collect();
    (keep.len() < y.nrows()).then(|| {
        (
            select_rows(y.view(), &keep),
            select_rows(yhat.view(), &keep),
        )
    })
}

/// The metric that ranks models for `task`, and whether higher is better.
pub fn primary(task: Task) -> (&'static str, bool) {
    match task {
        Task::Regression => ("mse", false),
        Task::Multiclass => ("accuracy", true),
        Task::Multilabel => ("mean_auc", true),
    }
}
