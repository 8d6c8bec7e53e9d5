//! Low-rank output kernel learning (Dinuzzo & Fukumizu, ACML 2011): learns `L = B Bᵀ` of rank
//! ≤ p with the coefficients, by their Algorithm 1 on eq. (4), run in the row space of the
//! outputs so that m = 10⁵ outputs fit (docs/methods.md §2).

mod algorithm;
mod certificate;
mod path;
mod qn;
mod reduced;

pub use algorithm::{solve, Fitted, Progress, Settings, Solver};
pub use certificate::{certify, Certificate};
pub use path::{lambda_grid, parse_ranks, run_path, PathPoint, PathRun, Validation};
pub use qn::value_and_gradient;
pub use reduced::{AStep, Factor, Reduced, Solution};

use ndarray::Axis;
use serde_json::{json, Value as Json};

use super::input::{factor_peak_bytes, Basis, InputSpectrum, Route};
use super::params::{common, ParamDefault, ParamKind, ParamSpec};
use super::{Fit, Method, Observer, Params, Phase, Problem};
use crate::kernels::{check_fits, dense_bytes};
use crate::linalg::matmul;
use crate::methods::{mats, ProblemShape};
use crate::{OvkError, Result};

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

const PARAMS: &[ParamSpec] = &[
    SOLVER,
    LAMBDA,
    LAMBDA_PATH,
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
        let input = InputSpectrum::build(
            route,
            &problem.kernel,
            x.view(),
            y.view(),
            problem.seed,
            obs,
        )?;
        let factor = input.basis.factor_summary().map(|f| f.to_json());
        let red = Reduced::from_input(input)?;
        let alpha = red.alpha;
        if alpha <= 0.0 {
            return Err(OvkError::input(
                "lowrank-okl: YᵀKY = 0 (all targets zero, or orthogonal to the kernel's range): \
                 nothing to learn",
            ));
        }

        let bound = red.rank_k.min(m);
        let mut notes = Vec::new();
        let ranks = match (&sweep, rank) {
            (Some(list), _) => list.clone(),
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
        // The constraint is rank L ≤ p, and every stationary B already has rank ≤ rank K and
        // ≤ m: a larger p is inactive, so it is fitted at the bound (the same solution), not
        // refused — `--rank 50` on a kernel of numerical rank 15 means "at most 50".
        if let Some(&asked) = ranks.iter().filter(|&&p| p > bound).max() {
            notes.push(format!(
                "rank p = {asked} is above min(rank K = {}, m = {m}) = {bound}, which bounds the \
                 rank of every stationary B: fitted at p = {bound}, the same solution (rank K is \
                 the input kernel's numerical rank on the {ell} training rows; a narrower \
                 Gaussian kernel, smaller --sigma, has a higher one)",
                red.rank_k
            ));
        }
        let ranks: Vec<usize> = {
            let mut seen = Vec::new();
            for p in ranks.into_iter().map(|p| p.min(bound).max(1)) {
                if !seen.contains(&p) {
                    seen.push(p);
                }
            }
            seen
        };

        let validation = if problem.x_test.nrows() > 0 {
            Some(Validation::new(
                &red,
                &problem.kernel,
                x.view(),
                problem.x_test.view(),
                problem.y_test.view(),
            )?)
        } else {
            None
        };
        if validation.is_none() && ranks.len() > 1 {
            return Err(OvkError::input(
                "lowrank-okl: rank_sweep picks p by validation MSE, but there is no validation \
                 part (set --test-fraction above 0)",
            ));
        }
        let lambdas = match fixed_lambda {
            Some(l) => vec![l],
            None => lambda_grid(alpha, n_lambda),
        };
        if fixed_lambda.is_none() && validation.is_none() && lambdas.len() > 1 {
            notes.push(
                "no validation part: the path's last (smallest) λ was chosen; set \
                 --test-fraction above 0 to choose λ by validation MSE"
                    .into(),
            );
        }

        let settings = Settings {
            solver,
            ..Settings::new(tol, max_iter)
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
        // Records come per iteration and the iteration count per λ is unknown: no total.
        obs.phase(Phase::Iterating, None);
        let mut prog = Progress::new(obs);
        let mut sweep_rows = Vec::new();
        let mut best: Option<(usize, PathRun)> = None;
        let mut total_iterations = 0;
        for &p in &ranks {
            let run = run_path(
                &red,
                p,
                &lambdas,
                warm,
                &settings,
                validation.as_ref(),
                &mut prog,
            )?;
            total_iterations += run.iterations;
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
        let chosen = run.points[run.best].clone();
        let fitted = &run.best_fit;

        let escapes: usize = run.points.iter().map(|pt| pt.certificate.escapes).sum();
        if escapes > 0 {
            notes.push(format!(
                "{escapes} saddle escape(s) on the path at p = {p}: a warm start stopped at a \
                 stationary point with ‖CᵀKC‖₂ > 1 and B rank-deficient; B ← B + τ u vᵀ moved \
                 it off (docs/methods.md §2)"
            ));
        }
        if validation.is_some() && (lambdas.len() > 1 || ranks.len() > 1) {
            // The paper's protocol (its "validation" set is the held-out part); say so, since
            // the test line then reports the part the choice was made on.
            notes.push(format!(
                "λ = {:.4e}{} was chosen by MSE on the held-out rows, so the test metrics are \
                 optimistic; for an unbiased figure fix --lambda from `ovk sweep --cv K` or \
                 score on a separate file",
                chosen.lambda,
                if ranks.len() > 1 {
                    format!(" and p = {p}")
                } else {
                    String::new()
                }
            ));
        }
        let unconverged = run.points.iter().filter(|pt| !pt.converged).count();
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
        let mut fit = Fit::new(red.basis.model(problem.kernel, x, red.expansion(sol)));
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
        if ranks.len() > 1 {
            d.insert("rank_sweep".into(), Json::Array(sweep_rows));
        }
        if let Some(f) = factor {
            d.insert("input_factor".into(), f);
        }
        d.insert("validation_mse".into(), json!(chosen.validation_mse));
        d.insert("train_mse".into(), json!(chosen.train_mse));
        fit.notes = notes;
        Ok(fit)
    }
}
