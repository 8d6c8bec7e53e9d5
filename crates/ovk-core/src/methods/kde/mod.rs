//! Operator-valued kernel dependency estimation (Kadri, Ghavamzadeh, Preux, ICML 2013):
//! operator-valued kernel ridge from the inputs into the feature space of an output kernel l,
//! then a pre-image. The n²×n² system of their Proposition 1 is solved exactly in O(n³) as a
//! Sylvester equation (`solve`), or through incomplete Cholesky factors for large n
//! (`lowrank`). See docs/methods.md §3.

mod candidates;
pub mod lowrank;
pub mod preimage;
mod routes;
pub mod score;
pub mod solve;

use std::path::Path;

use ndarray::{Array2, ArrayView2};
use serde_json::json;

use super::input::{factor_peak_bytes, Route};
use super::params::{common, MethodConfig, ParamDefault, ParamKind, ParamSpec};
use super::{mats, mats_freed, Clock, Fit, Method, Observer, Params, Problem, ProblemShape};
use crate::data::Task;
use crate::kernels::{input_factor, median_distance, InputRank, Kernel, Landmarks, Sigma};
use crate::linalg::select_rows;
use crate::util::choice::{choice_enum, Choice};
use crate::{ErrorKind, OvkError, Result};
use preimage::{KdeModel, Outputs, Preimage};
use solve::{Ovk, OvkKind};

pub(crate) use preimage::{model_from_parts, KIND};

/// Operator-valued kernel dependency estimation (Kadri et al. 2013): regression into the output kernel's feature space, then a pre-image.
pub struct Kde;

/// The operator C of the operator-valued kernel k(x,x')·C (identity, covariance, conditional covariance).
pub const OVK: ParamSpec = ParamSpec {
    key: "ovk",
    label: "operator kernel",
    help: "operator-valued kernel k(x,x')·C: identity (C = I: ridge (k + λI)⁻¹ of \
           eq. 3, the KDE of Cortes et al.), covariance (C = Ĉ_YY, eq. 5) or conditional covariance (C = Ĉ_YY|X, eq. 7)",
    unit: "",
    kind: ParamKind::Choice(OvkKind::NAMES),
    default: ParamDefault::Text(OvkKind::Conditional.name()),
};

pub(crate) const EPSILON: ParamSpec = ParamSpec {
    key: "epsilon",
    label: "conditional ε",
    help: "regulariser ε of the conditional covariance Ĉ_YY|X = Ĉ_YY − Ĉ_YX(Ĉ_XX + εI)⁻¹Ĉ_XY \
           (not reported by the paper)",
    unit: "ε",
    kind: ParamKind::POSITIVE,
    default: ParamDefault::Float(0.1),
};

choice_enum! {
    /// The scalar kernel l on the outputs.
    pub enum OutputKernel: "output_kernel" {
        /// l(y, y') = ⟨y, y'⟩.
        Linear = "linear",
        /// l(y, y') = exp(−‖y − y'‖² / (2σ²)).
        Gaussian = "gaussian",
    }
}

pub(crate) const OUTPUT_KERNEL: ParamSpec = ParamSpec {
    key: "output_kernel",
    label: "output kernel",
    help: "scalar kernel l on the outputs whose feature space the model predicts into",
    unit: "",
    kind: ParamKind::Choice(OutputKernel::NAMES),
    default: ParamDefault::Text(OutputKernel::Gaussian.name()),
};

pub(crate) const OUTPUT_SIGMA: ParamSpec = ParamSpec {
    key: "output_sigma",
    label: "output σ",
    help: "width σ_l of the Gaussian output kernel and of the RBF loss: a positive number, or \
           'median' (median distance between training outputs)",
    unit: "σ_l",
    kind: ParamKind::Text,
    default: ParamDefault::Text("median"),
};

pub(crate) const PREIMAGE: ParamSpec = ParamSpec {
    key: "preimage",
    label: "pre-image",
    help: "candidates: argmin over a candidate set of l(y,y) − 2·score(x,y); closed-form: the \
           weighted sum of training outputs (linear output kernel only)",
    unit: "",
    kind: ParamKind::Choice(Preimage::NAMES),
    default: ParamDefault::Text(Preimage::Candidates.name()),
};

