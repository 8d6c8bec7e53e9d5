//! Low-rank output kernel learning (Dinuzzo & Fukumizu, ACML 2011): learns `L = B Bᵀ` of rank
//! ≤ p with the coefficients, by their Algorithm 1 on eq. (4), run in the row space of the
//! outputs so that m = 10⁵ outputs fit (docs/methods.md §2).

mod algorithm;
mod certificate;
mod path;
mod qn;
mod reduced;
mod select;
mod steps;

pub use algorithm::Solver;
pub use algorithm::{solve, Fitted, Progress, Settings};
pub use certificate::Certificate;
pub(crate) use path::parse_ranks;
pub use path::PathPoint;
pub use path::PathRun;
pub use path::{lambda_grid, Validation};
pub use qn::value_and_gradient;
pub use reduced::AStep;
pub use reduced::Solution;
pub use reduced::{Factor, Reduced};

use super::input::InputSpectrum;
use super::input::{exact_spectrum_bytes, factor_peak_bytes, spectrum_bytes, Route};
use super::params::{common, MethodConfig, ParamDefault, ParamKind, ParamSpec};
use super::{Fit, HeldOut, Method, Observer, Params, Problem};
use crate::kernels::{check_fits, dense_bytes};
use crate::methods::{mats, ProblemShape};
use crate::util::choice::Choice;
use crate::Result;
use select::Plan;
pub use select::TrainSplit;

/// Low-rank output kernel learning (Dinuzzo & Fukumizu 2011): L = BBᵀ of rank p along a λ path.
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
    kind: ParamKind::Choice(Solver::NAMES),
    default: ParamDefault::Text(Solver::Qn.name()),
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

/// lowrank-okl's hyperparameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LowRankConfig {
    /// How B is found at one λ (qn or bcd).
    pub solver: Solver,
    /// A fixed λ; `None` runs the λ path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<f64>,
    /// Number of log-spaced λ values on the path (when `lambda` is `None`).
    pub lambda_path: usize,
    /// Share of the training rows held back to choose λ (and p) on the path.
    pub val_fraction: f64,
    /// `None`: min(m, 10).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// Relative stopping tolerance of the solver at each λ.
    pub tol: f64,
    /// Iterations allowed per λ.
    pub max_iter: usize,
    /// Start each λ from the previous λ's B (else from I_{m×p}).
    pub warm_start: bool,
    /// The ranks to try, parsed (`parse_ranks`); they override `rank`.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "ranks_as_list"
    )]
    pub rank_sweep: Option<Vec<usize>>,
}

impl MethodConfig for LowRankConfig {
    fn from_params(params: &Params) -> Result<Self> {
        Ok(LowRankConfig {
            solver: params.choice(&SOLVER)?,
            lambda: params.opt_f64(&LAMBDA)?,
            lambda_path: params.usize(&LAMBDA_PATH)?,
            val_fraction: params.f64(&VALIDATION_FRACTION)?,
            rank: params.opt_usize(&RANK)?,
            tol: params.f64(&common::TOL)?,
            max_iter: params.usize(&MAX_ITER)?,
            warm_start: params.bool(&WARM_START)?,
            rank_sweep: params
                .opt_text(&RANK_SWEEP)?
                .map(|s| parse_ranks(&s))
                .transpose()?,
        })
    }
}

impl LowRankConfig {
    /// Whether the path chooses λ or p (a λ path, or a sweep over several ranks).
    fn chooses(&self) -> bool {
        self.rank_sweep.as_ref().is_some_and(|s| s.len() > 1)
            || (self.lambda.is_none() && self.lambda_path > 1)
    }

    /// The largest rank p the fit may try (the default is 10).
    fn largest_rank(&self) -> usize {
        match &self.rank_sweep {
            Some(ranks) => ranks.iter().copied().max().unwrap_or(1),
            None => self.rank.unwrap_or(10),
        }
    }

    fn settings(&self) -> Settings {
        Settings {
            solver: self.solver,
            ..Settings::new(self.tol, self.max_iter.max(1))
        }
    }

    fn plan(&self, settings: Settings) -> Plan<'_> {
        Plan {
            sweep: self.rank_sweep.as_deref(),
            rank: self.rank,
            fixed_lambda: self.lambda,
            n_lambda: self.lambda_path,
            warm: self.warm_start,
            settings,
        }
    }
}

/// lowrank-okl on a factor's streamed sums (`train::pipeline::stream`): `all` over every
/// training row; `held`, the fit and validation parts' sums, when the path chooses λ or p.
pub(crate) fn fit_streamed(
    problem: &Problem,
    all: InputSpectrum,
    held: Option<HeldOut>,
    params: &Params,
    obs: &mut dyn Observer,
) -> Result<Fit> {
    let cfg = LowRankConfig::from_params(params)?;
    if all.yt.ncols() == 0 {
        return Err(crate::OvkError::input("lowrank-okl: there are no outputs"));
    }
    let settings = cfg.settings();
    let mut notes = Vec::new();
    let mut prog = Progress::new(obs);
    let plan = cfg.plan(settings);
    let chosen = steps::choose_streamed(all, held, &plan, cfg.val_fraction, &mut notes, &mut prog)?;
    notes.push(steps::stopping_rule(cfg.solver, cfg.tol));
    let no_rows = ndarray::Array2::zeros((0, problem.x.ncols()));
    steps::assemble(
        problem,
        no_rows.view(),
        chosen,
        &settings,
        settings.max_iter,
        notes,
    )
}

