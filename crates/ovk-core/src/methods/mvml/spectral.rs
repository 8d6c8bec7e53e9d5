//! The default route (A₀ = I, eq. 9, fixed view weights): projected gradient descent with a
//! line search on the profiled objective, in a basis shared by every output.
//!
//! With g at its optimum (eq. 8), problem (7) is `J(A) = λ yᵀ(Ψ A Ψᵀ + λI)⁻¹ y + η‖A‖²_F`
//! (grams.rs for Ψ), smooth and convex on the PSD cone with gradient `∇J = 2ηA − λ h hᵀ`,
//! `h = Ψᵀ c = A† g` — eq. (9) is the step `A − μ∇J`. Its minimiser lies on the boundary of the
//! cone (∇J = 0 would need a rank-one A), so A is kept in `{A ⪰ εI}` by projection
//! (eigenvalues clipped at ε) and the step μ comes from an Armijo line search, not a fixed μ.
//! Every iterate has the form `A = s I + F diag(e) Fᵀ` (F orthonormal, e ≥ 0): the gradient
//! step adds one direction, the projection is an eigendecomposition of a (k+1)×(k+1) core, and
//! directions whose eigenvalue reaches the floor are dropped — so k stays small.
//!
//! `S = Ψ Ψᵀ = P diag(σ²) Pᵀ` is eigendecomposed once per fit (n×n exact, or through the
//! vp×vp `ΨᵀΨ` with Nyström); then `Ψ A Ψᵀ + λI = P (sσ² + λ + Y E Yᵀ) Pᵀ` on range(P), with
//! `Y = PᵀΨF` (R'×k), and every evaluation of J is a k×k Woodbury solve.

use ndarray::{s, Array1, Array2, ArrayView1, Axis};

use super::basis::Basis;
use super::grams::Features;
use super::progress::{Output, Progress, Round, ARMIJO};
use crate::linalg::{cholesky, eigh, matmul, matmul_tn};
use crate::{OvkError, Result};

/// `blockdiag(B_l B_lᵀ)` (vr×vr), shared by every output's `dense_through`.
pub(crate) fn block_diag_gram(back: &[Array2<f64>]) -> Array2<f64> {
    let r = back.first().map_or(0, |b| b.nrows());
    let mut g = Array2::<f64>::zeros((back.len() * r, back.len() * r));
    for (l, b) in back.iter().enumerate() {
        g.slice_mut(s![l * r..(l + 1) * r, l * r..(l + 1) * r])
            .assign(&matmul(b.view(), b.t()));
    }
    g
}

/// `A = s I + F diag(e) Fᵀ` (F orthonormal, e ≥ 0), with `Y = Pᵀ Ψ F` cached.
#[derive(Debug, Clone)]
pub struct LowRank {
    /// The isotropic part s of A.
    pub s: f64,
    /// F: orthonormal columns spanning A's low-rank part (dim×rank).
    pub f: Array2<f64>,
    /// e ≥ 0: the eigenvalues of A − sI along F's columns.
    pub e: Array1<f64>,
    y: Array2<f64>,
}

impl LowRank {
    /// `A = s I`.
    pub(crate) fn scaled_identity(s: f64, dim: usize, basis_dim: usize) -> Self {
        LowRank {
            s,
            f: Array2::zeros((dim, 0)),
            e: Array1::zeros(0),
            y: Array2::zeros((basis_dim, 0)),
        }
    }

    /// The side of A (v·r).
    pub fn dim(&self) -> usize {
        self.f.nrows()
    }

    /// The rank of A's low-rank part (columns of F).
    pub fn rank(&self) -> usize {
        self.e.len()
    }

    /// `‖A‖²_F`.
    pub fn fro2(&self) -> f64 {
        let s = self.s;
        s * s * self.dim() as f64 + self.e.iter().map(|e| 2.0 * s * e + e * e).sum::<f64>()
    }

    /// `A x`.
    pub fn apply(&self, x: ArrayView1<f64>) -> Array1<f64> {
        let fx = self.f.t().dot(&x) * &self.e;
        &x * self.s + self.f.dot(&fx)
    }

    /// The dense matrix (tests, and saving small metrics).
    pub fn dense(&self) -> Array2<f64> {
        let fe = &self.f * &self.e.view().insert_axis(Axis(0));
        let mut a = matmul(fe.view(), self.f.t());
        a.diag_mut().mapv_inplace(|x| x + self.s);
        a
    }

