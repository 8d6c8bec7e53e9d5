//! Global optimality certificate (Dinuzzo & Fukumizu, Lemma 8) and the saddle escape of
//! docs/methods.md §2. With C solving `K C L + λ C = Y`, L = BBᵀ, the point is the global
//! optimum of the trace-penalised problem iff `(Cᵀ K C) B = B` and `‖Cᵀ K C‖₂ ≤ 1`.
//!
//! In the bases of the fit, `C = U Ĉ Q_mᵀ` with `diag(s) Ĉ (B̂B̂ᵀ) + λ Ĉ = Rᵀ`, so
//! `Cᵀ K C = Q_m G Q_mᵀ`, `G = Ĉᵀ diag(s) Ĉ` (r×r): nothing m×m is needed.

use ndarray::{s, Array2, Axis};
use serde::Serialize;

use super::reduced::{frob, frob_diff, Reduced};
use crate::linalg::{divide_by_spectrum, eigh, matmul, matmul_tn, qr_thin, symmetrize};
use crate::Result;

/// `‖Cᵀ K C‖₂ ≤ 1 + EIG_SLACK` counts as ≤ 1.
pub(crate) const EIG_SLACK: f64 = 1e-6;
/// `B` is rank-deficient when `σ_min(B) ≤ RANK_RATIO · σ_max(B)` (or B = 0).
const RANK_RATIO: f64 = 1e-4;

/// Lemma 8's check that (A, B) is optimal at this λ, and what it measured.
#[derive(Debug, Clone, Serialize)]
pub struct Certificate {
    /// `‖(Cᵀ K C) B − B‖_F / ‖B‖_F` (0 when B = 0).
    pub residual: f64,
    /// `‖Cᵀ K C‖₂`.
    pub top_eigenvalue: f64,
    /// True when the residual and the top eigenvalue pass Lemma 8's test.
    pub certified: bool,
    /// True when B is numerically of rank below p.
    pub rank_deficient: bool,
    /// Saddle escapes taken at this λ.
    pub escapes: usize,
    /// Eigenvectors of `G` with eigenvalue > 1 (r×k), largest first.
    #[serde(skip)]
    ascent: Array2<f64>,
    /// Directions of B's (near-)null space (p×j), smallest singular value first.
    #[serde(skip)]
    null: Array2<f64>,
}

impl Certificate {
    /// A stationary point that is not the optimum, with room in B to move: escape it.
    pub(crate) fn is_escapable_saddle(&self) -> bool {
        self.rank_deficient && self.top_eigenvalue > 1.0 + EIG_SLACK
    }

    /// The certified condition fails only on `‖CᵀKC‖₂`, with B of full rank p: the rank
    /// constraint is active (the point may still be the best of rank p).
    pub(crate) fn rank_constraint_active(&self, residual_tol: f64) -> bool {
        !self.rank_deficient
            && self.residual <= residual_tol
            && self.top_eigenvalue > 1.0 + EIG_SLACK
    }
}

/// `Ĉ` solving `diag(s) Ĉ L̂ + λ Ĉ = Rᵀ` with `L̂ = B̂B̂ᵀ` (r×r, rank ≤ p). With
/// `L̂ = W diag(t) Wᵀ`, `Ĉ = [(Rᵀ W) ⊘ (s tᵀ + λ)] Wᵀ`. Only the p columns `W_p = Q U`
/// (`B̂ = Q R_B`, `R_B R_Bᵀ = U diag(t) Uᵀ`) carry t > 0; on the rest, t = 0 and the columns
/// are `Rᵀ/λ`, so `Ĉ = [(Rᵀ W_p) ⊘ (s tᵀ + λ)] W_pᵀ + Rᵀ (I − W_p W_pᵀ)/λ` — no r×r
/// eigendecomposition. (When W_p spans all r directions the second term is exactly absent,
/// not a rounding residual over λ.)
fn coefficients(red: &Reduced, bhat: &Array2<f64>, lambda: f64) -> Result<Array2<f64>> {
    // Lemma 6, Dinuzzo & Fukumizu 2011 (K C L + λC = Y), in the bases of the fit.
    let r = red.rt.ncols();
    if bhat.ncols() == 0 || bhat.iter().all(|&v| v == 0.0) {
        return Ok(red.rt.mapv(|v| v / lambda));
    }
    let qr = qr_thin(bhat.view())?;
    let e = eigh(symmetrize(&matmul(qr.r.view(), qr.r.t())).view())?;
    let t = e.values.mapv(|v| v.max(0.0));
    let w_p = matmul(qr.q.view(), e.vectors.view()); // r×min(r, p), orthonormal columns
    let ryw = matmul(red.rt.view(), w_p.view()); // Rᵀ W_p
    let mut c_hat = matmul(
        divide_by_spectrum(ryw.view(), red.s.view(), t.view(), lambda).view(),
        w_p.t(),
    );
    if w_p.ncols() < r {
        let mut rest = red.rt.clone();
        rest -= &matmul(ryw.view(), w_p.t());
        c_hat.scaled_add(1.0 / lambda, &rest);
    }
    Ok(c_hat)
}

