//! load → split → scale → kernel → fit → predict → metrics: one run, start to finish, with
//! no terminal in sight. Both faces call `run` (the workbench through `runner`, on a thread of
//! its own), and so do sweeps and `ovk replay --verify`.

use std::collections::BTreeMap;
use std::time::Instant;

use ndarray::{Array2, ArrayView2, Axis, CowArray, Ix2};

use super::estimate;
use super::faults::{fit_watched, Watched};
use super::RunConfig;
use crate::data::{self, PrepareOptions, Prepared, Scaler};
use crate::kernels::{check_fits_or, format_bytes, peak_rss_bytes, InputRank};
use crate::methods::input::AUTO_RANK;
use crate::methods::{
    self, check_cancel, mats, Method, Observer, Params, Phase, Problem, ProblemShape, Route,
    Silent, TargetScaled,
};
use crate::metrics;
use crate::session::{
    self, ClassRecord, KernelRecord, MetricMap, Metrics, ModelRecord, SessionRecord, Split, Timings,
};
use crate::{OvkError, Result};

/// A finished run: the session record and the matrices to save beside it.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub record: SessionRecord,
    /// (name, matrix): saved as `<name>.npy`; `record.matrices` maps the same names to files.
    pub matrices: Vec<(String, Array2<f64>)>,
}

impl RunOutcome {
    pub fn matrix(&self, name: &str) -> Option<&Array2<f64>> {
        self.matrices
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, m)| m)
    }
}

/// The method's own peak plus the pipeline's copies of the data (prepared rows, the problem,
/// predictions).
fn peak_estimate(method: &dyn Method, s: &ProblemShape, params: &Params) -> Result<u64> {
    let rows = s.n_train + s.n_test;
    Ok(method
        .peak_bytes(s, params)?
        .saturating_add(mats(3, rows, s.d + 2 * s.m)))
}

/// What ovk tells the user before a fit: the floor time of the route taken and, where the exact
/// route is slow or too big, what a low-rank input kernel would cost instead.
struct Guidance {
    n: usize,
    route: Route,
    seconds: f64,
    /// (rank, seconds, bytes) of the low-rank route, when the method has one and the exact
    /// route was taken.
    alternative: Option<(usize, f64, u64)>,
}

/// Beyond this floor time the exact route is worth a word.
const SLOW_SECONDS: f64 = 60.0;

impl Guidance {
    fn for_run(
        method: &dyn Method,
        shape: &ProblemShape,
        route: Route,
        params: &Params,
    ) -> Result<Self> {
        let n = if method.semi_supervised() {
            shape.n_train
        } else {
            shape.n_labeled
        };
        let costed = method.costed_route(shape, params)?;
        let seconds = estimate::fit_seconds(costed, n, shape, method.exact_eighs());
        let mut alternative = None;
        if costed == Route::Exact && n > 1 {
            let rank = AUTO_RANK.min(n / 2).max(1);
            let low = ProblemShape {
                input_rank: InputRank::Rank(rank),
                ..*shape
            };
            if let Ok(r @ Route::LowRank { .. }) = method.costed_route(&low, params) {
                let secs = estimate::fit_seconds(r, n, shape, method.exact_eighs());
                let bytes = peak_estimate(method, &low, params)?;
                alternative = Some((rank, secs, bytes));
            }
        }
        Ok(Guidance {
            n,
            route,
            seconds,
            alternative,
        })
    }

    fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self.route.note(self.n).into_iter().collect();
        if let (Some((rank, secs, _)), true) = (self.alternative, self.seconds > SLOW_SECONDS) {
            out.push(format!(
                "the exact fit on {} training rows needs at least {} on this machine (one {}×{} \
                 eigendecomposition); --input-rank {rank} would take about {}",
                self.n,
                estimate::format_seconds(self.seconds),
                self.n,
                self.n,
                estimate::format_seconds(secs)
            ));
        }
        out
    }

    fn memory_advice(&self, method: &dyn Method) -> String {
        match self.alternative {
            Some((rank, secs, bytes)) => format!(
                "use a low-rank input kernel: --input-rank {rank} needs about {} and {}; or {}",
                format_bytes(bytes),
                estimate::format_seconds(secs),
                method.memory_advice()
            ),
            None => method.memory_advice().to_string(),
        }
    }

    fn to_json(&self) -> serde_json::Value {
        // the input kernel's route (mvml's --nystrom is its own, in its details)
        serde_json::json!({
            "input_kernel": match self.route {
                Route::Exact => "exact",
                Route::Primal => "primal",
                Route::LowRank { .. } => "low_rank",
            },
            "floor_seconds": self.seconds,
        })
    }
}

