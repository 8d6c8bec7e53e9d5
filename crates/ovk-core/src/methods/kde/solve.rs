//! The exact solve of Proposition 1 (Kadri et al. 2013): α (n×n) with
//! `(1/n) T α k + λ α = I_n`, a Sylvester equation solved in O(n³) in the eigenbasis of k.
//!
//! With `k = U diag(s) Uᵀ`, column j of `α̃ = Uᵀ α U` solves `((s_j/n) T̃ + λ I) α̃_j = e_j`,
//! `T̃ = Uᵀ T U`:
//! * identity (`T = nI`, the operator `C = I` itself — the 1/n of Proposition 1 belongs to the
//!   empirical covariance, not to I): `α = U diag(1/(s + λ)) Uᵀ = (k + λI)⁻¹`, eq. (3)'s ridge;
//! * covariance (`T = Lg`): `T̃ = G = Uᵀ Lg U` is symmetric, one more eigendecomposition;
//! * conditional (`T = Lg − M⁻¹ k Lg = nε M⁻¹ Lg`, `M = k + nεI`): `T̃ = D G` with
//!   `D = diag(nε/(s+nε))` (so `M⁻¹` is never formed), non-symmetric but similar to the
//!   symmetric `D^{1/2} G D^{1/2}`, solved through that one eigendecomposition. docs/methods.md §3
//!   warns that the similarity can lose digits when nελ is tiny, so its backward error is
//!   measured and, above [`BACKWARD_ERROR_LIMIT`], the Schur route is tried too and the better
//!   kept: a real Schur form of `T̃` (QZ of the pencil `(T̃, I)`) and a quasi-triangular back
//!   substitution per column (Bartels–Stewart with the second coefficient diagonal), about six
//!   eigendecompositions more. Measured over n = 30, 120, σ = 0.3–5, ε down to 1e-14 and
//!   λ down to 1e-10 (`tests/it/kde_solve.rs`), the symmetric route's backward error stayed
//!   ≤ 1e-13 and the Schur route's reached 5e-12: the fallback is a guard, not the rule.
//!
//! The objective and the residual are evaluated in the same eigenbasis (U is orthogonal, so
//! Frobenius norms and traces are unchanged), which spares the n×n products of the original
//! basis: the identity kernel needs two matrix products in all.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Zip};

use crate::linalg::{
    divide_by_spectrum, eigh, frobenius, generalized_schur, inner, matmul, matmul_tn,
    solve_shifted_quasi_triangular, symmetrize, SymEigen,
};

/// Largest normwise backward error of the Sylvester equation the symmetric route of the
/// conditional kernel may leave before the Schur route is used instead (a backward-stable
/// solve leaves about n·1e-16).
pub const BACKWARD_ERROR_LIMIT: f64 = 1e-12;
use crate::util::choice::choice_enum;
use crate::{OvkError, Result};

/// The operator-valued kernel `K(x, x') = k(x, x') C`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ovk {
    /// `C = I` — the KDE of Cortes et al. (2005): eq. (3), `Ψ = (k + λI)⁻¹Φ_l`.
    Identity,
    /// `C = Ĉ_YY`, eq. (5).
    Covariance,
    /// `C = Ĉ_YY|X` with regulariser ε, eq. (7).
    Conditional {
        /// The regulariser ε of `Ĉ_YY|X`.
        epsilon: f64,
    },
}

choice_enum! {
    /// Which operator `C` the kernel `k(x, x')·C` carries, as chosen (`--ovk`); the
    /// conditional one takes its ε from `--epsilon`.
    pub enum OvkKind: "ovk" {
        /// C = I: ridge regression into the output feature space.
        Identity = "identity",
        /// C = Ĉ_YY, the output covariance operator (eq. 5).
        Covariance = "covariance",
        /// C = Ĉ_YY|X, the conditional covariance operator (eq. 7).
        Conditional = "conditional",
    }
}

impl Ovk {
    /// The operator of kind `kind`, with regulariser ε for the conditional covariance.
    pub fn new(kind: OvkKind, epsilon: f64) -> Ovk {
        match kind {
            OvkKind::Identity => Ovk::Identity,
            OvkKind::Covariance => Ovk::Covariance,
            OvkKind::Conditional => Ovk::Conditional { epsilon },
        }
    }

    /// The operator's kind, without ε.
    pub fn kind(&self) -> OvkKind {
        match self {
            Ovk::Identity => OvkKind::Identity,
            Ovk::Covariance => OvkKind::Covariance,
            Ovk::Conditional { .. } => OvkKind::Conditional,
        }
    }

