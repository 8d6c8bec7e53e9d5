//! The views' feature matrices the fit works with, computed once per fit and shared by every
//! output. Problem (7) sees the views only through `Z A Zᵀ` with `Z = [w_1 K_1 … w_v K_v]`;
//! writing `K_l = Ψ_l Ψ_lᵀ`-style factors in per-view coordinates gives `Z A Zᵀ = Ψ Â Ψᵀ`:
//! - exact: `Ψ_l = K_l` (r = n), Â = A in the original coordinates;
//! - block Nyström (eqs. 13–17): `K̃_l = N_l N_lᵀ` with `N_lᵀN_l = X_l Σ_l² X_lᵀ`, and
//!   `Ψ_l = N_l X_l Σ_l` (r = p) — the eigen-coordinates of K̃_l, where Â = Ã (vp×vp) is the
//!   metric restricted to the range of the Nyström kernel. `Ψ_l Ψ_lᵀ = K̃_l²`, as `K_l K_l`
//!   in the exact case, so Â = I is A = I in both routes.
//!
//! A metric with blocks between views (the covariance start A₀ = 𝟙𝟙ᵀ ⊗ I) needs one more
//! piece: what "the identity between views l and m" is in these per-view coordinates
//! (`cross_maps`). Each view's coordinates are its own eigenbasis, so it is not the identity.

use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, Axis};

use crate::linalg::{eigh, gram_tn, matmul, matmul_tn};
use crate::Result;

/// Each view's features Ψ_l (exact Gram or Nyström), in the view's own eigenbasis.
pub struct Features {
    /// Ψ_l (n×r) per view.
    pub psi: Vec<Array2<f64>>,
    /// Nyström: `X_l Σ_l` (p×p), which maps a view's ĝ_l to the coefficients of `N_lᵀ`-space
    /// (`N_lᵀ g_l = X_l Σ_l ĝ_l`); `None` for exact Grams.
    pub back: Option<Vec<Array2<f64>>>,
    /// Nyström in `root` coordinates (`Ψ_lΨ_lᵀ = K̃_l`, `back = X_l`).
    pub root: bool,
}

/// `B_lm` (r×r, l < m): the identity block between views l and m in the features' per-view
/// coordinates, `B_lm = T_lᵀ T_m` where T_l maps view l's coordinates into a frame every view
/// shares; the block (m, l) is `B_lmᵀ` and a diagonal block is the identity.
#[derive(Debug)]
pub(crate) struct CrossMaps {
    blocks: Vec<Vec<Array2<f64>>>,
}

impl CrossMaps {
    /// `B_lm` for l ≠ m, transposed when l > m.
    pub fn block(&self, l: usize, m: usize) -> ArrayView2<'_, f64> {
        if l < m {
            self.blocks[l][m - l - 1].view()
        } else {
            self.blocks[m][l - m - 1].t()
        }
    }
}

impl Features {
    /// Exact Grams: Ψ_l = K_l.
    pub fn exact(grams: Vec<Array2<f64>>) -> Self {
        Features {
            psi: grams,
            back: None,
            root: false,
        }
    }