/// Lemma 8 at `B = Q_m B̂`. `residual_tol`: how small `‖(CᵀKC)B − B‖/‖B‖` must be.
pub(crate) fn certify(
    red: &Reduced,
    bhat: &Array2<f64>,
    lambda: f64,
    residual_tol: f64,
) -> Result<Certificate> {
    let c_hat = coefficients(red, bhat, lambda)?;
    let mut sc = c_hat.clone();
    for (mut row, &si) in sc.axis_iter_mut(Axis(0)).zip(red.s.iter()) {
        row *= si;
    }
    let g = symmetrize(&matmul_tn(c_hat.view(), sc.view())); // Ĉᵀ diag(s) Ĉ
    let eg = eigh(g.view())?;
    let last = eg.values.len() - 1;
    let top_eigenvalue = eg.values[last];
    let above: Vec<usize> = (0..=last)
        .rev()
        .filter(|&i| eg.values[i] > 1.0 + EIG_SLACK)
        .collect();
    let ascent = eg.vectors.select(Axis(1), &above);

    let b_norm = frob(bhat);
    let residual = if b_norm > 0.0 {
        frob_diff(&matmul(g.view(), bhat.view()), bhat) / b_norm
    } else {
        0.0
    };

    let bb = symmetrize(&matmul_tn(bhat.view(), bhat.view()));
    let eb = eigh(bb.view())?;
    let sig2_min = eb.values[0].max(0.0);
    let sig2_max = eb.values[eb.values.len() - 1].max(0.0);
    let small = RANK_RATIO * RANK_RATIO * sig2_max;
    let rank_deficient = sig2_max == 0.0 || sig2_min <= small;
    let null_idx: Vec<usize> = (0..eb.values.len())
        .filter(|&i| sig2_max == 0.0 || eb.values[i] <= small)
        .collect();
    let null = eb.vectors.select(Axis(1), &null_idx);

    Ok(Certificate {
        residual,
        top_eigenvalue,
        certified: residual <= residual_tol && top_eigenvalue <= 1.0 + EIG_SLACK,
        rank_deficient,
        escapes: 0,
        ascent,
        null,
    })
}

/// Leave a saddle: `B ← B + τ Σₖ uₖ vₖᵀ`, pairing the eigenvectors uₖ of CᵀKC with eigenvalues
/// above 1 (each a direction of negative curvature, orthogonal to range B at a stationary point)
/// with null directions vₖ of B, halving τ until `g(B) = min_A Q(A, B)` decreases
/// (docs/methods.md §2; one pair would do, but filling every free column at once saves one
/// escape-and-converge round per missing rank). Falls back to the single top pair.
/// `None` if no τ decreases g.
pub(crate) fn escape_saddle(
    red: &Reduced,
    bhat: &Array2<f64>,
    cert: &Certificate,
    lambda: f64,
) -> Result<Option<(Array2<f64>, f64)>> {
    let k = cert.ascent.ncols().min(cert.null.ncols());
    if k == 0 {
        return Ok(None);
    }
    let g0 = red.value(bhat, lambda)?;
    let tau0 = frob(bhat).max(lambda.sqrt()).max(1.0);
    for pairs in [k, 1] {
        let u = cert.ascent.slice(s![.., ..pairs]);
        let v = cert.null.slice(s![.., ..pairs]);
        let direction = matmul(u, v.t());
        let mut tau = tau0;
        for _ in 0..80 {
            let candidate = bhat + &(&direction * tau);
            let g = red.value(&candidate, lambda)?;
            if g < g0 - 1e-13 * g0.abs() {
                return Ok(Some((candidate, tau)));
            }
            tau *= 0.5;
        }
        if pairs == 1 {
            break;
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    /// The thin form of Ĉ equals the full r×r eigendecomposition's, and solves its equation.
    #[test]
    fn coefficients_from_p_columns_equal_the_full_spectrum_solve() {
        let mut rng = Rng::new(4);
        let (ell, m, p) = (14, 9, 3);
        let x = Array2::from_shape_simple_fn((ell, 2), || rng.normal());
        let y = Array2::from_shape_simple_fn((ell, m), || rng.normal());
        let k = crate::kernels::gram(&crate::kernels::Kernel::Gaussian { sigma: 1.0 }, x.view())
            .unwrap();
        let red = Reduced::new(k.view(), y.view()).unwrap();
        let r = red.r();
        let mut bhat = Array2::from_shape_simple_fn((r, p), || rng.normal());
        bhat.column_mut(2).fill(0.0); // rank-deficient B
        for lambda in [1e-3, 0.7, 50.0] {
            let thin = coefficients(&red, &bhat, lambda).unwrap();
            let l_hat = symmetrize(&matmul(bhat.view(), bhat.t()));
            let el = eigh(l_hat.view()).unwrap();
            let t = el.values.mapv(|v| v.max(0.0));
            let ryw = matmul(red.rt.view(), el.vectors.view());
            let full = matmul(
                divide_by_spectrum(ryw.view(), red.s.view(), t.view(), lambda).view(),
                el.vectors.t(),
            );
            let diff = (&thin - &full).iter().fold(0.0f64, |a, v| a.max(v.abs()));
            let scale = full.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(
                diff <= 1e-10 * scale.max(1.0),
                "λ = {lambda}: {diff} of {scale}"
            );
            // diag(s) Ĉ L̂ + λ Ĉ = Rᵀ
            let mut sc = matmul(thin.view(), l_hat.view());
            for (mut row, &si) in sc.axis_iter_mut(Axis(0)).zip(red.s.iter()) {
                row *= si;
            }
            sc.scaled_add(lambda, &thin);
            let res = (&sc - &red.rt).iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(res < 1e-9, "λ = {lambda}: residual {res}");
        }
    }
}