/// Run `config` to completion, reporting progress to `obs`.
pub fn run(config: &RunConfig, obs: &mut dyn Observer) -> Result<RunOutcome> {
    let method = config.checked_method()?;
    let t_start = Instant::now();

    obs.phase(Phase::Loading, None);
    let mut prepared = data::prepare(
        &config.data,
        PrepareOptions {
            allow_unlabeled: method.semi_supervised(),
        },
    )?;
    if !method.supports(prepared.task) {
        return Err(OvkError::input(format!(
            "method {} does not handle {} tasks (it handles {})",
            method.name(),
            prepared.task.name(),
            method.supported_tasks()
        )));
    }
    let shape = ProblemShape {
        n_train: prepared.x_train.nrows(),
        n_labeled: prepared.labeled.iter().filter(|&&b| b).count(),
        n_test: prepared.x_test.nrows(),
        d: prepared.x_train.ncols(),
        m: prepared.y_train.ncols(),
        views: prepared.views.len(),
        input_rank: config.kernel.input_rank,
        landmarks: config.kernel.landmarks,
        linear: config.kernel.name == crate::kernels::KernelName::Linear,
    };
    let route = method.input_route(&shape)?;
    // --target-scale keeps the data's own targets beside the scaled ones the fit sees
    let kept_targets = if config.data.target_scale.is_none() {
        0
    } else {
        mats(1, shape.n_train + shape.n_test, shape.m)
    };
    let estimate = peak_estimate(method, &shape, &config.params)?.saturating_add(kept_targets);
    let guidance = Guidance::for_run(method, &shape, route, &config.params)?;
    check_fits_or(
        estimate,
        &format!(
            "{} on {} training rows ({} labeled, {} outputs)",
            method.name(),
            shape.n_train,
            shape.n_labeled,
            shape.m
        ),
        &guidance.memory_advice(method),
    )?;
    let mut notes_before_fit = guidance.notes();
    notes_before_fit.extend(super::unused::unused_settings(config, method));
    for note in &notes_before_fit {
        obs.note(note);
    }
    let kernel = config.kernel.resolve(prepared.x_train.view())?;
    let load_s = t_start.elapsed().as_secs_f64();
    check_cancel(obs)?;

    // The matrices move into the problem (with 10⁵ outputs a copy is 100+ MB).
    let mut problem = Problem {
        x: std::mem::take(&mut prepared.x_train),
        y: std::mem::take(&mut prepared.y_train),
        labeled: prepared.labeled.clone(),
        x_test: std::mem::take(&mut prepared.x_test),
        y_test: std::mem::take(&mut prepared.y_test),
        kernel,
        kernel_spec: config.kernel.clone(),
        task: prepared.task,
        feature_names: prepared.feature_names.clone(),
        output_names: prepared.output_names.clone(),
        views: prepared.views.clone(),
        seed: config.data.seed,
    };

    // --target-scale: the fit sees scaled targets, on the test rows too (lowrank-okl's λ path
    // scores itself there); every score uses the file's own (`data_targets`).
    let target_scaler = Scaler::fit_targets(problem.y.view(), config.data.target_scale);
    let mut target_notes =
        super::coverage::untaught_outputs(problem.y.view(), prepared.task, &prepared.output_names);
    target_notes.extend(super::offset::far_from_zero(
        problem.y.view(),
        prepared.task,
        &prepared.output_names,
        config.data.target_scale,
    ));
    let data_targets = target_scaler.as_ref().map(|t| {
        let kept = DataTargets {
            train: problem.y.clone(),
            test: problem.y_test.clone(),
        };
        t.apply(&mut problem.y);
        t.apply(&mut problem.y_test);
        kept
    });

    let t_fit = Instant::now();
    // A non-finite objective stops the fit there with a message naming cause and fix; a
    // `None` objective is one the method cannot afford (KDE's low-rank solve; a note says so).
    let Watched {
        fit,
        trace,
        notes: observed_notes,
    } = fit_watched(method, &problem, &config.params, obs)?;
    let fit = in_data_units(fit, target_scaler.as_ref());
    let fit_s = t_fit.elapsed().as_secs_f64();

    obs.phase(Phase::Predicting, None);
    let t_pred = Instant::now();
    let labeled_rows = problem.labeled_rows();
    let (y_data, y_test) = DataTargets::of(&data_targets, &problem);
    let (x_lab, y_lab) = labeled_part(&problem.x, y_data, &labeled_rows);
    let pred_train = fit.model.predict(x_lab.view())?;
    let pred_test = predict_or_empty(fit.model.as_ref(), &problem)?;
    let predict_s = t_pred.elapsed().as_secs_f64();

    let score = |y: ArrayView2<f64>, yhat: ArrayView2<f64>| -> MetricMap {
        if y.nrows() == 0 {
            MetricMap::new()
        } else {
            metrics::scores(prepared.task, config.data.class_coding, y, yhat)
        }
    };
    let mut scores = Metrics {
        train: score(y_lab.view(), pred_train.view()),
        test: score(y_test.view(), pred_test.view()),
        unlabeled: None,
    };
    // Structured outputs (KDE) are also scored by the RBF loss of their output kernel.
    // Its σ lives where the fit's targets do: scaled, under --target-scale.
    if let Some(sigma) = fit.details.get("output_sigma").and_then(|v| v.as_f64()) {
        let in_fit_units = |a: ArrayView2<f64>| -> Array2<f64> {
            let mut a = a.to_owned();
            if let Some(t) = &target_scaler {
                t.apply(&mut a);
            }
            a
        };
        for (map, y, yhat) in [
            (&mut scores.train, y_lab.view(), pred_train.view()),
            (&mut scores.test, y_test.view(), pred_test.view()),
        ] {
            if y.nrows() > 0 {
                let (y, yhat) = (in_fit_units(y), in_fit_units(yhat));
                map.insert(
                    "rbf_loss".into(),
                    metrics::rbf_loss(y.view(), yhat.view(), sigma),
                );
            }
        }
    }
    // Semi-supervised methods also predict their unlabeled training rows, whose labels the
    // data had but the fit did not see (transductive scores).
    let unlabeled_rows: Vec<usize> = (0..prepared.labeled.len())
        .filter(|&i| !prepared.labeled[i])
        .collect();
    let unlabeled = fit
        .matrices
        .iter()
        .find(|(n, _)| n == "predictions_unlabeled")
        .map(|(_, p)| (prepared.y_train_true.select(Axis(0), &unlabeled_rows), p))
        .filter(|(truth, p)| p.nrows() == truth.nrows());
    if let Some((truth, p)) = &unlabeled {
        scores.unlabeled = Some(score(truth.view(), p.view()));
    }

    let mut details = fit.details;
    if prepared.task == crate::data::Task::Multilabel {
        // Per-label AUC, by label name, for each part that has labels (JSON null: one class only).
        let mid = metrics::coding_midpoint(config.data.class_coding);
        let mut per_label = serde_json::Map::new();
        let mut add = |part: &str, y: ArrayView2<f64>, yhat: ArrayView2<f64>| {
            if y.nrows() > 0 {
                let aucs = metrics::per_label_auc(y, yhat, mid);
                let named: serde_json::Map<String, serde_json::Value> = prepared
                    .output_names
                    .iter()
                    .zip(aucs)
                    .map(|(n, a)| (n.clone(), serde_json::json!(a.is_finite().then_some(a))))
                    .collect();
                per_label.insert(part.to_string(), serde_json::Value::Object(named));
            }
        };
        add("train", y_lab.view(), pred_train.view());
        add("test", y_test.view(), pred_test.view());
        if let Some((truth, p)) = &unlabeled {
            add("unlabeled", truth.view(), p.view());
        }
        details.insert("per_label_auc".into(), serde_json::Value::Object(per_label));
    }

    // Per-output diagnostics of each part (confusion matrix, per-label scores, scatter sample).
    {
        let mid = metrics::coding_midpoint(config.data.class_coding);
        let mut diag = serde_json::Map::new();
        for (part, y, yhat) in [
            ("train", y_lab.view(), pred_train.view()),
            ("test", y_test.view(), pred_test.view()),
        ] {
            if y.nrows() > 0 {
                let d = metrics::diagnostics(prepared.task, y, yhat, mid);
                if let Ok(v) = serde_json::to_value(d) {
                    diag.insert(part.to_string(), v);
                }
            }
        }
        details.insert("diagnostics".into(), serde_json::Value::Object(diag));
    }

    // The baseline is a comparison, not the run: skipped (and said so) when it would not fit.
    // krr fits the labeled rows only, so a semi-supervised method's --input-rank is capped at
    // their count (a rank-ℓ factor of ℓ rows is the exact kernel).
    let krr = methods::find(methods::MethodName::Krr);
    if let InputRank::Rank(r) = problem.kernel_spec.input_rank {
        problem.kernel_spec.input_rank = InputRank::Rank(r.min(shape.n_labeled.max(1)));
    }
    let baseline_shape = ProblemShape::of(&problem);
    let krr_need = peak_estimate(krr, &baseline_shape, &Params::new())
        .map_err(|e| OvkError::input(format!("the krr baseline was skipped: {e}")))
        .and_then(|b| check_fits_or(b, "the krr baseline", "skipped"));
    let mut skipped = None;
    let baseline = if method.name() == "krr" {
        None
    } else if let Err(e) = krr_need {
        skipped = Some(e.to_string());
        None
    } else {
        baseline_scores(
            krr,
            config,
            &problem,
            DataTargets::of(&data_targets, &problem),
            target_scaler.as_ref(),
            &prepared,
        )?
    };
    // Measured at the end of the run: the process's peak so far, for comparison with the
    // estimate the run was admitted on.
    details.insert(
        "memory".into(),
        serde_json::json!({
            "estimated_peak_bytes": estimate,
            "estimated_peak": format_bytes(estimate),
            "process_peak_rss_bytes": peak_rss_bytes(),
        }),
    );

    // What `ovk predict` needs: the model's parts, saved as `model_<name>` matrices, and the
    // transformations in front of it.
    let parts = fit.model.into_parts();
    let model_record = ModelRecord {
        kind: parts.kind.clone(),
        settings: parts.settings.clone(),
        arrays: parts.arrays.iter().map(|(n, _)| n.clone()).collect(),
        scaler: prepared.scaler.clone(),
        feature_dtypes: prepared.feature_dtypes.clone(),
        class: prepared
            .class_column
            .clone()
            .zip(prepared.class_values.clone())
            .map(|((column, dtype), values)| ClassRecord {
                column,
                dtype,
                values,
            }),
        class_coding: config.data.class_coding,
        fill: prepared.fill.clone(),
        target_scaler,
    };
    let mut matrices = fit.matrices;
    matrices.push(("predictions_test".to_string(), pred_test));
    matrices.push((
        "targets_test".to_string(),
        match data_targets {
            Some(kept) => kept.test,
            None => std::mem::take(&mut problem.y_test),
        },
    ));
    for (name, a) in parts.arrays {
        matrices.push((session::model_matrix_name(&name), a));
    }
    for (name, m) in &matrices {
        if m.iter().any(|v| !v.is_finite()) {
            return Err(OvkError::numerical(format!(
                "the learned matrix '{name}' has NaN or infinite entries — the fit diverged; \
                 increase --lambda or check the data for extreme values"
            )));
        }
    }

    details.insert("estimate".into(), guidance.to_json());
    let mut notes = notes_before_fit;
    if prepared.imputed_rows > 0 {
        notes.push(format!(
            "{} row(s) had missing feature cells filled in from the training rows (numeric: \
             column mean; text: most frequent value)",
            prepared.imputed_rows
        ));
    }
    if prepared.dropped_rows > 0 {
        notes.push(format!(
            "{} row(s) with a missing cell were dropped",
            prepared.dropped_rows
        ));
    }
    notes.extend(target_notes);
    for (column, why) in &prepared.left_out {
        notes.push(format!(
            "`{column}` is not a feature: {why} (name it in --features to use it)"
        ));
    }
    for c in &prepared.categories {
        notes.push(format!(
            "`{}` is text: one-hot encoded into {} features ({})",
            c.column,
            c.levels.len(),
            c.levels.join(", ")
        ));
    }
    notes.extend(observed_notes);
    notes.extend(skipped);
    if let Some(b) = &baseline {
        notes.extend(behind_baseline(
            prepared.task,
            method.name(),
            &scores.test,
            &b.test,
        ));
    }
    for n in fit.notes {
        if !notes.contains(&n) {
            notes.push(n);
        }
    }
    let name = config.name.clone().unwrap_or_else(|| config.default_name());
    let record = SessionRecord {
        schema: session::SCHEMA.to_string(),
        id: session::new_id(&name),
        name,
        created: session::now_rfc3339(),
        ovk_version: env!("CARGO_PKG_VERSION").to_string(),
        dataset: prepared.info.clone(),
        task: prepared.task,
        method: method.name().to_string(),
        kernel: KernelRecord {
            spec: config.kernel.clone(),
            resolved: kernel,
        },
        params: filled_params(method, &config.params),
        scale: config.data.scale,
        split: Split {
            seed: config.data.seed,
            test_fraction: config.data.test_fraction,
            train: prepared.train_rows.clone(),
            test: prepared.test_rows.clone(),
            labeled: (!unlabeled_rows.is_empty()).then(|| {
                labeled_rows
                    .iter()
                    .map(|&i| prepared.train_rows[i])
                    .collect()
            }),
            unlabeled: (!unlabeled_rows.is_empty()).then(|| {
                unlabeled_rows
                    .iter()
                    .map(|&i| prepared.train_rows[i])
                    .collect()
            }),
        },
        feature_names: prepared.feature_names.clone(),
        output_names: prepared.output_names.clone(),
        trace,
        iterations: fit.iterations,
        converged: fit.converged,
        objective: fit.objective,
        metrics: scores,
        baseline,
        timings: Timings {
            load_s,
            fit_s,
            predict_s,
            total_s: t_start.elapsed().as_secs_f64(),
        },
        matrices: matrices
            .iter()
            .map(|(n, _)| (n.clone(), format!("{n}.npy")))
            .collect::<BTreeMap<_, _>>(),
        details,
        notes,
        config: {
            // The encoding is part of the run: a replay encodes the same levels.
            let mut c = config.clone();
            if !prepared.categories.is_empty() {
                c.data.categories = Some(prepared.categories.clone());
            }
            c
        },
        model: Some(model_record),
    };
    Ok(RunOutcome { record, matrices })
}

