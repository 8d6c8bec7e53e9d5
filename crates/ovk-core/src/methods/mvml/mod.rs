//! Multi-view metric learning (Huusari, Kadri, Capponi, AISTATS 2018): a matrix-valued kernel
//! `W H A H Wᵀ` whose metric A (nv×nv) holds within- and between-view metrics, learned by
//! alternating the g-step (eq. 8), the A-step (eq. 9 or the block-sparse eq. 12) and the view
//! weights (eq. 10); optionally on block Nyström approximations of the views (eqs. 13–17).
//!
//! Several outputs (regression targets, classes one-vs-all, labels) are fitted independently,
//! each with its own A and w, in lockstep so that the trace shows one summed objective; the
//! Grams, their factorisations and the Nyström basis are computed once and shared.
//!
//! `fit` runs the steps in order: the views' kernels and features (`grams`), then the default
//! route (`spectral`: A₀ = I, eq. 9, fixed w — projected gradient with a line search, every
//! evaluation a small Woodbury solve in a basis shared by all outputs) or the general route
//! (`solver`: covariance start, block-sparse eq. 12, learned w), each round a g-step, an
//! A-step and a w-step, until the relative change of both the objective and A falls below
//! tol; then the model and what is saved (`report`).

pub mod basis;
pub mod grams;
pub mod metric;
pub mod model;
pub mod progress;
mod report;
pub mod solver;
pub mod spectral;
mod width;

use ndarray::{s, Array1, Array2, Axis};

use super::input::{Route, AUTO_EXACT_MAX, AUTO_RANK};
use super::params::{common, MethodConfig, ParamDefault, ParamKind, ParamSpec};
use super::{
    check_cancel, ensure_finite, mats, Clock, Fit, Method, Observer, Params, Phase, Problem,
    ProblemShape, TraceRecord,
};
use crate::kernels::{check_fits, dense_bytes, gram, nystrom, InputRank, Kernel, NystromFactor};
use crate::linalg::select_rows;
use crate::util::choice::{choice_enum, Choice};
use crate::util::rng::Rng;
use crate::{OvkError, Result};

use grams::Features;
use model::{MvmlModel, ViewPredictor};
use progress::{Output, Progress, Round, MAX_HALVINGS};

pub(crate) use model::{model_from_parts, KIND};

/// Multi-view metric learning (Huusari et al.): a learned metric A between views' kernels.
pub struct Mvml;

/// A's condition number is kept below this (docs/methods.md §5: A drifts towards rank one); on the
/// default route, A's eigenvalues are kept at or above λ_max(A₀)/COND_CAP instead.
pub(crate) const COND_CAP: f64 = 1e8;
/// Metrics with a larger side than this are not saved densely (nv×nv at n = 1000, v = 6 is
/// 288 MB); their block norms always are.
pub(crate) const MAX_SAVED_SIDE: usize = 2000;

/// The metric penalty weight η.
pub const ETA: ParamSpec = ParamSpec {
    key: "eta",
    label: "metric penalty",
    help: "weight η of the metric penalty η‖A‖²_F (or η Σ‖A_lm‖_F with --sparse)",
    unit: "η",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1e12,
        min_open: false,
        max_open: false,
        log: true,
    },
    default: ParamDefault::Float(0.01),
};
/// The first step μ of the A-step's line search.
pub const MU: ParamSpec = ParamSpec {
    key: "mu",
    label: "step size",
    help:
        "first step μ of the A-step's line search (later rounds start from the last accepted step)",
    unit: "μ",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1e6,
        min_open: true,
        max_open: false,
        log: true,
    },
    default: ParamDefault::Float(0.5),
};
pub(crate) const SPARSE: ParamSpec = switch(
    "sparse",
    "block-sparse A",
    "proximal block-sparse A-step (eq. 12, penalty η Σ‖A_lm‖_F) instead of eq. (9)",
);
pub(crate) const LEARN_WEIGHTS: ParamSpec = switch(
    "learn_weights",
    "learn view weights",
    "learn the view weights w by least squares (eq. 10); otherwise w = 1/v",
);
choice_enum! {
    /// The initial metric A₀.
    pub enum Init: "init" {
        /// Within-view blocks only.
        Identity = "identity",
        /// Every view-pair block the identity.
        Covariance = "covariance",
    }
}

choice_enum! {
    /// How the A-step moves.
    pub enum AStepRule: "a_step" {
        /// To the minimiser of (7) over A ⪰ εI (A₀ = I, eq. 9 route only).
        Optimal = "optimal",
        /// Projected gradient steps with a line search.
        Gradient = "gradient",
    }
}

choice_enum! {
    /// The heuristic for each view's kernel width when σ is the median.
    pub enum ViewSigma: "view_sigma" {
        /// The median pairwise distance of the view's inputs.
        Median = "median",
        /// The mean pairwise distance of the view's inputs.
        Mean = "mean",
    }
}

choice_enum! {
    /// The coordinates the metric A acts on.
    pub enum MetricSpace: "metric_space" {
        /// The Gram features (Ψ_lΨ_lᵀ = K_l², eq. 7 as written).
        Gram = "gram",
        /// A square root of each Gram (Ψ_lΨ_lᵀ = K_l), the paper's Nyström variable Ã.
        Root = "root",
    }
}

