//! The paper's block coordinate descent (Algorithm 1, Dinuzzo et al. 2011), run in K's
//! eigenbasis so one sweep costs O(ℓm² + m³).
//!
//! From `L = 0`: C-step (eq. 6) for the current L, then an L-step for that C, until
//! `‖Z + λC − Y‖_F < δ` with `Z = E L`, `E = K C`. The default L-step is the exact minimiser of Q
//! over symmetric L (docs/methods.md §1); `Literal` is the paper's Lemma 4.1, kept for fidelity —
//! it does not keep L symmetric, and Q can then increase.

use ndarray::Array2;

use super::objective::Spectral;
use super::Outcome;
use crate::linalg::{cholesky, lyapunov_sym};
use crate::methods::{check_cancel, ensure_finite, Clock, Observer, TraceRecord};
use crate::util::choice::choice_enum;
use crate::Result;

choice_enum! {
    /// Which L-step Algorithm 1 takes.
    pub enum LUpdate: "l_update" {
        /// Exact minimiser of Q(·, C) over symmetric L (a Lyapunov equation).
        Symmetric = "symmetric",
        /// Lemma 4.1 as printed: `P = ½EᵀC − L`, `(EᵀE + λI) Q = P`, `L ← L + λQ`.
        Literal = "literal",
    }
}

/// One sweep of Algorithm 1 from `l_p`.
#[derive(Debug, Clone)]
pub struct Sweep {
    /// C̃ = UᵀC with C solving eq. (6) for `l_p`.
    pub ct: Array2<f64>,
    /// The updated L.
    pub l: Array2<f64>,
    /// `‖Z + λC − Y‖_F`, Z = E L (the paper's stopping quantity).
    pub residual: f64,
    /// Smallest eigenvalue of `l_p` (symmetric update only; NaN otherwise).
    pub(crate) min_eig_prev: f64,
}

/// C-step then L-step (Algorithm 1, steps 1–2).
pub fn sweep(sp: &Spectral, l_p: &Array2<f64>, update: LUpdate) -> Result<Sweep> {
    let lambda = sp.lambda;
    let m = sp.n_outputs();
    let (ct, min_eig_prev) = match update {
        LUpdate::Symmetric => sp.c_step(l_p.view())?,
        LUpdate::Literal => (sp.c_step_general(l_p.view())?, f64::NAN),
    };
    let r = sp.ete(&ct); // R = EᵀE
    let ctkc = sp.ctkc(&ct); // CᵀKC = EᵀC
    let mut a = r;
    a.diag_mut().mapv_inplace(|v| v + lambda); // EᵀE + λI
    let l = match update {
        LUpdate::Symmetric => {
            // Stationarity of Q(·, C) over symmetric L: (R + λI)L + L(R + λI) = EᵀY + YᵀE − λCᵀKC,
            // which equals R L_p + L_p R + λCᵀKC when C solves eq. (6) for L_p
            // (docs/methods.md §1). The left form is the exact minimiser even when C is only
            // approximately solved.
            let ety = sp.ety(&ct);
            let rhs = &ety + &ety.t() - &(&ctkc * lambda);
            lyapunov_sym(a.view(), rhs.view())?
        }
        LUpdate::Literal => {
            // Lemma 4.1: P = ½EᵀC − L; (EᵀE + λI) Q = P; L ← L + λQ.
            let p = &ctkc * 0.5 - l_p;
            let q = cholesky(a.view())?.solve(p.view());
            l_p + &(q * lambda)
        }
    };
    debug_assert_eq!(l.dim(), (m, m));
    let residual = sp.sylvester_residual(&l, &ct);
    Ok(Sweep {
        ct,
        l,
        residual,
        min_eig_prev,
    })
}

/// Algorithm 1 until the relative residual `‖Z + λC − Y‖_F / ‖Y‖_F < tol` or `max_iter`
/// sweeps. One trace record per sweep, with Q(L_k, C_k) — non-increasing for the symmetric
/// update. The returned C̃ is re-solved for the final L, so (L, C) is consistent.
pub fn run(
    sp: &Spectral,
    update: LUpdate,
    tol: f64,
    max_iter: usize,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Outcome> {
    let m = sp.n_outputs();
    let mut l = Array2::<f64>::zeros((m, m));
    let mut converged = false;
    let mut iterations = 0;
    let mut rel = f64::INFINITY;
    let mut notes = Vec::new();
    for k in 1..=max_iter {
        check_cancel(obs)?;
        let sw = sweep(sp, &l, update)?;
        let q = sp.objective(&sw.l, &sw.ct);
        ensure_finite("objective", q)?;
        rel = sw.residual / sp.y_norm;
        let mut rec = TraceRecord {
            iter: k,
            objective: q,
            residual: Some(rel),
            elapsed_ms: clock.ms(),
            ..Default::default()
        };
        if sw.min_eig_prev.is_finite() {
            rec.extra.insert("min_eig_L".into(), sw.min_eig_prev);
        }
        obs.record(&rec);
        l = sw.l;
        iterations = k;
        if rel < tol {
            converged = true;
            break;
        }
    }
    if !converged {
        notes.push(format!(
            "block coordinate descent stopped at --max-iter {max_iter} sweeps with relative \
             residual ‖Z + λC − Y‖/‖Y‖ = {rel:.3e} > tol {tol:.1e}; it is slow at small λ — \
             raise --max-iter or use --solver qn"
        ));
    }
    let ct = match update {
        LUpdate::Symmetric => sp.c_step(l.view())?.0,
        LUpdate::Literal => sp.c_step_general(l.view())?,
    };
    Ok(Outcome {
        l,
        ct,
        iterations,
        converged,
        residual: rel,
        notes,
        details: serde_json::Map::new(),
    })
}
