//! Quasi-Newton solver on the reduced problem (methods.md §1 end, §2): with A eliminated,
//! `g(B) = min_A Q(A, B) = ½ Σᵢ ỹᵢᵀ (sᵢ BBᵀ + λI)⁻¹ ỹᵢ + ½ ‖B‖²_F`, minimised over the r×p
//! matrix B̂ (`B = Q_m B̂`) by L-BFGS. Woodbury in the eigenbasis of `BᵀB` makes one evaluation
//! one A-step of Algorithm 1: O(ℓrp + p³), and never touches the m outputs.

use ndarray::{Array2, Axis};

use super::reduced::{frob, Factor, Reduced};
use crate::linalg::{
    eigh, lbfgs, matmul, matmul_tn, symmetrize, Control, LbfgsOptions, LbfgsStatus,
    Progress as LbfgsProgress,
};
use crate::Result;

/// `g(B̂)` and `∇g(B̂)`. By the envelope theorem `∇_B g = ∂Q/∂B` at the optimal A:
/// `∇g = B − (1/λ)(Y − K A Bᵀ)ᵀ K A = B − (CᵀKC) B` (C = (Y − KABᵀ)/λ, A = CB), in the row space
/// `B̂ − (1/λ)(Rᵀ − KA′ B̂ᵀ)ᵀ KA′` with `KA′ = E U_Yᵀ` (ℓ×p) — Lemma 8's residual is `‖∇g‖/‖B‖`.
pub fn value_and_gradient(
    red: &Reduced,
    bhat: &Array2<f64>,
    lambda: f64,
) -> Result<(f64, Array2<f64>)> {
    let a = red.a_step(&Factor::Reduced(bhat.clone()), lambda)?;
    let ka = matmul(a.e.view(), a.u_y.t()); // Uᵀ K A, ℓ×p
    let resid = &red.rt - &matmul(ka.view(), bhat.t()); // Uᵀ (Y − K A Bᵀ) Q_m, ℓ×r
                                                        // Eq. (4) from the residual already formed (as `Reduced::objective`, one product fewer).
    let fit_sq: f64 = resid.iter().map(|v| v * v).sum();
    let reg: f64 =
        a.v.rows()
            .into_iter()
            .zip(red.s.iter())
            .map(|(row, &si)| si * row.iter().map(|x| x * x).sum::<f64>())
            .sum();
    let b_sq: f64 = bhat.iter().map(|x| x * x).sum();
    let value = fit_sq / (2.0 * lambda) + reg / 2.0 + b_sq / 2.0;
    let grad = bhat - &(matmul(resid.t(), ka.view()) / lambda);
    Ok((value, grad))
}

/// One run of L-BFGS at `lambda` from `bhat0`, for at most `budget` iterations; stops when
/// `‖∇g‖_F < tol · max(1, ‖B‖_F)`. `on_iter(objective, ‖∇g‖)` is called once per iteration (it may cancel).
pub struct Descent {
    pub bhat: Array2<f64>,
    pub iterations: usize,
    pub converged: bool,
}

/// Iterations of L-BFGS between refreshes of the preconditioner.
const RESTART: usize = 50;

/// The right preconditioner `P = M^{-1/2}`, `M = (KA)ᵀ(KA)/λ + I` — the Hessian of Q in B for
/// the A optimal at `bhat` (the block Algorithm 1 solves exactly) — and `P⁻¹ = M^{1/2}`.
fn preconditioner(
    red: &Reduced,
    bhat: &Array2<f64>,
    lambda: f64,
) -> Result<(Array2<f64>, Array2<f64>)> {
    let a = red.a_step(&Factor::Reduced(bhat.clone()), lambda)?;
    let ka = matmul(a.e.view(), a.u_y.t());
    let mut m = symmetrize(&matmul_tn(ka.view(), ka.view())) / lambda;
    m.diag_mut().mapv_inplace(|d| d + 1.0);
    let e = eigh(m.view())?;
    let scaled = |pow: f64| {
        let mut w = e.vectors.clone();
        for (mut col, &d) in w.axis_iter_mut(Axis(1)).zip(e.values.iter()) {
            col *= d.max(1.0).powf(pow);
        }
        matmul(w.view(), e.vectors.t())
    };
    Ok((scaled(-0.5), scaled(0.5)))
}