pub(crate) const INIT: ParamSpec = choice(
    "init",
    "initial metric",
    "A₀: identity (within-view only) or covariance (every view-pair block the identity)",
    Init::NAMES,
);
pub(crate) const FIXED_METRIC: ParamSpec = switch(
    "fixed_metric",
    "fixed metric",
    "keep A = A₀ (the MVML_I / MVML_Cov baselines): only g (and w) are fitted",
);
/// The block Nyström fraction F (landmarks per view = ⌊F·n⌋).
pub const NYSTROM: ParamSpec = ParamSpec {
    key: "nystrom",
    label: "Nyström fraction",
    help: "block Nyström approximation from p = ⌊F·n⌋ sampled training points (the same sample \
           for every view); absent = exact up to 5000 training rows, beyond them ⌊2000/v⌋ \
           landmarks per view (--input-rank exact keeps it exact)",
    unit: "F",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1.0,
        min_open: true,
        max_open: false,
        log: false,
    },
    default: ParamDefault::None,
};
/// The cap on alternating rounds (g, A, w).
pub const MAX_ITER: ParamSpec = ParamSpec {
    help: "cap on the alternating rounds (g, A, w); the fit stops unconverged (and says so) when reached",
    kind: ParamKind::Int { min: 1, max: 100_000 },
    default: ParamDefault::Int(50),
    ..common::MAX_ITER
};
pub(crate) const TOL: ParamSpec = ParamSpec {
    help: "stop when the relative changes of the objective of (7) and of A both fall below δ",
    default: ParamDefault::Float(1e-4),
    ..common::TOL
};
pub(crate) const A_STEP: ParamSpec = choice(
    "a_step",
    "A-step",
    "optimal: land on the minimiser of (7) over A ⪰ εI (closed form up to one scalar; \
     A₀ = I, eq. 9 route only); gradient: projected gradient steps with a line search",
    AStepRule::NAMES,
);
pub(crate) const VIEW_SIGMA: ParamSpec = choice(
    "view_sigma",
    "per-view σ",
    "heuristic for each view's kernel width when --sigma is 'median': median or mean pairwise distance",
    ViewSigma::NAMES,
);
pub(crate) const METRIC_SPACE: ParamSpec = choice(
    "metric_space",
    "metric coordinates",
    "gram: A acts on the Gram features (Ψ_lΨ_lᵀ = K_l², eq. 7 as written); root: on a \
     square root of each Gram (Ψ_lΨ_lᵀ = K_l) — the paper's Nyström variable Ã = NᵀAN, \
     also without Nyström, as scikit-multimodallearn penalises it (docs/mvml.md)",
    MetricSpace::NAMES,
);

/// An option that is off unless given.
const fn switch(key: &'static str, label: &'static str, help: &'static str) -> ParamSpec {
    ParamSpec {
        key,
        label,
        help,
        unit: "",
        kind: ParamKind::Bool,
        default: ParamDefault::Bool(false),
    }
}

/// A choice among words; the first is the default.
const fn choice(
    key: &'static str,
    label: &'static str,
    help: &'static str,
    options: &'static [&'static str],
) -> ParamSpec {
    ParamSpec {
        key,
        label,
        help,
        unit: "",
        kind: ParamKind::Choice(options),
        default: ParamDefault::Text(options[0]),
    }
}

const PARAMS: &[ParamSpec] = &[
    common::LAMBDA,
    ETA,
    MU,
    SPARSE,
    LEARN_WEIGHTS,
    INIT,
    FIXED_METRIC,
    NYSTROM,
    MAX_ITER,
    TOL,
    A_STEP,
    VIEW_SIGMA,
    METRIC_SPACE,
];

