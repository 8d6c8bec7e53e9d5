//! Multi-view metric learning (Huusari, Kadri, Capponi, AISTATS 2018): a matrix-valued kernel
//! `W H A H Wᵀ` whose metric A (nv×nv) holds within- and between-view metrics, learned by
//! alternating the g-step (eq. 8), the A-step (eq. 9 or the block-sparse eq. 12) and the view
//! weights (eq. 10); optionally on block Nyström approximations of the views (eqs. 13–17).
//!
//! Several outputs (regression targets, classes one-vs-all, labels) are fitted independently,
//! each with its own A and w, in lockstep so that the trace shows one summed objective.

pub mod grams;
pub mod metric;
pub mod model;
pub mod solver;
mod width;

use ndarray::{Array1, Array2, Axis};
use serde_json::{json, Value as Json};

use super::params::{common, Default as Def, ParamKind, ParamSpec};
use super::{
    check_cancel, ensure_finite, mats, Clock, Fit, Method, Observer, Params, Phase, Problem,
    ProblemShape, TraceRecord,
};
use crate::data::rng::Rng;
use crate::kernels::{check_fits, dense_bytes, gram, nystrom, Kernel};
use crate::{OvkError, Result};

use grams::{Grams, ViewGram};
use model::{MvmlModel, ViewPredictor};

pub use model::{model_from_parts, KIND};
use solver::{OutputFit, Settings};

pub struct Mvml;

/// A's condition number is kept below this (methods.md §5: A drifts towards rank one).
pub const COND_CAP: f64 = 1e8;
/// Metrics larger than this many entries are not saved densely (nv×nv at n = 1000, v = 6 is
/// 288 MB); their block norms always are.
const MAX_SAVED_ENTRIES: usize = 4_000_000;

pub const ETA: ParamSpec = ParamSpec {
    key: "eta",
    label: "metric penalty",
    help: "weight η of the metric penalty η‖A‖²_F (or η Σ‖A_lm‖_F with --sparse)",
    unit: "η",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1e12,
        min_open: false,
        log: true,
    },
    default: Def::Float(0.01),
};
pub const MU: ParamSpec = ParamSpec {
    key: "mu",
    label: "step size",
    help: "initial step μ of the A-step (halved whenever the objective would increase; μη < ½)",
    unit: "μ",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1e6,
        min_open: true,
        log: true,
    },
    default: Def::Float(0.5),
};
pub const SPARSE: ParamSpec = ParamSpec {
    key: "sparse",
    label: "block-sparse A",
    help: "proximal block-sparse A-step (eq. 12, penalty η Σ‖A_lm‖_F) instead of eq. (9)",
    unit: "",
    kind: ParamKind::Bool,
    default: Def::Bool(false),
};
pub const LEARN_WEIGHTS: ParamSpec = ParamSpec {
    key: "learn_weights",
    label: "learn view weights",
    help: "learn the view weights w by least squares (eq. 10); otherwise w = 1/v",
    unit: "",
    kind: ParamKind::Bool,
    default: Def::Bool(false),
};
pub const INIT: ParamSpec = ParamSpec {
    key: "init",
    label: "initial metric",
    help: "A₀: identity (within-view only) or covariance (every view-pair block the identity)",
    unit: "",
    kind: ParamKind::Choice(&["identity", "covariance"]),
    default: Def::Text("identity"),
};
pub const FIXED_METRIC: ParamSpec = ParamSpec {
    key: "fixed_metric",
    label: "fixed metric",
    help: "keep A = A₀ (the MVML_I / MVML_Cov baselines): only g (and w) are fitted",
    unit: "",
    kind: ParamKind::Bool,
    default: Def::Bool(false),
};
pub const NYSTROM: ParamSpec = ParamSpec {
    key: "nystrom",
    label: "Nyström fraction",
    help: "block Nyström approximation from p = ⌊F·n⌋ sampled training points (the same sample for every view); absent = exact",
    unit: "F",
    kind: ParamKind::Float { min: 0.0, max: 1.0, min_open: true, log: false },
    default: Def::None,
};
pub const MAX_ITER: ParamSpec = ParamSpec {
    key: "max_iter",
    label: "max iterations",
    help: "cap on the alternating rounds (g, A, w); the fit stops unconverged (and says so) when reached",
    unit: "iterations",
    kind: ParamKind::Int { min: 1, max: 100_000 },
    default: Def::Int(50),
};
pub const TOL: ParamSpec = ParamSpec {
    help: "stop when the relative change of the objective of (7) falls below δ",
    default: Def::Float(1e-4),
    ..common::TOL
};
pub const VIEW_SIGMA: ParamSpec = ParamSpec {
    key: "view_sigma",
    label: "per-view σ",
    help: "heuristic for each view's kernel width when --sigma is 'median': median or mean pairwise distance",
    unit: "",
    kind: ParamKind::Choice(&["median", "mean"]),
    default: Def::Text("median"),
};

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
    VIEW_SIGMA,
];

