//! What both routes (spectral.rs, solver.rs) keep about one output's rounds: the line search's
//! next step and its halvings, the relative changes of the objective and of A, and whether the
//! output has converged or stalled.

/// How many times one A-step may halve μ before the iterate is declared stationary.
pub(crate) const MAX_HALVINGS: usize = 40;
/// Sufficient-decrease constant of the line searches' Armijo tests.
pub(crate) const ARMIJO: f64 = 1e-4;

/// One output's progress through the rounds.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Next step μ to try.
    pub mu: f64,
    /// The last accepted step, if any.
    pub last_step: Option<f64>,
    /// Halvings of μ so far, over all A-steps.
    pub halvings: usize,
    /// Rounds this output has run.
    pub iterations: usize,
    /// Whether this output met the stopping test.
    pub converged: bool,
    /// No step down to μ/2^MAX_HALVINGS decreased the objective: the iterate is stationary to
    /// rounding.
    pub(crate) stalled: bool,
    /// Relative changes of the last round (objective, A).
    pub(crate) rel_objective: f64,
    pub(crate) rel_metric: f64,
}

/// What one round did, for the trace.
#[derive(Debug, Clone, Copy, Default)]
pub struct Round {
    /// The step μ accepted in this round, if one was.
    pub step: Option<f64>,
    /// Halvings of μ this round took.
    pub halvings: usize,
}

impl Progress {
    /// Before the first round; the line search starts at μ.
    pub fn new(mu: f64) -> Self {
        Progress {
            mu,
            last_step: None,
            halvings: 0,
            iterations: 0,
            converged: false,
            stalled: false,
            rel_objective: f64::INFINITY,
            rel_metric: f64::INFINITY,
        }
    }

    /// A rejected trial step: halve μ. False (and stalled) once it has been halved
    /// `MAX_HALVINGS` times in this round.
    pub(crate) fn halve(&mut self, mu: &mut f64, round: &mut Round) -> bool {
        *mu *= 0.5;
        round.halvings += 1;
        if round.halvings >= MAX_HALVINGS {
            self.stalled = true;
        }
        !self.stalled
    }

    /// The round's line search is over: the next one starts at 4× the accepted step (at most
    /// `mu_max`).
    pub fn searched(&mut self, round: &Round, mu_max: f64) {
        self.halvings += round.halvings;
        if let Some(m) = round.step {
            self.mu = (4.0 * m).min(mu_max);
            self.last_step = Some(m);
        }
    }

    /// The objective went from `prev` to `now` and A moved by `moved` (in Frobenius norm) from
    /// a metric of norm `norm_prev`.
    pub fn changed(&mut self, prev: f64, now: f64, moved: f64, norm_prev: f64) {
        self.rel_objective = (prev - now).abs() / prev.abs().max(f64::MIN_POSITIVE);
        self.rel_metric = moved / norm_prev.max(f64::MIN_POSITIVE);
    }

    /// The round is over: converged when both relative changes are below tol, or stalled.
    pub(crate) fn end_round(&mut self, tol: f64) {
        self.iterations += 1;
        if self.stalled || (self.rel_objective < tol && self.rel_metric < tol) {
            self.converged = true;
        }
    }
}

/// One output of either route, as the rounds and the trace see it.
pub trait Output {
    /// Its progress, and the objective of (7) or (11) at the g-step's optimum in pieces:
    /// `[fit, g penalty, metric penalty]`.
    fn state(&self) -> (&Progress, [f64; 3]);

    /// Its progress (the first part of `state`).
    fn progress(&self) -> &Progress {
        self.state().0
    }

    /// The objective: the pieces' sum, in the order the profiles add them.
    fn objective(&self) -> f64 {
        let [fit, reg, pen] = self.state().1;
        fit + reg + pen
    }
}
