//! Scores of predictions against truth: MSE, R², accuracy (argmax), mean AUC over labels,
//! Hamming loss, and the RBF loss of structured outputs.

use ndarray::ArrayView2;

use crate::data::{ClassCoding, Task};
use crate::session::MetricMap;

/// Mean squared error over all cells.
pub fn mse(y: ArrayView2<f64>, yhat: ArrayView2<f64>) -> f64 {
    let _ = (y, yhat);
    f64::NAN
}

/// The metrics that apply to `task`, by name (`mse`, `r2`, `accuracy`, `mean_auc`, `hamming`).
pub fn scores(
    task: Task,
    coding: ClassCoding,
    y: ArrayView2<f64>,
    yhat: ArrayView2<f64>,
) -> MetricMap {
    let _ = (task, coding, y, yhat);
    MetricMap::new()
}

/// The metric that ranks models for `task`, and whether higher is better.
pub fn primary(task: Task) -> (&'static str, bool) {
    match task {
        Task::Regression => ("mse", false),
        Task::Multiclass => ("accuracy", true),
        Task::Multilabel => ("mean_auc", true),
    }
}
