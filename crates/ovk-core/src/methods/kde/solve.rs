//! The exact solve of Proposition 1 (Kadri et al. 2013): α (n×n) with
//! `(1/n) T α k + λ α = I_n`, a Sylvester equation solved in O(n³) with k's eigendecomposition
//! `k = U diag(s) Uᵀ`:
//! * identity (`T = nI`, the operator `C = I` itself — the 1/n of Proposition 1 belongs to the
//!   empirical covariance, not to I): `α = U diag(1/(s + λ)) Uᵀ = (k + λI)⁻¹`, eq. (3)'s ridge;
//! * covariance (`T = Lg`): the Hessenberg–Schur method — Lg reduced to tridiagonal form
//!   `Q T̂ Qᵀ` (half an eigendecomposition), then one O(n) tridiagonal solve per eigenvalue of k;
//! * conditional (`T = Lg − M⁻¹ k Lg = nε M⁻¹ Lg`, `M = k + nεI`): in k's eigenbasis
//!   `T̃ = D G` with `G = Uᵀ Lg U`, `D = diag(nε/(s+nε))` (so `M⁻¹` is never formed),
//!   non-symmetric but similar to the symmetric `D^{1/2} G D^{1/2}`, reduced to tridiagonal
//!   form and solved as the covariance kernel is. docs/methods.md §3 warns that the similarity
//!   can lose digits when nελ is tiny, so its backward error is measured and, above
//!   [`BACKWARD_ERROR_LIMIT`], the Schur
//!   route is tried too and the better kept: a real Schur form of `T̃` (QZ of the pencil
//!   `(T̃, I)`) and a quasi-triangular back substitution per column (Bartels–Stewart with the
//!   second coefficient diagonal), many eigendecompositions more. Measured over n = 30, 120,
//!   σ = 0.3–5, ε down to 1e-14 and λ down to 1e-10 (`tests/it/kde_solve.rs`), the symmetric
//!   route's backward error stayed ≤ 1e-14 (≤ 1e-13 when it eigendecomposed `D^{1/2} G D^{1/2}`)
//!   and the Schur route's reached 5e-12: the fallback is a guard, not the rule.
//!
//! Each route evaluates the objective and the residual in the basis it solves in (Frobenius
//! norms and traces are unchanged by orthogonal changes of basis; the conditional route's is
//! not orthogonal, see [`symmetric_route`]), in O(n²), and returns the score operator as
//! `left · Uᵀ`, either W or, when the candidates are the training outputs, `Lg W` (the
//! candidates' score rows): prediction needs nothing else, so α is formed only when asked
//! (tests). After the reductions, the covariance kernel costs two applications of Q's
//! reflectors; the conditional one forms Q once (Qᵀ D^{-1/2} is its right-hand side) and
//! takes two products, beside the two that form `D^{1/2} G D^{1/2}` (`ovk bench scaling`,
//! docs/performance.md). The closed-form pre-image needs only `Yᵀ W` (m×n): given Yᵀ as a
//! fold, the routes form it directly and their last n×n products become m×n ones.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Zip};

use crate::linalg::{
    eigh, frobenius, generalized_schur, inner, matmul, matmul_symmetric, matmul_tn,
    solve_shifted_quasi_triangular, stop_if_abandoned, tridiagonal_in_place, SymEigen, Tridiagonal,
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
    /// Closed form (identity) or a symmetric matrix's tridiagonal reduction (the covariance
    /// operator's Lg, the conditional one's similar `D^{1/2} G D^{1/2}`).
    Symmetric,
    /// Real Schur form and Bartels–Stewart (the conditional kernel's fallback).
    Schur,
}

/// Which operator a solve's `left` factor gives, with U the eigenvectors of k.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// `W = left · Uᵀ`, the score operator: `score(x, y) = l_yᵀ W k_x`.
    Score,
    /// `Lg W = left · Uᵀ`: the score rows of the training outputs as candidates. The
    /// covariance route gets it for the price of W (one more tridiagonal product).
    GramScore,
}