    /// `Bd A Bdᵀ` for `Bd = blockdiag(back_l)` (the paper's Ã from Â, report.rs):
    /// `s Bd Bdᵀ + (Bd F) diag(e) (Bd F)ᵀ`, with `Bd Bdᵀ` from `block_diag_gram`.
    pub(crate) fn dense_through(&self, back: &[Array2<f64>], bbt: &Array2<f64>) -> Array2<f64> {
        let r = self.dim() / back.len().max(1);
        let mut bf = Array2::<f64>::zeros(self.f.raw_dim());
        for (l, b) in back.iter().enumerate() {
            let rows = s![l * r..(l + 1) * r, ..];
            bf.slice_mut(rows)
                .assign(&matmul(b.view(), self.f.slice(rows)));
        }
        let bfe = &bf * &self.e.view().insert_axis(Axis(0));
        let mut a = matmul(bfe.view(), bf.t());
        a.scaled_add(self.s, bbt);
        a
    }

    /// `‖A_lm‖_F` for the v×v view-pair blocks (r coordinates each).
    pub fn block_norms(&self, v: usize) -> Array2<f64> {
        let r = self.dim() / v.max(1);
        let blocks: Vec<Array2<f64>> = (0..v)
            .map(|l| self.f.slice(s![l * r..(l + 1) * r, ..]).to_owned())
            .collect();
        let grams: Vec<Array2<f64>> = blocks
            .iter()
            .map(|b| matmul_tn(b.view(), b.view()))
            .collect();
        let e = &self.e;
        Array2::from_shape_fn((v, v), |(l, m)| {
            // tr(E F_mᵀF_m E F_lᵀF_l), plus the identity part on the diagonal blocks
            let ege = &grams[m] * &e.view().insert_axis(Axis(1)) * e.view().insert_axis(Axis(0));
            let mut sq: f64 = (&ege * &grams[l]).sum();
            if l == m {
                let tr: f64 = grams[l].diag().iter().zip(e).map(|(g, e)| g * e).sum();
                sq += self.s * self.s * r as f64 + 2.0 * self.s * tr;
            }
            sq.max(0.0).sqrt()
        })
    }
}

/// The g-step (eq. 8) at fixed A and the objective there.
#[derive(Debug, Clone)]
pub struct Profile {
    /// `c̃ = Pᵀ (Ψ A Ψᵀ + λI)⁻¹ y`.
    pub ct: Array1<f64>,
    /// `h = Ψᵀ c = A† g` (stacked).
    pub h: Array1<f64>,
    /// `‖y − Ψ g‖²`.
    pub fit: f64,
    /// `λ ⟨g, A† g⟩`.
    pub reg: f64,
    /// `η ‖A‖²_F`.
    pub pen: f64,
    /// `‖y − Ψ g‖² + λ ⟨g, A† g⟩ + η ‖A‖²_F`: the objective of (7) for this output.
    pub objective: f64,
}

/// One output's target in the shared basis: `ỹ = Pᵀy` and `‖y − PPᵀy‖²`.
pub struct Target {
    /// `ỹ = Pᵀy`: the target in the shared basis.
    pub yt: Array1<f64>,
    /// `‖y − PPᵀy‖²`: the part of the target outside the basis.
    pub rest: f64,
}

impl Target {
    /// Every output's target (columns of y), with one rotation for all.
    pub fn all(basis: &Basis, y: &Array2<f64>) -> Vec<Target> {
        let yt = basis.rotate(y.view());
        (0..y.ncols())
            .map(|k| {
                let col = yt.column(k).to_owned();
                let yy = y.column(k).dot(&y.column(k));
                let rest = (yy - col.dot(&col)).max(0.0);
                Target { yt: col, rest }
            })
            .collect()
    }
}

/// The fit's constants.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Ridge weight λ.
    pub lambda: f64,
    /// Metric penalty weight η.
    pub eta: f64,
    /// First step tried.
    pub mu: f64,
    /// Eigenvalue floor ε of A.
    pub floor: f64,
    /// Relative-change tolerance δ of the stopping test.
    pub tol: f64,
    /// The A-step lands on the minimiser of J over `{A ⪰ εI}` (`optimal_metric`) instead of
    /// a projected gradient step.
    pub optimal: bool,
}