pub(crate) const CANDIDATES: ParamSpec = ParamSpec {
    key: "candidates",
    label: "candidates file",
    help: "CSV/Parquet file of pre-image candidates with the output columns (default: the \
           training outputs)",
    unit: "",
    kind: ParamKind::Text,
    default: ParamDefault::None,
};

pub(crate) const LOW_RANK: ParamSpec = ParamSpec {
    key: "low_rank",
    label: "low rank M1,M2",
    help: "'M1,M2': ranks of the Nyström (pivoted Cholesky) factors of the input and output Gram \
           matrices (for large n; --input-rank R sets M1 = R, and M2 = R unless given here); \
           absent: the exact O(n³) Sylvester solve",
    unit: "",
    kind: ParamKind::Text,
    default: ParamDefault::None,
};

const PARAMS: &[ParamSpec] = &[
    common::LAMBDA,
    OVK,
    EPSILON,
    OUTPUT_KERNEL,
    OUTPUT_SIGMA,
    PREIMAGE,
    CANDIDATES,
    LOW_RANK,
];

/// n×n matrices alive at the exact solve's peak, the process's own memory and the model's
/// copies included, in halves: K, Lg, K's eigenvectors and the eigensolver's workspace, then
/// the score operator's left factor (its right factor is K's eigenvectors); the covariance
/// kernel reduces Lg in its own memory and adds `C = QᵀU`, X and `T̂X`; the conditional one
/// `U D^{1/2}` (or `Lg U D^{1/2}`), `D^{1/2} G D^{1/2}` reduced in its own memory, C, X and
/// `T̂X`. Fitted to `ovk bench one`'s VmHWM at n = 1000–4000 (2026-12-02, after the solve
/// stopped forming α): estimate ÷ peak 1.05–1.12 (covariance) and 0.98–1.04 (conditional).
/// Before, the conditional kernel's eigendecomposition of `D^{1/2} G D^{1/2}` held two
/// halves more.
fn exact_half_matrices(ovk: Ovk) -> (u64, u64) {
    // (held at the peak, freed temporaries glibc may keep resident: `mats_freed`)
    match ovk {
        Ovk::Identity => (12, 0),
        Ovk::Covariance => (12, 1),
        Ovk::Conditional { .. } => (15, 1),
    }
}
/// Seed offset of the output factor's landmarks (the input factor uses the problem's seed).
const OUTPUT_SEED: u64 = 0x6f75_7470_7574;

/// The factored solve's two factors: the input factor's route (primal or low rank) and the
/// output Gram matrix's rank M2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FactorPlan {
    input: Route,
    m2: usize,
}

impl FactorPlan {
    fn m1(&self, d: usize) -> usize {
        self.input.factor_columns(d).unwrap_or(0)
    }
}

/// Which solve a fit takes: `--low-rank M1,M2` or a factor route from `--input-rank`
/// (M1 = R, M2 = R unless `--low-rank` gives it) select the factored solve; an explicit
/// `--input-rank R` that disagrees with M1 is refused. None: the exact solve.
/// `strict` false (memory estimates of a hypothetical `--input-rank`): the explicit rank wins.
fn factor_plan(
    route: Route,
    low_rank: Option<(usize, usize)>,
    s: &ProblemShape,
    strict: bool,
) -> Result<Option<FactorPlan>> {
    let explicit = matches!(s.input_rank, InputRank::Rank(_));
    Ok(match (route, low_rank) {
        (Route::Exact | Route::Krylov, None) => None,
        (Route::Exact | Route::Krylov, Some((m1, m2))) => Some(FactorPlan {
            input: Route::LowRank {
                rank: m1.min(s.n_labeled.max(1)),
                landmarks: s.landmarks,
                automatic: false,
            },
            m2,
        }),
        (
            Route::LowRank {
                rank,
                landmarks,
                automatic,
            },
            lr,
        ) => {
            let m1 = match lr {
                Some(_) if explicit && !strict => rank,
                Some((m1, _)) if explicit && m1 != rank => {
                    return Err(OvkError::input(format!(
                        "--input-rank {rank} and --low-rank {m1},… ask for different input \
                         ranks; give one of them"
                    )))
                }
                Some((m1, _)) => m1.min(s.n_labeled.max(1)),
                None => rank,
            };
            Some(FactorPlan {
                input: Route::LowRank {
                    rank: m1,
                    landmarks,
                    automatic: automatic && lr.is_none(),
                },
                m2: lr.map_or(rank, |(_, m2)| m2),
            })
        }
        (Route::Primal, lr) => Some(FactorPlan {
            input: Route::Primal,
            m2: match (lr, s.input_rank) {
                (Some((_, m2)), _) => m2,
                (None, InputRank::Rank(r)) => r,
                (None, _) => s.d,
            },
        }),
    })
}