impl Method for Mvml {
    fn name(&self) -> &'static str {
        "mvml"
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

    fn peak_bytes(&self, s: &ProblemShape, params: &Params) -> Result<u64> {
        let r = params.resolve(PARAMS);
        let (n, v) = (s.n_labeled, s.views.max(1));
        let pairs = r.str("init")? == "covariance";
        let products = if pairs { v * (v + 1) / 2 } else { v } as u64;
        // The products K_l K_m, the dual matrix, its Cholesky factor and temporaries (measured:
        // about 9 beyond the products, tests/resource_limits.rs) are n×n even with Nyström,
        // which replaces the v view Grams by n×p factors.
        let grams = match r.opt_f64("nystrom")? {
            None => mats(v as u64, n, n),
            Some(f) => mats(3 * v as u64, n, ((f * n as f64) as usize).max(1)),
        };
        // Each output's metric keeps U_l and K_l U_l (n×t per view, t ≤ iterations) and C.
        let t = if r.bool("fixed_metric")? {
            1
        } else {
            r.usize("max_iter")?.saturating_add(1)
        };
        let metric = mats(2 * v as u64, n, t) + mats(1, v * t, v * t);
        Ok(grams
            + mats(products + 9, n, n)
            + metric.saturating_mul(s.m as u64)
            + mats(1, s.n_test, n))
    }
    fn memory_advice(&self) -> &'static str {
        "use fewer training points (--test-fraction, or subsample the file), --init identity \
         (fewer n×n products), or --nystrom F (n×p factors instead of the view Gram matrices)"
    }

    fn fit(&self, p: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let clock = Clock::start();
        let r = params.resolve(PARAMS);
        let mut notes = Vec::new();
        let mut s = Settings {
            lambda: r.f64("lambda")?,
            eta: r.f64("eta")?,
            mu: r.f64("mu")?,
            sparse: r.bool("sparse")?,
            learn_weights: r.bool("learn_weights")?,
            fixed_metric: r.bool("fixed_metric")?,
            tol: r.f64("tol")?,
            cond_cap: COND_CAP,
        };
        let max_iter = r.usize("max_iter")?;
        let init = r.str("init")?;
        let view_sigma = r.str("view_sigma")?;
        let fraction = r.opt_f64("nystrom")?;
        if !s.sparse && !s.fixed_metric && 2.0 * s.mu * s.eta >= 1.0 {
            let mu = 0.9 / (2.0 * s.eta);
            notes.push(format!(
                "step μ = {} gives μη ≥ ½ (A would lose definiteness in eq. 9); using μ = {mu:.4}",
                s.mu
            ));
            s.mu = mu;
        }
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
        let rows = p.labeled_rows();
        let x = p.x.select(Axis(0), &rows);
        let y = p.y.select(Axis(0), &rows);
        let n = x.nrows();
        if n < 2 {
            return Err(OvkError::input(
                "mvml needs at least two labelled training rows",
            ));
        }
        let v = p.views.len();
        let n_out = y.ncols();

        // Per-view kernels, σ by the chosen heuristic on each view.
        obs.phase(Phase::Gram, Some(v));
        let xv: Vec<Array2<f64>> = p
            .views
            .iter()
            .map(|vw| x.select(Axis(1), &vw.columns))
            .collect();
        let landmarks: Option<Vec<usize>> = fraction.map(|f| {
            let count = ((f * n as f64).floor() as usize).clamp(1, n);
            Rng::new(p.seed).sample(n, count)
        });
        let pairs = init == "covariance";
        let n_mats = v + if pairs { v * (v + 1) / 2 } else { v } + 3;
        check_fits(
            dense_bytes(n, n).saturating_mul(n_mats as u64),
            &format!("mvml's {n_mats} n×n matrices (n = {n})"),
        )?;
        let mut views = Vec::with_capacity(v);
        let mut factors = Vec::new();
        let mut kernels: Vec<Kernel> = Vec::with_capacity(v);
        for l in 0..v {
            check_cancel(obs)?;
            let exact = landmarks.is_none();
            let (kernel, k) =
                width::view_kernel(&p.kernel_spec, &xv[l], &view_sigma, &p.views[l].name, exact)?;
            kernels.push(kernel);
            match (&landmarks, k) {
                (None, Some(k)) => views.push(ViewGram::Exact(k)),
                (None, None) => views.push(ViewGram::Exact(gram(&kernel, xv[l].view())?)),
                (Some(idx), _) => {
                    let f = nystrom(&kernels[l], xv[l].view(), idx)?;
                    views.push(ViewGram::Nystrom(f.u.clone()));
                    factors.push(f);
                }
            }
        }
        obs.phase(Phase::Decomposition, None);
        let grams = Grams::new(views, pairs);
        check_cancel(obs)?;

        let abar0 = if pairs {
            Array2::from_elem((v, v), 1.0)
        } else {
            Array2::eye(v)
        };
        let mut outs: Vec<OutputFit> = (0..n_out)
            .map(|k| OutputFit::start(&grams, abar0.clone(), y.column(k), &s))
            .collect::<Result<_>>()?;
        let total = |o: &[OutputFit]| o.iter().map(|f| f.prof.objective).sum::<f64>();
        let mut objective = total(&outs);
        ensure_finite("objective", objective)?;
        obs.phase(Phase::Iterating, Some(max_iter));
        record(obs, 0, &outs, None, 0, &clock);
        let mut iterations = 0;
        while iterations < max_iter && outs.iter().any(|o| !o.converged) {
            check_cancel(obs)?;
            iterations += 1;
            let mut step: Option<f64> = None;
            let mut halvings = 0;
            for (k, o) in outs.iter_mut().enumerate() {
                let rep = o.iterate(&grams, y.column(k), &s)?;
                halvings += rep.halvings;
                if let Some(st) = rep.step {
                    step = Some(step.map_or(st, |m: f64| m.min(st)));
                }
            }
            objective = total(&outs);
            ensure_finite("objective", objective)?;
            record(obs, iterations, &outs, step, halvings, &clock);
            if halvings > 0 {
                obs.note(&format!(
                    "iteration {iterations}: the A-step was halved {halvings} time(s) to keep the objective from increasing"
                ));
            }
        }
        let converged = outs.iter().all(|o| o.converged);
        let step_halvings: usize = outs.iter().map(|o| o.halvings).sum();
        let caps: usize = outs.iter().map(|o| o.caps).sum();
        let stalled = outs.iter().filter(|o| o.stalled).count();
        if step_halvings > 0 {
            notes.push(format!(
                "the A-step was halved {step_halvings} time(s) in all so that the objective never increased"
            ));
        }
        if caps > 0 {
            notes.push(format!(
                "the condition number of A was capped at {COND_CAP:.0e} {caps} time(s) (A drifts towards rank one)"
            ));
        }
        if stalled > 0 {
            notes.push(format!(
                "{stalled} output(s) stopped because no step μ ≥ μ₀/2^{} decreased the objective (a stationary metric)",
                solver::MAX_HALVINGS
            ));
        }
        if !converged {
            notes.push(format!(
                "stopped after {max_iter} iterations before the relative objective change fell below {}",
                s.tol
            ));
        }
        if n_out > 1 {
            notes.push(format!(
                "{n_out} outputs fitted independently, each with its own metric A and weights w; \
                 'metric' is output 0's, 'block_norms' the average over outputs"
            ));
        }

        // The model: ŷ_k(x) = Σ_l w_kl k_l(x)ᵀ g_kl, or through the Nyström maps.
        let gs: Vec<Vec<Array1<f64>>> = outs.iter().map(|o| o.g()).collect();
        let mut predictors = Vec::with_capacity(v);
        for l in 0..v {
            let (x_ref, coef) = match &landmarks {
                None => {
                    let mut coef = Array2::zeros((n, n_out));
                    for k in 0..n_out {
                        coef.column_mut(k).assign(&(&gs[k][l] * outs[k].w[l]));
                    }
                    (xv[l].clone(), coef)
                }
                Some(idx) => {
                    let f = &factors[l];
                    let mut coef = Array2::zeros((idx.len(), n_out));
                    for k in 0..n_out {
                        let ng = f.u.t().dot(&gs[k][l]);
                        coef.column_mut(k)
                            .assign(&(f.w_pinv_sqrt.dot(&ng) * outs[k].w[l]));
                    }
                    (xv[l].select(Axis(0), idx), coef)
                }
            };
            predictors.push(ViewPredictor {
                kernel: kernels[l],
                columns: p.views[l].columns.clone(),
                x_ref,
                coef,
            });
        }
        let mut fit = Fit::new(Box::new(MvmlModel { views: predictors }));
        fit.iterations = iterations;
        fit.converged = converged;
        fit.objective = Some(objective);

        // Matrices: the metric (A, or Ã = Uᵀ A U with Nyström), weights, block norms.
        let mut weights = Array2::zeros((v, n_out));
        for (k, o) in outs.iter().enumerate() {
            weights.column_mut(k).assign(&o.w);
        }
        let norms: Vec<Array2<f64>> = outs.iter().map(|o| o.metric.block_norms()).collect();
        let mean_norms =
            norms.iter().fold(Array2::zeros((v, v)), |a, b| a + b) / n_out.max(1) as f64;
        let side = match &landmarks {
            None => n * v,
            Some(idx) => idx.len() * v,
        };
        let saved = n_out.min(MAX_SAVED_ENTRIES / (side * side).max(1));
        for (k, o) in outs.iter().enumerate().take(saved) {
            let a = match &landmarks {
                None => o.metric.dense(),
                Some(_) => {
                    let fv: Vec<_> = factors.iter().map(|f| f.u.view()).collect();
                    o.metric.reduced(&fv)
                }
            };
            let name = if k == 0 {
                "metric".to_string()
            } else {
                format!("metric_{k}")
            };
            fit.matrices.push((name, a));
        }
        if saved < n_out {
            notes.push(format!(
                "the {side}×{side} metric was saved for {saved} of {n_out} outputs (size limit); \
                 block norms are saved for all"
            ));
        }
        fit.matrices.push(("view_weights".into(), weights));
        fit.matrices
            .push(("block_norms".into(), mean_norms.clone()));

        let names: Vec<Json> = p.views.iter().map(|vw| json!(vw.name)).collect();
        let d = &mut fit.details;
        d.insert("views".into(), Json::Array(names));
        d.insert(
            "view_kernels".into(),
            Json::Array(kernels.iter().map(|k| json!(k.to_string())).collect()),
        );
        d.insert("block_norms".into(), nested(&mean_norms));
        d.insert(
            "block_norms_per_output".into(),
            Json::Array(norms.iter().map(nested).collect()),
        );
        d.insert(
            "view_weights".into(),
            Json::Array(outs.iter().map(|o| json!(o.w.to_vec())).collect()),
        );
        d.insert(
            "nystrom".into(),
            match &landmarks {
                None => Json::Null,
                Some(idx) => json!({
                    "fraction": fraction,
                    "p": idx.len(),
                    "ranks": factors.iter().map(|f| f.rank).collect::<Vec<_>>(),
                }),
            },
        );
        d.insert("step_halvings".into(), json!(step_halvings));
        d.insert("condition_caps".into(), json!(caps));
        d.insert(
            "final_step".into(),
            json!(outs.iter().map(|o| o.mu).collect::<Vec<_>>()),
        );
        d.insert(
            "outputs".into(),
            json!("independent: one metric A and weights w per output column"),
        );
        d.insert(
            "rank_one_terms".into(),
            json!(outs.iter().map(|o| o.metric.terms()).collect::<Vec<_>>()),
        );
        fit.notes = notes;
        for msg in &fit.notes {
            obs.note(msg);
        }
        Ok(fit)
    }
}

fn record(
    obs: &mut dyn Observer,
    iter: usize,
    outs: &[OutputFit],
    step: Option<f64>,
    halvings: usize,
    clock: &Clock,
) {
    let sum = |f: &dyn Fn(&OutputFit) -> f64| outs.iter().map(f).sum::<f64>();
    let mut rec = TraceRecord {
        iter,
        objective: sum(&|o| o.prof.objective),
        step,
        elapsed_ms: clock.ms(),
        ..Default::default()
    };
    rec.extra.insert("fit".into(), sum(&|o| o.prof.fit));
    rec.extra.insert("g_penalty".into(), sum(&|o| o.prof.reg));
    rec.extra
        .insert("metric_penalty".into(), sum(&|o| o.prof.pen));
    rec.extra.insert("halvings".into(), halvings as f64);
    obs.record(&rec);
}

fn nested(a: &Array2<f64>) -> Json {
    Json::Array(a.rows().into_iter().map(|r| json!(r.to_vec())).collect())
}
