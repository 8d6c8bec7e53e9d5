//! The alternating algorithm of Huusari et al. for one output column: the g-step (eq. 8) in
//! its dual form, the A-step (eq. 9, or the proximal eq. 12) with a step halved until the
//! objective decreases and a cap on the condition number of A, and the w-step (eq. 10).
//!
//! The g-step never forms A†: with `Z = W H = [w_1 K_1 … w_v K_v]` (n×nv), eq. (8)
//! `g = (ZᵀZ + λA⁻¹)⁻¹ Zᵀy` equals `g = A Zᵀ c` with `c = (Z A Zᵀ + λI)⁻¹ y` (push-through
//! identity), an n×n Cholesky solve. Then `A† g = Zᵀc = h`, the term eq. (9) needs, and the
//! objective of (7) at the optimal g is `λ yᵀc + η‖A‖²_F` (fit `λ²‖c‖²`, penalty `λ hᵀAh`).

use ndarray::{Array1, Array2, ArrayView1};

use super::grams::Grams;
use super::metric::Metric;
use crate::linalg::{cholesky, eigh, matmul};
use crate::{OvkError, Result};

/// How many times one A-step may halve μ before the iterate is declared stationary.
pub const MAX_HALVINGS: usize = 40;

#[derive(Debug, Clone, Copy)]
pub struct Settings {
    pub lambda: f64,
    pub eta: f64,
    pub mu: f64,
    /// Eq. (12) (block-sparse, penalty η Σ‖A_lm‖_F) instead of eq. (9) (penalty η‖A‖²_F).
    pub sparse: bool,
    pub learn_weights: bool,
    pub fixed_metric: bool,
    pub tol: f64,
    /// Largest condition number A may reach (the A-step drifts towards rank one).
    pub cond_cap: f64,
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
    pub objective: f64,
}

/// `Z A Zᵀ + λI` for `A = Ā ⊗ I + Ū C Ūᵀ`:
/// `Σ_lm w_l w_m Ā_lm K_l K_m + Y C Yᵀ + λI` with `Y = [w_l K_l U_l]`.
pub fn dual_matrix(
    grams: &Grams,
    metric: &Metric,
    w: &Array1<f64>,
    lambda: f64,
) -> Result<Array2<f64>> {
    let v = grams.n_views();
    let n = metric.n();
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
    grams: &Grams,
    metric: &Metric,
    w: &Array1<f64>,
    y: ArrayView1<f64>,
    s: &Settings,
) -> Result<Profile> {
    let m = dual_matrix(grams, metric, w, s.lambda)?;
    let yc = y.to_owned().insert_axis(ndarray::Axis(1));
    let c = cholesky(m.view())?.solve(yc.view()).column(0).to_owned();
    let h: Vec<Array1<f64>> = grams
        .views
        .iter()
        .enumerate()
        .map(|(l, k)| k.matvec(c.view()) * w[l])
        .collect();
    let lam = s.lambda;
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

/// Add δI so that the Weyl bounds on A's spectrum satisfy `hi ≤ cap · lo`. True when it acted.
pub fn cap_condition(metric: &mut Metric, cap: f64) -> Result<bool> {
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

/// Eq. (10): least squares of y on the v columns `K_l g_l` (pseudo-inverse of the v×v normal
/// matrix, so collinear views do not break it).
pub fn weights_step(grams: &Grams, g: &[Array1<f64>], y: ArrayView1<f64>) -> Result<Array1<f64>> {
    let v = grams.n_views();
    let n = y.len();
    let mut zc = Array2::<f64>::zeros((n, v));
    for (l, (view, gl)) in grams.views.iter().zip(g).enumerate() {
        zc.column_mut(l).assign(&view.matvec(gl.view()));
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

/// The state of the alternating algorithm for one output column.
#[derive(Debug, Clone)]
pub struct OutputFit {
    pub metric: Metric,
    pub w: Array1<f64>,
    pub prof: Profile,
    /// Current step μ (only ever halved).
    pub mu: f64,
    pub halvings: usize,
    pub caps: usize,
    pub iterations: usize,
    pub converged: bool,
    /// The last A-step found no decrease even after `MAX_HALVINGS` halvings.
    pub stalled: bool,
}

/// What one iteration did (for the trace).
#[derive(Debug, Clone, Copy)]
pub struct StepReport {
    pub step: Option<f64>,
    pub halvings: usize,
}

impl OutputFit {
    /// A₀ = Ā₀ ⊗ I, w = 1/v, and the first g-step.
    pub fn start(
        grams: &Grams,
        abar0: Array2<f64>,
        y: ArrayView1<f64>,
        s: &Settings,
    ) -> Result<Self> {
        let v = grams.n_views();
        let n = y.len();
        let mut metric = Metric::new(abar0, n);
        let mut caps = 0;
        if !s.fixed_metric && cap_condition(&mut metric, s.cond_cap)? {
            caps += 1;
        }
        let w = Array1::from_elem(v, 1.0 / v as f64);
        let prof = profile(grams, &metric, &w, y, s)?;
        let converged = s.fixed_metric && !s.learn_weights;
        Ok(OutputFit {
            metric,
            w,
            prof,
            mu: s.mu,
            halvings: 0,
            caps,
            iterations: 0,
            converged,
            stalled: false,
        })
    }

    /// `g = A h`, per view.
    pub fn g(&self) -> Vec<Array1<f64>> {
        self.metric.apply(&self.prof.h)
    }

    /// One round: A-step (halving μ until the objective does not increase), then w-step.
    pub fn iterate(
        &mut self,
        grams: &Grams,
        y: ArrayView1<f64>,
        s: &Settings,
    ) -> Result<StepReport> {
        let mut report = StepReport {
            step: None,
            halvings: 0,
        };
        if self.converged {
            return Ok(report);
        }
        let prev = self.prof.objective;
        if !s.fixed_metric {
            let kh: Vec<Array1<f64>> = self
                .prof
                .h
                .iter()
                .enumerate()
                .map(|(l, h)| grams.views[l].matvec(h.view()))
                .collect();
            let mut mu = self.mu;
            loop {
                // A step so long that A collapses (or the g-step fails) is rejected like one
                // that increases the objective: μ is halved.
                let accepted = a_step(&self.metric, &self.prof.h, &kh, mu, s)
                    .ok()
                    .and_then(
                        |(trial, capped)| match profile(grams, &trial, &self.w, y, s) {
                            Ok(p) if p.objective.is_finite() && p.objective <= prev => {
                                Some((trial, capped, p))
                            }
                            _ => None,
                        },
                    );
                if let Some((trial, capped, p)) = accepted {
                    self.metric = trial;
                    self.prof = p;
                    self.caps += usize::from(capped);
                    report.step = Some(mu);
                    break;
                }
                mu *= 0.5;
                report.halvings += 1;
                if report.halvings >= MAX_HALVINGS {
                    self.stalled = true;
                    break;
                }
            }
            self.mu = mu;
            self.halvings += report.halvings;
        }
        if s.learn_weights {
            let w = weights_step(grams, &self.g(), y)?;
            if let Ok(p) = profile(grams, &self.metric, &w, y, s) {
                if p.objective.is_finite() && p.objective <= self.prof.objective {
                    self.w = w;
                    self.prof = p;
                }
            }
        }
        self.iterations += 1;
        let rel = (prev - self.prof.objective).abs() / prev.abs().max(f64::MIN_POSITIVE);
        if rel < s.tol || self.stalled {
            self.converged = true;
        }
        Ok(report)
    }
}
