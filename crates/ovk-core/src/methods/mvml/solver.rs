//! The general route of the alternating algorithm (covariance start, block-sparse eq. 12, or
//! learned view weights eq. 10) for one output column: the metric in the structured form of
//! metric.rs, an A-step along the gradient of the profiled objective (or its proximal step)
//! whose length comes from a backtracking line search with a sufficient-decrease test, the
//! condition cap, and the w-step.
//!
//! The g-step never forms A†. Exact Grams: with `Z = [w_1 Ψ_1 … w_v Ψ_v]`, eq. (8)
//! `g = (ZᵀZ + λA⁻¹)⁻¹ Zᵀy` equals `g = A Zᵀ c` with `c = (Z A Zᵀ + λI)⁻¹ y` (push-through
//! identity), an n×n Cholesky solve. Nyström: Â is vp×vp and the same c comes from the primal
//! `c = (y − Z L (λI + Lᵀ ZᵀZ L)⁻¹ Lᵀ Zᵀ y)/λ` with `Â = L Lᵀ` — vp×vp solves only. Then
//! `A† g = Zᵀc = h`, the term eq. (9) needs, and the objective of (7) at the optimal g is
//! `λ yᵀc + η‖A‖²_F` (fit `λ²‖c‖²`, penalty `λ hᵀAh`).

use std::sync::Arc;

use ndarray::{s, Array1, Array2, ArrayView1, Axis};

use super::grams::{CrossMaps, Features};
use super::metric::Metric;
use super::progress::{Output, Progress, Round, ARMIJO};
use crate::linalg::{cholesky, eigh, matmul, matmul_tn};
use crate::{OvkError, Result};

/// The constants of one mvml fit on the exact or dense-Nyström route.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Ridge weight λ.
    pub lambda: f64,
    /// Metric penalty weight η.
    pub eta: f64,
    /// First step μ of the A-step's line search.
    pub mu: f64,
    /// Eq. (12) (block-sparse, penalty η Σ‖A_lm‖_F) instead of eq. (9) (penalty η‖A‖²_F).
    pub sparse: bool,
    /// Learn the view weights w (eq. 10) instead of w = 1/v.
    pub learn_weights: bool,
    /// Keep A = A₀: fit only g (and w).
    pub fixed_metric: bool,
    /// Relative-change tolerance δ of the stopping test.
    pub tol: f64,
    /// Largest condition number A may reach (the A-step drifts towards rank one).
    pub cond_cap: f64,
}

impl Settings {
    /// The longest step tried: eq. (9) keeps A definite only for μη < ½.
    pub(crate) fn mu_max(&self) -> f64 {
        if self.eta > 0.0 {
            0.45 / self.eta
        } else {
            1e12
        }
    }
}

/// The shared pieces of the g-step, computed once per fit: the products `Ψ_l Ψ_mᵀ` (exact,
/// n×n) or the vp×vp `ΨᵀΨ` (Nyström), and the identity between views in the features'
/// coordinates.
pub struct Shared<'a> {
    /// The views' features Ψ_l the products come from.
    pub features: &'a Features,
    prods: Vec<Vec<Option<Array2<f64>>>>,
    /// Nyström: `ΨᵀΨ` (vr×vr, unweighted).
    gram: Option<Array2<f64>>,
    /// Nyström with blocks between views: `B_lm` (grams.rs).
    cross: Option<Arc<CrossMaps>>,
}

impl<'a> Shared<'a> {
    /// `pairs`: the off-diagonal products too (a metric whose Ā has off-diagonal entries).
    pub fn new(features: &'a Features, pairs: bool) -> Self {
        let v = features.n_views();
        let mut prods = vec![vec![None; v]; v];
        let mut gram = None;
        if features.is_exact() {
            for (l, row) in prods.iter_mut().enumerate() {
                for (m, slot) in row.iter_mut().enumerate().skip(l) {
                    if l == m || pairs {
                        *slot = Some(features.product(l, m));
                    }
                }
            }
        } else {
            let psi = features.weighted(&Array1::ones(v));
            gram = Some(matmul_tn(psi.view(), psi.view()));
        }
        let cross = if pairs {
            features.cross_maps().map(Arc::new)
        } else {
            None
        };
        Shared {
            features,
            prods,
            gram,
            cross,
        }
    }

    /// `A = Ā ⊗ I` in the features' coordinates (`B_lm` between views).
    pub fn metric(&self, abar: Array2<f64>) -> Metric {
        let f = &self.features;
        Metric::new(abar, f.r(), f.n()).with_cross(self.cross.clone())
    }

    /// The number of views v.
    pub fn n_views(&self) -> usize {
        self.features.n_views()
    }