    /// The operator's word (`identity`, `covariance`, `conditional`).
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }
}

/// Eigendecomposition of the input Gram matrix with round-off negatives clamped to 0.
pub fn input_eigen(k: ArrayView2<f64>) -> Result<SymEigen> {
    let mut e = eigh(k)?;
    e.values.mapv_inplace(|v| v.max(0.0));
    Ok(e)
}

/// T of Proposition 1 in the training basis (`T = U D Uᵀ Lg` for the conditional kernel,
/// `T = nI` for the identity kernel, whose operator carries no 1/n).
pub fn t_matrix(ovk: Ovk, ke: &SymEigen, lg: ArrayView2<f64>) -> Array2<f64> {
    let n = lg.nrows();
    match ovk {
        Ovk::Identity => Array2::eye(n) * n as f64,
        Ovk::Covariance => lg.to_owned(),
        Ovk::Conditional { epsilon } => {
            let ne = n as f64 * epsilon;
            let u = &ke.vectors;
            let mut ud = u.clone();
            for (j, mut col) in ud.columns_mut().into_iter().enumerate() {
                col *= ne / (ke.values[j] + ne);
            }
            // U D Uᵀ Lg
            let utl = matmul_tn(u.view(), lg);
            matmul(ud.view(), utl.view())
        }
    }
}

/// α of Proposition 1: `(1/n) T α k + λ α = I_n`, exactly, in O(n³).
pub fn solve_alpha(
    ovk: Ovk,
    ke: &SymEigen,
    lg: ArrayView2<f64>,
    lambda: f64,
) -> Result<Array2<f64>> {
    Ok(solve_exact(ovk, ke, lg, lambda)?.alpha)
}

/// Which factorisation produced `α̃` (reported in the session's details).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Closed form (identity) or one eigendecomposition of a symmetric matrix.
    Symmetric,
    /// Real Schur form and Bartels–Stewart (the conditional kernel's fallback).
    Schur,
}

/// The exact solve with what the trace and the model need.
#[derive(Debug, Clone)]
pub struct ExactSolve {
    /// α (n×n), the coefficients of Proposition 1.
    pub alpha: Array2<f64>,
    /// `W = T α / n`, the score operator: `score(x, y) = l_yᵀ W k_x`.
    pub w: Array2<f64>,
    /// [`objective`] at α.
    pub objective: f64,
    /// [`residual`] at α.
    pub residual: f64,
    /// The normwise backward error of the Sylvester equation.
    pub backward_error: f64,
    /// The factorisation that produced α.
    pub route: Route,
}

/// Solve Proposition 1 and evaluate its objective and residual, all in the eigenbasis of k.
pub fn solve_exact(
    ovk: Ovk,
    ke: &SymEigen,
    lg: ArrayView2<f64>,
    lambda: f64,
) -> Result<ExactSolve> {
    let choice = RouteChoice::Auto {
        limit: BACKWARD_ERROR_LIMIT,
    };
    solve_exact_by(ovk, ke, lg, lambda, choice)
}

/// How the conditional kernel's route is chosen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RouteChoice {
    /// The symmetric route; if its backward error exceeds `limit`, also the Schur route, and
    /// the one with the smaller backward error is kept.
    Auto {
        /// The backward error above which the Schur route is tried too.
        limit: f64,
    },
    /// One route only (tests and benchmarks).
    Only(Route),
}

