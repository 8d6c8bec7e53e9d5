//! Scores of real-valued predictions: mean squared error, R², and the RBF loss of structured
//! outputs.

use ndarray::{ArrayView2, Axis};

/// Mean squared error over all cells. NaN when there are no cells or the shapes differ.
pub fn mse(y: ArrayView2<f64>, yhat: ArrayView2<f64>) -> f64 {
    if y.dim() != yhat.dim() || y.is_empty() {
        return f64::NAN;
    }
    let sse: f64 = y
        .iter()
        .zip(yhat.iter())
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    sse / y.len() as f64
}

/// Coefficient of determination, averaged over outputs: mean_j (1 − SSE_j / SST_j).
///
/// A constant truth column (SST_j = 0) scores 1 when it is predicted exactly and 0 otherwise
/// (scikit-learn's convention), so one constant column cannot make the average infinite.
/// NaN when there are fewer than two rows (one row has no variance to explain; scikit-learn
/// says the same) or the shapes differ.
pub fn r2(y: ArrayView2<f64>, yhat: ArrayView2<f64>) -> f64 {
    if y.dim() != yhat.dim() || y.nrows() < 2 || y.ncols() == 0 {
        return f64::NAN;
    }
    if y.ncols() == 1 || !y.is_standard_layout() {
        // Column by column, summed in ndarray's own order for each column's layout.
        let per_output = y
            .axis_iter(Axis(1))
            .zip(yhat.axis_iter(Axis(1)))
            .map(|(yj, fj)| {
                let mean = yj.sum() / yj.len() as f64;
                let sst: f64 = yj.iter().map(|v| (v - mean) * (v - mean)).sum();
                let sse: f64 = yj.iter().zip(fj).map(|(a, b)| (a - b) * (a - b)).sum();
                one_r2(sst, sse)
            });
        return per_output.sum::<f64>() / y.ncols() as f64;
    }
    // Accumulated row by row (each column's sums in row order, as ndarray sums a strided
    // column): a row-major 150 × 10⁵ matrix read by columns misses the cache on every cell.
    let n = y.nrows() as f64;
    let mut sum = vec![0.0; y.ncols()];
    for row in y.rows() {
        for (s, v) in sum.iter_mut().zip(row) {
            *s += v;
        }
    }
    let mean: Vec<f64> = sum.iter().map(|s| s / n).collect();
    let (mut sst, mut sse) = (vec![-0.0; y.ncols()], vec![-0.0; y.ncols()]);
    for (yr, fr) in y.rows().into_iter().zip(yhat.rows()) {
        for j in 0..yr.len() {
            let (a, b) = (yr[j], fr[j]);
            sst[j] += (a - mean[j]) * (a - mean[j]);
            sse[j] += (a - b) * (a - b);
        }
    }
    let per_output = sst.iter().zip(&sse).map(|(&sst, &sse)| one_r2(sst, sse));
    per_output.sum::<f64>() / y.ncols() as f64
}

fn one_r2(sst: f64, sse: f64) -> f64 {
    if sst > 0.0 {
        1.0 - sse / sst
    } else if sse == 0.0 {
        1.0
    } else {
        0.0
    }
}

/// Mean over rows of 2 − 2·exp(−‖y − ŷ‖² / (2σ²)): the squared distance between the two
/// outputs in the feature space of a Gaussian output kernel. NaN for no rows, differing shapes
/// or σ ≤ 0.
pub fn rbf_loss(y: ArrayView2<f64>, yhat: ArrayView2<f64>, sigma: f64) -> f64 {
    if y.dim() != yhat.dim() || y.nrows() == 0 || sigma.is_nan() || sigma <= 0.0 {
        return f64::NAN;
    }
    let total: f64 = y
        .axis_iter(Axis(0))
        .zip(yhat.axis_iter(Axis(0)))
        .map(|(yi, fi)| {
            let d2: f64 = yi
                .iter()
                .zip(fi.iter())
                .map(|(a, b)| (a - b) * (a - b))
                .sum();
            2.0 - 2.0 * (-d2 / (2.0 * sigma * sigma)).exp()
        })
        .sum();
    total / y.nrows() as f64
}