impl Settings {
    /// The longest step: at μ = 1/(2η) the step lands on `(λ/2η) h hᵀ` (then projected).
    pub(crate) fn mu_max(&self) -> f64 {
        if self.eta > 0.0 {
            0.5 / self.eta
        } else {
            1e12
        }
    }
}

/// Eq. (8) through the Woodbury identity on range(P):
/// `(D + Y E Yᵀ)⁻¹ = D⁻¹ − D⁻¹ Y E^{1/2} (I + E^{1/2} Yᵀ D⁻¹ Y E^{1/2})⁻¹ E^{1/2} Yᵀ D⁻¹`.
pub fn profile(
    basis: &Basis,
    f: &Features,
    t: &Target,
    a: &LowRank,
    st: &Settings,
) -> Result<Profile> {
    let mut p = profile_value(basis, t, a, st)?;
    p.h = basis.lift(f, p.ct.view());
    Ok(p)
}

/// The g-step without `h` (left empty): what the objective needs.
pub(crate) fn profile_value(
    basis: &Basis,
    t: &Target,
    a: &LowRank,
    st: &Settings,
) -> Result<Profile> {
    let lam = st.lambda;
    let d = basis.sigma2.mapv(|x| a.s * x + lam);
    let u = &t.yt / &d;
    let k = a.rank();
    let mut ct = u.clone();
    if k > 0 {
        let w = &a.y * &a.e.mapv(f64::sqrt).view().insert_axis(Axis(0));
        let wd = &w / &d.view().insert_axis(Axis(1));
        let mut core = matmul_tn(w.view(), wd.view());
        core.diag_mut().mapv_inplace(|x| x + 1.0);
        let rhs = w.t().dot(&u).insert_axis(Axis(1));
        let z = cholesky(core.view())?.solve(rhs.view());
        ct -= &wd.dot(&z.column(0));
    }
    let cc = ct.dot(&ct);
    let fit = lam * lam * cc + t.rest;
    let reg = lam * t.yt.dot(&ct) - lam * lam * cc;
    let pen = st.eta * a.fro2();
    let objective = fit + reg + pen;
    if !objective.is_finite() {
        return Err(OvkError::numerical("mvml: the objective is not finite"));
    }
    Ok(Profile {
        ct,
        h: Array1::zeros(0),
        fit,
        reg,
        pen,
        objective,
    })
}

/// The minimiser of J over `{A ⪰ εI}` (η > 0), in closed form up to one scalar.
///
/// J is convex there and its KKT conditions (`∇J = 2ηA − λhhᵀ ⪰ 0`, `∇J (A − εI) = 0`) force
/// `A − εI` to have rank ≤ 1 with range `h`: `A* = εI + β ĥĥᵀ`. With `A = εI + β uuᵀ`,
/// Sherman–Morrison and the maximisation over the unit vector u (a Rayleigh quotient whose
/// maximiser is `u ∝ Ψᵀ((ε+β)S + λI)⁻¹ y`) leave, in S's eigenbasis,
/// `φ(β) = const − λβ Σ_i b_i² τ_i / (1 + βτ_i) + η(2εβ + β²)`,
/// `τ_i = σ_i²/(εσ_i² + λ)`, `b_i² = ỹ_i²/(εσ_i² + λ)` — strictly convex; its root of φ' is found
/// by safeguarded Newton steps.
pub fn optimal_metric(basis: &Basis, f: &Features, t: &Target, st: &Settings) -> Result<LowRank> {
    let beta = optimal_beta(basis, t, st)?;
    let ct = &t.yt / &basis.sigma2.mapv(|x| (st.floor + beta) * x + st.lambda);
    let u = normalised(&basis.lift(f, ct.view()).insert_axis(Axis(1)));
    let yu = basis.project_all(f, &u);
    Ok(rank_one(basis, st.floor, beta, &u, &yu, 0))
}

/// `optimal_metric` for every output, with the products batched over outputs.
pub(crate) fn optimal_metrics(
    basis: &Basis,
    f: &Features,
    targets: &[Target],
    st: &Settings,
) -> Result<Vec<LowRank>> {
    let betas: Vec<f64> = targets
        .iter()
        .map(|t| optimal_beta(basis, t, st))
        .collect::<Result<_>>()?;
    let mut ct = Array2::zeros((basis.sigma2.len(), targets.len()));
    for (k, (t, &b)) in targets.iter().zip(&betas).enumerate() {
        ct.column_mut(k)
            .assign(&(&t.yt / &basis.sigma2.mapv(|x| (st.floor + b) * x + st.lambda)));
    }
    let u = normalised(&basis.lift_all(f, &ct));
    let yu = basis.project_all(f, &u);
    Ok(betas
        .iter()
        .enumerate()
        .map(|(k, &b)| rank_one(basis, st.floor, b, &u, &yu, k))
        .collect())
}