/// [`solve_exact`] with the conditional kernel's route chosen by `choice`.
pub fn solve_exact_by(
    ovk: Ovk,
    ke: &SymEigen,
    lg: ArrayView2<f64>,
    lambda: f64,
    choice: RouteChoice,
) -> Result<ExactSolve> {
    let n = ke.values.len();
    if lg.nrows() != n || lg.ncols() != n {
        return Err(OvkError::internal(
            "kde: input and output Gram sizes differ",
        ));
    }
    let nf = n as f64;
    let u = &ke.vectors;
    let s = &ke.values;
    if let Ovk::Identity = ovk {
        return Ok(identity_in_eigenbasis(u, s, lg, lambda));
    }
    // G = Uᵀ Lg U, the output Gram matrix in k's eigenbasis.
    let g = symmetrize(&matmul(matmul_tn(u.view(), lg).view(), u.view()));
    // D = diag(nε/(s + nε)) for the conditional kernel (T̃ = D G); none for the covariance.
    let d = match ovk {
        Ovk::Conditional { epsilon } => Some(s.mapv(|v| nf * epsilon / (v + nf * epsilon))),
        _ => None,
    };
    let t_norm = match &d {
        Some(d) => frobenius_scaled_rows(&g, d.view()),
        None => frobenius(&g),
    };
    let symmetric = || -> Result<Candidate> {
        let (a, ta) = symmetric_in_eigenbasis(&g, d.as_ref(), s, lambda)?;
        Ok(Candidate::assess(
            a,
            ta,
            Route::Symmetric,
            s,
            lambda,
            t_norm,
        ))
    };
    let schur = |d: &Array1<f64>| -> Result<Candidate> {
        let a = conditional_in_eigenbasis(&g, d, s, lambda)?;
        let mut ta = matmul(g.view(), a.view());
        scale_rows(&mut ta, d.view());
        Ok(Candidate::assess(a, ta, Route::Schur, s, lambda, t_norm))
    };
    let best = match (&d, choice) {
        (None, _) | (Some(_), RouteChoice::Only(Route::Symmetric)) => symmetric()?,
        (Some(d), RouteChoice::Only(Route::Schur)) => schur(d)?,
        (Some(d), RouteChoice::Auto { limit }) => {
            let sym = symmetric()?;
            if sym.backward_error <= limit {
                sym
            } else {
                let sch = schur(d)?;
                if sch.backward_error < sym.backward_error {
                    sch
                } else {
                    sym
                }
            }
        }
    };
    // fit = tr(R₀ᵀ G R₀) with R₀ = (1/n) T̃α̃ S − I; reg = tr(S α̃ᵀ G T̃α̃): the objective's two
    // terms in the eigenbasis.
    let mut r0 = best.t_alpha_tilde.clone();
    scale_columns(&mut r0, s.mapv(|v| v / nf).view());
    r0.diag_mut().mapv_inplace(|v| v - 1.0);
    let fit = inner(&r0, &matmul(g.view(), r0.view()));
    let g_ta = matmul(g.view(), best.t_alpha_tilde.view());
    let mut reg = 0.0;
    Zip::indexed(&best.alpha_tilde)
        .and(&g_ta)
        .for_each(|(_, j), a, m| reg += s[j] * a * m);
    drop(g_ta);
    let alpha = back_to_input_basis(u, &best.alpha_tilde);
    let w = back_to_input_basis(u, &best.t_alpha_tilde.mapv(|v| v / nf));
    Ok(ExactSolve {
        alpha,
        w,
        objective: fit + lambda / nf * reg,
        residual: best.residual,
        backward_error: best.backward_error,
        route: best.route,
    })
}

/// One route's `α̃` and `T̃ α̃`, with how well they solve the Sylvester equation.
struct Candidate {
    alpha_tilde: Array2<f64>,
    t_alpha_tilde: Array2<f64>,
    route: Route,
    /// `‖R‖_F / √n`, `R = (1/n) T̃ α̃ S + λ α̃ − I` (= [`residual`], U being orthogonal).
    residual: f64,
    backward_error: f64,
}

impl Candidate {
    fn assess(
        alpha_tilde: Array2<f64>,
        t_alpha_tilde: Array2<f64>,
        route: Route,
        s: &Array1<f64>,
        lambda: f64,
        t_norm: f64,
    ) -> Self {
        let nf = s.len() as f64;
        let mut sq = 0.0;
        Zip::indexed(&t_alpha_tilde)
            .and(&alpha_tilde)
            .for_each(|(i, j), ta, a| {
                let r = ta * s[j] / nf + lambda * a - if i == j { 1.0 } else { 0.0 };
                sq += r * r;
            });
        let r_norm = sq.sqrt();
        let scale = backward_scale(t_norm, frobenius(&alpha_tilde), frobenius(s), lambda, nf);
        Candidate {
            alpha_tilde,
            t_alpha_tilde,
            route,
            residual: r_norm / nf.sqrt(),
            backward_error: r_norm / scale,
        }
    }
}

/// The normwise backward error's denominator for `(1/n) T̃ α̃ S + λ α̃ = I`:
/// `‖T̃‖_F ‖α̃‖_F ‖s‖/n + λ‖α̃‖_F + ‖I‖_F`.
fn backward_scale(t_norm: f64, a_norm: f64, s_norm: f64, lambda: f64, nf: f64) -> f64 {
    t_norm * a_norm * s_norm / nf + lambda * a_norm + nf.sqrt()
}

