//! Choosing (p, λ): the λ path at each rank, scored on a validation part — either the held-out
//! test rows (the paper's protocol, which makes the test line optimistic) or a seeded share of
//! the training rows, after which the model is refitted on every training row at the choice.

use ndarray::ArrayView2;
use serde_json::{json, Value as Json};

use super::algorithm::{Progress, Settings};
use super::path::{lambda_grid, run_path, PathRun, Validation};
use super::reduced::Reduced;
use crate::methods::input::{InputSpectrum, Route};
use crate::methods::Problem;
use crate::util::rng::Rng;
use crate::{OvkError, Result};

/// The training rows split into the part the path is fitted on and the part that scores it.
pub struct TrainSplit {
    /// Training rows (indices into the problem's rows) the path is fitted on.
    pub fit: Vec<usize>,
    /// Training rows that score each λ of the path.
    pub val: Vec<usize>,
}

impl TrainSplit {
    /// A seeded share `fraction` of `ell` rows for validation; both parts non-empty.
    pub fn draw(ell: usize, fraction: f64, seed: u64) -> Result<Self> {
        let n_val = ((ell as f64) * fraction).round() as usize;
        if n_val == 0 || n_val >= ell {
            return Err(OvkError::input(format!(
                "lowrank-okl: --val-fraction {fraction} of {ell} training rows leaves \
                 {} for validation and {} to fit; both need at least one row",
                n_val,
                ell.saturating_sub(n_val)
            )));
        }
        // A stream of its own, so the split does not move when other draws change.
        let mut idx = Rng::new(seed ^ 0x7a11_da7e).sample(ell, ell);
        let mut val = idx.split_off(ell - n_val);
        idx.sort_unstable();
        val.sort_unstable();
        Ok(TrainSplit { fit: idx, val })
    }
}

/// The route for the fit part: a factor's rank cannot exceed its rows.
pub(crate) fn route_for_rows(route: Route, rows: usize, d: usize) -> Route {
    match route {
        Route::LowRank {
            rank,
            landmarks,
            automatic,
        } => Route::LowRank {
            rank: rank.min(rows),
            landmarks,
            automatic,
        },
        Route::Primal if d > rows => Route::Exact,
        other => other,
    }
}

/// Eigendecompose (or factor) K of `x` and reduce the outputs `y` (the O(ℓ³) or O(ℓr²) step).
pub fn reduce(
    route: Route,
    problem: &Problem,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
    prog: &mut Progress<'_>,
) -> Result<(Reduced, Option<Json>)> {
    let input = InputSpectrum::build(route, &problem.kernel, x, y, problem.seed, &mut *prog.obs)?;
    reduce_input(input)
}

/// Reduce a spectrum already built (in memory, or from a factor's streamed sums).
pub(crate) fn reduce_input(input: InputSpectrum) -> Result<(Reduced, Option<Json>)> {
    let factor = input.basis.factor_summary().map(|f| f.to_json());
    let red = Reduced::from_input(input)?;
    if red.alpha <= 0.0 {
        return Err(OvkError::input(
            "lowrank-okl: YᵀKY = 0 (all targets zero, or orthogonal to the kernel's range): \
             nothing to learn",
        ));
    }
    Ok((red, factor))
}

/// The ranks to try, each at most min(rank K, m), in first-seen order; notes say where a rank
/// was lowered.
fn ranks_for(
    red: &Reduced,
    sweep: Option<&[usize]>,
    rank: Option<usize>,
    notes: &mut Vec<String>,
) -> Vec<usize> {
    let m = red.m;
    let bound = red.rank_k.min(m);
    let asked = match (sweep, rank) {
        (Some(list), _) => list.to_vec(),
        (None, Some(p)) => vec![p],
        (None, None) => {
            let p = m.min(10).min(bound).max(1);
            if p < m.min(10) {
                notes.push(format!(
                    "default rank lowered to {p} = rank of K (numerical)"
                ));
            }
            vec![p]
        }
    };
    // The constraint is rank L ≤ p, and every stationary B already has rank ≤ rank K and ≤ m:
    // a larger p is inactive, so it is fitted at the bound (the same solution), not refused —
    // `--rank 50` on a kernel of numerical rank 15 means "at most 50".
    if let Some(&above) = asked.iter().filter(|&&p| p > bound).max() {
        notes.push(format!(
            "rank p = {above} is above min(rank K = {}, m = {m}) = {bound}, which bounds the rank \
             of every stationary B: fitted at p = {bound}, the same solution (rank K is the input \
             kernel's numerical rank on the {} training rows; a narrower Gaussian kernel, \
             smaller --sigma, has a higher one)",
            red.rank_k,
            red.ell()
        ));
    }
    let mut seen = Vec::new();
    for p in asked.into_iter().map(|p| p.min(bound).max(1)) {
        if !seen.contains(&p) {
            seen.push(p);
        }
    }
    seen
}