/// The exact solve as a fit uses it: the score operator as `left · Uᵀ` (never W itself, and
/// α only when asked), with the objective and the equation's residual.
#[derive(Debug, Clone)]
pub struct ScoreSolve {
    /// n×n: `W = left · Uᵀ` or `Lg W = left · Uᵀ`, as asked ([`Side`]); k×n, `F · left`,
    /// with a fold F.
    pub left: Array2<f64>,
    /// α (n×n), formed only when asked: prediction needs W alone.
    pub alpha: Option<Array2<f64>>,
    /// [`objective`] at α.
    pub objective: f64,
    /// [`residual`] at α.
    pub residual: f64,
    /// The normwise backward error of the Sylvester equation.
    pub backward_error: f64,
    /// The factorisation that produced α.
    pub route: Route,
}

/// The exact solve with α and W formed (tests, benchmarks and the docs' cross-checks).
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
    let want = Want {
        alpha: true,
        side: Side::Score,
        fold: None,
    };
    let sol = solve_by(ovk, ke, lg.to_owned(), lambda, choice, want)?;
    let w = matmul(sol.left.view(), ke.vectors.t());
    Ok(ExactSolve {
        alpha: sol.alpha.expect("α was asked for"),
        w,
        objective: sol.objective,
        residual: sol.residual,
        backward_error: sol.backward_error,
        route: sol.route,
    })
}

/// The fit's solve: the score operator on `side`, α not formed, its left factor multiplied
/// by `fold` (F, k×n) when given: `F · left`, formed in the cheaper order — the closed-form
/// pre-image needs only `Yᵀ W`, and with k < n the routes then skip their last n×n products.
/// `lg` must be exactly symmetric (`kernels::gram` makes it so): the covariance kernel
/// reduces it in its own memory.
pub fn solve_scores(
    ovk: Ovk,
    ke: &SymEigen,
    lg: Array2<f64>,
    lambda: f64,
    side: Side,
    fold: Option<ArrayView2<f64>>,
) -> Result<ScoreSolve> {
    let choice = RouteChoice::Auto {
        limit: BACKWARD_ERROR_LIMIT,
    };
    solve_scores_by(ovk, ke, lg, lambda, side, fold, choice)
}

/// [`solve_scores`] with the conditional kernel's route chosen by `choice`.
pub fn solve_scores_by(
    ovk: Ovk,
    ke: &SymEigen,
    lg: Array2<f64>,
    lambda: f64,
    side: Side,
    fold: Option<ArrayView2<f64>>,
    choice: RouteChoice,
) -> Result<ScoreSolve> {
    if fold.is_some_and(|f| f.ncols() != lg.nrows()) {
        return Err(OvkError::internal(
            "kde: the fold's width differs from the Gram size",
        ));
    }
    let want = Want {
        alpha: false,
        side,
        fold,
    };
    solve_by(ovk, ke, lg, lambda, choice, want)
}

/// What a route forms besides the objective and the residual.
#[derive(Debug, Clone, Copy)]
struct Want<'a> {
    alpha: bool,
    side: Side,
    /// F (k×n): the left factor returned is `F · left`.
    fold: Option<ArrayView2<'a, f64>>,
}

/// `F · m`, or m itself without a fold.
fn folded(fold: Option<ArrayView2<f64>>, m: Array2<f64>) -> Array2<f64> {
    match fold {
        Some(f) => matmul(f, m.view()),
        None => m,
    }
}

fn solve_by(
    ovk: Ovk,
    ke: &SymEigen,
    lg: Array2<f64>,
    lambda: f64,
    choice: RouteChoice,
    want: Want<'_>,
) -> Result<ScoreSolve> {
    let n = ke.values.len();
    if lg.nrows() != n || lg.ncols() != n {
        return Err(OvkError::internal(
            "kde: input and output Gram sizes differ",
        ));
    }
    let (u, s) = (&ke.vectors, &ke.values);
    match (ovk, choice) {
        (Ovk::Identity, _) => Ok(identity_in_eigenbasis(u, s, lg, lambda, want)),
        (Ovk::Covariance, _) => covariance_route(u, s, lg, lambda, want),
        (Ovk::Conditional { epsilon }, RouteChoice::Only(Route::Symmetric)) => {
            symmetric_route(epsilon, u, s, &lg, lambda, want)
        }
        (Ovk::Conditional { epsilon }, RouteChoice::Only(Route::Schur)) => {
            schur_route(epsilon, u, s, &lg, lambda, want)
        }
        (Ovk::Conditional { epsilon }, RouteChoice::Auto { limit }) => {
            let sym = symmetric_route(epsilon, u, s, &lg, lambda, want)?;
            if sym.backward_error <= limit {
                return Ok(sym);
            }
            let sch = schur_route(epsilon, u, s, &lg, lambda, want)?;
            Ok(if sch.backward_error < sym.backward_error {
                sch
            } else {
                sym
            })
        }
    }
}