/// The labeled training rows of x and y: views when every row is labeled (with 10⁵ outputs a
/// copy of y is 100+ MB), copies otherwise.
fn labeled_part<'a>(
    x: &'a Array2<f64>,
    y: &'a Array2<f64>,
    rows: &[usize],
) -> (CowArray<'a, f64, Ix2>, CowArray<'a, f64, Ix2>) {
    if rows.len() == x.nrows() {
        (x.view().into(), y.view().into())
    } else {
        (
            x.select(Axis(0), rows).into(),
            y.select(Axis(0), rows).into(),
        )
    }
}

/// The file's own targets, kept while the fit sees scaled ones (`--target-scale`).
struct DataTargets {
    train: Array2<f64>,
    test: Array2<f64>,
}

impl DataTargets {
    /// The training and test targets in the data's units.
    fn of<'a>(
        kept: &'a Option<DataTargets>,
        problem: &'a Problem,
    ) -> (&'a Array2<f64>, &'a Array2<f64>) {
        match kept {
            Some(k) => (&k.train, &k.test),
            None => (&problem.y, &problem.y_test),
        }
    }
}

/// A fit on scaled targets, answering in the data's units: its model, and the predictions it
/// made itself (a semi-supervised method's unlabeled rows).
fn in_data_units(fit: methods::Fit, target: Option<&Scaler>) -> methods::Fit {
    let Some(t) = target else {
        return fit;
    };
    let mut matrices = fit.matrices;
    for (name, m) in matrices.iter_mut() {
        if name.starts_with("predictions_") {
            t.invert(m);
        }
    }
    methods::Fit {
        model: TargetScaled::wrap(fit.model, Some(t)),
        matrices,
        ..fit
    }
}