/// What the path is asked to do: the ranks (a sweep, one rank, or the default) and the λ values
/// (one fixed λ, or `n_lambda` from α down).
pub(crate) struct Plan<'a> {
    pub sweep: Option<&'a [usize]>,
    pub rank: Option<usize>,
    pub(crate) fixed_lambda: Option<f64>,
    pub n_lambda: usize,
    pub warm: bool,
    pub settings: Settings,
}

/// The winner of a rank sweep (or of the one path at a single rank).
pub(crate) struct Selection {
    pub p: usize,
    pub run: PathRun,
    /// One row per rank of a sweep, for `details["rank_sweep"]`.
    pub(crate) sweep_rows: Vec<Json>,
    pub iterations: usize,
    /// More than one (p, λ) was tried, so the validation part made a choice.
    pub chose: bool,
}

impl Selection {
    /// "λ = … was" or "λ = … and p = … were", for the notes.
    pub fn describe(&self) -> String {
        let lambda = self.run.points[self.run.best].lambda;
        if self.sweep_rows.len() > 1 {
            format!("λ = {lambda:.4e} and p = {} were", self.p)
        } else {
            format!("λ = {lambda:.4e} was")
        }
    }
}

/// Run the λ path at every rank of the plan and keep the best (p, λ) by validation MSE; without
/// validation, the last λ of the single rank (a sweep needs validation).
pub fn select(
    red: &Reduced,
    plan: &Plan<'_>,
    validation: Option<&Validation>,
    notes: &mut Vec<String>,
    prog: &mut Progress<'_>,
) -> Result<Selection> {
    let ranks = ranks_for(red, plan.sweep, plan.rank, notes);
    if validation.is_none() && ranks.len() > 1 {
        return Err(OvkError::input(
            "lowrank-okl: rank_sweep picks p by validation MSE, but there is no validation part \
             (set --val-fraction or --test-fraction above 0)",
        ));
    }
    let lambdas = match plan.fixed_lambda {
        Some(l) => vec![l],
        None => lambda_grid(red.alpha, plan.n_lambda),
    };
    if validation.is_none() && lambdas.len() > 1 {
        notes.push(
            "no validation part: the path's last (smallest) λ was chosen; set --val-fraction (or \
             --test-fraction) above 0 to choose λ by validation MSE"
                .into(),
        );
    }
    match ranks.len() * lambdas.len() {
        1 => prog.start_fit(),
        fits => prog.start_path(fits),
    }
    let mut sweep_rows = Vec::new();
    let mut best: Option<(usize, PathRun)> = None;
    let mut iterations = 0;
    for &p in &ranks {
        let run = run_path(
            red,
            p,
            &lambdas,
            plan.warm,
            &plan.settings,
            validation,
            prog,
        )?;
        iterations += run.iterations;
        let chosen = &run.points[run.best];
        sweep_rows.push(json!({
            "rank": p,
            "lambda": chosen.lambda,
            "validation_mse": chosen.validation_mse,
            "train_mse": chosen.train_mse,
            "iterations": run.iterations,
            "seconds": run.seconds,
            "certified": chosen.certificate.certified,
        }));
        let score = |r: &PathRun| r.points[r.best].validation_mse.unwrap_or(0.0);
        let better = match &best {
            None => true,
            Some((_, b)) => score(&run) < score(b),
        };
        if better {
            best = Some((p, run));
        }
    }
    let (p, run) = best.ok_or_else(|| OvkError::internal("lowrank-okl: no rank ran"))?;
    Ok(Selection {
        p,
        run,
        sweep_rows,
        iterations,
        chose: ranks.len() > 1 || lambdas.len() > 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_split_is_seeded_disjoint_and_covers_every_row() {
        let a = TrainSplit::draw(50, 0.2, 7).unwrap();
        let b = TrainSplit::draw(50, 0.2, 7).unwrap();
        assert_eq!((a.fit.len(), a.val.len()), (40, 10));
        assert_eq!((&a.fit, &a.val), (&b.fit, &b.val));
        let mut all: Vec<usize> = a.fit.iter().chain(&a.val).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..50).collect::<Vec<_>>());
        assert_ne!(TrainSplit::draw(50, 0.2, 8).unwrap().val, a.val);
    }

    #[test]
    fn a_split_that_leaves_a_part_empty_is_refused_naming_the_option() {
        let e = TrainSplit::draw(3, 0.1, 0).err().unwrap().to_string();
        assert!(e.contains("--val-fraction"), "{e}");
        assert!(TrainSplit::draw(2, 0.9, 0).is_err());
    }
}