/// The covariance kernel by the Hessenberg–Schur method (Golub, Nash, Van Loan 1979): with
/// `Lg = Q T̂ Qᵀ` (tridiagonal: half an eigendecomposition, in Lg's own memory) and
/// `C = Qᵀ U`, column j of `X = Qᵀ α U` solves `((s_j/n) T̂ + λ I) x_j = c_j` in O(n);
/// `W = Q T̂ X Uᵀ / n` and `Lg W = Q T̂² X Uᵀ / n`, so either side is one application of Q's
/// reflectors beside the one that formed C (`α = Q X Uᵀ` would be a product and a third).
/// Q and U being orthogonal, the residual is `‖F − C‖_F` with `F = (1/n) T̂ X S + λX`,
/// `‖α‖_F = ‖X‖_F`, and the objective `tr(R₀ᵀ T̂ R₀) + (λ/n) Σ_j s_j ‖T̂ x_j‖²` with
/// `R₀ = (1/n) T̂ X S − C = −λX` is `λ ⟨T̂ X, C⟩`.
fn covariance_route(
    u: &Array2<f64>,
    s: &Array1<f64>,
    lg: Array2<f64>,
    lambda: f64,
    want: Want<'_>,
) -> Result<ScoreSolve> {
    let nf = s.len() as f64;
    let s_n: Vec<f64> = s.iter().map(|v| v / nf).collect();
    let t_norm = frobenius(&lg);
    let tri = tridiagonal_in_place(lg)?;
    stop_if_abandoned()?;
    let mut c = u.clone();
    tri.apply(&mut c, true); // C = Qᵀ U
    let (x, tx) = shifted_solves(&tri, &c, &s_n, lambda)?;
    let (sq, tx_c) = residual_and_inner(&tx, &x, &c, |_, cv| cv, &s_n, lambda);
    drop(c);
    stop_if_abandoned()?;
    let a_norm = frobenius(&x);
    let alpha = want.alpha.then(|| {
        let mut alpha = matmul(x.view(), u.t()); // α = Q X Uᵀ
        tri.apply(&mut alpha, false);
        alpha
    });
    drop(x);
    // left = Q M, M = T̂X/n (W) or T̂²X/n (Lg W)
    let mut m = match want.side {
        Side::Score => tx,
        Side::GramScore => tri.mul_t(tx.view()),
    };
    m.mapv_inplace(|v| v / nf);
    let left = match want.fold {
        // F Q M = (Qᵀ Fᵀ)ᵀ M: Q applied to F's k rows, not to M's n columns.
        Some(f) => {
            let mut qt_ft = f.t().to_owned();
            tri.apply(&mut qt_ft, true);
            matmul_tn(qt_ft.view(), m.view())
        }
        None => {
            tri.apply(&mut m, false);
            m
        }
    };
    let (residual, backward_error) = errors(sq.sqrt(), t_norm, a_norm, s, lambda);
    Ok(ScoreSolve {
        left,
        alpha,
        objective: lambda * tx_c,
        residual,
        backward_error,
        route: Route::Symmetric,
    })
}

/// The Sylvester equation in a tridiagonal basis, `(1/n) T̂ X S + λX = C`: column j of X solves
/// `((s_j/n) T̂ + λ I) x_j = c_j` in O(n). Returns X and `T̂ X`.
fn shifted_solves(
    tri: &Tridiagonal,
    c: &Array2<f64>,
    s_n: &[f64],
    lambda: f64,
) -> Result<(Array2<f64>, Array2<f64>)> {
    let mut x = c.clone();
    tri.solve_shifted(&mut x, s_n, lambda)?;
    let tx = tri.mul_t(x.view());
    Ok((x, tx))
}

