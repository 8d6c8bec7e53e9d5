//! Brute-force dense formulas the method tests check against.

use ndarray::Array2;
use ovk_core::linalg::lu;

/// Solve `M G A Q + c A = Y` densely: `(Q ⊗ M G + c I) vec(A) = vec(Y)` (Q symmetric,
/// column-major vec).
pub fn kronecker_solve(mg: &Array2<f64>, q: &Array2<f64>, c: f64, y: &Array2<f64>) -> Array2<f64> {
    let (n, m) = (mg.nrows(), q.nrows());
    let mut big = Array2::<f64>::zeros((n * m, n * m));
    for a in 0..m {
        for b in 0..m {
            for i in 0..n {
                for j in 0..n {
                    big[[a * n + i, b * n + j]] = q[[a, b]] * mg[[i, j]];
                }
            }
        }
    }
    big.diag_mut().mapv_inplace(|v| v + c);
    let yv = Array2::from_shape_vec((n * m, 1), y.t().iter().copied().collect()).unwrap();
    let av = lu(big.view()).unwrap().solve(yv.view());
    Array2::from_shape_vec((m, n), av.iter().copied().collect())
        .unwrap()
        .reversed_axes()
}