fn predict_or_empty(model: &dyn methods::Model, p: &Problem) -> Result<Array2<f64>> {
    if p.x_test.nrows() == 0 {
        Ok(Array2::zeros((0, p.n_outputs())))
    } else {
        model.predict(p.x_test.view())
    }
}

/// Every hyperparameter with its default filled in, so a session states exactly what ran.
fn filled_params(method: &dyn Method, given: &Params) -> Params {
    let resolved = given.resolve(method.params());
    let mut out = Params::new();
    for spec in method.params() {
        if let Some(v) = resolved.get(spec.key) {
            out.set(spec.key, v);
        }
    }
    out
}

/// A note when the baseline beat the method on the test rows by more than 1 % of its score:
/// the method is judged against it, and a user who sees it lose should know where to look.
fn behind_baseline(
    task: data::Task,
    method: &str,
    got: &MetricMap,
    base: &MetricMap,
) -> Option<String> {
    let (key, higher_is_better) = metrics::primary(task);
    let (g, b) = (*got.get(key)?, *base.get(key)?);
    let margin = 0.01 * b.abs();
    let behind = if higher_is_better {
        g < b - margin
    } else {
        g > b + margin
    };
    behind.then(|| {
        format!(
            "the krr baseline (identity output kernel, same input kernel) scored better on the \
             test rows: {key} {b:.4} against {method}'s {g:.4}; {method}'s hyperparameters may \
             be far from their best on these data — choose them with `ovk sweep --cv 3`"
        )
    })
}