/// The identity kernel, eq. (3): `α̃ = diag(1/(s + λ))` and `T̃ α̃ = n α̃`, so only the diagonal
/// of `G = Uᵀ Lg U` enters the objective (`Σ r_i² G_ii + λ Σ s_i a_i² G_ii`).
fn identity_in_eigenbasis(
    u: &Array2<f64>,
    s: &Array1<f64>,
    lg: ArrayView2<f64>,
    lambda: f64,
) -> ExactSolve {
    let nf = s.len() as f64;
    let a = s.mapv(|sj| 1.0 / (sj + lambda)); // eq. (3), Kadri et al.
    let lu = matmul(lg, u.view());
    let g_diag: Array1<f64> = u
        .columns()
        .into_iter()
        .zip(lu.columns())
        .map(|(ui, li)| ui.dot(&li))
        .collect();
    let (mut fit, mut reg, mut res, mut sq_a) = (0.0, 0.0, 0.0, 0.0);
    for i in 0..a.len() {
        let r = a[i] * s[i] - 1.0;
        fit += r * r * g_diag[i];
        reg += s[i] * a[i] * a[i] * g_diag[i];
        res += (r + lambda * a[i]).powi(2);
        sq_a += a[i] * a[i];
    }
    let scale = backward_scale(nf * nf.sqrt(), sq_a.sqrt(), frobenius(s), lambda, nf); // ‖T̃‖_F = ‖nI‖_F
    let mut ua = u.clone();
    scale_columns(&mut ua, a.view());
    let alpha = matmul(ua.view(), u.t());
    let w = alpha.clone();
    ExactSolve {
        alpha,
        w,
        objective: fit + lambda * reg,
        residual: res.sqrt() / nf.sqrt(),
        backward_error: res.sqrt() / scale,
        route: Route::Symmetric,
    }
}

/// `α̃` and `T̃ α̃` for `T̃ = D G` through the symmetric `D^{1/2} G D^{1/2} = P diag(t) Pᵀ`
/// (D = I for the covariance kernel): `α̃ = D^{1/2} P [(Pᵀ D^{-1/2}) ⊘ (t sᵀ/n + λ)]` and
/// `T̃ α̃ = D^{1/2} P diag(t) [·]`.
fn symmetric_in_eigenbasis(
    g: &Array2<f64>,
    d: Option<&Array1<f64>>,
    s: &Array1<f64>,
    lambda: f64,
) -> Result<(Array2<f64>, Array2<f64>)> {
    let nf = s.len() as f64;
    let dh = d.map(|d| d.mapv(f64::sqrt));
    let gs = match &dh {
        Some(dh) => {
            let mut m = g.clone();
            scale_rows(&mut m, dh.view());
            scale_columns(&mut m, dh.view());
            symmetrize(&m)
        }
        None => g.clone(),
    };
    let pe = eigh(gs.view())?;
    let t = pe.values.mapv(|v| v.max(0.0));
    let mut pt = pe.vectors.t().to_owned();
    if let Some(dh) = &dh {
        scale_columns(&mut pt, dh.mapv(|v| 1.0 / v).view());
    }
    let s_n = s.mapv(|v| v / nf);
    // column j: P diag(1/(t s_j/n + λ)) Pᵀ D^{-1/2} e_j
    let core = divide_by_spectrum(pt.view(), t.view(), s_n.view(), lambda);
    let mut alpha_tilde = matmul(pe.vectors.view(), core.view());
    let mut t_core = core;
    scale_rows(&mut t_core, t.view());
    let mut t_alpha_tilde = matmul(pe.vectors.view(), t_core.view());
    if let Some(dh) = &dh {
        scale_rows(&mut alpha_tilde, dh.view());
        scale_rows(&mut t_alpha_tilde, dh.view());
    }
    Ok((alpha_tilde, t_alpha_tilde))
}

fn back_to_input_basis(u: &Array2<f64>, m: &Array2<f64>) -> Array2<f64> {
    matmul(matmul(u.view(), m.view()).view(), u.t())
}

fn scale_rows(m: &mut Array2<f64>, f: ArrayView1<f64>) {
    for (mut row, fi) in m.rows_mut().into_iter().zip(f) {
        row *= *fi;
    }
}

fn scale_columns(m: &mut Array2<f64>, f: ArrayView1<f64>) {
    for (mut col, fj) in m.columns_mut().into_iter().zip(f) {
        col *= *fj;
    }
}

/// `‖diag(d) G‖_F` without forming it.
fn frobenius_scaled_rows(g: &Array2<f64>, d: ArrayView1<f64>) -> f64 {
    g.rows()
        .into_iter()
        .zip(d)
        .map(|(row, di)| di * di * row.dot(&row))
        .sum::<f64>()
        .sqrt()
}