impl Method for Mvml {
    fn name(&self) -> &'static str {
        super::MethodName::Mvml.name()
    }
    fn summary(&self) -> &'static str {
        "multi-view metric learning: learns the within- and between-view metric A of a multi-view kernel"
    }
    fn citation(&self) -> &'static str {
        "Huusari, Kadri, Capponi — Multi-view metric learning in vector-valued kernel spaces, AISTATS 2018"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }
    fn multi_view(&self) -> bool {
        true
    }
    fn takes_input_rank(&self) -> bool {
        true
    }
    /// mvml approximates each view's Gram by its own block Nyström (`nystrom_choice`: a rank R
    /// is ⌊R/v⌋ landmarks per view), never through the shared factor of one input kernel.
    fn input_route(&self, _: &ProblemShape) -> Result<Route> {
        Ok(Route::Exact)
    }
    /// Block Nyström on p landmarks per view: per-view factors, a QR of the n×vp features and a
    /// vp×vp eigenproblem — a factor of its vp landmark columns, for the estimate.
    fn costed_route(&self, s: &ProblemShape, params: &Params) -> Result<Route> {
        let asked = MvmlConfig::from_params(params)?.nystrom;
        let v = s.views.max(1);
        Ok(match nystrom_choice(asked, s.input_rank, s.n_labeled, v) {
            Some(c) => Route::LowRank {
                rank: c.landmarks * v,
                landmarks: s.landmarks,
                automatic: false,
            },
            None => Route::Exact,
        })
    }
    fn exact_eighs(&self) -> f64 {
        2.0 // the eigendecomposition of S = Σ K_l² and the Grams' products (measured 1.9–2.1×)
    }

    fn peak_bytes(&self, s: &ProblemShape, params: &Params) -> Result<u64> {
        let cfg = MvmlConfig::from_params(params)?;
        let (n, v) = (s.n_labeled, s.views.max(1));
        let pairs = cfg.init == Init::Covariance;
        let products = if pairs { v * (v + 1) / 2 } else { v } as u64;
        let default_route = cfg.default_route();
        // A's low-rank part gains a term per round; the optimal A-step of the default route
        // lands in one round on a rank-one A per output (`spectral::optimal_metrics`).
        let optimal = default_route && cfg.a_step == AStepRule::Optimal && cfg.eta > 0.0;
        let t = if cfg.fixed_metric || optimal {
            1
        } else {
            cfg.max_iter.saturating_add(1)
        };
        let out = s.m as u64;
        // Every output's dense metric (vr×vr) is saved when small enough (moved into the fit,
        // held once).
        // root coordinates without Nyström are the block Nyström route on every training row
        let fraction = match nystrom_choice(cfg.nystrom, s.input_rank, n, v) {
            None if cfg.metric_space == MetricSpace::Root => Some(1.0),
            f => f.map(|c| c.fraction),
        };
        let r_view = match fraction {
            None => n,
            Some(f) => ((f * n as f64) as usize).max(1),
        };
        let saved = if small_enough(v * r_view) { out } else { 0 };
        let metrics = mats(saved, v * r_view, v * r_view);
        Ok(match fraction {
            // Exact: the v Grams, S, its unsymmetrised first sum and one product Ψ_lΨ_lᵀ
            // (basis.rs), then S's eigendecomposition: eigenvectors, faer's scratch (a copy
            // of S and two n×n blocks of divide and conquer) and their ndarray copy — v + 6
            // n×n in all (measured 8.4–9.6 n² at v = 3, n = 1000–4000, `ovk bench scaling`,
            // 2026-12-02; v + 7 read 1.12–1.21× the peak at n = 2000 and 4000 once the
            // eigensolver held fewer copies). The general route adds the products Ψ_l Ψ_mᵀ,
            // the dual matrix and its factor, and per output U_l, Ψ_l U_l (n×t) and C.
            None if default_route => mats(v as u64 + 6, n, n) + mats(3 * out, n * v, t),
            None => {
                mats(v as u64 + products + 9, n, n)
                    + mats(2 * v as u64, n, t).saturating_mul(out)
                    + mats(1, v * t, v * t).saturating_mul(out)
            }
            // Nyström: the features Ψ_l (n×p per view) and the thin basis's reflectors (n×vp),
            // held to the end, and two n×p while a view's factor N_l is built and turned into
            // Ψ_l (the kept columns of Ψ_w the QR starts from are freed before the peak):
            // 2v + 2 n×p, measured 7–8 n·p at v = 2 and 3 (`ovk bench scaling`, `ovk bench
            // lowrank`); per output vp×vp at most. The solve's four vp×vp are gone when the
            // saved metrics are formed: counted together they read 1.26× the peak at n = 4000,
            // m = 10 (2026-12-02).
            Some(f) => {
                let p = ((f * n as f64) as usize).max(1);
                mats(2 * v as u64 + 2, n, p)
                    + mats(4, v * p, v * p).max(metrics)
                    + mats(2, v * p, v * p).saturating_mul(if default_route { 0 } else { out })
                    + mats(3 * out, v * p, t)
                    // the identity between views in the views' coordinates (grams::CrossMaps)
                    + if pairs { mats((v * (v - 1) / 2) as u64, p, p) } else { 0 }
            }
        } + if fraction.is_some() { 0 } else { metrics }
            // predictions: a cross Gram per view against the training rows, or the landmarks
            + match fraction {
                None => mats(1, s.n_test, n),
                Some(_) => mats(1, s.n_test.max(n), r_view),
            })
    }
    fn memory_advice(&self) -> &'static str {
        "use fewer training points (--test-fraction, or subsample the file), --init identity \
         (fewer n×n products), or --nystrom F (n×p factors and vp×vp matrices instead of the \
         view Gram matrices)"
    }

    fn fit(&self, p: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let clock = Clock::start();
        let setup = Setup::read(p, params)?;
        // what was decided before any work (an automatic Nyström fraction) is said at once
        for msg in &setup.notes {
            obs.note(msg);
        }
        let views = view_features(p, &setup, obs)?;
        let y = select_rows(p.y.view(), &p.labeled_rows());
        let mut notes = setup.notes.clone();
        let run = if setup.default_route() {
            run_default(&views, &y, &setup, obs, &clock)?
        } else {
            run_general(&views, &y, &setup, obs, &clock)?
        };
        notes.extend(run.notes.iter().cloned());
        let model = build_model(p, &views, &run)?;
        let mut fit = Fit::new(Box::new(model));
        fit.iterations = run.rounds.iterations;
        fit.converged = run.rounds.converged;
        fit.objective = Some(run.rounds.objective);
        report::save(&mut fit, p, &setup, &views, run, &mut notes);
        for msg in &notes[setup.notes.len()..] {
            obs.note(msg);
        }
        fit.notes = notes;
        Ok(fit)
    }
}

