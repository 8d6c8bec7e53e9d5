//! The two solves of Proposition 1 (Kadri et al. 2013): exact, as a Sylvester equation in K's
//! eigenbasis, and factored, through incomplete Cholesky factors of K and L. Each returns the
//! score operator with what the session records of it.

use ndarray::{Array2, ArrayView2};
use serde_json::{json, Value as Json};

use super::preimage::Preimage;
use super::score::ScoreOperator;
use super::solve::{self, Ovk};
use super::{lowrank, FactorPlan, KdeConfig, OUTPUT_SEED};
use crate::kernels::{check_fits, dense_bytes, gram, FeatureMap, InputFactor, Kernel};
use crate::linalg::interruptible;
use crate::methods::input::{factor_observed, FactorSummary, Route};
use crate::methods::{check_cancel, ensure_finite, Clock, Observer, Phase, Problem, TraceRecord};
use crate::{OvkError, Result};

/// A solve's result: the score operator, eq. (9)'s objective where it was evaluated, the
/// solver's details, the matrices to save, notes, and the input features of a factored solve.
pub(super) struct Solved {
    pub op: ScoreOperator,
    pub objective: Option<f64>,
    pub solver: Json,
    pub matrices: Vec<(String, Array2<f64>)>,
    pub notes: Vec<String>,
    pub features: Option<(FeatureMap, Array2<f64>)>,
    /// Whether `op` already carries its output side (the exact solve): `Lg W`, the training
    /// outputs' score rows, or `Yᵀ W` for the closed-form pre-image.
    pub folded: bool,
}

/// The training rows and kernels a solve works on.
pub(super) struct Inputs<'a> {
    pub problem: &'a Problem,
    pub x: ArrayView2<'a, f64>,
    pub y: ArrayView2<'a, f64>,
    pub(crate) out_kernel: Kernel,
    pub ovk: Ovk,
    pub cfg: &'a KdeConfig,
}

/// The exact solve: K and L as n×n Grams, the Sylvester equation in K's eigenbasis.
pub(super) fn exact(on: &Inputs<'_>, obs: &mut dyn Observer, clock: &Clock) -> Result<Solved> {
    let n = on.x.nrows();
    let (held, freed) = super::exact_half_matrices(on.ovk);
    let count = (held + freed).div_ceil(2);
    check_fits(
        dense_bytes(n, n).saturating_mul(count),
        &format!(
            "the exact KDE solve on {n} training rows (about {count} n×n matrices); use \
             --low-rank M1,M2"
        ),
    )?;
    obs.phase(Phase::Gram, None);
    let k = gram(&on.problem.kernel, on.x)?;
    let lg = gram(&on.out_kernel, on.y)?;
    check_cancel(obs)?;
    obs.phase(Phase::Decomposition, None);
    // With the training outputs as candidates the scores are `Lg W k_x`: the solve folds Lg
    // into W's left factor, and Lg is not kept for the model.
    let side = if on.cfg.preimage == Preimage::Candidates && on.cfg.candidates.is_none() {
        solve::Side::GramScore
    } else {
        solve::Side::Score
    };
    // The closed form needs only `Yᵀ W` (m×n): with m < n the solve forms it in place of W's
    // n×n left factor, skipping its last n×n products.
    let fold =
        (on.cfg.preimage == Preimage::ClosedForm && on.y.ncols() < n).then(|| on.y.to_owned());
    let folded = side == solve::Side::GramScore || fold.is_some();
    // One-shot O(n³) work: on its own thread, so a cancel returns at once.
    let (lambda, ovk) = (on.cfg.lambda, on.ovk);
    let (sol, u) = interruptible(&|| obs.is_cancelled(), move || {
        let ke = solve::input_eigen(k.view())?;
        drop(k); // the solve works in K's eigenbasis: one n×n less at its peak
        let yt = fold.as_ref().map(|y| y.t());
        let sol = solve::solve_scores(ovk, &ke, lg, lambda, side, yt)?;
        Ok((sol, ke.vectors))
    })?;
    ensure_finite("objective", sol.objective)?;
    obs.record(&TraceRecord {
        iter: 1,
        objective: sol.objective,
        residual: Some(sol.residual),
        lambda: Some(lambda),
        elapsed_ms: clock.ms(),
        ..Default::default()
    });
    let route = match sol.route {
        solve::Route::Symmetric => "symmetric",
        solve::Route::Schur => "schur",
    };
    Ok(Solved {
        op: ScoreOperator {
            c0: 0.0,
            left: sol.left,
            right: Some(u.reversed_axes()),
        },
        objective: Some(sol.objective),
        solver: json!({
            "solver": "exact-sylvester",
            "route": route,
            "backward_error": sol.backward_error,
        }),
        matrices: Vec::new(),
        notes: vec![
            "exact solve: the score operator W = Tα/n is saved with the model, factored as \
             score_left·score_right (score_right = Uᵀ, K's eigenvectors); α itself is not \
             formed"
                .into(),
        ],
        features: None,
        folded,
    })
}

/// The factored solve: incomplete Cholesky factors of K (rank M1) and of L (rank M2; none for
/// the identity operator), then the small system of `lowrank`.
pub(super) fn factored(
    on: &Inputs<'_>,
    plan: FactorPlan,
    obs: &mut dyn Observer,
) -> Result<Solved> {
    let (p, n, ovk) = (on.problem, on.x.nrows(), on.ovk);
    let started = std::time::Instant::now();
    let a = match plan.input {
        Route::Primal => InputFactor::linear(on.x),
        Route::LowRank {
            rank, landmarks, ..
        } => factor_observed(&p.kernel, on.x, rank, landmarks, p.seed, obs)?,
        Route::Exact | Route::Krylov => {
            return Err(OvkError::internal("kde: a factor plan on the exact route"))
        }
    };
    let landmarks = a.how.unwrap_or_default();
    // The identity kernel's operator needs no output factor.
    let b = if ovk == Ovk::Identity {
        None
    } else {
        Some(factor_observed(
            &on.out_kernel,
            on.y,
            plan.m2,
            landmarks,
            p.seed ^ OUTPUT_SEED,
            obs,
        )?)
    };
    let b_z = b.map_or_else(|| Array2::zeros((n, 0)), |f| f.z);
    let route = if plan.input == Route::Primal {
        "primal"
    } else {
        "low_rank"
    };
    let summary = FactorSummary::of(route, &a, started.elapsed().as_secs_f64());
    check_cancel(obs)?;
    obs.phase(Phase::Decomposition, None);
    let op = lowrank::solve_low_rank(ovk, a.z.view(), b_z.view(), on.cfg.lambda)?;
    check_cancel(obs)?;
    let mut matrices = vec![("score_left".to_string(), op.left.clone())];
    if let Some(r) = &op.right {
        matrices.push(("score_right".to_string(), r.clone()));
    }
    let solver = json!({
        "solver": "incomplete-cholesky",
        "rank_input": a.rank(),
        "rank_output": (ovk != Ovk::Identity).then_some(b_z.ncols()),
        "rank_input_requested": a.requested,
        "rank_output_requested": (ovk != Ovk::Identity).then_some(plan.m2),
        "input_factor": summary.to_json(),
    });
    Ok(Solved {
        op,
        // No trace record: its objective would be a made-up number.
        objective: None,
        solver,
        matrices,
        notes: vec![
            "low-rank solve: the objective is not evaluated (it would need n×n matrices)".into(),
        ],
        features: Some((a.map, a.z)),
        folded: false,
    })
}