/// `(‖E‖_F², ⟨T̂X, C⟩)` for the tridiagonal equation's residual `E = (1/n) T̂ X S + λX − C`,
/// from `T̂X`, X and C in one pass (`s_n[j] = s_j / n`). C's entry in column j is
/// `c_of(j, b_ij)`: B itself, or B with its columns scaled as they are read.
fn residual_and_inner(
    tx: &Array2<f64>,
    x: &Array2<f64>,
    b: &Array2<f64>,
    c_of: impl Fn(usize, f64) -> f64,
    s_n: &[f64],
    lambda: f64,
) -> (f64, f64) {
    let (mut e_sq, mut inner) = (0.0, 0.0);
    Zip::indexed(tx)
        .and(x)
        .and(b)
        .for_each(|(_, j), tv, xv, bv| {
            let cv = c_of(j, *bv);
            let e = tv * s_n[j] + lambda * xv - cv;
            e_sq += e * e;
            inner += tv * cv;
        });
    (e_sq, inner)
}

/// The residual `‖R‖_F/√n` and the normwise backward error of a solve with residual norm
/// `r_norm = ‖R‖_F`, `‖T̃‖_F = t_norm` and `‖α‖_F = a_norm`.
fn errors(r_norm: f64, t_norm: f64, a_norm: f64, s: &Array1<f64>, lambda: f64) -> (f64, f64) {
    let nf = s.len() as f64;
    let scale = backward_scale(t_norm, a_norm, frobenius(s), lambda, nf, nf.sqrt());
    (r_norm / nf.sqrt(), r_norm / scale)
}

/// The conditional kernel's symmetric route, straight into the input basis: `T̃ = D G` is
/// similar to the symmetric `D^{1/2} G D^{1/2} = Q T̂ Qᵀ`, reduced to tridiagonal form (in its
/// own memory), so in the basis `P = U D^{1/2} Q` the equation is the covariance route's:
/// with `C = P⁻¹ U = Qᵀ D^{-1/2}` (Q formed from its reflectors, cheaper than applied to the
/// identity), column j of X solves `((s_j/n) T̂ + λ I) x_j = c_j`, and `α = P X Uᵀ`,
/// `W = Tα/n = U D^{1/2} (Q T̂ X / n) Uᵀ` (`Lg W`: `Lg U D^{1/2}` in front, kept from forming
/// `D^{1/2} G D^{1/2}`): two products after the reduction, `Q (T̂X/n)` with the formed Q
/// (faster than its reflectors) and the left factor's; with a fold F (k×n) three k×n ones,
/// `((F U D^{1/2}) Q) (T̂X/n)`.
///
/// The objective, residual and backward error are those of the equation as solved, in the
/// tridiagonal basis, `E = (1/n) T̂ X S + λX − C` (the objective λ⟨T̂X, C⟩, as for the
/// covariance kernel), where the basis change costs nothing; the backward error is scaled by
/// that equation's own norms (`‖T̂‖_F`, `‖X‖_F`, `‖C‖_F = ‖D^{-1/2}‖_F`). The residual in K's
/// eigenbasis is `D^{1/2} Q E`, never larger than E since `D ≤ I`; finding it exactly would
/// take another application of Q. Neither sees the reduction's own rounding, which the
/// similarity with `D^{1/2}` can magnify (docs/methods.md §3): `tests/it/kde_solve.rs`
/// measures that against the Kronecker solve.
fn symmetric_route(
    epsilon: f64,
    u: &Array2<f64>,
    s: &Array1<f64>,
    lg: &Array2<f64>,
    lambda: f64,
    want: Want<'_>,
) -> Result<ScoreSolve> {
    let nf = s.len() as f64;
    let s_n: Vec<f64> = s.iter().map(|v| v / nf).collect();
    let dh = s.mapv(|v| (nf * epsilon / (v + nf * epsilon)).sqrt());
    // G = Uᵀ (Lg U), exactly symmetric, scaled to D^{1/2} G D^{1/2} by the products
    // `d_i^{1/2} d_j^{1/2}` (the same on both triangles); Lg U scaled to Lg U D^{1/2} in its own
    // memory. U D^{1/2} is copied only where it is a factor (W, α).
    let mut lud = matmul(lg.view(), u.view());
    let mut gs = matmul_symmetric(u.t(), lud.view());
    Zip::indexed(&mut gs).for_each(|(i, j), g| *g *= dh[i] * dh[j]);
    scale_columns(&mut lud, dh.view());
    let ud = (want.side == Side::Score || want.alpha).then(|| {
        let mut ud = u.clone();
        scale_columns(&mut ud, dh.view());
        ud
    });
    let lud = (want.side == Side::GramScore).then_some(lud);
    stop_if_abandoned()?;
    let tri = tridiagonal_in_place(gs)?;
    stop_if_abandoned()?;
    let dh_inv = dh.mapv(|v| 1.0 / v);
    // Qᵀ, kept for `Q T̂ X` (a product, faster than applying the reflectors again); the
    // right-hand side `C = Qᵀ D^{-1/2}` is its columns scaled, read as it is needed.
    let qt = tri.q_transposed();
    let mut x = qt.clone();
    scale_columns(&mut x, dh_inv.view());
    tri.solve_shifted(&mut x, &s_n, lambda)?;
    let mut tx = tri.mul_t(x.view());
    let t_norm = tri.t_frobenius();
    drop(tri);
    // J = tr(R₀ᵀ T̂ R₀) + (λ/n) Σ_j s_j ‖T̂ x_j‖² with R₀ = (1/n) T̂ X S − C = −λX: λ⟨T̂X, C⟩.
    let (e_sq, tx_c) = residual_and_inner(&tx, &x, &qt, |j, bv| bv * dh_inv[j], &s_n, lambda);
    let c_norm = frobenius(&dh_inv);
    let scale = backward_scale(t_norm, frobenius(&x), frobenius(s), lambda, nf, c_norm);
    let alpha = match &ud {
        Some(ud) if want.alpha => {
            let qx = matmul_tn(qt.view(), x.view());
            Some(matmul(matmul(ud.view(), qx.view()).view(), u.t()))
        }
        _ => None,
    };
    drop(x);
    tx.mapv_inplace(|v| v / nf);
    let base = match want.side {
        Side::Score => ud.expect("U D^{1/2} kept for W"),
        Side::GramScore => lud.expect("Lg U D^{1/2} kept for Lg W"),
    };
    let left = match want.fold {
        // (F base Q) (T̂ X / n): three k×n products where there were two n×n ones.
        Some(f) => {
            let fb = matmul(f, base.view());
            drop(base);
            let fbq = matmul(fb.view(), qt.t());
            drop((fb, qt));
            matmul(fbq.view(), tx.view())
        }
        None => {
            let qtx = matmul_tn(qt.view(), tx.view()); // Q T̂ X / n
            drop((qt, tx));
            stop_if_abandoned()?;
            matmul(base.view(), qtx.view())
        }
    };
    let e_norm = e_sq.sqrt();
    Ok(ScoreSolve {
        left,
        alpha,
        objective: lambda * tx_c,
        residual: e_norm / nf.sqrt(),
        backward_error: e_norm / scale,
        route: Route::Symmetric,
    })
}