/// The features no view holds: mvml's kernels are the views', so it never sees them.
fn outside_every_view(p: &Problem) -> Option<String> {
    let mut used = vec![false; p.x.ncols()];
    for c in p.views.iter().flat_map(|v| &v.columns) {
        if let Some(u) = used.get_mut(*c) {
            *u = true;
        }
    }
    let left: Vec<&str> = (0..used.len())
        .filter(|&j| !used[j])
        .map(|j| p.feature_names.get(j).map_or("?", String::as_str))
        .collect();
    if left.is_empty() {
        return None;
    }
    let shown = left.len().min(8);
    let more = match left.len() - shown {
        0 => String::new(),
        k => format!(" and {k} more"),
    };
    let (belong, them) = match left.len() {
        1 => ("belongs", "it"),
        _ => ("belong", "them"),
    };
    Some(format!(
        "{}{more} {belong} to no view, so mvml leaves {them} out (give {them} a view, or leave \
         {them} out of --features)",
        left[..shown].join(", ")
    ))
}

/// mvml's hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct MvmlConfig {
    /// Ridge weight λ on the predictor's norm.
    pub lambda: f64,
    /// Metric penalty weight η.
    pub eta: f64,
    /// First line-search step μ of the A-step.
    pub mu: f64,
    /// Block-sparse A (proximal step, eq. 12) instead of eq. (9).
    pub sparse: bool,
    /// Learn the view weights w (eq. 10) instead of w = 1/v.
    pub learn_weights: bool,
    /// The initial metric A₀.
    pub init: Init,
    /// Keep A = A₀ and fit only g (and w): the MVML_I / MVML_Cov baselines.
    pub fixed_metric: bool,
    /// The block Nyström fraction F asked for; `None`: exact, or automatic past
    /// `AUTO_EXACT_MAX` rows (`nystrom_choice`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nystrom: Option<f64>,
    /// Cap on alternating rounds.
    pub max_iter: usize,
    /// Relative-change tolerance δ on the objective of (7) and on A.
    pub tol: f64,
    /// How the A-step moves (optimal closed form or projected gradient).
    pub a_step: AStepRule,
    /// Each view's kernel width heuristic when σ is the median.
    pub view_sigma: ViewSigma,
    /// The coordinates A acts on (Gram features or their square root).
    pub metric_space: MetricSpace,
}

impl MethodConfig for MvmlConfig {
    fn from_params(params: &Params) -> Result<Self> {
        Ok(MvmlConfig {
            lambda: params.f64(&common::LAMBDA)?,
            eta: params.f64(&ETA)?,
            mu: params.f64(&MU)?,
            sparse: params.bool(&SPARSE)?,
            learn_weights: params.bool(&LEARN_WEIGHTS)?,
            init: params.choice(&INIT)?,
            fixed_metric: params.bool(&FIXED_METRIC)?,
            nystrom: params.opt_f64(&NYSTROM)?,
            max_iter: params.usize(&MAX_ITER)?,
            tol: params.f64(&TOL)?,
            a_step: params.choice(&A_STEP)?,
            view_sigma: params.choice(&VIEW_SIGMA)?,
            metric_space: params.choice(&METRIC_SPACE)?,
        })
    }
}

impl MvmlConfig {
    /// A₀ = I, eq. (9), fixed w (also the fixed-metric baseline MVML_I).
    fn default_route(&self) -> bool {
        self.init == Init::Identity && !self.sparse && !self.learn_weights
    }

    fn covariance(&self) -> bool {
        self.init == Init::Covariance
    }

    /// Ψ_lΨ_lᵀ = K_l (the paper's Ã) instead of K_l².
    pub(crate) fn root(&self) -> bool {
        self.metric_space == MetricSpace::Root
    }
}

/// The hyperparameters and what the training rows decide before any work.
pub(crate) struct Setup {
    pub(crate) cfg: MvmlConfig,
    fraction: Option<f64>,
    notes: Vec<String>,
}

impl Setup {
    fn read(p: &Problem, params: &Params) -> Result<Self> {
        let mut setup = Setup {
            cfg: MvmlConfig::from_params(params)?,
            fraction: None,
            notes: Vec::new(),
        };
        if p.views.is_empty() {
            return Err(OvkError::input(
                "mvml needs views: give --views prefixes or use a dataset whose sidecar names views",
            ));
        }
        if let Some(bad) = p.views.iter().find(|v| v.columns.is_empty()) {
            return Err(OvkError::input(format!(
                "view '{}' has no feature columns",
                bad.name
            )));
        }
        let n = p.labeled_rows().len();
        if n < 2 {
            return Err(OvkError::input(
                "mvml needs at least two labelled training rows",
            ));
        }
        if let Some(note) = outside_every_view(p) {
            setup.notes.push(note);
        }
        let asked = setup.cfg.nystrom;
        if asked.is_some() && p.kernel_spec.input_rank == InputRank::Exact {
            return Err(OvkError::input(
                "--nystrom and --input-rank exact contradict each other for mvml: give \
                 --nystrom F for block Nyström on a fraction F of the rows, or --input-rank \
                 exact (without --nystrom) for the exact fit",
            ));
        }
        if let InputRank::Rank(r) = p.kernel_spec.input_rank {
            check_input_rank(r, asked, n, p.views.len())?;
        }
        if let Some(c) = nystrom_choice(asked, p.kernel_spec.input_rank, n, p.views.len()) {
            setup.fraction = Some(c.fraction);
            if asked.is_none() && p.kernel_spec.input_rank.is_auto() {
                setup.notes.push(format!(
                    "{n} training rows exceed the exact limit of {AUTO_EXACT_MAX} (about a \
                     minute on 2 cores): fitted by block Nyström on {} landmarks per view \
                     (--nystrom {}); give --nystrom F for another fraction, or --input-rank \
                     exact for the exact fit",
                    c.landmarks,
                    c.shown(n)
                ));
            }
        }
        Ok(setup)
    }

