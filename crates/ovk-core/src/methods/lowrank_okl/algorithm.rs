//! Dinuzzo & Fukumizu's Algorithm 1 at one λ, in the row space (see `reduced`), with the
//! saddle escape of docs/methods.md §2 when the converged point fails Lemma 8 and B has room.

use std::collections::BTreeMap;

use ndarray::Array2;

use super::certificate::{certify, escape_saddle, Certificate};
use super::qn;
use super::reduced::{frob, Factor, Reduced, Solution};
use crate::methods::{check_cancel, ensure_finite, Clock, Observer, Phase, TraceRecord};
use crate::Result;

/// How B is found at one λ: `Qn`, L-BFGS on `g(B) = min_A Q(A, B)` in the row space
/// (docs/methods.md §2), or `Bcd`, the paper's Algorithm 1 (block coordinate descent).
pub use crate::methods::params::common::Solver;

/// The solver's constants for one λ: which solver, tolerances, caps.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// How B is found at one λ (L-BFGS or block coordinate descent).
    pub solver: Solver,
    /// bcd: stop when `‖B − B_p‖_F < tol · max(1, ‖B‖_F)`; qn: when
    /// `‖∇g(B)‖_F = ‖(CᵀKC)B − B‖_F < tol · max(1, ‖B‖_F)`.
    pub tol: f64,
    /// Iterations per λ.
    pub max_iter: usize,
    /// Lemma 8's `‖(CᵀKC)B − B‖/‖B‖` must be below this to certify.
    pub(crate) certificate_tol: f64,
    /// Saddle escapes allowed per λ.
    pub(crate) max_escapes: usize,
}

impl Settings {
    /// Settings with the qn solver, `tol` and `max_iter`, and the certificate tolerance derived from `tol`.
    pub fn new(tol: f64, max_iter: usize) -> Self {
        Settings {
            solver: Solver::Qn,
            tol,
            max_iter,
            certificate_tol: tol.sqrt().clamp(1e-6, 1e-3),
            max_escapes: 20,
        }
    }
}

/// The observer, the clock and the run's iteration counter. The last record of each λ is held
/// back so the path can attach the validation error to it.
pub struct Progress<'a> {
    /// Where records, notes and cancellation go.
    pub obs: &'a mut dyn Observer,
    /// Time since the fit started (for `elapsed_ms`).
    pub clock: Clock,
    /// Iterations so far, over the whole path.
    pub iter: usize,
    pending: Option<TraceRecord>,
    /// On a path: fits finished and planned.
    fits: Option<(usize, usize)>,
}

impl<'a> Progress<'a> {
    /// Progress reporting to `obs`, the clock started now, no iterations yet.
    pub fn new(obs: &'a mut dyn Observer) -> Self {
        Progress {
            obs,
            clock: Clock::start(),
            iter: 0,
            pending: None,
            fits: None,
        }
    }

    /// `total` fits (λ values × ranks) follow; each finished one is a step of the path.
    pub(crate) fn start_path(&mut self, total: usize) {
        self.fits = Some((0, total));
        self.obs.phase(Phase::Path, Some(total));
    }

    /// One fit follows (a fixed λ, or the refit at the path's choice).
    pub(crate) fn start_fit(&mut self) {
        self.fits = None;
        self.obs.phase(Phase::Iterating, None);
    }

    fn push(&mut self, rec: TraceRecord) {
        if let Some(prev) = self.pending.take() {
            self.obs.record(&prev);
        }
        self.pending = Some(rec);
    }

    /// Send the held-back record of the λ just finished, with its validation error.
    pub(crate) fn finish_lambda(&mut self, val_metric: Option<f64>, certified: bool) {
        if let Some(mut rec) = self.pending.take() {
            rec.val_metric = val_metric;
            rec.extra
                .insert("certified".into(), if certified { 1.0 } else { 0.0 });
            self.obs.record(&rec);
        }
        if let Some((done, total)) = &mut self.fits {
            *done += 1;
            self.obs.step(*done, *total);
        }
    }
}

/// The outcome at one λ.
#[derive(Debug, Clone)]
pub struct Fitted {
    /// The factors (A, B) at this λ.
    pub solution: Solution,
    /// Eq. (4) at the returned (A, B), A optimal for B.
    pub objective: f64,
    /// `‖Y − K A Bᵀ‖²_F`.
    pub(crate) fit_sq: f64,
    /// Iterations this λ took.
    pub iterations: usize,
    /// Whether the stopping test was met at this λ.
    pub converged: bool,
    /// Lemma 8's optimality check of the solution.
    pub certificate: Certificate,
}