    /// `Ψ_l Ψ_mᵀ` (transposed when l > m); `None` when it was not precomputed.
    pub(crate) fn prod(&self, l: usize, m: usize) -> Option<(&Array2<f64>, bool)> {
        if l <= m {
            self.prods[l][m].as_ref().map(|p| (p, false))
        } else {
            self.prods[m][l].as_ref().map(|p| (p, true))
        }
    }
}

/// The g-step's result at fixed (A, w).
#[derive(Debug, Clone)]
pub struct Profile {
    /// `c = (Z A Zᵀ + λI)⁻¹ y`.
    pub c: Array1<f64>,
    /// `h = Zᵀ c = A† g`, per view.
    pub h: Vec<Array1<f64>>,
    /// `‖y − W H g‖²`.
    pub fit: f64,
    /// `λ ⟨g, A† g⟩`.
    pub reg: f64,
    /// `η‖A‖²_F` (or `η Σ‖A_lm‖_F` when sparse).
    pub pen: f64,
    /// The objective of (7): fit + reg + pen.
    pub objective: f64,
}

/// `Z A Zᵀ + λI` for `A = Ā ⊗ I + Ū C Ūᵀ`:
/// `Σ_lm w_l w_m Ā_lm Ψ_l Ψ_mᵀ + Y C Yᵀ + λI` with `Y = [w_l Ψ_l U_l]` (exact Grams).
pub(crate) fn dual_matrix(
    grams: &Shared,
    metric: &Metric,
    w: &Array1<f64>,
    lambda: f64,
) -> Result<Array2<f64>> {
    let v = grams.n_views();
    let n = grams.features.n();
    let mut m = Array2::<f64>::zeros((n, n));
    for l in 0..v {
        for k in l..v {
            let a = metric.abar[[l, k]];
            if a == 0.0 {
                continue;
            }
            let Some((p, transposed)) = grams.prod(l, k) else {
                return Err(OvkError::internal(format!(
                    "mvml: K_{l} K_{k} was not precomputed"
                )));
            };
            let f = w[l] * w[k] * a;
            if l == k {
                m.scaled_add(f, p);
            } else {
                // Ā symmetric: blocks (l, k) and (k, l) together give P + Pᵀ
                let (p1, p2) = if transposed {
                    (p.t(), p.view())
                } else {
                    (p.view(), p.t())
                };
                m.scaled_add(f, &p1);
                m.scaled_add(f, &p2);
            }
        }
    }
    let t = metric.terms();
    if t > 0 {
        let mut y = Array2::<f64>::zeros((n, v * t));
        for l in 0..v {
            y.slice_mut(ndarray::s![.., l * t..(l + 1) * t])
                .assign(&(&metric.ku[l] * w[l]));
        }
        let yc = matmul(y.view(), metric.c.view());
        m += &matmul(yc.view(), y.t());
    }
    m.diag_mut().mapv_inplace(|d| d + lambda);
    Ok(m)
}

/// The metric's penalty term of (7) or (11).
pub fn penalty(metric: &Metric, s: &Settings) -> f64 {
    if s.sparse {
        s.eta * metric.block_norms().sum()
    } else {
        s.eta * metric.fro2()
    }
}

/// The g-step (eq. 8) at fixed (A, w), and the objective of (7)/(11) there.
pub fn profile(
    grams: &Shared,
    metric: &Metric,
    w: &Array1<f64>,
    y: ArrayView1<f64>,
    s: &Settings,
) -> Result<Profile> {
    let lam = s.lambda;
    let f = &grams.features;
    let c = match &grams.gram {
        None => {
            let m = dual_matrix(grams, metric, w, lam)?;
            let yc = y.to_owned().insert_axis(Axis(1));
            cholesky(m.view())?.solve(yc.view()).column(0).to_owned()
        }
        Some(g) => primal_c(f, g, metric, w, y, lam)?,
    };
    let h: Vec<Array1<f64>> = (0..f.n_views())
        .map(|l| f.apply_transpose(l, c.view()) * w[l])
        .collect();
    let cc = c.dot(&c);
    let fit = lam * lam * cc;
    let reg = lam * (c.dot(&y) - lam * cc);
    let pen = penalty(metric, s);
    Ok(Profile {
        c,
        h,
        fit,
        reg,
        pen,
        objective: fit + reg + pen,
    })
}

