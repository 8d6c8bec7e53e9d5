//! The metric A (nv×nv) in a structured form that the updates of eqs. (9) and (12) preserve:
//! `A = Ā ⊗ I_n + Ū C Ūᵀ`, `Ū = blockdiag(U_1 … U_v)`, where `U_l` (n×t) holds the view-l part
//! of every rank-one term `A† g gᵀ A† = h hᵀ` added so far. Eq. (9) scales Ā and C and appends
//! one column per view; eq. (12) scales each view-pair block (Ā_lm and C_lm together). So the
//! nv×nv matrix is never formed: every quantity the fit needs costs O(n·v·t) or O((vt)³).
//!
//! In Nyström coordinates (grams.rs) each view has its own basis, so the identity between two
//! views is not I_r but `B_lm` (`CrossMaps`): the `Ā ⊗ I` part is `Ā_ll I` on the diagonal
//! blocks and `Ā_lm B_lm` off it — the same metric as in the exact route, seen in the views'
//! coordinates. Eqs. (9) and (12) scale Ā's entries, so they keep this form too.

use std::sync::Arc;

use ndarray::{s, Array1, Array2, ArrayView2, Axis};

use super::grams::CrossMaps;
use crate::linalg::{eigh, matmul, matmul_tn};
use crate::Result;

/// The metric A = Ā ⊗ I + Ū C Ūᵀ (nv×nv), kept in factored form (module docs).
#[derive(Debug, Clone)]
pub struct Metric {
    /// Ā (v×v): the multiple of the identity in every view-pair block.
    pub abar: Array2<f64>,
    /// U_l (r×t) per view, in the view's coordinates (grams.rs).
    pub u: Vec<Array2<f64>>,
    /// Ψ_l U_l (n×t) per view, kept so that `Z A Zᵀ` needs no n×n×t products.
    pub(crate) ku: Vec<Array2<f64>>,
    /// C (vt×vt); block (l, m) is rows l·t.., columns m·t...
    pub c: Array2<f64>,
    n: usize,
    /// The identity between views in these coordinates (`None`: I_r, exact Grams).
    cross: Option<Arc<CrossMaps>>,
}

impl Metric {
    /// `A = Ā ⊗ I_r`; `rows` is the number of training points n (the rows of Ψ_l U_l).
    pub fn new(abar: Array2<f64>, r: usize, rows: usize) -> Self {
        let v = abar.nrows();
        let n = r;
        Metric {
            abar,
            u: vec![Array2::zeros((r, 0)); v],
            ku: vec![Array2::zeros((rows, 0)); v],
            c: Array2::zeros((0, 0)),
            n,
            cross: None,
        }
    }

    /// The same metric with `B_lm` as the identity between views l ≠ m (grams.rs).
    pub(crate) fn with_cross(mut self, cross: Option<Arc<CrossMaps>>) -> Self {
        self.cross = cross;
        self
    }