/// The n²×n² Kronecker system `((1/n) k ⊗ T + λ I) vec(α) = vec(I)` solved by LU — the
/// paper's O(n⁶) route, kept only as a test oracle and a benchmark baseline.
pub fn solve_alpha_kronecker(
    t: ArrayView2<f64>,
    k: ArrayView2<f64>,
    lambda: f64,
) -> Result<Array2<f64>> {
    let n = t.nrows();
    let nf = n as f64;
    let nn = n * n;
    // vec stacks columns: vec(T α k)[i + n j] = Σ_{a,b} T[i,a] α[a,b] k[b,j].
    let mut big = Array2::<f64>::zeros((nn, nn));
    for j in 0..n {
        for b in 0..n {
            let kbj = k[[b, j]] / nf;
            if kbj == 0.0 {
                continue;
            }
            for i in 0..n {
                for a in 0..n {
                    big[[i + n * j, a + n * b]] += t[[i, a]] * kbj;
                }
            }
        }
    }
    big.diag_mut().mapv_inplace(|v| v + lambda);
    let mut rhs = Array2::<f64>::zeros((nn, 1));
    for i in 0..n {
        rhs[[i + n * i, 0]] = 1.0;
    }
    let x = crate::linalg::lu(big.view())?.solve(rhs.view());
    Ok(Array2::from_shape_fn((n, n), |(i, j)| x[[i + n * j, 0]]))
}

/// The objective the solve minimises (the operator-valued ridge problem behind Proposition 1):
/// `J(g) = Σᵢ ‖g(xᵢ) − Φ(yᵢ)‖² + λ ‖g‖²_K` with `K(x,x') = k(x,x') C`, C the uncentred sample
/// operator (`Ĉ_YY`, `Ĉ_YY|X`) or `I` for the identity kernel (`T = nI`): one J, one λ for all
/// three, so their figures at equal λ are comparable.
/// In sample form, with `W = Tα/n`: `tr((Wk − I)ᵀ Lg (Wk − I)) + (λ/n) tr(k αᵀ Lg T α)`.
pub fn objective(
    t: ArrayView2<f64>,
    k: ArrayView2<f64>,
    lg: ArrayView2<f64>,
    alpha: ArrayView2<f64>,
    lambda: f64,
) -> f64 {
    let n = k.nrows() as f64;
    let ta = matmul(t, alpha);
    let mut r = matmul(ta.view(), k).mapv(|v| v / n);
    r.diag_mut().mapv_inplace(|v| v - 1.0);
    let fit = (&r * &matmul(lg, r.view())).sum();
    let lta = matmul(lg, ta.view());
    let reg = (&matmul(alpha, k).view() * &lta.view()).sum();
    fit + lambda / n * reg
}

/// `‖(1/n) T α k + λ α − I‖_F / √n`, the residual of the Sylvester equation.
pub fn residual(
    t: ArrayView2<f64>,
    k: ArrayView2<f64>,
    alpha: ArrayView2<f64>,
    lambda: f64,
) -> f64 {
    let n = k.nrows();
    let mut r =
        matmul(matmul(t, alpha).view(), k).mapv(|v| v / n as f64) + &alpha.mapv(|v| v * lambda);
    r.diag_mut().mapv_inplace(|v| v - 1.0);
    r.mapv(|v| v * v).sum().sqrt() / (n as f64).sqrt()
}

/// `α̃ = Uᵀ α U` for the conditional kernel by the Schur route: `T̃ = D G = Q S Zᵀ` (real Schur
/// form, computed as the QZ form of the pencil `(D G, I)`), then for each column j the
/// quasi-triangular system `((s_j/n) S + λ R) y_j = Qᵀ e_j` (`R = Qᵀ Z` ≈ I), `α̃_j = Z y_j` —
/// Bartels–Stewart against the diagonal spectrum of k. No inverse of `M` or of `D^{1/2}` is
/// applied.
fn conditional_in_eigenbasis(
    g: &Array2<f64>,
    d: &Array1<f64>,
    s: &Array1<f64>,
    lambda: f64,
) -> Result<Array2<f64>> {
    let n = s.len();
    let nf = n as f64;
    let mut dg = g.clone();
    scale_rows(&mut dg, d.view());
    let qz = generalized_schur(dg.view(), Array2::<f64>::eye(n).view())?;
    let rhs = qz.q.t().to_owned();
    let shifts: Vec<f64> = s.iter().map(|v| v / nf).collect();
    let y = solve_shifted_quasi_triangular(qz.s.view(), qz.t.view(), &shifts, lambda, rhs.view())?;
    Ok(matmul(qz.z.view(), y.view()))
}