    fn default_route(&self) -> bool {
        self.cfg.default_route()
    }
}

/// Step 1: each view's kernel (σ by the chosen heuristic on the view) and its features —
/// exact Grams, or block Nyström factors from one landmark sample shared by all views.
pub(crate) struct Views {
    features: Features,
    kernels: Vec<Kernel>,
    /// The training rows restricted to each view's columns.
    xv: Vec<Array2<f64>>,
    landmarks: Option<Vec<usize>>,
    factors: Vec<NystromFactor>,
}

fn view_features(p: &Problem, setup: &Setup, obs: &mut dyn Observer) -> Result<Views> {
    let rows = p.labeled_rows();
    let x = select_rows(p.x.view(), &rows);
    let n = x.nrows();
    let v = p.views.len();
    let xv: Vec<Array2<f64>> = p
        .views
        .iter()
        .map(|vw| x.select(Axis(1), &vw.columns))
        .collect();
    let landmarks: Option<Vec<usize>> = match setup.fraction {
        Some(f) => Some(Rng::new(p.seed).sample(n, landmark_count(f, n))),
        // a square root of each exact Gram: the Nyström factor on every row (U Uᵀ = K)
        None if setup.cfg.root() => Some((0..n).collect()),
        None => None,
    };
    // one step per view: its Gram matrix, or its Nyström columns
    obs.phase(Phase::Gram, Some(v));
    if landmarks.is_none() {
        let n_mats =
            v + if setup.cfg.covariance() {
                v * (v + 1) / 2
            } else {
                v
            } + 3;
        check_fits(
            dense_bytes(n, n).saturating_mul(n_mats as u64),
            &format!("mvml's {n_mats} n×n matrices (n = {n})"),
        )?;
    }
    let mut grams = Vec::with_capacity(v);
    let mut factors = Vec::new();
    let mut kernels: Vec<Kernel> = Vec::with_capacity(v);
    for (i, (xl, view)) in xv.iter().zip(&p.views).enumerate() {
        check_cancel(obs)?;
        let exact = landmarks.is_none();
        let (kernel, k) =
            width::view_kernel(&p.kernel_spec, xl, setup.cfg.view_sigma, &view.name, exact)?;
        kernels.push(kernel);
        match (&landmarks, k) {
            (None, Some(k)) => grams.push(k),
            (None, None) => grams.push(gram(&kernel, xl.view())?),
            (Some(idx), _) => factors.push(nystrom(&kernel, xl.view(), idx)?),
        }
        obs.step(i + 1, v);
    }
    let features = if landmarks.is_none() {
        obs.phase(Phase::Decomposition, None);
        Features::exact(grams)
    } else {
        // one step per view, then (default route) the basis shared by the views
        let total = v + usize::from(setup.default_route());
        obs.phase(Phase::Decomposition, Some(total));
        let mut parts = Vec::with_capacity(v);
        for (l, factor) in factors.iter_mut().enumerate() {
            check_cancel(obs)?;
            // the factor N_l (n×p) lives on only in Ψ_l; prediction needs W_l^{†1/2} alone
            let nl = std::mem::take(&mut factor.u);
            parts.push(Features::nystrom_view(&nl, setup.cfg.root())?);
            obs.step(l + 1, total);
        }
        Features::from_views(parts, setup.cfg.root())
    };
    check_cancel(obs)?;
    Ok(Views {
        features,
        kernels,
        xv,
        landmarks,
        factors,
    })
}

/// What the iterations produced, per output, in the features' coordinates.
pub(crate) struct Run {
    /// g per output, stacked per view (vr).
    g: Vec<Array1<f64>>,
    /// View weights per output.
    w: Vec<Array1<f64>>,
    /// The metric per output when small enough to save (dense, vr×vr): Â in the features'
    /// coordinates, or already the paper's Ã when `metric_reduced`.
    metric: Vec<Option<Array2<f64>>>,
    metric_reduced: bool,
    block_norms: Vec<Array2<f64>>,
    /// Rank of A's low-rank part (default route) or rank-one terms (general route).
    terms: Vec<usize>,
    caps: usize,
    first_order: Vec<Option<f64>>,
    route: &'static str,
    rounds: Rounds,
    notes: Vec<String>,
}

/// How the rounds ended, read alike from either route's outputs.
pub(crate) struct Rounds {
    objective: f64,
    iterations: usize,
    converged: bool,
    last_step: Vec<Option<f64>>,
    halvings: usize,
}