/// Bytes a streamed fit holds on r factor columns and m outputs: the spectra of every row's
/// and of the fit part's sums, the validation part's sums and terms, each r×m, and the krr
/// baseline's; B, A and the L-BFGS pairs as in memory; never m×m beyond the saved L.
pub(crate) fn streamed_fit_bytes(r: usize, m: usize, params: &Params) -> Result<u64> {
    let cfg = LowRankConfig::from_params(params)?;
    let saved_l = m.min(MAX_SAVED_OUTPUT_KERNEL);
    Ok(mats(12, r, m) + mats(24, m.max(r), cfg.largest_rank().min(m)) + mats(1, saved_l, saved_l))
}

/// The share of the training rows a streamed fit holds back to choose λ or p on, or `None`
/// when it fits one (λ, p).
pub(crate) fn streamed_validation(params: &Params) -> Result<Option<f64>> {
    let cfg = LowRankConfig::from_params(params)?;
    Ok(cfg.chooses().then_some(cfg.val_fraction))
}

/// A rank sweep as the list `parse_ranks` reads back ("2,5,10").
fn ranks_as_list<S: serde::Serializer>(
    ranks: &Option<Vec<usize>>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    let list: Vec<String> = ranks.iter().flatten().map(usize::to_string).collect();
    s.serialize_str(&list.join(","))
}

/// `output_kernel` (m×m) is saved only up to this many outputs.
pub(crate) const MAX_SAVED_OUTPUT_KERNEL: usize = 2000;

impl Method for LowRankOkl {
    fn name(&self) -> &'static str {
        super::MethodName::LowRankOkl.name()
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

    fn row_copy_bytes(&self, s: &ProblemShape, _: &Params) -> Result<u64> {
        // On a factor `peak_bytes` counts the rows' copies; the exact route's model keeps
        // them (copied once, `LabeledPart::into_owned` or `to_owned`).
        Ok(match self.input_route(s)?.factor_columns(s.d) {
            Some(_) => 0,
            None => mats(1, s.n_labeled, s.d + s.m),
        })
    }
    fn peak_bytes(&self, s: &ProblemShape, params: &Params) -> Result<u64> {
        let cfg = LowRankConfig::from_params(params)?;
        let (l, m) = (s.n_labeled, s.m);
        let factor = self.input_route(s)?.factor_columns(s.d);
        let p = cfg.largest_rank().min(m);
        let saved_l = m.min(MAX_SAVED_OUTPUT_KERNEL);
        // K and its eigendecomposition with Y, its rotation and the model's ℓ×m blocks; or the
        // factor and its spectrum (the same `InputSpectrum` okl builds, whose rotation is r×m)
        // with the labeled part's copy when some rows are unlabeled, and the fit and
        // validation parts' when the path chooses (measured on delicious, m = 983: eight ℓ×m
        // blocks had read 1.67× the peak); B, A and the L-BFGS pairs (r×p, m×p); never m×m
        // beyond the saved L.
        let kernel_part = match factor {
            Some(c) => {
                let parts = mats(u64::from(cfg.chooses()), l, s.d + m);
                factor_peak_bytes(l, c, m, s.n_test)
                    + spectrum_bytes(c)
                    + s.labeled_part_bytes()
                    + parts
            }
            // Beside K's spectrum and the test rows' kernel: the outputs in its eigenbasis
            // (UᵀY and its copies, three ℓ×m: from m = 10 to 100 the measured peaks grew by
            // 2.8–2.9 ℓ×m at ℓ = 1000 and 2000, where eight had been counted), then the
            // reduction to their row space of r = min(ℓ, m) columns (`Reduced::from_input`):
            // Q_m (m×r), Rᵀ and its √s-scaled copy (ℓ×r each), and α's r×r eigenproblem. At
            // m = 1000, ℓ = 1000 those r-sized blocks had gone uncounted (estimate 0.91× peak).
            None => {
                let r = l.min(m);
                exact_spectrum_bytes(l)
                    + mats(1, s.n_test, l)
                    + mats(3, l, m)
                    + mats(1, m, r)
                    + mats(2, l, r)
                    + mats(4, r, r)
            }
        };
        Ok(kernel_part + mats(24, m.max(l), p) + mats(1, saved_l, saved_l))
    }
    fn memory_advice(&self) -> &'static str {
        "use fewer training points (--test-fraction, or subsample the file): lowrank-okl \
         already avoids m×m matrices"
    }

    fn fit(&self, problem: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let cfg = LowRankConfig::from_params(params)?;
        let max_iter = cfg.max_iter.max(1);
        let part = steps::training_rows(problem)?;
        let (x, y) = (part.x(), part.y());
        let (ell, m) = y.dim();
        let route = self.input_route(&ProblemShape::of(problem))?;
        let side = route.factor_columns(x.ncols()).unwrap_or(ell);
        check_fits(
            dense_bytes(ell, side) * 3 + dense_bytes(ell, m) * 4,
            "lowrank-okl (the input kernel or its factor, eigenvectors and the ℓ×m factors)",
        )?;
        let settings = cfg.settings();
        // Where λ and p are chosen: a validation part of the training rows, or the held-out
        // rows the user named (--select-on test; the paper's protocol).
        let split = match (&problem.holdout, cfg.chooses()) {
            (None, true) => Some(TrainSplit::draw(ell, cfg.val_fraction, problem.seed)?),
            _ => None,
        };

        let mut notes = Vec::new();
        let mut prog = Progress::new(obs);
        let plan = cfg.plan(settings);
        let on = steps::Rows {
            problem,
            route,
            x,
            y,
        };
        let chosen = match &split {
            None => steps::choose_on_training_rows(&on, &plan, &mut notes, &mut prog)?,
            Some(split) => steps::choose_on_validation(
                &on,
                split,
                &plan,
                cfg.val_fraction,
                &mut notes,
                &mut prog,
            )?,
        };
        notes.push(steps::stopping_rule(cfg.solver, cfg.tol));
        steps::assemble(problem, x, chosen, &settings, max_iter, notes)
    }
}