/// The identity-output-kernel baseline (krr) on the same data and kernel, at the run's λ
/// (or krr's default when the method has none), for the "beside the baseline" comparison.
fn baseline_scores(
    krr: &dyn Method,
    config: &RunConfig,
    problem: &Problem,
    (y_data, y_test): (&Array2<f64>, &Array2<f64>),
    target: Option<&Scaler>,
    prepared: &Prepared,
) -> Result<Option<Metrics>> {
    let lambda = match config.params.0.get("lambda") {
        Some(v) => Params::new().with("lambda", v.clone()),
        None => Params::new(),
    };
    if krr.params().iter().all(|s| s.key != "lambda") {
        return Ok(None);
    }
    // A baseline that fails (e.g. an ill-posed λ for plain ridge) is omitted, not fatal.
    let Ok(fit) = krr.fit(problem, &lambda, &mut Silent) else {
        return Ok(None);
    };
    let fit = in_data_units(fit, target);
    let rows = problem.labeled_rows();
    let (x_lab, y_lab) = labeled_part(&problem.x, y_data, &rows);
    let score = |y: ArrayView2<f64>, x: ArrayView2<f64>| -> Result<MetricMap> {
        if y.nrows() == 0 {
            return Ok(MetricMap::new());
        }
        let yhat = fit.model.predict(x)?;
        Ok(metrics::scores(
            prepared.task,
            config.data.class_coding,
            y,
            yhat.view(),
        ))
    };
    Ok(Some(Metrics {
        train: score(y_lab.view(), x_lab.view())?,
        test: score(y_test.view(), problem.x_test.view())?,
        unlabeled: None,
    }))
}
