//! The fast solver: eliminate C and minimise the reduced convex objective
//! `f(L) = ½ Σᵢ ỹᵢᵀ (sᵢL + λI)⁻¹ ỹᵢ + ½‖L‖²_F` (the paper's Appendix; docs/methods.md §1) over
//! `L = M Mᵀ ⪰ 0` with L-BFGS on the square factor M: `g(M) = f(MMᵀ)`, `∇g = 2 ∇f(L) M`.
//! A square factor has no spurious local minima, and each evaluation costs O(ℓm² + m³).
//!
//! Convergence: `‖∇f(L)‖_F / max(1, ‖L‖_F) < tol`. Since `∇f(L) = L − CᵀKC/2`, this is the
//! paper's fixed-point condition at the optimum, measured relative to L.

use std::cell::RefCell;

use ndarray::Array2;

use super::objective::{Evaluation, Spectral};
use super::Outcome;
use crate::linalg::{
    frobenius_sq, lbfgs, matmul, symmetrize, Control, LbfgsOptions, LbfgsStatus, Progress,
};
use crate::methods::{check_cancel, ensure_finite, Clock, Observer, TraceRecord};
use crate::{OvkError, Result};

/// L-BFGS on f(MMᵀ) from `M = √α* I`, α* the best multiple of the identity (see
/// [`scalar_start`]). One trace record per L-BFGS iteration, with f(L) = Q(L, C(L)).
pub fn run(
    sp: &Spectral,
    tol: f64,
    max_iter: usize,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Outcome> {
    let m = sp.n_outputs();
    let root = scalar_start(sp).sqrt();
    let mut x0 = vec![0.0; m * m];
    (0..m).for_each(|i| x0[i * m + i] = root);

    // The monitor needs ∇f(L) at the accepted point, which the last evaluation usually computed.
    let last: RefCell<Option<Evaluated>> = RefCell::new(None);
    let evaluate = |x: &[f64]| -> Result<(Evaluation, Array2<f64>)> {
        let l = gram_of_factor(x, m)?;
        Ok((sp.evaluate(&l)?, l))
    };
    let f = |x: &[f64]| -> (f64, Vec<f64>) {
        match evaluate(x) {
            Ok((red, l)) => {
                let mf = factor(x, m);
                let g = matmul(red.grad.view(), mf.view()) * 2.0; // ∇_M f(MMᵀ) = 2∇f(L)M
                let out = (red.value, g.iter().copied().collect());
                *last.borrow_mut() = Some(Evaluated {
                    x: x.to_vec(),
                    red,
                    l,
                });
                out
            }
            // A non-finite or singular trial point: the line search shortens the step.
            Err(_) => (f64::NAN, vec![f64::NAN; x.len()]),
        }
    };
    let mut converged = false;
    let mut rel = f64::INFINITY;
    let mut failure: Option<OvkError> = None;
    let monitor = |p: &Progress| -> Result<Control> {
        check_cancel(obs)?;
        ensure_finite("objective", p.value)?;
        let cached = last.borrow().as_ref().and_then(|e| {
            (e.x.as_slice() == p.x).then(|| (frobenius_sq(&e.red.grad), frobenius_sq(&e.l)))
        });
        let (g2, l2) = match cached {
            Some(v) => v,
            None => match evaluate(p.x) {
                Ok((red, l)) => (frobenius_sq(&red.grad), frobenius_sq(&l)),
                Err(e) => {
                    failure = Some(e);
                    return Ok(Control::Stop);
                }
            },
        };
        rel = g2.sqrt() / l2.sqrt().max(1.0);
        let mut rec = TraceRecord {
            iter: p.iter,
            objective: p.value,
            residual: Some(rel),
            step: Some(p.step),
            elapsed_ms: clock.ms(),
            ..Default::default()
        };
        rec.extra.insert("evaluations".into(), p.evaluations as f64);
        obs.record(&rec);
        if rel < tol {
            converged = true;
            return Ok(Control::Stop);
        }
        Ok(Control::Continue)
    };
    let opts = LbfgsOptions {
        max_iter,
        ..Default::default()
    };
    let res = lbfgs(x0, f, monitor, &opts)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let l = gram_of_factor(&res.x, m)?;
    let red = sp.evaluate(&l)?;
    if matches!(
        res.status,
        LbfgsStatus::GradTol | LbfgsStatus::LineSearchFailed
    ) {
        // The monitor never saw the final point when L-BFGS stopped before its first step:
        // the gradient in M vanished exactly (L = 0 is optimal when KY = 0), or the start was
        // already optimal so no step could decrease f (one output: M = √α* is the minimiser).
        // Judge convergence at the point returned.
        rel = frobenius_sq(&red.grad).sqrt() / frobenius_sq(&l).sqrt().max(1.0);
        converged |= rel < tol;
    }
    let mut notes = Vec::new();
    if !converged {
        notes.push(match res.status {
            LbfgsStatus::LineSearchFailed => format!(
                "L-BFGS could not decrease f further after {} iterations: relative gradient \
                 {rel:.3e} is the limit of double precision here, above tol {tol:.1e}",
                res.iterations
            ),
            _ => format!(
                "L-BFGS stopped at --max-iter {max_iter} iterations with relative gradient \
                 ‖∇f(L)‖/max(1, ‖L‖) = {rel:.3e} > tol {tol:.1e}; raise --max-iter"
            ),
        });
    }
    let mut details = serde_json::Map::new();
    details.insert("evaluations".into(), res.evaluations.into());
    details.insert("start_scale".into(), serde_json::json!(root * root));
    Ok(Outcome {
        l,
        ct: red.ct,
        iterations: res.iterations,
        converged,
        residual: rel,
        notes,
        details,
    })
}

/// One evaluation of f at the factor x, kept for the monitor.
struct Evaluated {
    x: Vec<f64>,
    red: Evaluation,
    l: Array2<f64>,
}

/// α* = argmin over α ≥ 0 of f(αI) = ½ Σᵢ ‖ỹᵢ‖²/(sᵢα + λ) + ½ m α², by bisection on the
/// increasing derivative `mα − ½ Σᵢ sᵢ‖ỹᵢ‖²/(sᵢα + λ)²`. O(ℓ) per step.
pub fn scalar_start(sp: &Spectral) -> f64 {
    let m = sp.n_outputs() as f64;
    let n2: Vec<f64> = sp.yt.rows().into_iter().map(|r| r.dot(&r)).collect();
    let lambda = sp.lambda;
    let slope = |a: f64| {
        m * a
            - 0.5
                * sp.s
                    .iter()
                    .zip(&n2)
                    .map(|(s, n)| s * n / (s * a + lambda).powi(2))
                    .sum::<f64>()
    };
    if slope(0.0) >= 0.0 {
        return 0.0;
    }
    let mut hi = 1.0;
    for _ in 0..200 {
        if slope(hi) >= 0.0 {
            break;
        }
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if slope(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The m×m factor M stored row-major in x.
fn factor(x: &[f64], m: usize) -> Array2<f64> {
    Array2::from_shape_fn((m, m), |(i, j)| x[i * m + j])
}

/// L = M Mᵀ, exactly symmetric.
fn gram_of_factor(x: &[f64], m: usize) -> Result<Array2<f64>> {
    if x.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::numerical("okl: the factor M became non-finite"));
    }
    let mf = factor(x, m);
    Ok(symmetrize(&matmul(mf.view(), mf.t())))
}
