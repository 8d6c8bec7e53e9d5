//! Scores of class predictions: multi-class accuracy (argmax) and the multi-label Hamming loss.

use ndarray::{ArrayView1, ArrayView2, Axis};

/// Index of the largest entry (the first one on ties; NaN entries never win).
pub(super) fn argmax(row: ArrayView1<f64>) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (j, &v) in row.iter().enumerate() {
        if v.is_nan() {
            continue;
        }
        if best.is_none_or(|(_, b)| v > b) {
            best = Some((j, v));
        }
    }
    best.map(|(j, _)| j)
}

/// Fraction of rows whose predicted class (argmax of ŷ) is the true class (argmax of the
/// one-hot y). A prediction row of NaN counts as wrong. NaN for no rows or differing shapes.
pub fn accuracy(y: ArrayView2<f64>, yhat: ArrayView2<f64>) -> f64 {
    if y.dim() != yhat.dim() || y.nrows() == 0 {
        return f64::NAN;
    }
    let hits = y
        .axis_iter(Axis(0))
        .zip(yhat.axis_iter(Axis(0)))
        .filter(|(yi, fi)| {
            let truth = argmax(*yi);
            truth.is_some() && truth == argmax(*fi)
        })
        .count();
    hits as f64 / y.nrows() as f64
}

/// Fraction of label cells where `ŷ > threshold` disagrees with `y > threshold`. NaN for no
/// cells or differing shapes.
pub fn hamming_loss(y: ArrayView2<f64>, yhat: ArrayView2<f64>, threshold: f64) -> f64 {
    if y.dim() != yhat.dim() || y.is_empty() {
        return f64::NAN;
    }
    let wrong = y
        .iter()
        .zip(yhat.iter())
        .filter(|(a, b)| (**a > threshold) != (**b > threshold))
        .count();
    wrong as f64 / y.len() as f64
}