fn normalised(u: &Array2<f64>) -> Array2<f64> {
    let mut u = u.clone();
    for mut c in u.columns_mut() {
        let n = c.dot(&c).sqrt();
        if n > 0.0 {
            c /= n;
        }
    }
    u
}

/// `εI + β u_k u_kᵀ` from column k of the unit vectors u and of `Pᵀ Ψ u`.
fn rank_one(
    basis: &Basis,
    eps: f64,
    beta: f64,
    u: &Array2<f64>,
    yu: &Array2<f64>,
    k: usize,
) -> LowRank {
    let mut a = LowRank::scaled_identity(eps, u.nrows(), basis.sigma2.len());
    if beta > 0.0 && u.column(k).dot(&u.column(k)) > 0.0 {
        a.f = u.slice(s![.., k..k + 1]).to_owned();
        a.y = yu.slice(s![.., k..k + 1]).to_owned();
        a.e = Array1::from_elem(1, beta);
    }
    a
}

/// β* of `optimal_metric`: the root of the strictly convex φ'.
fn optimal_beta(basis: &Basis, t: &Target, st: &Settings) -> Result<f64> {
    let (eps, lam, eta) = (st.floor, st.lambda, st.eta);
    if eta <= 0.0 {
        return Err(OvkError::input(
            "mvml: with --eta 0 problem (7) has no minimiser (A grows without bound); give --eta > 0",
        ));
    }
    let d = basis.sigma2.mapv(|x| eps * x + lam);
    let tau = &basis.sigma2 / &d;
    let b2 = t.yt.mapv(|x| x * x) / &d;
    // φ'(β) and φ''(β)
    let deriv = |beta: f64| {
        let mut d1 = 2.0 * eta * (eps + beta);
        let mut d2 = 2.0 * eta;
        for (&b, &ti) in b2.iter().zip(&tau) {
            let q = 1.0 / (1.0 + beta * ti);
            d1 -= lam * b * ti * q * q;
            d2 += 2.0 * lam * b * ti * ti * q * q * q;
        }
        (d1, d2)
    };
    let (mut lo, mut hi) = (0.0_f64, (lam * b2.dot(&tau) / (2.0 * eta)).max(0.0));
    let mut beta = 0.0;
    if deriv(0.0).0 < 0.0 {
        beta = hi;
        for _ in 0..200 {
            let (d1, d2) = deriv(beta);
            if d1 > 0.0 {
                hi = beta;
            } else {
                lo = beta;
            }
            let newton = beta - d1 / d2;
            let next = if newton > lo && newton < hi {
                newton
            } else {
                0.5 * (lo + hi)
            };
            if (next - beta).abs() <= 1e-15 * next.abs().max(1e-300) || hi - lo <= 1e-15 * hi {
                beta = next;
                break;
            }
            beta = next;
        }
    }
    Ok(beta)
}

/// Fill in `h = Ψᵀc` of profiles computed by `profile_value`, batched over outputs.
pub(crate) fn fill_h(basis: &Basis, f: &Features, profs: &mut [Profile]) {
    if profs.is_empty() {
        return;
    }
    let mut ct = Array2::zeros((basis.sigma2.len(), profs.len()));
    for (k, p) in profs.iter().enumerate() {
        ct.column_mut(k).assign(&p.ct);
    }
    let h = basis.lift_all(f, &ct);
    for (k, p) in profs.iter_mut().enumerate() {
        p.h = h.column(k).to_owned();
    }
}

/// A trial of the A-step: `Proj_{⪰εI}(A − μ∇J)` and what the Armijo test needs.
pub struct Trial {
    /// The trial point A⁺.
    pub a: LowRank,
    /// `⟨∇J, A⁺ − A⟩` (negative for a descent step).
    pub slope: f64,
    /// `‖A⁺ − A‖_F`.
    pub change: f64,
}

/// The direction's pieces in the basis `B = [F, q]`, q the unit part of h outside range(F).
pub struct Direction {
    /// `ω = Bᵀh`.
    omega: Array1<f64>,
    /// B (vr × k or k+1) and `Y_B = PᵀΨB`.
    b: Array2<f64>,
    yb: Array2<f64>,
}