impl Rounds {
    fn of<O: Output>(outs: &[O], iterations: usize) -> Self {
        Rounds {
            objective: outs.iter().map(|o| o.objective()).sum(),
            iterations,
            converged: outs.iter().all(|o| o.progress().converged),
            last_step: outs.iter().map(|o| o.progress().last_step).collect(),
            halvings: outs.iter().map(|o| o.progress().halvings).sum(),
        }
    }
}

/// Whether a metric of this side is saved densely (`MAX_SAVED_SIDE`).
fn small_enough(side: usize) -> bool {
    side <= MAX_SAVED_SIDE
}

/// The landmarks per view a Nyström fraction F takes of n rows: `⌊F·n⌋`, at least one.
fn landmark_count(f: f64, n: usize) -> usize {
    ((f * n as f64).floor() as usize).clamp(1, n.max(1))
}

/// A Nyström fraction and the landmark count per view it gives (`⌊F·n⌋`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct NystromChoice {
    pub fraction: f64,
    pub landmarks: usize,
}

impl NystromChoice {
    /// The fraction that takes exactly `p` landmarks per view of n rows: half a row above
    /// p/n, so that ⌊F·n⌋ = p whatever the rounding of F·n.
    pub(crate) fn landmarks(p: usize, n: usize) -> Self {
        let fraction = (p as f64 + 0.5) / n.max(1) as f64;
        NystromChoice {
            fraction,
            landmarks: landmark_count(fraction, n),
        }
    }

    /// The fraction in the fewest digits (three at least) that still gives these landmarks.
    pub(crate) fn shown(&self, n: usize) -> String {
        (3..17)
            .map(|digits| format!("{:.*}", digits, self.fraction))
            .find(|t| {
                t.parse::<f64>()
                    .is_ok_and(|f| (f * n as f64).floor() as usize == self.landmarks)
            })
            .unwrap_or_else(|| self.fraction.to_string())
    }
}

/// `--input-rank R` for mvml: block Nyström on ⌊R/v⌋ landmarks per view, so R must leave each
/// of the v views at least one landmark and at most its n rows, and not contradict `--nystrom`.
fn check_input_rank(r: usize, nystrom: Option<f64>, n: usize, v: usize) -> Result<()> {
    let v = v.max(1);
    if nystrom.is_some() {
        return Err(OvkError::input(format!(
            "--nystrom and --input-rank {r} both choose mvml's landmarks: give one of them \
             (--input-rank R takes ⌊R/v⌋ landmarks per view, --nystrom F a fraction F of the rows)"
        )));
    }
    if r < v {
        return Err(OvkError::input(format!(
            "--input-rank {r} gives mvml's {v} views no landmark each (it takes ⌊R/v⌋ per view): \
             choose at least {v}"
        )));
    }
    if r > v.saturating_mul(n) {
        return Err(OvkError::input(format!(
            "--input-rank {r} is larger than mvml's {v} views × {n} training rows; choose at \
             most {} (or exact)",
            v * n
        )));
    }
    Ok(())
}

/// The block Nyström a fit uses: the fraction asked for; else `--input-rank R`'s R landmark
/// columns over all v views; else, under `--input-rank auto` beyond `AUTO_EXACT_MAX` training
/// rows, `AUTO_RANK` of them — the rank the factor methods take there, and a metric small
/// enough to save; else none (exact).
pub(crate) fn nystrom_choice(
    asked: Option<f64>,
    input_rank: InputRank,
    n: usize,
    v: usize,
) -> Option<NystromChoice> {
    match asked {
        Some(f) => Some(NystromChoice {
            fraction: f,
            landmarks: landmark_count(f, n),
        }),
        None if input_rank.is_auto() && n > AUTO_EXACT_MAX => Some(NystromChoice::landmarks(
            (AUTO_RANK / v.max(1)).clamp(1, n),
            n,
        )),
        // R landmark columns in all, as the factor methods' rank R: ⌊R/v⌋ per view
        None => match input_rank {
            InputRank::Rank(r) => Some(NystromChoice::landmarks((r / v.max(1)).clamp(1, n), n)),
            _ => None,
        },
    }
}

