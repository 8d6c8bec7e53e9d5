//! Low-rank output kernel learning (Dinuzzo & Fukumizu, ACML 2011): learns `L = B Bᵀ` of rank
//! ≤ p with the coefficients, by their Algorithm 1 on eq. (4), run in the row space of the
//! outputs so that m = 10⁵ outputs fit (docs/methods.md §2).

mod algorithm;
mod certificate;
mod path;
mod qn;
mod reduced;
mod select;

pub use algorithm::{solve, Fitted, Progress, Settings, Solver};
pub use certificate::{certify, Certificate};
pub use path::{lambda_grid, parse_ranks, run_path, PathPoint, PathRun, Validation};
pub use qn::value_and_gradient;
pub use reduced::{AStep, Factor, Reduced, Solution};

use ndarray::{s, Axis};
use serde_json::{json, Value as Json};

use super::input::{factor_peak_bytes, Basis, Route};
use super::params::{common, ParamDefault, ParamKind, ParamSpec};
use super::{Coef, Fit, Method, Observer, Params, Problem};
use crate::kernels::{check_fits, dense_bytes};
use crate::linalg::matmul;
use crate::methods::{mats, ProblemShape};
use crate::{OvkError, Result};
pub use select::TrainSplit;
use select::{reduce, route_for_rows, select, Plan, Selection};

pub struct LowRankOkl;

const LAMBDA: ParamSpec = ParamSpec {
    help: "regularisation λ of eq. (4); leave it out to run a path of `lambda_path` values from \
           α = √‖YᵀKY‖₂ down to 10⁻⁵α and keep the best by validation MSE",
    default: ParamDefault::None,
    ..common::LAMBDA
};

const LAMBDA_PATH: ParamSpec = ParamSpec {
    key: "lambda_path",
    label: "λ path points",
    help: "number of log-spaced λ values on the path from α down to 10⁻⁵α (when λ is not given)",
    unit: "values",
    kind: ParamKind::Int { min: 1, max: 1000 },
    default: ParamDefault::Int(25),
};

const RANK: ParamSpec = ParamSpec {
    key: "rank",
    label: "rank",
    help: "rank p of the output kernel L = BBᵀ (B is m×p); default min(m, 10); at most \
           min(rank K, m)",
    unit: "p",
    kind: ParamKind::Int {
        min: 1,
        max: 1_000_000,
    },
    default: ParamDefault::None,
};

const MAX_ITER: ParamSpec = ParamSpec {
    help: "iteration cap per λ; a λ that reaches it is reported unconverged",
    ..common::MAX_ITER
};

const WARM_START: ParamSpec = ParamSpec {
    key: "warm_start",
    label: "warm start",
    help: "start each λ of the path from the previous λ's B (else from I_{m×p})",
    unit: "",
    kind: ParamKind::Bool,
    default: ParamDefault::Bool(true),
};

const RANK_SWEEP: ParamSpec = ParamSpec {
    key: "rank_sweep",
    label: "rank sweep",
    help: "ranks to try, e.g. 1..8, 1..40:5 or 2,5,10: runs the λ path at each p and keeps the \
           best (p, λ) by validation MSE (overrides `rank`)",
    unit: "p",
    kind: ParamKind::Text,
    default: ParamDefault::None,
};

const SOLVER: ParamSpec = ParamSpec {
    key: "solver",
    label: "solver",
    help: "qn: L-BFGS on g(B) = min_A Q(A, B), the coefficients eliminated (fast); bcd: the \
           paper's Algorithm 1, block coordinate descent (slow at small λ)",
    unit: "",
    kind: ParamKind::Choice(&["qn", "bcd"]),
    default: ParamDefault::Text("qn"),
};

const VALIDATION_FRACTION: ParamSpec = ParamSpec {
    key: "val_fraction",
    label: "validation part",
    help: "share of the training rows held back to choose λ (and p) on the path; the model is \
           then refitted on all training rows at the choice, so the test rows are touched only \
           to score it (with --select-on test the choice is made on the test rows instead: the \
           paper's protocol, whose test metrics are then marked optimistic)",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 0.9,
        min_open: true,
        max_open: false,
        log: false,
    },
    default: ParamDefault::Float(0.2),
};

const PARAMS: &[ParamSpec] = &[
    SOLVER,
    LAMBDA,
    LAMBDA_PATH,
    VALIDATION_FRACTION,
    RANK,
    common::TOL,
    MAX_ITER,
    WARM_START,
    RANK_SWEEP,
];

/// `output_kernel` (m×m) is saved only up to this many outputs.
const MAX_SAVED_OUTPUT_KERNEL: usize = 2000;

