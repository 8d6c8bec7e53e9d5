//! Reading learned matrices: the correlation view of an output kernel, and an order of the
//! outputs that shows related ones as blocks — for the workbench's heatmaps and the figures.

mod ordering;

pub use ordering::{clustered_order, file_order, OrderKind, Ordering};

use ndarray::{Array2, ArrayView2};

/// ρ_ij = L_ij / √(L_ii L_jj): the output kernel as correlations (1 on the diagonal, 0 where
/// an output's own variance L_ii is not positive).
pub fn correlation(l: ArrayView2<f64>) -> Array2<f64> {
    let m = l.nrows();
    let scale: Vec<f64> = (0..m)
        .map(|i| {
            let v = l[[i, i]];
            if v > 0.0 && v.is_finite() {
                1.0 / v.sqrt()
            } else {
                0.0
            }
        })
        .collect();
    Array2::from_shape_fn((m, m), |(i, j)| {
        if i == j {
            if scale[i] > 0.0 {
                1.0
            } else {
                0.0
            }
        } else {
            (l[[i, j]] * scale[i] * scale[j]).clamp(-1.0, 1.0)
        }
    })
}

/// `a` with its rows and columns permuted by `order` (`out[i][j] = a[order[i]][order[j]]`).
pub fn permuted(a: ArrayView2<f64>, order: &[usize]) -> Array2<f64> {
    let n = order.len();
    Array2::from_shape_fn((n, n), |(i, j)| a[[order[i], order[j]]])
}