impl Direction {
    /// The search direction for A at `a` from `h = A† g` (B spans F and h's part outside it).
    pub fn new(basis: &Basis, f: &Features, a: &LowRank, h: &Array1<f64>) -> Self {
        let coef = a.f.t().dot(h);
        let q = h - &a.f.dot(&coef);
        let beta = q.dot(&q).sqrt();
        let hn = h.dot(h).sqrt();
        if beta <= 1e-13 * hn || hn == 0.0 {
            return Direction {
                omega: coef,
                b: a.f.clone(),
                yb: a.y.clone(),
            };
        }
        // re-orthogonalise once: q loses orthogonality when h lies almost in range(F)
        let q = &q / beta;
        let q = &q - &a.f.dot(&a.f.t().dot(&q));
        let q = &q / q.dot(&q).sqrt();
        let yq = basis.project(f, q.view());
        let k = a.rank();
        let mut b = Array2::zeros((a.dim(), k + 1));
        b.slice_mut(s![.., ..k]).assign(&a.f);
        b.column_mut(k).assign(&q);
        let mut yb = Array2::zeros((a.y.nrows(), k + 1));
        yb.slice_mut(s![.., ..k]).assign(&a.y);
        yb.column_mut(k).assign(&yq);
        let mut omega = Array1::zeros(k + 1);
        omega.slice_mut(s![..k]).assign(&coef);
        omega[k] = q.dot(h);
        Direction { omega, b, yb }
    }

    /// `Proj(A − μ∇J)` with `∇J = 2ηA − λhhᵀ`; eigenvalues below ε are clipped to ε and
    /// directions left at the floor dropped.
    pub fn trial(&self, a: &LowRank, mu: f64, st: &Settings) -> Result<Trial> {
        let kb = self.b.ncols();
        let k = a.rank();
        let alpha = 1.0 - 2.0 * mu * st.eta;
        // core of A in B: diag(e, 0); of the step: α diag(e, 0) + μλ ωωᵀ
        let mut e0 = Array1::<f64>::zeros(kb);
        e0.slice_mut(s![..k]).assign(&a.e);
        let om = self.omega.view().insert_axis(Axis(1));
        let mut core = om.dot(&om.t()) * (mu * st.lambda);
        for i in 0..kb {
            core[[i, i]] += alpha * e0[i];
        }
        let sp = alpha * a.s;
        let eig = eigh(core.view())?;
        let s_new = sp.max(st.floor);
        let lifted: Vec<f64> = eig
            .values
            .iter()
            .map(|&x| (sp + x).max(st.floor) - s_new)
            .collect();
        let top = lifted.iter().copied().fold(0.0_f64, f64::max);
        let keep: Vec<usize> = (0..kb)
            .filter(|&i| lifted[i] > 1e-14 * top.max(s_new) && lifted[i] > 0.0)
            .collect();
        let q = eig.vectors.select(Axis(1), &keep);
        let e_new = Array1::from(keep.iter().map(|&i| lifted[i]).collect::<Vec<_>>());
        // ΔC = Q diag(e⁺) Qᵀ − diag(e, 0): the change of the core in B
        let qe = &q * &e_new.view().insert_axis(Axis(0));
        let mut dc = matmul(qe.view(), q.t());
        for i in 0..kb {
            dc[[i, i]] -= e0[i];
        }
        let ds = s_new - a.s;
        let dim = a.dim() as f64;
        let tr_dc: f64 = dc.diag().sum();
        let e0_dc: f64 = (0..kb).map(|i| e0[i] * dc[[i, i]]).sum();
        let om_dc_om = self.omega.dot(&dc.dot(&self.omega));
        let om2 = self.omega.dot(&self.omega);
        // ⟨2ηA − λhhᵀ, ΔA⟩ with ΔA = Δs I + B ΔC Bᵀ (B orthonormal)
        let slope = 2.0 * st.eta * (a.s * ds * dim + a.s * tr_dc + ds * e0.sum() + e0_dc)
            - st.lambda * (ds * om2 + om_dc_om);
        let change2 = ds * ds * dim + 2.0 * ds * tr_dc + dc.iter().map(|x| x * x).sum::<f64>();
        Ok(Trial {
            a: LowRank {
                s: s_new,
                f: matmul(self.b.view(), q.view()),
                e: e_new,
                y: matmul(self.yb.view(), q.view()),
            },
            slope,
            change: change2.max(0.0).sqrt(),
        })
    }
}

