//! Ranking quality of multi-label scores: the area under the ROC curve per label and its mean.

use ndarray::{ArrayView2, Axis};

/// Area under the ROC curve: the Mann–Whitney probability that a random positive scores above
/// a random negative, ties counted ½. NaN when only one class is present, the lengths differ,
/// or a score is NaN.
pub fn auc(labels: &[bool], scores: &[f64]) -> f64 {
    if labels.len() != scores.len() || scores.iter().any(|s| s.is_nan()) {
        return f64::NAN;
    }
    let n_pos = labels.iter().filter(|&&l| l).count();
    let n_neg = labels.len() - n_pos;
    if n_pos == 0 || n_neg == 0 {
        return f64::NAN;
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[a].total_cmp(&scores[b]));
    // Sum of the (1-based, tie-averaged) ranks of the positives.
    let mut rank_sum_pos = 0.0;
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && scores[order[end]] == scores[order[start]] {
            end += 1;
        }
        let mid_rank = (start + 1 + end) as f64 / 2.0;
        let pos_in_group = order[start..end].iter().filter(|&&i| labels[i]).count();
        rank_sum_pos += mid_rank * pos_in_group as f64;
        start = end;
    }
    let (p, n) = (n_pos as f64, n_neg as f64);
    // U = R₊ − n₊(n₊+1)/2, AUC = U / (n₊ n₋)
    (rank_sum_pos - p * (p + 1.0) / 2.0) / (p * n)
}

/// AUC of each output column: positives are the cells of `y` above `threshold`, scores are the
/// column of `ŷ`. Rows whose truth cell is NaN are left out of that label. Empty when the
/// shapes differ.
pub fn per_label_auc(y: ArrayView2<f64>, yhat: ArrayView2<f64>, threshold: f64) -> Vec<f64> {
    per_label_map(y, yhat, threshold, auc)
}

/// `score(truth, scores)` of each output column: truth is a cell of `y` above `threshold`,
/// scores the column of `ŷ`, rows whose truth cell is NaN left out. Empty when the shapes
/// differ.
pub(crate) fn per_label_map<T>(
    y: ArrayView2<f64>,
    yhat: ArrayView2<f64>,
    threshold: f64,
    score: impl Fn(&[bool], &[f64]) -> T,
) -> Vec<T> {
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
            score(&truth, &scores)
        })
        .collect()
}

/// Mean AUC over the labels where both classes are present (the others have no AUC).
/// NaN when no label has both classes.
pub fn mean_auc(y: ArrayView2<f64>, yhat: ArrayView2<f64>, threshold: f64) -> f64 {
    let defined: Vec<f64> = per_label_auc(y, yhat, threshold)
        .into_iter()
        .filter(|a| !a.is_nan())
        .collect();
    if defined.is_empty() {
        f64::NAN
    } else {
        defined.iter().sum::<f64>() / defined.len() as f64
    }
}