/// Run Algorithm 1 from `start` at `lambda` until `‖B − B_p‖_F < tol·max(1, ‖B‖_F)` (the paper
/// prints "≥", a typo), then certify; escape saddles and resume while allowed.
pub fn solve(
    red: &Reduced,
    start: Factor,
    p: usize,
    lambda: f64,
    settings: &Settings,
    prog: &mut Progress<'_>,
) -> Result<Fitted> {
    // For λ ≥ α the optimum is L = 0 (docs/methods.md §2; Lemma 8 certifies B = 0 since
    // ‖CᵀKC‖₂ = α²/λ² ≤ 1). Algorithm 1 only creeps towards it (sublinearly at λ = α), so it
    // is set directly.
    let zero_is_optimal = lambda >= red.alpha;
    let mut f = if zero_is_optimal {
        let zero = Array2::zeros((red.r(), p));
        let a = red.a_step(&Factor::Reduced(zero.clone()), lambda)?;
        let (objective, _) = red.objective(&a, &zero, lambda);
        prog.iter += 1;
        prog.push(record(prog, p, lambda, objective, 0.0));
        Factor::Reduced(zero)
    } else {
        start
    };
    let mut iterations = 0;
    let mut escapes = 0;
    loop {
        let mut converged = zero_is_optimal;
        match settings.solver {
            Solver::Bcd => {
                while !converged && iterations < settings.max_iter {
                    let (b, done) = bcd_step(red, &f, lambda, settings, p, prog)?;
                    iterations += 1;
                    f = Factor::Reduced(b);
                    converged = done;
                }
            }
            Solver::Qn if !converged && iterations < settings.max_iter => {
                // From the paper's start I_{m×p}, its first update lands B in the row space.
                let b0 = match f {
                    Factor::Reduced(b) => b,
                    Factor::Identity(_) => {
                        iterations += 1;
                        bcd_step(red, &f, lambda, settings, p, prog)?.0
                    }
                };
                let budget = settings.max_iter.saturating_sub(iterations).max(1);
                let mut on_iter = |objective: f64, grad_norm: f64| -> Result<()> {
                    check_cancel(prog.obs)?;
                    ensure_finite("objective", objective)?;
                    prog.iter += 1;
                    let rec = record(prog, p, lambda, objective, grad_norm);
                    prog.push(rec);
                    Ok(())
                };
                // Only B's live columns move (see `qn::live_columns`); B = 0 is stationary.
                let live = qn::live_columns(&b0)?;
                if live.ncols() == 0 {
                    f = Factor::Reduced(b0);
                    converged = true;
                } else {
                    let d = qn::descend(red, &live, lambda, settings.tol, budget, &mut on_iter)?;
                    iterations += d.iterations;
                    f = Factor::Reduced(qn::pad_columns(&d.bhat, p));
                    converged = d.converged;
                }
            }
            Solver::Qn => {}
        }
        let bhat = match f {
            Factor::Reduced(b) => b,
            // max_iter ≥ 1, so at least one update moved B into the row space.
            Factor::Identity(_) => {
                return Err(crate::OvkError::internal("lowrank-okl: no iteration ran"))
            }
        };
        let mut certificate = certify(red, &bhat, lambda, settings.certificate_tol)?;
        if converged
            && !certificate.certified
            && certificate.is_escapable_saddle()
            && escapes < settings.max_escapes
            && iterations < settings.max_iter
        {
            if let Some((escaped, tau)) = escape_saddle(red, &bhat, &certificate, lambda)? {
                escapes += 1;
                prog.obs.note(&format!(
                    "λ = {lambda:.4e}: left a saddle (‖CᵀKC‖₂ = {:.4} > 1 with B rank-deficient) \
                     by B ← B + τ u vᵀ, τ = {tau:.3e}; resuming",
                    certificate.top_eigenvalue
                ));
                f = Factor::Reduced(escaped);
                continue;
            }
        }
        certificate.escapes = escapes;
        let a = red.a_step(&Factor::Reduced(bhat.clone()), lambda)?;
        let (objective, fit_sq) = red.objective(&a, &bhat, lambda);
        ensure_finite("objective", objective)?;
        return Ok(Fitted {
            solution: Solution { bhat, a },
            objective,
            fit_sq,
            iterations,
            converged,
            certificate,
        });
    }
}

/// One iteration of Algorithm 1 from `f`: the new B̂ and whether `‖B − B_p‖_F < δ`.
fn bcd_step(
    red: &Reduced,
    f: &Factor,
    lambda: f64,
    settings: &Settings,
    p: usize,
    prog: &mut Progress<'_>,
) -> Result<(Array2<f64>, bool)> {
    check_cancel(prog.obs)?;
    let a = red.a_step(f, lambda)?;
    let b = red.b_step(&a, lambda)?;
    let step = red.step_norm(f, &b);
    let (objective, _) = red.objective(&a, &b, lambda);
    ensure_finite("objective", objective)?;
    prog.iter += 1;
    let rec = record(prog, p, lambda, objective, step);
    prog.push(rec);
    let delta = settings.tol * frob(&b).max(1.0);
    Ok((b, step < delta))
}

fn record(prog: &Progress<'_>, p: usize, lambda: f64, objective: f64, step: f64) -> TraceRecord {
    let mut extra = BTreeMap::new();
    extra.insert("rank".to_string(), p as f64);
    TraceRecord {
        iter: prog.iter,
        objective,
        residual: Some(step),
        lambda: Some(lambda),
        elapsed_ms: prog.clock.ms(),
        extra,
        ..Default::default()
    }
}