impl Method for Kde {
    fn name(&self) -> &'static str {
        super::MethodName::Kde.name()
    }
    fn summary(&self) -> &'static str {
        "kernel dependency estimation with operator-valued kernels: structured outputs by \
         ridge into an output kernel's feature space and a pre-image"
    }
    fn citation(&self) -> &'static str {
        "Kadri, Ghavamzadeh, Preux — A generalized kernel approach to structured output \
         learning, ICML 2013"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn input_factor(&self) -> bool {
        true
    }
    fn exact_eighs(&self) -> f64 {
        // the identity operator's exact solve: measured 1.4–1.7 eighs at n = 2000–4000
        // (`ovk bench scaling`, 2026-11-24); the covariance operators cost more
        1.4
    }
    fn input_route(&self, s: &ProblemShape) -> Result<Route> {
        // A linear kernel is taken in the primal only when a rank was asked for: the primal
        // factor still needs a factored output Gram matrix, an approximation.
        Ok(match s.route(s.n_labeled)? {
            Route::Primal if !matches!(s.input_rank, InputRank::Rank(_)) => Route::Exact,
            r => r,
        })
    }
    fn peak_bytes(&self, s: &ProblemShape, params: &Params) -> Result<u64> {
        let n = s.n_labeled;
        // Pre-images are scored 512 rows at a time against the n training outputs.
        let predict = mats(3, 512, n) + mats(4, n, s.m);
        let cfg = KdeConfig::from_params(params)?;
        Ok(
            match factor_plan(self.input_route(s)?, cfg.low_rank, s, false)? {
                None => {
                    let (held, freed) = exact_half_matrices(cfg.operator());
                    (mats(held, n, n) + mats_freed(freed, n, n)) / 2 + predict
                }
                Some(plan) => {
                    let (m1, m2) = (plan.m1(s.d).min(n), plan.m2.min(n));
                    // Measured: at the solve's and the model's peak, A and, for the covariance
                    // kernels, B with B̃, H's temporaries, the operator, its saved copies and the
                    // candidates' folded factor (c = n rows by default); the identity kernel's
                    // operator [−A/nλ | A] is twice A's width instead. Products stopped holding a
                    // column-major copy of themselves (2026-11-28): then n = 900 / 3000 rows,
                    // M = 300 / 800, m = 3 peaked at 20–127 MiB (conditional; 64–76 MiB from
                    // run to run at 3000 rows and M = 300), 17–117 (covariance) and 24–183
                    // (identity), which these counts cover at 0.9–1.4×, never below.
                    let held = match cfg.ovk {
                        OvkKind::Identity => mats(8, n, m1),
                        _ => mats(1, n, m1) + mats(4, n, m2),
                    };
                    let r = m1.max(m2);
                    let build = factor_peak_bytes(n, m1, s.m, s.n_test) + mats(1, n, m2);
                    // The median heuristic's pair distances (σ_l), on at most 2000 rows.
                    let pairs = mats(1, n.min(2000), n.min(2000)) / 2;
                    build.max(held + mats(8, r, r)) + pairs + mats(1, 512, n) + mats(4, n, s.m)
                }
            },
        )
    }
    fn memory_advice(&self) -> &'static str {
        "use the low-rank solve (--low-rank M1,M2, e.g. 200,200, or --input-rank R), or fewer \
         training points"
    }
    fn supports(&self, task: Task) -> bool {
        task == Task::Regression
    }

    fn fit(&self, p: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let clock = Clock::start();
        let cfg = KdeConfig::from_params(params)?;
        let rows = p.labeled_rows();
        if rows.len() < 2 {
            return Err(OvkError::input(
                "kde needs at least 2 labeled training rows",
            ));
        }
        let x = select_rows(p.x.view(), &rows);
        let y = select_rows(p.y.view(), &rows);
        let sigma_l = resolve_output_sigma(cfg.output_sigma, y.view())?;
        let out_kernel = match cfg.output_kernel {
            OutputKernel::Linear => Kernel::Linear,
            OutputKernel::Gaussian => Kernel::Gaussian { sigma: sigma_l },
        };
        let ovk = cfg.operator();
        let candidates = match &cfg.candidates {
            Some(path) => candidates::read_candidates(Path::new(path), &p.output_names)?,
            None => y.clone(),
        };
        if candidates.ncols() != y.ncols() {
            return Err(OvkError::input(format!(
                "the candidates have {} columns but the outputs have {}",
                candidates.ncols(),
                y.ncols()
            )));
        }

        let plan = factor_plan(
            self.input_route(&ProblemShape::of(p))?,
            cfg.low_rank,
            &ProblemShape::of(p),
            true,
        )?;
        let on = routes::Inputs {
            problem: p,
            x: x.view(),
            y: y.view(),
            out_kernel,
            ovk,
            cfg: &cfg,
        };
        let solved = match plan {
            None => routes::exact(&on, obs, &clock)?,
            Some(plan) => routes::factored(&on, plan, obs)?,
        };
        let routes::Solved {
            op,
            objective,
            solver,
            matrices: fit_matrices,
            notes,
            features,
            folded,
        } = solved;

        let outputs = Outputs {
            y_train: y,
            kernel: out_kernel,
            preimage: cfg.preimage,
            candidates,
        };
        let model = match features {
            None => KdeModel::on_kernel(p.kernel, x, op, outputs, folded)?,
            Some((map, z)) => KdeModel::on_features(map, z.view(), op, outputs)?,
        };
        let mut details = serde_json::Map::new();
        details.insert("ovk".into(), json!(ovk.name()));
        details.insert(
            "epsilon".into(),
            match ovk {
                Ovk::Conditional { epsilon } => json!(epsilon),
                _ => serde_json::Value::Null,
            },
        );
        details.insert("output_kernel".into(), json!(cfg.output_kernel.name()));
        details.insert("output_sigma".into(), json!(sigma_l));
        details.insert("preimage".into(), json!(cfg.preimage.name()));
        if let serde_json::Value::Object(m) = solver {
            details.extend(m);
        }
        let mut fit = Fit::new(Box::new(model));
        fit.iterations = 1;
        fit.objective = objective;
        fit.matrices = fit_matrices;
        fit.details = details;
        fit.notes = notes;
        Ok(fit)
    }
}