/// The conditional kernel's Schur route (its fallback), in K's eigenbasis: α̃ from
/// [`conditional_in_eigenbasis`], the objective and residual there, then
/// `W = U (T̃α̃/n) Uᵀ` (`Lg W`: `Lg U` in front) and, if asked, `α = U α̃ Uᵀ`.
fn schur_route(
    epsilon: f64,
    u: &Array2<f64>,
    s: &Array1<f64>,
    lg: &Array2<f64>,
    lambda: f64,
    want: Want<'_>,
) -> Result<ScoreSolve> {
    let nf = s.len() as f64;
    // G = Uᵀ Lg U, formed directly: D^{-1/2} (D^{1/2} G D^{1/2}) D^{-1/2} would lose the digits
    // this route is here to keep.
    let lu = matmul(lg.view(), u.view());
    let g = matmul_symmetric(u.t(), lu.view());
    let d = s.mapv(|v| nf * epsilon / (v + nf * epsilon));
    let t_norm = frobenius_scaled_rows(&g, d.view());
    let a = conditional_in_eigenbasis(&g, &d, s, lambda)?;
    let mut ta = matmul(g.view(), a.view());
    scale_rows(&mut ta, d.view());
    let best = Candidate::assess(a, ta, Route::Schur, s, lambda, t_norm);
    // fit = tr(R₀ᵀ G R₀) with R₀ = (1/n) T̃α̃ S − I; reg = tr(S α̃ᵀ G T̃α̃): the objective's two
    // terms in the eigenbasis.
    let mut r0 = best.t_alpha_tilde.clone();
    scale_columns(&mut r0, s.mapv(|v| v / nf).view());
    r0.diag_mut().mapv_inplace(|v| v - 1.0);
    let fit = inner(&r0, &matmul(g.view(), r0.view()));
    let g_ta = matmul(g.view(), best.t_alpha_tilde.view());
    drop((r0, g));
    let mut reg = 0.0;
    Zip::indexed(&best.alpha_tilde)
        .and(&g_ta)
        .for_each(|(_, j), a, m| reg += s[j] * a * m);
    drop(g_ta);
    let alpha = want
        .alpha
        .then(|| back_to_input_basis(u, &best.alpha_tilde));
    let base = match want.side {
        Side::Score => u,
        Side::GramScore => &lu,
    };
    let ta_n = best.t_alpha_tilde.mapv(|v| v / nf);
    let left = match want.fold {
        Some(f) => matmul(matmul(f, base.view()).view(), ta_n.view()),
        None => matmul(base.view(), ta_n.view()),
    };
    Ok(ScoreSolve {
        left,
        alpha,
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
        let (residual, backward_error) =
            errors(sq.sqrt(), t_norm, frobenius(&alpha_tilde), s, lambda);
        Candidate {
            alpha_tilde,
            t_alpha_tilde,
            route,
            residual,
            backward_error,
        }
    }
}

/// The normwise backward error's denominator for `(1/n) T̃ α̃ S + λ α̃ = B`:
/// `‖T̃‖_F ‖α̃‖_F ‖s‖/n + λ‖α̃‖_F + ‖B‖_F` (B = I in K's eigenbasis, `‖I‖_F = √n`).
fn backward_scale(t_norm: f64, a_norm: f64, s_norm: f64, lambda: f64, nf: f64, b_norm: f64) -> f64 {
    t_norm * a_norm * s_norm / nf + lambda * a_norm + b_norm
}

/// The identity kernel, eq. (3): `α = U diag(a) Uᵀ`, `a = 1/(s + λ)`, and `W = α`. The
/// objective `Σ_i (r_i² + λ s_i a_i²) G_ii` (`r_i = a_i s_i − 1 = −λ a_i`, `G = Uᵀ Lg U`)
/// collapses to `λ Σ_i a_i G_ii = λ ⟨Lg, α⟩_F`. W's left factor is `U diag(a)`, free, and
/// the objective one symmetric product (α); `Lg W`'s is `Lg U diag(a)`, one product, whose
/// columns give `G_ii = u_iᵀ (Lg U)_i`.
fn identity_in_eigenbasis(
    u: &Array2<f64>,
    s: &Array1<f64>,
    lg: Array2<f64>,
    lambda: f64,
    want: Want<'_>,
) -> ScoreSolve {
    let nf = s.len() as f64;
    let a = s.mapv(|sj| 1.0 / (sj + lambda)); // eq. (3), Kadri et al.
    let (mut res, mut sq_a) = (0.0, 0.0);
    for i in 0..a.len() {
        res += (a[i] * s[i] - 1.0 + lambda * a[i]).powi(2);
        sq_a += a[i] * a[i];
    }
    let nsqrt = nf * nf.sqrt(); // ‖T̃‖_F = ‖nI‖_F
    let (residual, backward_error) = errors(res.sqrt(), nsqrt, sq_a.sqrt(), s, lambda);
    let mut ua = u.clone();
    scale_columns(&mut ua, a.view());
    let symmetric_alpha = || matmul_symmetric(ua.view(), u.t());
    let (left, alpha, objective) = match want.side {
        Side::Score => {
            let alpha = symmetric_alpha();
            let objective = lambda * inner(&lg, &alpha);
            (ua, want.alpha.then_some(alpha), objective)
        }
        Side::GramScore => {
            let mut lu = matmul(lg.view(), u.view());
            drop(lg);
            let g_ii = lu
                .columns()
                .into_iter()
                .zip(u.columns())
                .map(|(l, u)| l.dot(&u));
            let objective = lambda * g_ii.zip(&a).map(|(g, a)| g * a).sum::<f64>();
            scale_columns(&mut lu, a.view());
            (lu, want.alpha.then(symmetric_alpha), objective)
        }
    };
    ScoreSolve {
        left: folded(want.fold, left),
        alpha,
        objective,
        residual,
        backward_error,
        route: Route::Symmetric,
    }
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
