//! The low-rank variant for large n: pivoted incomplete Cholesky `k ≈ A Aᵀ` (n×M1) and
//! `Lg ≈ B Bᵀ` (n×M2), then Proposition 1 through the Woodbury identity. Where the paper
//! inverts an (M1·M2)² matrix, the reduced system is again a Sylvester equation
//! `(BᵀB̃) Z (AᵀA) + nλ Z = BᵀA` with both factors symmetric: O(n(M1² + M2²) + M1³ + M2³).
//!
//! Derivation: `T ≈ B̃ Bᵀ` with `B̃ = B` (covariance) or `B̃ = B − A(nεI + AᵀA)⁻¹AᵀB`
//! (conditional, since `nε(AAᵀ + nεI)⁻¹ = I − A(nεI + AᵀA)⁻¹Aᵀ`), so
//! `k ⊗ T = (A ⊗ B̃)(A ⊗ B)ᵀ` and `α = (1/λ)(I − B̃ Z Aᵀ)`;
//! `score(x, y) = (1/n) l_yᵀ T α k_x = l_yᵀ B̃ H k_x` with `H = (Bᵀ − BᵀB̃ Z Aᵀ)/(nλ)`.
//! The identity kernel (eq. 3, ridge λ — no 1/n in its operator) needs only A:
//! `W = (AAᵀ + λI)⁻¹ = (I − A(λI + AᵀA)⁻¹Aᵀ)/λ`.

use ndarray::{Array2, ArrayView2};

use super::score::ScoreOperator;
use super::solve::Ovk;
use crate::linalg::{cholesky, matmul, matmul_tn, sylvester_sym, symmetrize};
use crate::Result;

/// The score operator `W ≈ Tα/n` from the factors `k ≈ AAᵀ`, `Lg ≈ BBᵀ`.
pub fn solve_low_rank(
    ovk: Ovk,
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
    lambda: f64,
) -> Result<ScoreOperator> {
    let n = a.nrows() as f64;
    let nl = n * lambda;
    let ata = symmetrize(&matmul_tn(a, a));
    match ovk {
        Ovk::Identity => {
            // W = (I − A (λI + AᵀA)⁻¹ Aᵀ)/λ, eq. (3) by Woodbury
            let mut m = ata.clone();
            m.diag_mut().mapv_inplace(|v| v + lambda);
            let inv_at = cholesky(m.view())?.solve(a.t());
            Ok(ScoreOperator {
                c0: 1.0 / lambda,
                left: a.mapv(|v| -v / lambda),
                right: Some(inv_at),
            })
        }
        Ovk::Covariance | Ovk::Conditional { .. } => {
            let b_tilde: Array2<f64> = match ovk {
                Ovk::Conditional { epsilon } => {
                    let mut m = ata.clone();
                    m.diag_mut().mapv_inplace(|v| v + n * epsilon);
                    let atb = matmul_tn(a, b);
                    let corr = matmul(a, cholesky(m.view())?.solve(atb.view()).view());
                    &b - &corr
                }
                _ => b.to_owned(),
            };
            let g_hat = symmetrize(&matmul_tn(b, b_tilde.view()));
            let bta = matmul_tn(b, a);
            // (BᵀB̃) Z (AᵀA) + nλ Z = BᵀA
            let z = sylvester_sym(g_hat.view(), ata.view(), bta.view(), nl)?;
            let gz = matmul(g_hat.view(), z.view());
            let h = (&b.t() - &matmul(gz.view(), a.t())).mapv(|v| v / nl);
            Ok(ScoreOperator {
                c0: 0.0,
                left: b_tilde,
                right: Some(h),
            })
        }
    }
}