/// kde's hyperparameters.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KdeConfig {
    /// Ridge weight λ.
    pub lambda: f64,
    /// The operator C of the operator-valued kernel.
    pub ovk: OvkKind,
    /// ε of the conditional covariance (read, and unused, for the other operators).
    pub epsilon: f64,
    /// The scalar kernel l on the outputs.
    pub output_kernel: OutputKernel,
    /// Width of the output kernel l (or the median heuristic).
    #[serde(serialize_with = "as_text")]
    pub output_sigma: Sigma,
    /// How a prediction is mapped back from feature space to an output.
    pub preimage: Preimage,
    /// A candidates file; `None`: the training outputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<String>,
    /// The ranks (M1, M2) of the factored solve; `None`: exact (unless `--input-rank`).
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "ranks_as_text"
    )]
    pub low_rank: Option<(usize, usize)>,
}

impl KdeConfig {
    /// The operator-valued kernel's operator, with ε for the conditional covariance.
    pub fn operator(&self) -> Ovk {
        Ovk::new(self.ovk, self.epsilon)
    }
}

impl MethodConfig for KdeConfig {
    fn from_params(params: &Params) -> Result<Self> {
        let invalid = |msg: &str| OvkError::input_as(ErrorKind::InvalidParameter, msg);
        let lambda = params.f64(&common::LAMBDA)?;
        let epsilon = params.f64(&EPSILON)?;
        let ovk = params.choice(&OVK)?;
        let output_kernel = params.choice(&OUTPUT_KERNEL)?;
        let output_sigma = Sigma::parse(&params.text(&OUTPUT_SIGMA)?)
            .map_err(|e| e.reworded(|m| format!("output_sigma: {m}")))?;
        let preimage = params.choice(&PREIMAGE)?;
        if preimage == Preimage::ClosedForm && output_kernel != OutputKernel::Linear {
            return Err(invalid(
                "preimage: the closed-form pre-image needs a linear output kernel (with a \
                 Gaussian output kernel use --preimage candidates, or --output-kernel linear)",
            ));
        }
        let candidates = params
            .opt_text(&CANDIDATES)?
            .filter(|s| !s.trim().is_empty());
        if candidates.is_some() && preimage == Preimage::ClosedForm {
            return Err(invalid(
                "candidates: a candidates file is only used by --preimage candidates",
            ));
        }
        let low_rank = match params.opt_text(&LOW_RANK)? {
            Some(s) if !s.trim().is_empty() => Some(parse_ranks(&s)?),
            _ => None,
        };
        let cfg = KdeConfig {
            lambda,
            ovk,
            epsilon,
            output_kernel,
            output_sigma,
            preimage,
            candidates,
            low_rank,
        };
        Ok(cfg)
    }
}