/// `‖A − B‖_F` for two iterates of this form (through the dense difference of their cores on
/// the span of both F's).
pub fn difference(a: &LowRank, b: &LowRank) -> f64 {
    let fb_in_a = matmul_tn(a.f.view(), b.f.view());
    let ea: f64 = a.e.iter().map(|x| x * x).sum();
    let eb: f64 = b.e.iter().map(|x| x * x).sum();
    // ⟨F_a E_a F_aᵀ, F_b E_b F_bᵀ⟩ = Σ_ij e_a,i e_b,j (f_a,iᵀ f_b,j)²
    let mut cross = 0.0;
    for i in 0..a.rank() {
        for j in 0..b.rank() {
            cross += a.e[i] * b.e[j] * fb_in_a[[i, j]] * fb_in_a[[i, j]];
        }
    }
    let ds = a.s - b.s;
    let dim = a.dim() as f64;
    let tr = a.e.sum() - b.e.sum();
    let sq = ds * ds * dim + 2.0 * ds * tr + ea + eb - 2.0 * cross;
    sq.max(0.0).sqrt()
}

/// One output's state on this route.
#[derive(Debug, Clone)]
pub struct OutputFit {
    /// This output's metric A.
    pub a: LowRank,
    /// The profile (c̃, h, objective terms) at `a`.
    pub prof: Profile,
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
    /// A₀ = I (projected onto the floor) and the first g-step.
    pub fn start(basis: &Basis, f: &Features, t: &Target, st: &Settings) -> Result<Self> {
        let a = LowRank::scaled_identity(
            1.0_f64.max(st.floor),
            f.n_views() * f.r(),
            basis.sigma2.len(),
        );
        let prof = profile(basis, f, t, &a, st)?;
        Ok(OutputFit::fresh(a, prof, st))
    }

    /// An output at `a` with its profile, before any round.
    fn fresh(a: LowRank, prof: Profile, st: &Settings) -> OutputFit {
        OutputFit {
            a,
            prof,
            progress: Progress::new(st.mu.min(st.mu_max())),
        }
    }

    /// Every output's start (A = I), with the products batched over outputs.
    pub fn start_all(
        basis: &Basis,
        f: &Features,
        targets: &[Target],
        st: &Settings,
    ) -> Result<Vec<Self>> {
        let a = LowRank::scaled_identity(
            1.0_f64.max(st.floor),
            f.n_views() * f.r(),
            basis.sigma2.len(),
        );
        let mut profs = targets
            .iter()
            .map(|t| profile_value(basis, t, &a, st))
            .collect::<Result<Vec<_>>>()?;
        fill_h(basis, f, &mut profs);
        Ok(profs
            .into_iter()
            .map(|prof| OutputFit::fresh(a.clone(), prof, st))
            .collect())
    }

    /// Move to A (whose profile is `prof`) if that does not raise the objective; record the
    /// relative changes of the objective and of A.
    pub(crate) fn accept(&mut self, a: LowRank, prof: Profile) {
        let prev = self.prof.objective;
        let norm_prev = self.a.fro2().sqrt();
        // the minimiser cannot be above the current iterate; rounding can put it a hair
        // above when the current iterate is already the minimiser
        if prof.objective <= prev {
            let moved = difference(&self.a, &a);
            self.progress
                .changed(prev, prof.objective, moved, norm_prev);
            self.a = a;
            self.prof = prof;
        } else {
            self.progress.changed(prev, prev, 0.0, norm_prev);
        }
        self.progress.iterations += 1;
    }

    /// `g = A h` (stacked per view).
    pub fn g(&self) -> Array1<f64> {
        self.a.apply(self.prof.h.view())
    }