pub fn descend(
    red: &Reduced,
    bhat0: &Array2<f64>,
    lambda: f64,
    tol: f64,
    budget: usize,
    on_iter: &mut dyn FnMut(f64, f64) -> Result<()>,
) -> Result<Descent> {
    let (r, p) = bhat0.dim();
    let gnorm = |g: &Array2<f64>| frob(g);
    let (_, g0) = value_and_gradient(red, bhat0, lambda)?;
    // Already stationary (e.g. B = 0, or a warm start at the optimum): nothing to do.
    if gnorm(&g0) < tol * frob(bhat0).max(1.0) {
        return Ok(Descent {
            bhat: bhat0.clone(),
            iterations: 0,
            converged: true,
        });
    }
    let mut bhat = bhat0.clone();
    let mut iterations = 0;
    let mut converged = false;
    let mut last_value = f64::INFINITY;
    while iterations < budget && !converged {
        // In Z = B̂ P⁻¹ (B̂ = Z P) the curvature of the B-block is the identity.
        let (pre, pre_inv) = preconditioner(red, &bhat, lambda)?;
        let shape = |x: &[f64]| Array2::from_shape_vec((r, p), x.to_vec());
        // A failed evaluation (eigh) is read as "too far": L-BFGS shrinks the step.
        let f = |x: &[f64]| -> (f64, Vec<f64>) {
            let eval = shape(x).ok().and_then(|z| {
                let b = matmul(z.view(), pre.view());
                value_and_gradient(red, &b, lambda).ok()
            });
            match eval {
                Some((v, g)) => (v, matmul(g.view(), pre.view()).into_iter().collect()),
                None => (f64::NAN, vec![0.0; x.len()]),
            }
        };
        let mut met = false;
        let mut monitor = |pr: &LbfgsProgress| -> Result<Control> {
            let (z, gz) = match (shape(pr.x), shape(pr.grad)) {
                (Ok(z), Ok(g)) => (z, g),
                _ => return Ok(Control::Stop),
            };
            let gn = gnorm(&matmul(gz.view(), pre_inv.view()));
            on_iter(pr.value, gn)?;
            if gn < tol * frob(&matmul(z.view(), pre.view())).max(1.0) {
                met = true;
                return Ok(Control::Stop);
            }
            Ok(Control::Continue)
        };
        let z0 = matmul(bhat.view(), pre_inv.view());
        let opts = LbfgsOptions {
            memory: 20,
            max_iter: (budget - iterations).min(RESTART),
            ..LbfgsOptions::default()
        };
        let res = lbfgs(z0.into_iter().collect(), f, &mut monitor, &opts)?;
        iterations += res.iterations;
        let z = shape(&res.x).map_err(|e| crate::OvkError::internal(e.to_string()))?;
        bhat = matmul(z.view(), pre.view());
        let gn = gnorm(&matmul(
            shape(&res.grad)
                .map_err(|e| crate::OvkError::internal(e.to_string()))?
                .view(),
            pre_inv.view(),
        ));
        let scale = frob(&bhat).max(1.0);
        converged = met || matches!(res.status, LbfgsStatus::GradTol) || gn < tol * scale;
        if matches!(res.status, LbfgsStatus::LineSearchFailed) || res.iterations == 0 {
            // At the limit of the arithmetic: a gradient within 100× of the tolerance counts.
            converged = converged || gn < 100.0 * tol * scale;
            if res.value >= last_value {
                break;
            }
        }
        last_value = res.value;
    }
    Ok(Descent {
        bhat,
        iterations,
        converged,
    })
}