fn as_text<S: serde::Serializer>(
    v: &impl std::fmt::Display,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.collect_str(v)
}

fn ranks_as_text<S: serde::Serializer>(
    ranks: &Option<(usize, usize)>,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    match ranks {
        Some((m1, m2)) => s.collect_str(&format_args!("{m1},{m2}")),
        None => s.serialize_none(),
    }
}

/// "M1,M2" → (M1, M2), both ≥ 1.
fn parse_ranks(s: &str) -> Result<(usize, usize)> {
    let bad = || {
        OvkError::input_as(
            ErrorKind::InvalidParameter,
            format!(
                "low_rank: expected two positive whole numbers 'M1,M2' (input and output ranks), \
             got '{s}'"
            ),
        )
    };
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != 2 {
        return Err(bad());
    }
    let m1: usize = parts[0].parse().map_err(|_| bad())?;
    let m2: usize = parts[1].parse().map_err(|_| bad())?;
    if m1 == 0 || m2 == 0 {
        return Err(bad());
    }
    Ok((m1, m2))
}

/// σ_l: the given number, or the median distance between training outputs.
pub(crate) fn resolve_output_sigma(sigma: Sigma, y: ArrayView2<f64>) -> Result<f64> {
    match sigma {
        Sigma::Value(v) => Ok(v),
        Sigma::Median => {
            let m = median_distance(y);
            if m > 0.0 && m.is_finite() {
                Ok(m)
            } else {
                Err(OvkError::input(
                    "output_sigma: the median distance between training outputs is 0; give \
                     --output-sigma a number",
                ))
            }
        }
    }
}

/// A Nyström factor `K ≈ G Gᵀ` of the Gram matrix of `kernel` on the rows of `x` with at most
/// `rank` columns, from the shared randomly pivoted Cholesky (`kernels::input_factor`, seed 0).
pub fn incomplete_cholesky(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    rank: usize,
) -> Result<Array2<f64>> {
    Ok(input_factor(kernel, x, rank, Landmarks::Rpcholesky, 0, &mut |_| Ok(()))?.z)
}

/// Mean over rows of `‖Φ(y) − Φ(ŷ)‖² = 2 − 2 exp(−‖y − ŷ‖²/(2σ_l²))`.
pub fn rbf_loss(y: ArrayView2<f64>, yhat: ArrayView2<f64>, sigma_l: f64) -> f64 {
    let n = y.nrows().max(1) as f64;
    y.rows()
        .into_iter()
        .zip(yhat.rows())
        .map(|(a, b)| {
            let d2: f64 = a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum();
            2.0 - 2.0 * (-d2 / (2.0 * sigma_l * sigma_l)).exp()
        })
        .sum::<f64>()
        / n
}

/// Mean squared error over all entries.
pub fn mse(y: ArrayView2<f64>, yhat: ArrayView2<f64>) -> f64 {
    let cnt = (y.len()).max(1) as f64;
    (&y - &yhat).mapv(|v| v * v).sum() / cnt
}
