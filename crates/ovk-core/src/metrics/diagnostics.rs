//! Per-output diagnostics of one part (train or test): the confusion matrix of a multi-class
//! fit, precision / recall / AUC per label of a multi-label fit, and per output of a regression
//! R², MSE and a sample of (truth, prediction) pairs for a scatter plot.

use ndarray::{ArrayView1, ArrayView2, Axis};
use serde::{Deserialize, Serialize};

use super::classification::argmax;
use super::ranking::{auc, per_label_map};
use crate::data::Task;

/// Pairs kept per output for the scatter: more than a terminal's braille canvas resolves.
pub const SCATTER_POINTS: usize = 600;
/// Outputs (or labels) with an entry: the session must stay small at 10⁵ outputs (it was
/// 2.1 GB of JSON for the m = 10⁵ experiment); `omitted` counts the rest.
pub const MAX_OUTPUTS: usize = 1000;
/// Outputs that keep a scatter sample (the first ones).
pub const SCATTER_OUTPUTS: usize = 100;
/// Classes up to which the confusion matrix is kept (classes² cells).
pub const MAX_CLASSES: usize = 200;

/// Precision, recall and AUC of one label; `None` where undefined (no predicted positive, no
/// positive, one class only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LabelScores {
    /// Share of predicted positives that are positive.
    pub precision: Option<f64>,
    /// Share of positives predicted positive.
    pub recall: Option<f64>,
    /// Area under the ROC curve of the label's scores.
    pub auc: Option<f64>,
    /// Rows whose truth is positive.
    pub support: usize,
    /// Rows with a truth for this label.
    pub rows: usize,
}

/// One regression output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputFit {
    /// Coefficient of determination R² of this output.
    pub r2: Option<f64>,
    /// Mean squared error of this output.
    pub mse: Option<f64>,
    /// (truth, prediction), every row when there are at most [`SCATTER_POINTS`], else evenly
    /// strided rows.
    pub pairs: Vec<(f64, f64)>,
    /// Rows with a truth for this output.
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
    /// Outputs or labels past [`MAX_OUTPUTS`], or classes of a confusion matrix past
    /// [`MAX_CLASSES`], left out to keep the session small.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub omitted: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
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
        omitted: 0,
    };
    if y.dim() != yhat.dim() {
        return out;
    }
    let m = y.ncols();
    let kept = m.min(MAX_OUTPUTS);
    match task {
        Task::Multiclass if m > MAX_CLASSES => out.omitted = m,
        Task::Multiclass => out.confusion = Some(confusion(y, yhat)),
        Task::Multilabel => {
            let cols = ndarray::s![.., ..kept];
            out.labels = Some(per_label(y.slice(cols), yhat.slice(cols), threshold));
            out.omitted = m - kept;
        }
        Task::Regression => {
            out.outputs = Some(
                y.axis_iter(Axis(1))
                    .zip(yhat.axis_iter(Axis(1)))
                    .take(kept)
                    .enumerate()
                    .map(|(j, (yj, fj))| {
                        let mut fit = output_fit(yj, fj);
                        if j >= SCATTER_OUTPUTS {
                            fit.pairs.clear();
                        }
                        fit
                    })
                    .collect(),
            );
            out.omitted = m - kept;
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
    per_label_map(y, yhat, threshold, |truth, scores| {
        let (mut tp, mut fp, mut fn_) = (0usize, 0usize, 0usize);
        for (&t, &s) in truth.iter().zip(scores) {
            match (t, s > threshold) {
                (true, true) => tp += 1,
                (false, true) => fp += 1,
                (true, false) => fn_ += 1,
                (false, false) => {}
            }
        }
        let ratio = |a: usize, b: usize| (b > 0).then(|| a as f64 / b as f64);
        let a = auc(truth, scores);
        LabelScores {
            precision: ratio(tp, tp + fp),
            recall: ratio(tp, tp + fn_),
            auc: a.is_finite().then_some(a),
            support: tp + fn_,
            rows: truth.len(),
        }
    })
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
    fn many_outputs_keep_a_bounded_entry_count_and_say_how_many_were_left_out() {
        let m = MAX_OUTPUTS + 5;
        let y = ndarray::Array2::from_shape_fn((4, m), |(i, j)| (i + j) as f64);
        let d = diagnostics(Task::Regression, y.view(), y.view(), 0.5);
        let outs = d.outputs.unwrap();
        assert_eq!((outs.len(), d.omitted), (MAX_OUTPUTS, 5));
        assert_eq!(outs[SCATTER_OUTPUTS - 1].pairs.len(), 4);
        assert!(outs[SCATTER_OUTPUTS].pairs.is_empty());
        assert_eq!(outs[MAX_OUTPUTS - 1].r2, Some(1.0));
        let d = diagnostics(Task::Multilabel, y.view(), y.view(), 0.5);
        assert_eq!((d.labels.unwrap().len(), d.omitted), (MAX_OUTPUTS, 5));
        let c = ndarray::Array2::<f64>::eye(MAX_CLASSES + 1);
        let d = diagnostics(Task::Multiclass, c.view(), c.view(), 0.5);
        assert_eq!((d.confusion, d.omitted), (None, MAX_CLASSES + 1));
    }

    #[test]
    fn sample_strides_evenly() {
        let v: Vec<usize> = (0..10).collect();
        assert_eq!(sample(&v, 5), vec![0, 2, 4, 6, 8]);
        assert_eq!(sample(&v, 20), v);
    }
}
