//! The steps of one low-rank OKL fit: the training rows, the choice of (λ, p) on a path — on
//! the training rows themselves, on the held-out rows, or on a validation part followed by a
//! refit on every row — the notes that explain the choice, and the `Fit` the session saves.

use ndarray::{s, ArrayView2};
use serde_json::{json, Value as Json};

use super::algorithm::{solve, Fitted, Progress, Settings, Solver};
use super::path::{PathPoint, PathRun, Validation};
use super::reduced::{Factor, Reduced};
use super::select::{reduce, reduce_input, route_for_rows, select, Plan, Selection, TrainSplit};
use super::MAX_SAVED_OUTPUT_KERNEL;
use crate::linalg::{matmul, select_rows};
use crate::methods::details::key;
use crate::methods::input::{Basis, InputSpectrum, Route};
use crate::methods::HeldOut;
use crate::methods::{Coef, Fit, LabeledPart, Problem};
use crate::{OvkError, Result};

/// The labelled training rows (X, Y), refused when Y is empty or not finite.
pub(super) fn training_rows(problem: &Problem) -> Result<LabeledPart<'_>> {
    // copied only when some rows are unlabeled: delicious' 12 920 × (500 + 983) training rows
    // are 146 MiB
    let part = problem.labeled_part();
    if part.x().nrows() == 0 {
        return Err(OvkError::input("lowrank-okl: no labeled training rows"));
    }
    let y = part.y();
    if y.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::input(
            "lowrank-okl: the training targets contain NaN or infinite values",
        ));
    }
    if y.ncols() == 0 {
        return Err(OvkError::input("lowrank-okl: there are no outputs"));
    }
    Ok(part)
}

/// The rows a fit learns from and the input route it takes.
pub(super) struct Rows<'a> {
    pub problem: &'a Problem,
    pub route: Route,
    pub x: ArrayView2<'a, f64>,
    pub y: ArrayView2<'a, f64>,
}

/// The path's outcome: the reduced problem on every training row, its factor's summary, the
/// selection, and — when the choice was made on a validation part — the refit at it.
pub(super) struct Chosen {
    red: Reduced,
    factor: Option<Json>,
    selection: Selection,
    refit: Option<(usize, Fitted)>,
    chose_on_test: Option<String>,
}

/// Run the path on every training row; λ and p are chosen on the held-out rows when the user
/// named them (--select-on test), else not chosen at all (one λ, one rank).
pub(super) fn choose_on_training_rows(
    on: &Rows<'_>,
    plan: &Plan<'_>,
    notes: &mut Vec<String>,
    prog: &mut Progress<'_>,
) -> Result<Chosen> {
    let (red, factor) = reduce(on.route, on.problem, on.x, on.y, prog)?;
    let validation = match &on.problem.holdout {
        Some(h) => Some(Validation::new(
            &red,
            &on.problem.kernel,
            on.x,
            h.x.view(),
            h.y.view(),
        )?),
        None => None,
    };
    let selection = select(&red, plan, validation.as_ref(), notes, prog)?;
    let mut chose_on_test = None;
    if validation.is_some() && selection.chose {
        chose_on_test = Some(format!("{} chosen", selection.describe()));
        notes.push(format!(
            "{} chosen by MSE on the test rows (--select-on test, the paper's protocol), so \
             the test metrics are optimistic",
            selection.describe()
        ));
    }
    Ok(Chosen {
        red,
        factor,
        selection,
        refit: None,
        chose_on_test,
    })
}

/// Run the path on the fit part, choose (λ, p) on the validation part, then refit on every
/// training row from the chosen B. The fit part's K is decomposed first and dropped before
/// the whole training set's, so the peak stays one decomposition.
pub(super) fn choose_on_validation(
    on: &Rows<'_>,
    split: &TrainSplit,
    plan: &Plan<'_>,
    val_fraction: f64,
    notes: &mut Vec<String>,
    prog: &mut Progress<'_>,
) -> Result<Chosen> {
    let (red_fit, validation) = {
        let x_fit = select_rows(on.x.view(), &split.fit);
        let y_fit = select_rows(on.y.view(), &split.fit);
        let fit_route = route_for_rows(on.route, split.fit.len(), on.x.ncols());
        let (red_fit, _) = reduce(fit_route, on.problem, x_fit.view(), y_fit.view(), prog)?;
        let validation = Validation::new(
            &red_fit,
            &on.problem.kernel,
            x_fit.view(),
            select_rows(on.x.view(), &split.val).view(),
            select_rows(on.y.view(), &split.val).view(),
        )?;
        (red_fit, validation)
    };
    let part = format!("--val-fraction {val_fraction}");
    let reduce_all = |prog: &mut Progress<'_>| reduce(on.route, on.problem, on.x, on.y, prog);
    choose_then_refit(red_fit, validation, reduce_all, plan, &part, notes, prog)
}