/// `c = (Z Â Zᵀ + λI)⁻¹ y` from vr×vr matrices only: `Â = L Lᵀ` (eigenvalues clipped at 0),
/// `c = (y − Z L (λI + Lᵀ ZᵀZ L)⁻¹ Lᵀ Zᵀ y) / λ`.
fn primal_c(
    f: &Features,
    gram: &Array2<f64>,
    metric: &Metric,
    w: &Array1<f64>,
    y: ArrayView1<f64>,
    lam: f64,
) -> Result<Array1<f64>> {
    let r = f.r();
    let v = f.n_views();
    let wr = Array1::from_shape_fn(v * r, |i| w[i / r]);
    let a = metric.dense();
    let e = eigh(((&a + &a.t()) * 0.5).view())?;
    let l = &e.vectors * &e.values.mapv(|x| x.max(0.0).sqrt()).insert_axis(Axis(0));
    // Zᵀ Z = D_w (ΨᵀΨ) D_w, Zᵀ y = D_w Ψᵀ y
    let gw = gram * &wr.view().insert_axis(Axis(1)) * wr.view().insert_axis(Axis(0));
    let mut zty = Array1::zeros(v * r);
    for j in 0..v {
        zty.slice_mut(s![j * r..(j + 1) * r])
            .assign(&(f.apply_transpose(j, y) * w[j]));
    }
    let mut inner = matmul_tn(l.view(), matmul(gw.view(), l.view()).view());
    inner.diag_mut().mapv_inplace(|x| x + lam);
    let rhs = l.t().dot(&zty).insert_axis(Axis(1));
    let z = cholesky(((&inner + &inner.t()) * 0.5).view())?.solve(rhs.view());
    let lz = l.dot(&z.column(0));
    let mut c = y.to_owned();
    for j in 0..v {
        c.scaled_add(-w[j], &f.apply(j, lz.slice(s![j * r..(j + 1) * r])));
    }
    Ok(c / lam)
}

/// Add δI so that the Weyl bounds on A's spectrum satisfy `hi ≤ cap · lo`. True when it acted.
pub(crate) fn cap_condition(metric: &mut Metric, cap: f64) -> Result<bool> {
    let (lo, hi) = metric.spectrum_bounds()?;
    if hi.is_nan() || hi <= 0.0 {
        return Err(OvkError::numerical(
            "mvml: the metric A collapsed to zero; decrease the metric penalty --eta or the \
             step --mu",
        ));
    }
    if lo * cap >= hi {
        return Ok(false);
    }
    metric.add_identity((hi - cap * lo) / (cap - 1.0));
    Ok(true)
}

/// Block soft-threshold factors `f_lm = (1 − τ/‖A_lm‖_F)_+` (proximal operator of τ Σ‖A_lm‖_F).
pub fn prox_factors(norms: &Array2<f64>, tau: f64) -> Array2<f64> {
    let sym = (norms + &norms.t()) * 0.5;
    sym.mapv(|x| if x > tau { 1.0 - tau / x } else { 0.0 })
}

/// One A-step with step μ: eq. (9) `A ← (1 − 2μη)A + μλ h hᵀ`, or eq. (12)
/// `A ← prox_{μη Σ‖·‖_F}(A + μλ h hᵀ)` (threshold μη, not the η printed in the paper), then
/// the condition cap. Returns the new metric and whether the cap acted.
pub fn a_step(
    metric: &Metric,
    h: &[Array1<f64>],
    kh: &[Array1<f64>],
    mu: f64,
    s: &Settings,
) -> Result<(Metric, bool)> {
    let mut next = if s.sparse {
        let mut a = metric.scaled_plus_rank_one(1.0, mu * s.lambda, h, kh);
        let f = prox_factors(&a.block_norms(), mu * s.eta);
        a.scale_blocks(&f);
        a
    } else {
        metric.scaled_plus_rank_one(1.0 - 2.0 * mu * s.eta, mu * s.lambda, h, kh)
    };
    let capped = cap_condition(&mut next, s.cond_cap)?;
    Ok((next, capped))
}

/// Eq. (10): least squares of y on the v columns `Ψ_l g_l` (pseudo-inverse of the v×v normal
/// matrix, so collinear views do not break it).
pub(crate) fn weights_step(
    grams: &Shared,
    g: &[Array1<f64>],
    y: ArrayView1<f64>,
) -> Result<Array1<f64>> {
    let f = &grams.features;
    let v = f.n_views();
    let n = y.len();
    let mut zc = Array2::<f64>::zeros((n, v));
    for (l, gl) in g.iter().enumerate() {
        zc.column_mut(l).assign(&f.apply(l, gl.view()));
    }
    let ztz = zc.t().dot(&zc);
    let zty = zc.t().dot(&y);
    let e = eigh(ztz.view())?;
    let top = e.values.iter().copied().fold(0.0_f64, f64::max);
    let mut w = Array1::<f64>::zeros(v);
    for (i, &sv) in e.values.iter().enumerate() {
        if sv > top * 1e-12 && sv > 0.0 {
            let vi = e.vectors.column(i);
            w.scaled_add(vi.dot(&zty) / sv, &vi);
        }
    }
    Ok(w)
}

