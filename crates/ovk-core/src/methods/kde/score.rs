//! `score(x, y) = l_yᵀ W k_x` with `W = Tα/n` (Proposition 1), kept as `c0·I + left·right` so
//! the exact (dense W) and the low-rank (factored W) solves share one model.

use ndarray::{Array2, ArrayView2};

use crate::linalg::matmul;

/// The score operator `W = c0·I + left·right` (n×n), never formed unless asked.
#[derive(Debug, Clone)]
pub struct ScoreOperator {
    /// The multiple c0 of the identity in W.
    pub c0: f64,
    /// n×r (n×n for the exact solve, where `right` is None).
    pub left: Array2<f64>,
    /// r×n, the right factor (None: `left` is the whole n×n term).
    pub right: Option<Array2<f64>>,
}

impl ScoreOperator {
    /// `W K` for a block of columns `K` (n×t), e.g. `k_x` of t test points: the coefficients of
    /// `g(x) = Σᵢ Φ(yᵢ) [W k_x]ᵢ` in the training outputs' feature vectors.
    pub fn apply(&self, k: ArrayView2<f64>) -> Array2<f64> {
        let mut out = match &self.right {
            Some(r) => matmul(self.left.view(), matmul(r.view(), k).view()),
            None => matmul(self.left.view(), k),
        };
        if self.c0 != 0.0 {
            out.scaled_add(self.c0, &k);
        }
        out
    }

    /// W as a dense matrix (tests and small n only).
    pub fn dense(&self) -> Array2<f64> {
        let n = self.left.nrows();
        self.apply(Array2::<f64>::eye(n).view())
    }
}
