//! The per-view Gram matrices the fit works with: exact `K_l`, or Nyström `K̃_l = N_l N_lᵀ`
//! (eqs. 13–15), with the products `K_l K_m` that `Z (Ā ⊗ I) Zᵀ` needs computed once.

use ndarray::{Array1, Array2, ArrayView1};

use crate::linalg::{matmul, matmul_tn};

pub enum ViewGram {
    Exact(Array2<f64>),
    /// `K̃ = N Nᵀ`, N n×p; never formed.
    Nystrom(Array2<f64>),
}

impl ViewGram {
    /// `K_l x`.
    pub fn matvec(&self, x: ArrayView1<f64>) -> Array1<f64> {
        match self {
            ViewGram::Exact(k) => k.dot(&x),
            ViewGram::Nystrom(f) => f.dot(&f.t().dot(&x)),
        }
    }
}

/// The views' Grams and the products `P_lm = K_l K_m` (l ≤ m) that are needed.
pub struct Grams {
    pub views: Vec<ViewGram>,
    prods: Vec<Vec<Option<Array2<f64>>>>,
}

impl Grams {
    /// `pairs`: compute `K_l K_m` for every l < m as well as the squares (a metric whose Ā has
    /// off-diagonal entries, i.e. the covariance start).
    pub fn new(views: Vec<ViewGram>, pairs: bool) -> Self {
        let v = views.len();
        let mut prods = vec![vec![None; v]; v];
        for l in 0..v {
            for m in l..v {
                if l == m || pairs {
                    prods[l][m] = Some(product(&views[l], &views[m]));
                }
            }
        }
        Grams { views, prods }
    }

    pub fn n_views(&self) -> usize {
        self.views.len()
    }

    /// `K_l K_m` (transposed when l > m); `None` when it was not precomputed.
    pub fn prod(&self, l: usize, m: usize) -> Option<(&Array2<f64>, bool)> {
        if l <= m {
            self.prods[l][m].as_ref().map(|p| (p, false))
        } else {
            self.prods[m][l].as_ref().map(|p| (p, true))
        }
    }
}

fn product(a: &ViewGram, b: &ViewGram) -> Array2<f64> {
    match (a, b) {
        (ViewGram::Exact(ka), ViewGram::Exact(kb)) => matmul(ka.view(), kb.view()),
        (ViewGram::Nystrom(na), ViewGram::Nystrom(nb)) => {
            // N_a (N_aᵀ N_b) N_bᵀ: O(n p² + n² p) instead of O(n³)
            let inner = matmul_tn(na.view(), nb.view());
            let left = matmul(na.view(), inner.view());
            matmul(left.view(), nb.t())
        }
        (ViewGram::Exact(ka), ViewGram::Nystrom(nb)) => {
            let kn = matmul(ka.view(), nb.view());
            matmul(kn.view(), nb.t())
        }
        (ViewGram::Nystrom(na), ViewGram::Exact(kb)) => {
            let nk = matmul_tn(na.view(), kb.view());
            matmul(na.view(), nk.view())
        }
    }
}