    /// Block Nyström from the factors N_l (n×p): one p×p eigendecomposition per view. With
    /// `root`, `Ψ_l = N_l X_l` (`Ψ_lΨ_lᵀ = K̃_l`): Â is then the paper's Ã = NᵀAN up to the
    /// rotation X_l, the variable eqs. (13–17) and scikit-multimodallearn penalise.
    pub fn nystrom(factors: &[Array2<f64>], root: bool) -> Result<Self> {
        let views = factors
            .iter()
            .map(|nl| Self::nystrom_view(nl, root))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::from_views(views, root))
    }

    /// One view's `(Ψ_l, X_l Σ_l)` (or `(Ψ_l, X_l)` with `root`) from its factor N_l: a p×p
    /// eigendecomposition of `N_lᵀN_l` and one n×p product.
    pub(crate) fn nystrom_view(nl: &Array2<f64>, root: bool) -> Result<(Array2<f64>, Array2<f64>)> {
        let e = eigh(gram_tn(nl.view()).view())?;
        let sigma = e.values.mapv(|x| x.max(0.0).sqrt());
        let xs = if root {
            e.vectors
        } else {
            &e.vectors * &sigma.view().insert_axis(Axis(0))
        };
        Ok((matmul(nl.view(), xs.view()), xs))
    }

    /// Block Nyström features from every view's `nystrom_view`.
    pub(crate) fn from_views(views: Vec<(Array2<f64>, Array2<f64>)>, root: bool) -> Self {
        let (psi, back) = views.into_iter().unzip();
        Features {
            psi,
            back: Some(back),
            root,
        }
    }

    /// The identity between views in these coordinates (`None`: it is the identity, exact
    /// Grams). `gram`: the frame is the training rows, `T_l = Q_l` with `N_l X_l = Q_l Σ_l`,
    /// i.e. `Ψ_l = Q_l Σ_l²`, so `B_lm = Q_lᵀQ_m` and `Ψ_l B_lm Ψ_mᵀ = K̃_l K̃_m` as `K_l K_m` in the
    /// exact route; columns of Ψ_l below rounding (σ_j⁴ ≤ 10⁻¹⁶ of the largest: directions the
    /// landmark Gram's pseudo-inverse cut) get a zero column of Q_l. `root`: the frame is the
    /// landmarks', `T_l = X_l`, `B_lm = X_lᵀX_m`, so `Ψ_l B_lm Ψ_mᵀ = N_l N_mᵀ`.
    pub(crate) fn cross_maps(&self) -> Option<CrossMaps> {
        let back = self.back.as_ref()?;
        let frames: Vec<Array2<f64>> = if self.root {
            back.clone()
        } else {
            self.psi
                .iter()
                .map(|psi| {
                    let norms: Vec<f64> = psi.columns().into_iter().map(|c| c.dot(&c)).collect();
                    let top = norms.iter().copied().fold(0.0_f64, f64::max);
                    let inv = Array1::from_iter(norms.iter().map(|&x| {
                        if x > 1e-16 * top {
                            1.0 / x.sqrt()
                        } else {
                            0.0
                        }
                    }));
                    psi * &inv.view().insert_axis(Axis(0))
                })
                .collect()
        };
        let v = frames.len();
        let blocks = (0..v)
            .map(|l| {
                (l + 1..v)
                    .map(|m| matmul_tn(frames[l].view(), frames[m].view()))
                    .collect()
            })
            .collect();
        Some(CrossMaps { blocks })
    }

    /// `Σ_l w_l Ψ_l X_l` (n×m) for stacked columns X (vr×m): `[w_1 Ψ_1 … w_v Ψ_v] X`, one
    /// product per view.
    pub(crate) fn combine(&self, w: &Array1<f64>, x: ArrayView2<f64>) -> Array2<f64> {
        let r = self.r();
        let mut z = Array2::<f64>::zeros((self.n(), x.ncols()));
        for (l, psi) in self.psi.iter().enumerate() {
            let xl = x.slice(s![l * r..(l + 1) * r, ..]);
            z.scaled_add(w[l], &matmul(psi.view(), xl));
        }
        z
    }

    /// `[w_1 Ψ_1 … w_v Ψ_v]ᵀ C` (vr×m) for C (n×m), one product per view.
    pub fn spread(&self, w: &Array1<f64>, c: ArrayView2<f64>) -> Array2<f64> {
        let r = self.r();
        let mut h = Array2::<f64>::zeros((self.n_views() * r, c.ncols()));
        for (l, psi) in self.psi.iter().enumerate() {
            h.slice_mut(s![l * r..(l + 1) * r, ..])
                .assign(&(matmul_tn(psi.view(), c) * w[l]));
        }
        h
    }

    /// `[w_1 Ψ_1 … w_v Ψ_v]` (n×vr).
    pub fn weighted(&self, w: &Array1<f64>) -> Array2<f64> {
        let views: Vec<Array2<f64>> = (0..self.n_views()).map(|l| &self.psi[l] * w[l]).collect();
        ndarray::concatenate(Axis(1), &views.iter().map(|a| a.view()).collect::<Vec<_>>())
            .unwrap_or_else(|_| Array2::zeros((self.n(), 0)))
    }

    /// Number of views v.
    pub fn n_views(&self) -> usize {
        self.psi.len()
    }

    pub(crate) fn is_exact(&self) -> bool {
        self.back.is_none()
    }

    /// Rows n (training points).
    pub fn n(&self) -> usize {
        self.psi.first().map_or(0, |p| p.nrows())
    }

    /// Coordinates per view r (n exact, p Nyström).
    pub fn r(&self) -> usize {
        self.psi.first().map_or(0, |p| p.ncols())
    }

    /// `Ψ_l x` (r → n).
    pub fn apply(&self, l: usize, x: ArrayView1<f64>) -> Array1<f64> {
        self.psi[l].dot(&x)
    }

    /// `Ψ_lᵀ c` (n → r).
    pub(crate) fn apply_transpose(&self, l: usize, c: ArrayView1<f64>) -> Array1<f64> {
        self.psi[l].t().dot(&c)
    }

    /// `Ψ_l Ψ_mᵀ` (n×n): the products the dual route of the general A-step needs.
    pub fn product(&self, l: usize, m: usize) -> Array2<f64> {
        matmul(self.psi[l].view(), self.psi[m].t())
    }
}