impl Method for LowRankOkl {
    fn name(&self) -> &'static str {
        "lowrank-okl"
    }
    fn summary(&self) -> &'static str {
        "low-rank output kernel learning: L = BBᵀ of rank p, scales to 10⁵ outputs, with a \
         certificate of global optimality"
    }
    fn citation(&self) -> &'static str {
        "Dinuzzo, Fukumizu — Learning low-rank output kernels, ACML 2011"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn input_factor(&self) -> bool {
        true
    }
    fn input_route(&self, s: &ProblemShape) -> Result<Route> {
        s.route(s.n_labeled)
    }

    fn peak_bytes(&self, s: &ProblemShape, params: &Params) -> Result<u64> {
        let r = params.resolve(PARAMS);
        let (l, m) = (s.n_labeled, s.m);
        let factor = self.input_route(s)?.factor_columns(s.d);
        let p = match r.opt_str("rank_sweep")? {
            Some(text) => parse_ranks(&text)?.into_iter().max().unwrap_or(1),
            None => r.opt_usize("rank")?.unwrap_or(10),
        }
        .min(m);
        let saved_l = m.min(MAX_SAVED_OUTPUT_KERNEL);
        // K and its eigendecomposition with the solver's copies and workspace (measured: about
        // 9 ℓ×ℓ, see tests/it/resource_limits.rs); Y, its rotation and the model's ℓ×m blocks;
        // B, A and the L-BFGS pairs (r×p, m×p); never m×m beyond the saved L.
        let kernel_part = match factor {
            Some(c) => factor_peak_bytes(l, c, m, s.n_test),
            None => mats(9, l, l) + mats(1, s.n_test, l),
        };
        Ok(kernel_part + mats(8, l, m) + mats(24, m.max(l), p) + mats(1, saved_l, saved_l))
    }
    fn memory_advice(&self) -> &'static str {
        "use fewer training points (--test-fraction, or subsample the file): lowrank-okl \
         already avoids m×m matrices"
    }

    fn fit(&self, problem: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let r = params.resolve(PARAMS);
        let fixed_lambda = r.opt_f64("lambda")?;
        let n_lambda = r.usize("lambda_path")?;
        let tol = r.f64("tol")?;
        let max_iter = r.usize("max_iter")?.max(1);
        let warm = r.bool("warm_start")?;
        let val_fraction = r.f64("val_fraction")?;
        let sweep = r
            .opt_str("rank_sweep")?
            .map(|s| parse_ranks(&s))
            .transpose()?;
        let rank = r.opt_usize("rank")?;
        let solver = match r.str("solver")?.as_str() {
            "bcd" => Solver::Bcd,
            _ => Solver::Qn,
        };

        let rows = problem.labeled_rows();
        if rows.is_empty() {
            return Err(OvkError::input("lowrank-okl: no labeled training rows"));
        }
        let x = problem.x.select(Axis(0), &rows);
        let y = problem.y.select(Axis(0), &rows);
        if y.iter().any(|v| !v.is_finite()) {
            return Err(OvkError::input(
                "lowrank-okl: the training targets contain NaN or infinite values",
            ));
        }
        let (ell, m) = y.dim();
        if m == 0 {
            return Err(OvkError::input("lowrank-okl: there are no outputs"));
        }
        let route = self.input_route(&ProblemShape::of(problem))?;
        let side = route.factor_columns(x.ncols()).unwrap_or(ell);
        check_fits(
            dense_bytes(ell, side) * 3 + dense_bytes(ell, m) * 4,
            "lowrank-okl (the input kernel or its factor, eigenvectors and the ℓ×m factors)",
        )?;
        let settings = Settings {
            solver,
            ..Settings::new(tol, max_iter)
        };
        let choosing =
            sweep.as_ref().is_some_and(|s| s.len() > 1) || (fixed_lambda.is_none() && n_lambda > 1);
        // Where λ and p are chosen: a validation part of the training rows, or the held-out
        // rows the user named (--select-on test; the paper's protocol).
        let split = match (&problem.holdout, choosing) {
            (None, true) => Some(TrainSplit::draw(ell, val_fraction, problem.seed)?),
            _ => None,
        };

        let mut notes = Vec::new();
        let mut chose_on_test = None;
        let mut prog = Progress::new(obs);
        let plan = Plan {
            sweep: sweep.as_deref(),
            rank,
            fixed_lambda,
            n_lambda,
            warm,
            settings,
        };
        // With a split the path runs on the fit part; its K is decomposed first and dropped
        // before the whole training set's, so the peak stays one decomposition.
        let (red, factor, selection, refit) = match &split {
            None => {
                let (red, factor) = reduce(route, problem, x.view(), y.view(), &mut prog)?;
                let validation = match &problem.holdout {
                    Some(h) => Some(Validation::new(
                        &red,
                        &problem.kernel,
                        x.view(),
                        h.x.view(),
                        h.y.view(),
                    )?),
                    None => None,
                };
                let selection = select(&red, &plan, validation.as_ref(), &mut notes, &mut prog)?;
                if validation.is_some() && selection.chose {
                    chose_on_test = Some(format!("{} chosen", selection.describe()));
                    notes.push(format!(
                        "{} chosen by MSE on the test rows (--select-on test, the paper's \
                         protocol), so the test metrics are optimistic",
                        selection.describe()
                    ));
                }
                (red, factor, selection, None)
            }
            Some(split) => {
                let (fit_rows, val_rows) = (split.fit.len(), split.val.len());
                let x_fit = x.select(Axis(0), &split.fit);
                let y_fit = y.select(Axis(0), &split.fit);
                let fit_route = route_for_rows(route, fit_rows, x.ncols());
                let (red_fit, _) =
                    reduce(fit_route, problem, x_fit.view(), y_fit.view(), &mut prog)?;
                let validation = Validation::new(
                    &red_fit,
                    &problem.kernel,
                    x_fit.view(),
                    x.select(Axis(0), &split.val).view(),
                    y.select(Axis(0), &split.val).view(),
                )?;
                let selection = select(&red_fit, &plan, Some(&validation), &mut notes, &mut prog)?;
                let b = red_fit.factor_b(&selection.run.best_fit.solution);
                drop((red_fit, validation, x_fit, y_fit));

                // The refit on every training row, from the chosen B (projected onto this
                // row space, which never raises g: docs/methods.md §2).
                let (red, factor) = reduce(route, problem, x.view(), y.view(), &mut prog)?;
                // K of all rows has at least the fit part's numerical rank, so p ≤ the bound
                // here too; the clamp only guards a numerically degenerate case.
                let p = selection.p.min(red.rank_k.min(m)).max(1);
                let lambda = selection.run.points[selection.run.best].lambda;
                prog.start_fit();
                let bhat = matmul(red.q_m.t(), b.slice(s![.., ..p]));
                let fitted = solve(&red, Factor::Reduced(bhat), p, lambda, &settings, &mut prog)?;
                prog.finish_lambda(None, fitted.certificate.certified);
                notes.push(format!(
                    "{} chosen by MSE on a validation part of {val_rows} of the {ell} training \
                     rows (--val-fraction {val_fraction}), the path fitted on the other \
                     {fit_rows}; the model is then refitted on all {ell} rows at that choice, \
                     so the test metrics are unbiased",
                    selection.describe()
                ));
                (red, factor, selection, Some((p, fitted)))
            }
        };
        notes.push(match solver {
            Solver::Bcd => format!(
                "stopping rule: ‖B − B_p‖_F < δ with δ = tol·max(1, ‖B‖_F) = \
                 {tol:e}·max(1, ‖B‖_F) (the paper prints \"≥\", a typo)"
            ),
            Solver::Qn => format!(
                "solver qn: L-BFGS on g(B) = min_A Q(A, B); stopping rule ‖∇g(B)‖_F = \
                 ‖(CᵀKC)B − B‖_F < {tol:e}·max(1, ‖B‖_F)"
            ),
        });
        let alpha = red.alpha;
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

        let escapes: usize = run.points.iter().map(|pt| pt.certificate.escapes).sum();
        if escapes > 0 {
            notes.push(format!(
                "{escapes} saddle escape(s) on the path at p = {p}: a warm start stopped at a \
                 stationary point with ‖CᵀKC‖₂ > 1 and B rank-deficient; B ← B + τ u vᵀ moved \
                 it off (docs/methods.md §2)"
            ));
        }
        let unconverged = run.points.iter().filter(|pt| !pt.converged).count()
            + usize::from(refit.as_ref().is_some_and(|f| !f.converged));
        if unconverged > 0 {
            notes.push(format!(
                "{unconverged} λ value(s) reached max_iter = {max_iter} before the tolerance"
            ));
        }
        let cert = &chosen.certificate;
        if !cert.certified {
            let why = if cert.rank_constraint_active(settings.certificate_tol) {
                format!(
                    "the rank constraint is active (‖CᵀKC‖₂ = {:.4} > 1 with B of full rank \
                     {p}): the global optimum of the trace-penalised problem has rank > {p}",
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

        let sol = &fitted.solution;
        let a = red.coefficients(sol);
        let b = red.factor_b(sol);
        let embedding = if p == 2 || p == 3 {
            Some(red.embedding(sol, x.view())?)
        } else {
            None
        };
        let coef_name = match red.basis {
            Basis::Eigen(_) => "coefficients",
            Basis::Factor(_) => "feature_coefficients",
        };
        // `A Bᵀ` stays factored where smaller (m = 10⁵ outputs: ℓ×p and m×p, not ℓ×m).
        let coef = Coef::product(a.clone(), b.clone());
        let mut fit = Fit::new(red.basis.model(problem.kernel, x, coef));
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
        d.insert("lambda".into(), json!(chosen.lambda));
        d.insert("rank".into(), json!(p));
        d.insert("alpha".into(), json!(alpha));
        d.insert("rank_k".into(), json!(red.rank_k));
        d.insert("row_space_dim".into(), json!(red.r()));
        d.insert(
            "certificate".into(),
            serde_json::to_value(cert).unwrap_or(Json::Null),
        );
        d.insert(
            "path".into(),
            serde_json::to_value(&run.points).unwrap_or(Json::Null),
        );
        if sweep_rows.len() > 1 {
            d.insert("rank_sweep".into(), Json::Array(sweep_rows));
        }
        if let Some(f) = factor {
            d.insert("input_factor".into(), f);
        }
        d.insert("validation_mse".into(), json!(chosen.validation_mse));
        d.insert("train_mse".into(), json!(chosen.train_mse));
        fit.notes = notes;
        fit.chose_on_test = chose_on_test;
        Ok(fit)
    }
}