/// `‖A⁺ − A‖_F` when A⁺ came from A by `scaled_plus_rank_one` (its U extends A's by one
/// column) and block scaling / a shift of Ā.
fn change(prev: &Metric, next: &Metric) -> f64 {
    let t = prev.terms();
    let t1 = next.terms();
    let v = prev.views();
    let mut diff = next.clone();
    diff.abar = &next.abar - &prev.abar;
    for l in 0..v {
        for m in 0..v {
            let old = prev.c_block(l, m);
            diff.c
                .slice_mut(s![l * t1..l * t1 + t, m * t1..m * t1 + t])
                .scaled_add(-1.0, &old);
        }
    }
    diff.fro2().max(0.0).sqrt()
}

/// The state of the alternating algorithm for one output column.
#[derive(Debug, Clone)]
pub struct OutputFit {
    /// This output's metric A.
    pub metric: Metric,
    /// The view weights w (1/v each unless learned, eq. 10).
    pub w: Array1<f64>,
    /// The g-step's profile at the current (A, w).
    pub prof: Profile,
    /// How many times A's condition number was capped (`cond_cap`).
    pub caps: usize,
    /// Step and halving bookkeeping of this output's A-steps.
    pub progress: Progress,
}

impl Output for OutputFit {
    fn state(&self) -> (&Progress, [f64; 3]) {
        (
            &self.progress,
            [self.prof.fit, self.prof.reg, self.prof.pen],
        )
    }
}

impl OutputFit {
    /// A₀ = Ā₀ ⊗ I, w = 1/v, and the first g-step.
    pub fn start(
        grams: &Shared,
        abar0: Array2<f64>,
        y: ArrayView1<f64>,
        s: &Settings,
    ) -> Result<Self> {
        let v = grams.n_views();
        let mut metric = grams.metric(abar0);
        let mut caps = 0;
        if !s.fixed_metric && cap_condition(&mut metric, s.cond_cap)? {
            caps += 1;
        }
        let w = Array1::from_elem(v, 1.0 / v as f64);
        let prof = profile(grams, &metric, &w, y, s)?;
        let mut progress = Progress::new(s.mu.min(s.mu_max()));
        progress.converged = s.fixed_metric && !s.learn_weights;
        Ok(OutputFit {
            metric,
            w,
            prof,
            caps,
            progress,
        })
    }

    /// `g = A h`, per view.
    pub fn g(&self) -> Vec<Array1<f64>> {
        self.metric.apply(&self.prof.h)
    }

    /// One round: the A-step with backtracking (start at the last accepted step ×4, halve
    /// until `J(A⁺) ≤ J(A) − c‖A⁺ − A‖²_F/μ`), then the w-step.
    pub fn iterate(&mut self, grams: &Shared, y: ArrayView1<f64>, s: &Settings) -> Result<Round> {
        let mut round = Round::default();
        if self.progress.converged {
            return Ok(round);
        }
        let prev = self.prof.objective;
        let norm_prev = self.metric.fro2().sqrt();
        let mut moved = 0.0;
        if !s.fixed_metric {
            let f = &grams.features;
            let kh: Vec<Array1<f64>> = self
                .prof
                .h
                .iter()
                .enumerate()
                .map(|(l, h)| f.apply(l, h.view()))
                .collect();
            let mut mu = self.progress.mu;
            loop {
                // A step so long that A collapses (or the g-step fails) is rejected like one
                // that does not decrease the objective enough: μ is halved.
                let accepted = a_step(&self.metric, &self.prof.h, &kh, mu, s)
                    .ok()
                    .and_then(|(trial, capped)| {
                        let d = change(&self.metric, &trial);
                        match profile(grams, &trial, &self.w, y, s) {
                            Ok(p)
                                if p.objective.is_finite()
                                    && p.objective <= prev - ARMIJO * d * d / mu =>
                            {
                                Some((trial, capped, p, d))
                            }
                            _ => None,
                        }
                    });
                if let Some((trial, capped, p, d)) = accepted {
                    self.metric = trial;
                    self.prof = p;
                    self.caps += usize::from(capped);
                    round.step = Some(mu);
                    moved = d;
                    break;
                }
                if !self.progress.halve(&mut mu, &mut round) {
                    break;
                }
            }
            self.progress.searched(&round, s.mu_max());
        }
        if s.learn_weights {
            let w = weights_step(grams, &self.g(), y)?;
            if let Ok(p) = profile(grams, &self.metric, &w, y, s) {
                if p.objective.is_finite() && p.objective <= self.prof.objective {
                    let dw = (&w - &self.w).mapv(|x| x * x).sum().sqrt();
                    moved =
                        moved.max(dw / self.w.mapv(|x| x * x).sum().sqrt().max(1e-300) * norm_prev);
                    self.w = w;
                    self.prof = p;
                }
            }
        }
        self.progress
            .changed(prev, self.prof.objective, moved, norm_prev);
        self.progress.end_round(s.tol);
        Ok(round)
    }
}
