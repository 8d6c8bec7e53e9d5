//! The sizes of a problem, known before any kernel matrix is built: what a method's memory
//! estimate (`Method::peak_bytes`) is computed from.

use super::Problem;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemShape {
    /// Training rows, labeled and unlabeled (N).
    pub n_train: usize,
    /// Training rows with labels (ℓ).
    pub n_labeled: usize,
    /// Held-out rows.
    pub n_test: usize,
    /// Feature columns.
    pub d: usize,
    /// Output columns.
    pub m: usize,
    /// Views (multi-view methods); 0 when the data has none.
    pub views: usize,
}

impl ProblemShape {
    pub fn of(p: &Problem) -> Self {
        ProblemShape {
            n_train: p.n_train(),
            n_labeled: p.labeled.iter().filter(|&&b| b).count(),
            n_test: p.x_test.nrows(),
            d: p.x.ncols(),
            m: p.n_outputs(),
            views: p.views.len(),
        }
    }
}

/// Bytes of `count` dense r×c matrices of f64 (saturating: an absurd size stays absurd).
pub fn mats(count: u64, r: usize, c: usize) -> u64 {
    crate::kernels::dense_bytes(r, c).saturating_mul(count)
}