/// Step 2 (default route): the shared eigenbasis, then rounds of A-step (projected gradient
/// with a line search) and g-step (its profile) for every output until each has converged.
fn run_default(
    views: &Views,
    y: &Array2<f64>,
    setup: &Setup,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Run> {
    let f = &views.features;
    let v = f.n_views();
    let w = Array1::from_elem(v, 1.0 / v as f64);
    let basis = basis::Basis::new(f, &w)?;
    if !f.is_exact() {
        // the last step of the decomposition phase `view_features` opened
        obs.step(v + 1, v + 1);
    }
    check_cancel(obs)?;
    let st = spectral::Settings {
        lambda: setup.cfg.lambda,
        eta: setup.cfg.eta,
        mu: setup.cfg.mu,
        floor: 1.0 / COND_CAP,
        tol: setup.cfg.tol,
        optimal: (setup.cfg.a_step == AStepRule::Optimal) && setup.cfg.eta > 0.0,
    };
    let targets = spectral::Target::all(&basis, y);
    let mut outs = spectral::OutputFit::start_all(&basis, f, &targets, &st)?;
    if setup.cfg.fixed_metric {
        outs.iter_mut().for_each(|o| o.progress.converged = true);
    }
    obs.phase(Phase::Iterating, Some(setup.cfg.max_iter));
    record_outputs(obs, 0, &outs, Round::default(), clock)?;
    let mut iterations = 0;
    if st.optimal && !setup.cfg.fixed_metric && setup.cfg.max_iter > 0 {
        // the A-step lands on the minimiser: one batched round, then its optimality check
        check_cancel(obs)?;
        iterations = 1;
        let metrics = spectral::optimal_metrics(&basis, f, &targets, &st)?;
        let mut profs = metrics
            .iter()
            .zip(&targets)
            .map(|(a, t)| spectral::profile_value(&basis, t, a, &st))
            .collect::<Result<Vec<_>>>()?;
        spectral::fill_h(&basis, f, &mut profs);
        // the A-step does not depend on the current A: a second round would change nothing
        for ((o, a), prof) in outs.iter_mut().zip(metrics).zip(profs) {
            o.accept(a, prof);
            o.progress.converged = true;
        }
        record_outputs(obs, iterations, &outs, Round::default(), clock)?;
    }
    let iterations = rounds(&mut outs, iterations, setup, obs, clock, |k, o| {
        o.iterate(&basis, f, &targets[k], &st)
    })?;
    let side = v * f.r();
    let bbt = f
        .back
        .as_ref()
        .filter(|_| small_enough(side))
        .map(|b| spectral::block_diag_gram(b));
    Ok(Run {
        g: outs.iter().map(|o| o.g()).collect(),
        w: vec![w; outs.len()],
        // Nyström: Ã from A's low-rank form (report.rs would multiply every dense block)
        metric: outs
            .iter()
            .map(|o| {
                small_enough(side).then(|| match (&f.back, &bbt) {
                    (Some(back), Some(bbt)) => o.a.dense_through(back, bbt),
                    _ => o.a.dense(),
                })
            })
            .collect(),
        metric_reduced: f.back.is_some(),
        block_norms: outs.iter().map(|o| o.a.block_norms(v)).collect(),
        terms: outs.iter().map(|o| o.a.rank()).collect(),
        caps: 0,
        first_order: outs
            .iter()
            .map(|o| o.first_order_residual(&basis, f, &st).ok())
            .collect(),
        route: if st.optimal {
            "the minimiser of (7) over A ⪰ εI: εI + β ĥĥᵀ (closed form up to one scalar)"
        } else {
            "projected gradient with a line search on the profiled objective, A = sI + low rank"
        },
        rounds: Rounds::of(&outs, iterations),
        notes: stopping_notes(setup, iterations, &outs),
    })
}

/// Step 2 (general route): the structured metric of metric.rs, the gradient or proximal
/// A-step with backtracking, the condition cap and the w-step.
fn run_general(
    views: &Views,
    y: &Array2<f64>,
    setup: &Setup,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Run> {
    let v = views.features.n_views();
    let r = views.features.r();
    let s = solver::Settings {
        lambda: setup.cfg.lambda,
        eta: setup.cfg.eta,
        mu: setup.cfg.mu,
        sparse: setup.cfg.sparse,
        learn_weights: setup.cfg.learn_weights,
        fixed_metric: setup.cfg.fixed_metric,
        tol: setup.cfg.tol,
        cond_cap: COND_CAP,
    };
    let shared = solver::Shared::new(&views.features, setup.cfg.covariance());
    check_cancel(obs)?;
    let abar0 = if setup.cfg.covariance() {
        Array2::from_elem((v, v), 1.0)
    } else {
        Array2::eye(v)
    };
    let mut outs: Vec<solver::OutputFit> = (0..y.ncols())
        .map(|k| solver::OutputFit::start(&shared, abar0.clone(), y.column(k), &s))
        .collect::<Result<_>>()?;
    obs.phase(Phase::Iterating, Some(setup.cfg.max_iter));
    record_outputs(obs, 0, &outs, Round::default(), clock)?;
    let iterations = rounds(&mut outs, 0, setup, obs, clock, |k, o| {
        o.iterate(&shared, y.column(k), &s)
    })?;
    let caps: usize = outs.iter().map(|o| o.caps).sum();
    let mut notes = Vec::new();
    if caps > 0 {
        notes.push(format!(
            "the condition number of A was capped at {COND_CAP:.0e} {caps} time(s) (A drifts towards rank one)"
        ));
    }
    notes.extend(stopping_notes(setup, iterations, &outs));
    let side = v * r;
    let stack = |parts: Vec<Array1<f64>>| {
        let mut g = Array1::zeros(v * r);
        for (l, gl) in parts.iter().enumerate() {
            g.slice_mut(s![l * r..(l + 1) * r]).assign(gl);
        }
        g
    };
    Ok(Run {
        g: outs.iter().map(|o| stack(o.g())).collect(),
        w: outs.iter().map(|o| o.w.clone()).collect(),
        metric: outs
            .iter()
            .map(|o| small_enough(side).then(|| o.metric.dense()))
            .collect(),
        metric_reduced: false,
        block_norms: outs.iter().map(|o| o.metric.block_norms()).collect(),
        terms: outs.iter().map(|o| o.metric.terms()).collect(),
        caps,
        first_order: vec![None; outs.len()],
        route: if setup.cfg.sparse {
            "proximal gradient (eq. 12) with backtracking, condition cap"
        } else {
            "gradient steps (eq. 9) with backtracking, condition cap"
        },
        rounds: Rounds::of(&outs, iterations),
        notes,
    })
}

/// Step 2's rounds, alike on both routes: every output not yet converged takes one round
/// (`round(k, output k)`) until all have converged or the cap is reached; each round is one
/// trace record with the smallest accepted step. Returns the rounds run in all.
fn rounds<O: Output>(
    outs: &mut [O],
    mut iterations: usize,
    setup: &Setup,
    obs: &mut dyn Observer,
    clock: &Clock,
    mut round: impl FnMut(usize, &mut O) -> Result<Round>,
) -> Result<usize> {
    while iterations < setup.cfg.max_iter && outs.iter().any(|o| !o.progress().converged) {
        check_cancel(obs)?;
        iterations += 1;
        let mut all = Round::default();
        // sequential: outputs in parallel (rayon) measured 1.07× on 2 shared cores (docs/mvml.md)
        for (k, o) in outs.iter_mut().enumerate() {
            let r = round(k, o)?;
            all.halvings += r.halvings;
            if let Some(m) = r.step {
                all.step = Some(all.step.map_or(m, |x: f64| x.min(m)));
            }
        }
        record_outputs(obs, iterations, outs, all, clock)?;
    }
    Ok(iterations)
}

/// Step 3, stopping: say why the rounds ended.
fn stopping_notes<O: Output>(setup: &Setup, iterations: usize, outs: &[O]) -> Vec<String> {
    let mut notes = Vec::new();
    let stalled = outs.iter().filter(|o| o.progress().stalled).count();
    if stalled > 0 {
        notes.push(format!(
            "{stalled} output(s) stopped at a stationary metric: no step down to μ/2^{MAX_HALVINGS} decreased the objective"
        ));
    }
    let open: Vec<&Progress> = outs
        .iter()
        .map(|o| o.progress())
        .filter(|p| !p.converged)
        .collect();
    if !open.is_empty() && !setup.cfg.fixed_metric {
        let worst_obj = open.iter().map(|p| p.rel_objective).fold(0.0_f64, f64::max);
        let worst_a = open.iter().map(|p| p.rel_metric).fold(0.0_f64, f64::max);
        notes.push(format!(
            "stopped at the cap of {iterations} rounds before converging: {} of {} output(s) \
             still moved (largest relative change of the objective {worst_obj:.1e}, of A \
             {worst_a:.1e}; tol {}); raise --max-iter",
            open.len(),
            outs.len(),
            setup.cfg.tol
        ));
    }
    notes
}

/// Step 4: `ŷ_k(x) = Σ_l w_kl k_l(x)ᵀ g_kl`, or through the Nyström maps
/// (coef = w_l W_l^{†1/2} X_l Σ_l ĝ_l, since `N_lᵀ g_l = X_l Σ_l ĝ_l`).
fn build_model(p: &Problem, views: &Views, run: &Run) -> Result<MvmlModel> {
    let f = &views.features;
    let (v, r) = (f.n_views(), f.r());
    let n_out = run.g.len();
    let mut predictors = Vec::with_capacity(v);
    for l in 0..v {
        let rows = match &views.landmarks {
            None => r,
            Some(idx) => idx.len(),
        };
        let mut coef = Array2::zeros((rows, n_out));
        for k in 0..n_out {
            let gl = run.g[k].slice(s![l * r..(l + 1) * r]);
            let c = match (&f.back, &views.landmarks) {
                (Some(back), Some(_)) => views.factors[l].w_pinv_sqrt.dot(&back[l].dot(&gl)),
                _ => gl.to_owned(),
            };
            coef.column_mut(k).assign(&(c * run.w[k][l]));
        }
        let x_ref = match &views.landmarks {
            None => views.xv[l].clone(),
            Some(idx) => select_rows(views.xv[l].view(), idx),
        };
        predictors.push(ViewPredictor {
            kernel: views.kernels[l],
            columns: p.views[l].columns.clone(),
            x_ref,
            coef,
        });
    }
    Ok(MvmlModel { views: predictors })
}

/// One trace record for all outputs: the summed objective and its pieces.
fn record_outputs<O: Output>(
    obs: &mut dyn Observer,
    iter: usize,
    outs: &[O],
    round: Round,
    clock: &Clock,
) -> Result<()> {
    let objective: f64 = outs.iter().map(|o| o.objective()).sum();
    ensure_finite("objective", objective)?;
    let mut pieces = [0.0; 3];
    for o in outs {
        for (sum, x) in pieces.iter_mut().zip(o.state().1) {
            *sum += x;
        }
    }
    record(
        obs,
        iter,
        objective,
        pieces,
        round.step,
        round.halvings,
        clock,
    );
    Ok(())
}

fn record(
    obs: &mut dyn Observer,
    iter: usize,
    objective: f64,
    [fit, reg, pen]: [f64; 3],
    step: Option<f64>,
    halvings: usize,
    clock: &Clock,
) {
    let mut rec = TraceRecord {
        iter,
        objective,
        step,
        elapsed_ms: clock.ms(),
        ..Default::default()
    };
    rec.extra.insert("fit".into(), fit);
    rec.extra.insert("g_penalty".into(), reg);
    rec.extra.insert("metric_penalty".into(), pen);
    rec.extra.insert("halvings".into(), halvings as f64);
    obs.record(&rec);
}
