//! Per-output diagnostics of one part (train or test): the confusion matrix of a multi-class
//! fit, precision / recall / AUC per label of a multi-label fit, and per output of a regression
//! R², MSE and a sample of (truth, prediction) pairs for a scatter plot.

use ndarray::{ArrayView1, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

use super::classification::argmax;
use super::ranking::auc;
use crate::data::Task;

/// Pairs kept per output for the scatter: more than a terminal's braille canvas resolves.
pub const SCATTER_POINTS: usize = 600;

/// Precision, recall and AUC of one label; `None` where undefined (no predicted positive, no
/// positive, one class only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelScores {
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub auc: Option<f64>,
    /// Rows whose truth is positive.
    pub support: usize,
    /// Rows with a truth for this label.
    pub rows: usize,
}

/// One regression output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputFit {
    pub r2: Option<f64>,
    pub mse: Option<f64>,
    /// (truth, prediction), every row when there are at most [`SCATTER_POINTS`], else evenly
    /// strided rows.
    pub pairs: Vec<(f64, f64)>,
    pub rows: usize,
}

/// What one part of a run shows per output; exactly one of the three is present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartDiagnostics {
    /// Multi-class: `counts[true][predicted]`, classes in output order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confusion: Option<Vec<Vec<usize>>>,
    /// Multi-label: one entry per label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<Vec<LabelScores>>,
    /// Regression: one entry per output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Vec<OutputFit>>,
}

/// The diagnostics of `task` for truth `y` and prediction `ŷ` (rows = points). Rows of `y`
/// holding NaN are unlabeled and skipped; `threshold` is the coding's midpoint.
pub fn diagnostics(
    task: Task,
    y: ArrayView2<f64>,
    yhat: ArrayView2<f64>,
    threshold: f64,
) -> PartDiagnostics {
    let mut out = PartDiagnostics {
        confusion: None,
        labels: None,
        outputs: None,
    };
    if y.dim() != yhat.dim() {
        return out;
    }
    match task {
        Task::Multiclass => out.confusion = Some(confusion(y, yhat)),
        Task::Multilabel => out.labels = Some(per_label(y, yhat, threshold)),
        Task::Regression => {
            out.outputs = Some(
                y.axis_iter(Axis(1))
                    .zip(yhat.axis_iter(Axis(1)))
                    .map(|(yj, fj)| output_fit(yj, fj))
                    .collect(),
            )
        }
    }
    out
}

/// `counts[i][j]`: rows whose true class (argmax of the one-hot y) is i and predicted class
/// (argmax of ŷ) is j. Rows with no truth or no finite prediction are left out.
pub fn confusion(y: ArrayView2<f64>, yhat: ArrayView2<f64>) -> Vec<Vec<usize>> {
    let k = y.ncols();
    let mut counts = vec![vec![0usize; k]; k];
    if y.dim() != yhat.dim() {
        return counts;
    }
    for (yi, fi) in y.axis_iter(Axis(0)).zip(yhat.axis_iter(Axis(0))) {
        if yi.iter().any(|v| v.is_nan()) {
            continue;
        }
        if let (Some(t), Some(p)) = (argmax(yi), argmax(fi)) {
            counts[t][p] += 1;
        }
    }
    counts
}

/// Per label: positives are cells above `threshold` (truth and prediction alike); precision =
/// TP / (TP + FP), recall = TP / (TP + FN); AUC ranks the raw scores.
pub fn per_label(y: ArrayView2<f64>, yhat: ArrayView2<f64>, threshold: f64) -> Vec<LabelScores> {
    if y.dim() != yhat.dim() {
        return Vec::new();
    }
    y.axis_iter(Axis(1))
        .zip(yhat.axis_iter(Axis(1)))
        .map(|(yj, fj)| {
            let (truth, scores): (Vec<bool>, Vec<f64>) = yj
                .iter()
                .zip(fj.iter())
                .filter(|(t, _)| !t.is_nan())
                .map(|(t, s)| (*t > threshold, *s))
                .unzip();
            let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
            for (&t, &s) in truth.iter().zip(&scores) {
                match (t, s > threshold) {
                    (true, true) => tp += 1,
                    (false, true) => fp += 1,
                    (true, false) => fn_ += 1,
                    (false, false) => {}
                }
            }
            let ratio = |a: usize, b: usize| (b > 0).then(|| a as f64 / b as f64);
            let a = auc(&truth, &scores);
            LabelScores {
                precision: ratio(tp, tp + fp),
                recall: ratio(tp, tp + fn_),
                auc: a.is_finite().then_some(a),
                support: tp + fn_,
                rows: truth.len(),
            }
        })
        .collect()
}

/// R², MSE and the scatter sample of one output (rows with a NaN truth skipped).
pub fn output_fit(y: ArrayView1<f64>, yhat: ArrayView1<f64>) -> OutputFit {
    let pairs: Vec<(f64, f64)> = y
        .iter()
        .zip(yhat.iter())
        .filter(|(t, _)| !t.is_nan())
        .map(|(t, p)| (*t, *p))
        .collect();
    let n = pairs.len();
    let finite = |v: f64| v.is_finite().then_some(v);
    let (r2, mse) = if n == 0 {
        (None, None)
    } else {
        let mean = pairs.iter().map(|p| p.0).sum::<f64>() / n as f64;
        let sst: f64 = pairs.iter().map(|p| (p.0 - mean).powi(2)).sum();
        let sse: f64 = pairs.iter().map(|p| (p.0 - p.1).powi(2)).sum();
        // Same convention as `r2`: a constant truth scores 1 if hit exactly, else 0.
        let r2 = if sst > 0.0 {
            1.0 - sse / sst
        } else if sse == 0.0 {
            1.0
        } else {
            0.0
        };
        (finite(r2), finite(sse / n as f64))
    };
    OutputFit {
        r2,
        mse,
        // JSON has no NaN: a non-finite prediction is scored (above) but not plotted.
        pairs: sample(
            &pairs
                .iter()
                .copied()
                .filter(|p| p.1.is_finite())
                .collect::<Vec<_>>(),
            SCATTER_POINTS,
        ),
        rows: n,
    }
}

/// At most `max` items, evenly strided and including the first.
fn sample<T: Copy>(items: &[T], max: usize) -> Vec<T> {
    if items.len() <= max || max == 0 {
        return items.to_vec();
    }
    (0..max).map(|k| items[k * items.len() / max]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_strides_evenly() {
        let v: Vec<usize> = (0..10).collect();
        assert_eq!(sample(&v, 5), vec![0, 2, 4, 6, 8]);
        assert_eq!(sample(&v, 20), v);
    }
}
