//! The exact solve of Proposition 1 (Kadri et al. 2013): α (n×n) with
//! `(1/n) T α k + λ α = I_n`, a Sylvester equation solved in O(n³) in the eigenbasis of k.
//!
//! With `k = U diag(s) Uᵀ`, column j of `α̃ = Uᵀ α U` solves `((s_j/n) T̃ + λ I) α̃_j = e_j`,
//! `T̃ = Uᵀ T U`:
//! * identity (`T = I`): `α = U diag(n/(s + nλ)) Uᵀ = n (k + nλI)⁻¹`;
//! * covariance (`T = Lg`): `T̃ = G = Uᵀ Lg U` is symmetric, one more eigendecomposition;
//! * conditional (`T = Lg − M⁻¹ k Lg = nε M⁻¹ Lg`, `M = k + nεI`): `T̃ = D G` with
//!   `D = diag(nε/(s+nε))` (so `M⁻¹` is never formed), non-symmetric: one real Schur form of
//!   `T̃` and a quasi-triangular back substitution per column (Bartels–Stewart with the second
//!   coefficient diagonal). `T̃` is similar to the symmetric `D^{1/2} G D^{1/2}`, but that
//!   similarity is ill-conditioned when nε is tiny (methods.md §3), so it is not used.

use ndarray::{Array2, ArrayView2};

use crate::linalg::{
    divide_by_spectrum, eigh, generalized_schur, matmul, matmul_tn, solve_shifted_quasi_triangular,
    symmetrize, SymEigen,
};
use crate::{OvkError, Result};

/// The operator-valued kernel `K(x, x') = k(x, x') C`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ovk {
    /// `C = I` — the KDE of Cortes et al. (2005).
    Identity,
    /// `C = Ĉ_YY`, eq. (5).
    Covariance,
    /// `C = Ĉ_YY|X` with regulariser ε, eq. (7).
    Conditional { epsilon: f64 },
}

impl Ovk {
    pub fn name(&self) -> &'static str {
        match self {
            Ovk::Identity => "identity",
            Ovk::Covariance => "covariance",
            Ovk::Conditional { .. } => "conditional",
        }
    }
}

/// Eigendecomposition of the input Gram matrix with round-off negatives clamped to 0.
pub fn input_eigen(k: ArrayView2<f64>) -> Result<SymEigen> {
    let mut e = eigh(k)?;
    e.values.mapv_inplace(|v| v.max(0.0));
    Ok(e)
}

/// T of Proposition 1 in the training basis (`T = U D Uᵀ Lg` for the conditional kernel).
pub fn t_matrix(ovk: Ovk, ke: &SymEigen, lg: ArrayView2<f64>) -> Array2<f64> {
    let n = lg.nrows();
    match ovk {
        Ovk::Identity => Array2::eye(n),
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
    let n = ke.values.len();
    if lg.nrows() != n || lg.ncols() != n {
        return Err(OvkError::internal(
            "kde: input and output Gram sizes differ",
        ));
    }
    let nf = n as f64;
    let u = &ke.vectors;
    let s = &ke.values;
    let alpha_tilde = match ovk {
        Ovk::Identity => Array2::from_diag(&s.mapv(|sj| nf / (sj + nf * lambda))),
        Ovk::Covariance => {
            let g = symmetrize(&matmul(matmul_tn(u.view(), lg).view(), u.view()));
            let ge = eigh(g.view())?;
            let t = ge.values.mapv(|v| v.max(0.0));
            let s_n = s.mapv(|v| v / nf);
            // column j: P diag(1/(t s_j/n + λ)) Pᵀ e_j
            let w = divide_by_spectrum(ge.vectors.t(), t.view(), s_n.view(), lambda);
            matmul(ge.vectors.view(), w.view())
        }
        Ovk::Conditional { epsilon } => conditional_in_eigenbasis(ke, lg, epsilon, lambda)?,
    };
    Ok(matmul(matmul(u.view(), alpha_tilde.view()).view(), u.t()))
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
/// operator (`Ĉ_YY`, `Ĉ_YY|X`, or `I/n` for the identity kernel, i.e. `k·I` with `nλ`).
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

/// `α̃ = Uᵀ α U` for the conditional kernel: `T̃ = D G = Q S Zᵀ` (real Schur form, computed as
/// the QZ form of the pencil `(D G, I)`), then for each column j the quasi-triangular system
/// `((s_j/n) S + λ R) y_j = Qᵀ e_j` (`R = Qᵀ Z` ≈ I), `α̃_j = Z y_j` — Bartels–Stewart against
/// the diagonal spectrum of k. No inverse of `M` or of `D^{1/2}` is applied.
fn conditional_in_eigenbasis(
    ke: &SymEigen,
    lg: ArrayView2<f64>,
    epsilon: f64,
    lambda: f64,
) -> Result<Array2<f64>> {
    let u = &ke.vectors;
    let s = &ke.values;
    let n = s.len();
    let nf = n as f64;
    let ne = nf * epsilon;
    let mut dg = matmul(matmul_tn(u.view(), lg).view(), u.view());
    for (i, mut row) in dg.rows_mut().into_iter().enumerate() {
        row *= ne / (s[i] + ne);
    }
    let qz = generalized_schur(dg.view(), Array2::<f64>::eye(n).view())?;
    let rhs = qz.q.t().to_owned();
    let shifts: Vec<f64> = s.iter().map(|v| v / nf).collect();
    let y = solve_shifted_quasi_triangular(qz.s.view(), qz.t.view(), &shifts, lambda, rhs.view())?;
    Ok(matmul(qz.z.view(), y.view()))
}