/// Choose (λ, p) on the fit part's reduction scored by the validation part, drop both, then
/// refit on every training row's reduction (`reduce_all`) from the chosen B projected onto its
/// row space, which never raises g (docs/methods.md §2). `part` says how the validation part
/// was drawn, for the note.
fn choose_then_refit(
    red_fit: Reduced,
    validation: Validation,
    reduce_all: impl FnOnce(&mut Progress<'_>) -> Result<(Reduced, Option<Json>)>,
    plan: &Plan<'_>,
    part: &str,
    notes: &mut Vec<String>,
    prog: &mut Progress<'_>,
) -> Result<Chosen> {
    let val_rows = validation.rows();
    let selection = select(&red_fit, plan, Some(&validation), notes, prog)?;
    let b = red_fit.factor_b(&selection.run.best_fit.solution);
    drop((red_fit, validation));

    let (red, factor) = reduce_all(prog)?;
    // K of all rows has at least the fit part's numerical rank, so p ≤ the bound here too;
    // the clamp only guards a numerically degenerate case.
    let p = selection.p.min(red.rank_k.min(red.m)).max(1);
    let lambda = selection.run.points[selection.run.best].lambda;
    prog.start_fit();
    let bhat = matmul(red.q_m.t(), b.slice(s![.., ..p]));
    let fitted = solve(&red, Factor::Reduced(bhat), p, lambda, &plan.settings, prog)?;
    prog.finish_lambda(None, fitted.certificate.certified);
    let ell = red.ell();
    notes.push(format!(
        "{} chosen by MSE on a validation part of {val_rows} of the {ell} training rows \
         ({part}), the path fitted on the other {}; the model is then refitted on all {ell} \
         rows at that choice, so the test metrics are unbiased",
        selection.describe(),
        ell - val_rows
    ));
    Ok(Chosen {
        red,
        factor,
        selection,
        refit: Some((p, fitted)),
        chose_on_test: None,
    })
}

/// The streamed route's path (`train::pipeline::stream`), from a factor's sums: on the sums
/// over every training row when nothing is chosen; else on the fit part's sums, each λ scored
/// by the validation part's (`Validation::from_sums`), then refitted on every row's sums.
pub(super) fn choose_streamed(
    all: InputSpectrum,
    held: Option<HeldOut>,
    plan: &Plan<'_>,
    val_fraction: f64,
    notes: &mut Vec<String>,
    prog: &mut Progress<'_>,
) -> Result<Chosen> {
    let Some(held) = held else {
        let (red, factor) = reduce_input(all)?;
        let selection = select(&red, plan, None, notes, prog)?;
        return Ok(Chosen {
            red,
            factor,
            selection,
            refit: None,
            chose_on_test: None,
        });
    };
    let (red_fit, _) = reduce_input(held.fit)?;
    let validation = Validation::from_sums(&red_fit, &held.val)?;
    let part = format!(
        "--val-fraction {val_fraction}; each training row's part drawn from a hash of its index \
         and the seed"
    );
    let reduce_all = |_: &mut Progress<'_>| reduce_input(all);
    choose_then_refit(red_fit, validation, reduce_all, plan, &part, notes, prog)
}

/// The note that states the solver's stopping rule.
pub(super) fn stopping_rule(solver: Solver, tol: f64) -> String {
    match solver {
        Solver::Bcd => format!(
            "stopping rule: ‖B − B_p‖_F < δ with δ = tol·max(1, ‖B‖_F) = {tol:e}·max(1, ‖B‖_F) \
             (the paper prints \"≥\", a typo)"
        ),
        Solver::Qn => format!(
            "solver qn: L-BFGS on g(B) = min_A Q(A, B); stopping rule ‖∇g(B)‖_F = \
             ‖(CᵀKC)B − B‖_F < {tol:e}·max(1, ‖B‖_F)"
        ),
    }
}

/// Notes on the path: saddle escapes, λ values that hit the iteration cap, and a chosen λ
/// that Lemma 8 does not certify.
fn path_notes(
    run: &PathRun,
    refit: Option<&Fitted>,
    chosen: &PathPoint,
    p: usize,
    settings: &Settings,
    max_iter: usize,
    notes: &mut Vec<String>,
) {
    let escapes: usize = run.points.iter().map(|pt| pt.certificate.escapes).sum();
    if escapes > 0 {
        notes.push(format!(
            "{escapes} saddle escape(s) on the path at p = {p}: a warm start stopped at a \
             stationary point with ‖CᵀKC‖₂ > 1 and B rank-deficient; B ← B + τ u vᵀ moved it \
             off (docs/methods.md §2)"
        ));
    }
    let unconverged = run.points.iter().filter(|pt| !pt.converged).count()
        + usize::from(refit.is_some_and(|f| !f.converged));
    if unconverged > 0 {
        notes.push(format!(
            "{unconverged} λ value(s) reached max_iter = {max_iter} before the tolerance"
        ));
    }
    let cert = &chosen.certificate;
    if !cert.certified {
        let why = if cert.rank_constraint_active(settings.certificate_tol) {
            format!(
                "the rank constraint is active (‖CᵀKC‖₂ = {:.4} > 1 with B of full rank {p}): \
                 the global optimum of the trace-penalised problem has rank > {p}",
                cert.top_eigenvalue
            )
        } else {
            format!(
                "residual ‖(CᵀKC)B − B‖/‖B‖ = {:.2e}, ‖CᵀKC‖₂ = {:.6}",
                cert.residual, cert.top_eigenvalue
            )
        };
        notes.push(format!(
            "the chosen λ = {:.4e} is not certified globally optimal (Lemma 8): {why}",
            chosen.lambda
        ));
    }
}

/// The model at the choice (the refit's where there was one), its matrices and details.
pub(super) fn assemble(
    problem: &Problem,
    x: ArrayView2<f64>,
    chosen: Chosen,
    settings: &Settings,
    max_iter: usize,
    mut notes: Vec<String>,
) -> Result<Fit> {
    let m = problem.y.ncols();
    let ell = chosen.red.ell();
    let Chosen {
        red,
        factor,
        selection,
        refit,
        chose_on_test,
    } = chosen;
    let Selection {
        p,
        run,
        sweep_rows,
        iterations: path_iterations,
        ..
    } = selection;
    let p = refit.as_ref().map_or(p, |&(p_refit, _)| p_refit);
    let refit = refit.map(|(_, f)| f);
    let mut chosen = run.points[run.best].clone();
    let fitted = match &refit {
        Some(f) => {
            // The path's row keeps its validation MSE; the model's figures are the refit's.
            chosen.objective = f.objective;
            chosen.train_mse = f.fit_sq / (ell * m) as f64;
            chosen.converged = f.converged;
            chosen.certificate = f.certificate.clone();
            f
        }
        None => &run.best_fit,
    };
    let total_iterations = path_iterations + refit.as_ref().map_or(0, |f| f.iterations);
    path_notes(
        &run,
        refit.as_ref(),
        &chosen,
        p,
        settings,
        max_iter,
        &mut notes,
    );

    let sol = &fitted.solution;
    let a = red.coefficients(sol);
    let b = red.factor_b(sol);
    // A streamed fit keeps no training row to embed.
    let embedding = if (p == 2 || p == 3) && x.nrows() > 0 {
        Some(red.embedding(sol, x)?)
    } else {
        None
    };
    let coef_name = match red.basis {
        Basis::Eigen(_) => "coefficients",
        Basis::Factor(_) => "feature_coefficients",
    };
    // `A Bᵀ` stays factored where smaller (m = 10⁵ outputs: ℓ×p and m×p, not ℓ×m).
    let coef = Coef::product(a.clone(), b.clone());
    let model_rows = red.basis.model_rows(x);
    let mut fit = Fit::new(red.basis.model(problem.kernel, model_rows, coef, None));
    if m <= MAX_SAVED_OUTPUT_KERNEL {
        fit.matrices
            .push(("output_kernel".into(), matmul(b.view(), b.t())));
    }
    if let Some(e) = embedding {
        fit.matrices.push(("embedding".into(), e));
    }
    fit.matrices.push(("factor_b".into(), b));
    fit.matrices.push((coef_name.into(), a));
    fit.iterations = total_iterations;
    fit.converged = chosen.converged;
    fit.objective = Some(chosen.objective);

    let d = &mut fit.details;
    d.insert(key::LAMBDA.into(), json!(chosen.lambda));
    d.insert(key::RANK.into(), json!(p));
    d.insert("alpha".into(), json!(red.alpha));
    d.insert("rank_k".into(), json!(red.rank_k));
    d.insert("row_space_dim".into(), json!(red.r()));
    d.insert(
        "certificate".into(),
        serde_json::to_value(&chosen.certificate).unwrap_or(Json::Null),
    );
    d.insert(
        key::PATH.into(),
        serde_json::to_value(&run.points).unwrap_or(Json::Null),
    );
    if sweep_rows.len() > 1 {
        d.insert("rank_sweep".into(), Json::Array(sweep_rows));
    }
    if let Some(f) = factor {
        d.insert(key::INPUT_FACTOR.into(), f);
    }
    d.insert("validation_mse".into(), json!(chosen.validation_mse));
    d.insert("train_mse".into(), json!(chosen.train_mse));
    fit.notes = notes;
    fit.chose_on_test = chose_on_test;
    Ok(fit)
}