    /// One A-step with backtracking: start at the step that worked last (×4, at most
    /// μ_max), halve until `J(A⁺) ≤ J(A) + c·⟨∇J, A⁺ − A⟩`; then the g-step is the profile.
    pub fn iterate(
        &mut self,
        basis: &Basis,
        f: &Features,
        t: &Target,
        st: &Settings,
    ) -> Result<Round> {
        let mut round = Round::default();
        if self.progress.converged {
            return Ok(round);
        }
        if st.optimal {
            // the A-step does not depend on the current A: once applied, a second application
            // changes nothing, so the output has converged
            let next = optimal_metric(basis, f, t, st)?;
            let p = profile(basis, f, t, &next, st)?;
            self.accept(next, p);
            self.progress.converged = true;
            return Ok(round);
        }
        let prev = self.prof.objective;
        let norm_prev = self.a.fro2().sqrt();
        let dir = Direction::new(basis, f, &self.a, &self.prof.h);
        let mut mu = self.progress.mu;
        loop {
            let trial = dir.trial(&self.a, mu, st)?;
            if trial.slope < 0.0 {
                let p = profile(basis, f, t, &trial.a, st);
                if let Ok(p) = p {
                    if p.objective <= prev + ARMIJO * trial.slope {
                        self.progress
                            .changed(prev, p.objective, trial.change, norm_prev);
                        self.a = trial.a;
                        self.prof = p;
                        round.step = Some(mu);
                        break;
                    }
                }
            } else if round.halvings == 0 && trial.change <= 1e-15 * norm_prev {
                // the projected step does not move A: stationary
                self.progress.stalled = true;
                break;
            }
            if !self.progress.halve(&mut mu, &mut round) {
                break;
            }
        }
        self.progress.searched(&round, st.mu_max());
        self.progress.end_round(st.tol);
        Ok(round)
    }

    /// The projected-gradient stationarity measure `‖A − Proj(A − μ_max ∇J)‖_F / ‖A‖_F`,
    /// zero exactly at a minimiser of J over `{A ⪰ εI}`.
    pub fn first_order_residual(&self, basis: &Basis, f: &Features, st: &Settings) -> Result<f64> {
        let h = &self.prof.h;
        let norm = self.a.fro2().sqrt().max(f64::MIN_POSITIVE);
        if self.a.s == st.floor && self.a.rank() <= 1 && st.eta > 0.0 {
            // A = εI + βuuᵀ: Proj(A − ∇J/(2η)) = εI + γĥĥᵀ, γ = (λ/2η)‖h‖² − ε (clipped at 0)
            let hh = h.dot(h);
            let gamma = (st.lambda * hh / (2.0 * st.eta) - st.floor).max(0.0);
            let (beta, sin2) = match self.a.rank() {
                0 => (0.0, 1.0),
                _ => {
                    let u = self.a.f.column(0);
                    let off = h - &(&u * u.dot(h));
                    (self.a.e[0], if hh > 0.0 { off.dot(&off) / hh } else { 0.0 })
                }
            };
            // ‖βuuᵀ − γĥĥᵀ‖² without the cancellation of β² + γ² − 2βγ cos²
            let sq = (beta - gamma).powi(2) + 2.0 * beta * gamma * sin2;
            return Ok(sq.max(0.0).sqrt() / norm);
        }
        let dir = Direction::new(basis, f, &self.a, &self.prof.h);
        let trial = dir.trial(&self.a, st.mu_max(), st)?;
        Ok(trial.change / self.a.fro2().sqrt().max(f64::MIN_POSITIVE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::rng::Rng;
    use crate::linalg::qr_thin;

    #[test]
    fn dense_through_is_the_blockwise_product_of_the_dense_metric() {
        let (v, r, k) = (3, 4, 2);
        let mut g = Rng::new(5);
        let f = qr_thin(Array2::from_shape_fn((v * r, k), |_| g.normal()).view())
            .unwrap()
            .q;
        let a = LowRank {
            s: 0.7,
            f,
            e: Array1::from(vec![2.0, 0.3]),
            y: Array2::zeros((1, k)),
        };
        let back: Vec<Array2<f64>> = (0..v)
            .map(|_| Array2::from_shape_fn((r, r), |_| g.normal()))
            .collect();
        let dense = a.dense();
        let mut expect = Array2::<f64>::zeros((v * r, v * r));
        for l in 0..v {
            for m in 0..v {
                let blk = dense.slice(s![l * r..(l + 1) * r, m * r..(m + 1) * r]);
                expect
                    .slice_mut(s![l * r..(l + 1) * r, m * r..(m + 1) * r])
                    .assign(&back[l].dot(&blk).dot(&back[m].t()));
            }
        }
        let got = a.dense_through(&back, &block_diag_gram(&back));
        let err = (&got - &expect).iter().fold(0.0_f64, |m, x| m.max(x.abs()));
        assert!(err < 1e-12, "{err}");
    }
}