    /// The identity block between views l and m: `None` when it is I_r (l = m, or exact).
    fn between(&self, l: usize, m: usize) -> Option<ArrayView2<'_, f64>> {
        match &self.cross {
            Some(c) if l != m => Some(c.block(l, m)),
            _ => None,
        }
    }

    /// Number of views v (the side of Ā).
    pub fn views(&self) -> usize {
        self.abar.nrows()
    }

    /// Number of stored rank-one terms t.
    pub fn terms(&self) -> usize {
        self.u.first().map_or(0, |u| u.ncols())
    }

    /// Rows n of each view's features.
    pub fn n(&self) -> usize {
        self.n
    }

    pub(crate) fn c_block(&self, l: usize, m: usize) -> ArrayView2<'_, f64> {
        let t = self.terms();
        self.c.slice(s![l * t..(l + 1) * t, m * t..(m + 1) * t])
    }

    /// `g = A h` (the substitution of eq. (8)), view by view.
    pub fn apply(&self, h: &[Array1<f64>]) -> Vec<Array1<f64>> {
        let v = self.views();
        let t = self.terms();
        let uh: Vec<f64> = (0..v)
            .flat_map(|m| self.u[m].t().dot(&h[m]).to_vec())
            .collect();
        let cuh = self.c.dot(&Array1::from(uh));
        (0..v)
            .map(|l| {
                let mut g = Array1::zeros(self.n);
                for (m, hm) in h.iter().enumerate() {
                    let a = self.abar[[l, m]];
                    match self.between(l, m) {
                        _ if a == 0.0 => {}
                        None => g.scaled_add(a, hm),
                        Some(b) => g.scaled_add(a, &b.dot(hm)),
                    }
                }
                if t > 0 {
                    g += &self.u[l].dot(&cuh.slice(s![l * t..(l + 1) * t]));
                }
                g
            })
            .collect()
    }

    /// `s·A + coef·h hᵀ` — eq. (9) with `A† g = h` (exact for PD A, since g = A h).
    /// `kh[l] = K_l h_l` extends the cached `K_l U_l`.
    pub fn scaled_plus_rank_one(
        &self,
        s: f64,
        coef: f64,
        h: &[Array1<f64>],
        kh: &[Array1<f64>],
    ) -> Metric {
        let v = self.views();
        let t = self.terms();
        let t1 = t + 1;
        let mut c = Array2::zeros((v * t1, v * t1));
        for l in 0..v {
            for m in 0..v {
                c.slice_mut(s![l * t1..l * t1 + t, m * t1..m * t1 + t])
                    .assign(&(&self.c_block(l, m) * s));
                c[[l * t1 + t, m * t1 + t]] = coef;
            }
        }
        let append = |a: &Array2<f64>, col: &Array1<f64>| {
            let mut out = Array2::zeros((a.nrows(), t1));
            out.slice_mut(s![.., ..t]).assign(a);
            out.column_mut(t).assign(col);
            out
        };
        Metric {
            abar: &self.abar * s,
            u: (0..v).map(|l| append(&self.u[l], &h[l])).collect(),
            ku: (0..v).map(|l| append(&self.ku[l], &kh[l])).collect(),
            c,
            n: self.n,
            cross: self.cross.clone(),
        }
    }

    /// `A + δ I`.
    pub(crate) fn add_identity(&mut self, delta: f64) {
        self.abar.diag_mut().mapv_inplace(|a| a + delta);
    }

    /// `A_lm ← f_lm A_lm` for every view pair (the proximal step of eq. (12) once f is known).
    pub fn scale_blocks(&mut self, f: &Array2<f64>) {
        let v = self.views();
        let t = self.terms();
        for l in 0..v {
            for m in 0..v {
                self.abar[[l, m]] *= f[[l, m]];
                self.c
                    .slice_mut(s![l * t..(l + 1) * t, m * t..(m + 1) * t])
                    .mapv_inplace(|x| x * f[[l, m]]);
            }
        }
    }

    /// `[U_1 … U_v]ᵀ [U_1 … U_v]` (vt×vt): every inner product the norms need.
    fn gram_all(&self) -> Array2<f64> {
        let cat = ndarray::concatenate(
            Axis(1),
            &self.u.iter().map(|u| u.view()).collect::<Vec<_>>(),
        )
        .unwrap_or_else(|_| Array2::zeros((self.n, 0)));
        matmul_tn(cat.view(), cat.view())
    }

    /// `‖A_lm‖_F` for every view pair, with `B_lm` the identity between the views:
    /// `‖B_lm‖²_F Ā_lm² + 2 Ā_lm tr(C_lm (U_lᵀB_lmU_m)ᵀ) + tr(C_lm U_mᵀU_m C_lmᵀ U_lᵀU_l)`.
    pub fn block_norms(&self) -> Array2<f64> {
        let v = self.views();
        let t = self.terms();
        let g = self.gram_all();
        let gb = |l: usize, m: usize| g.slice(s![l * t..(l + 1) * t, m * t..(m + 1) * t]);
        Array2::from_shape_fn((v, v), |(l, m)| {
            let a = self.abar[[l, m]];
            let b = self.between(l, m);
            let b2 = b.map_or(self.n as f64, |b| b.iter().map(|x| x * x).sum());
            let mut sq = b2 * a * a;
            if t > 0 {
                let cb = self.c_block(l, m);
                let cross: f64 = match b {
                    _ if a == 0.0 => 0.0,
                    None => (&cb * &gb(m, l).t()).sum(),
                    Some(b) => {
                        let ubu = matmul_tn(self.u[l].view(), matmul(b, self.u[m].view()).view());
                        (&cb * &ubu).sum()
                    }
                };
                let cg = matmul(cb, gb(m, m));
                let cgc = matmul(cg.view(), cb.t());
                let quad: f64 = (&cgc * &gb(l, l).t()).sum();
                sq += 2.0 * a * cross + quad;
            }
            sq.max(0.0).sqrt()
        })
    }

    /// `‖A‖²_F`.
    pub fn fro2(&self) -> f64 {
        self.block_norms().mapv(|x| x * x).sum()
    }

    /// Bounds `(lo, hi)` on the spectrum of A by Weyl's inequality: the eigenvalues of Ā plus
    /// the extreme nonzero eigenvalues of `Ū C Ūᵀ`, i.e. of `G^{1/2} C G^{1/2}` with
    /// `G = ŪᵀŪ = blockdiag(U_lᵀ U_l)`. Exact for the identity start of eq. (9). With `B_lm`
    /// the Ā part is the compression `T̂ᵀ(Ā ⊗ I)T̂` by the isometry `T̂ = blockdiag(T_l)` (plus
    /// `Ā_ll` alone on cut coordinates), so its spectrum lies within Ā's as well.
    pub fn spectrum_bounds(&self) -> Result<(f64, f64)> {
        let ea = eigh(self.abar.view())?;
        let v = self.views();
        let (amin, amax) = (ea.values[0], ea.values[v - 1]);
        let t = self.terms();
        if t == 0 {
            return Ok((amin, amax));
        }
        let mut gsqrt = Array2::zeros((v * t, v * t));
        for l in 0..v {
            let gl = matmul_tn(self.u[l].view(), self.u[l].view());
            let e = eigh(gl.view())?;
            let r = e.values.mapv(|x| x.max(0.0).sqrt());
            let vr = &e.vectors * &r.view().insert_axis(Axis(0));
            gsqrt
                .slice_mut(s![l * t..(l + 1) * t, l * t..(l + 1) * t])
                .assign(&matmul(vr.view(), e.vectors.t()));
        }
        let sm = matmul(matmul(gsqrt.view(), self.c.view()).view(), gsqrt.view());
        let sm = (&sm + &sm.t()) * 0.5;
        let es = eigh(sm.view())?;
        let (smin, smax) = (es.values[0], es.values[v * t - 1]);
        Ok((amin + smin.min(0.0), amax + smax.max(0.0)))
    }

    /// The dense nv×nv matrix (tests, and saving small metrics).
    pub fn dense(&self) -> Array2<f64> {
        let (v, n) = (self.views(), self.n);
        let mut a = Array2::zeros((v * n, v * n));
        for l in 0..v {
            for m in 0..v {
                let mut b = a.slice_mut(s![l * n..(l + 1) * n, m * n..(m + 1) * n]);
                match self.between(l, m) {
                    None => b.diag_mut().fill(self.abar[[l, m]]),
                    Some(bl) => b.scaled_add(self.abar[[l, m]], &bl),
                }
                if self.terms() > 0 {
                    let uc = matmul(self.u[l].view(), self.c_block(l, m));
                    b += &matmul(uc.view(), self.u[m].t());
                }
            }
        }
        a
    }
}
