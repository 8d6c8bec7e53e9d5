//! MVML end to end: kernel ridge as a special case, Nyström at F = 100% equals the exact fit,
//! the objective never increases, and a clear error without views.

use ndarray::{Array2, Axis};
use ovk_core::data::rng::Rng;
use ovk_core::data::{Task, View};
use ovk_core::kernels::{cross_gram, gram, KernelSpec, Sigma};
use ovk_core::methods::krr::solve_ridge;
use ovk_core::methods::{Collect, Fit, Method, Params, Problem, Silent, Value};

fn problem(n: usize, n_test: usize, dims: &[usize], outputs: usize, seed: u64) -> Problem {
    let mut r = Rng::new(seed);
    let d: usize = dims.iter().sum();
    let x = Array2::from_shape_fn((n + n_test, d), |_| r.normal());
    let mut y = Array2::zeros((n + n_test, outputs));
    for i in 0..n + n_test {
        for k in 0..outputs {
            y[[i, k]] = (x[[i, 0]] * (k + 1) as f64).sin()
                + 0.5 * x[[i, d - 1]] * x[[i, 1]]
                + 0.1 * r.normal();
        }
    }
    let mut views = Vec::new();
    let mut start = 0;
    for (l, &dl) in dims.iter().enumerate() {
        views.push(View {
            name: format!("v{l}"),
            columns: (start..start + dl).collect(),
        });
        start += dl;
    }
    let spec = KernelSpec {
        sigma: Sigma::Value(1.7),
        ..KernelSpec::default()
    };
    let kernel = spec.resolve(x.view()).unwrap();
    Problem::new(x, y, kernel)
        .holding_out(n)
        .with_kernel_spec(spec)
        .with_views(views)
        .with_seed(seed)
}

fn mvml() -> &'static dyn Method {
    ovk_core::methods::find("mvml").unwrap()
}

fn max_rel(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let scale = b.iter().fold(0.0_f64, |m, x| m.max(x.abs())).max(1e-12);
    (a - b).iter().fold(0.0_f64, |m, x| m.max(x.abs())) / scale
}

/// The fit with `params` on exact Grams and on block Nyström with every point a landmark, with
/// their traces.
fn exact_and_full_nystrom(p: &Problem, params: &Params) -> [(Fit, Collect); 2] {
    [
        params.clone(),
        params.clone().with("nystrom", Value::Float(1.0)),
    ]
    .map(|params| {
        let mut obs = Collect::default();
        let fit = mvml().fit(p, &params, &mut obs).unwrap();
        (fit, obs)
    })
}

/// Two fits of the same problem agree: round by round objectives (1e-6) and test predictions.
fn assert_same_fit(label: &str, p: &Problem, [(fa, a), (fb, b)]: &[(Fit, Collect); 2]) {
    assert_eq!(a.records.len(), b.records.len(), "{label}");
    for (ra, rb) in a.records.iter().zip(&b.records) {
        assert!(
            (ra.objective - rb.objective).abs() < 1e-6 * ra.objective.abs(),
            "{label}: {} vs {}",
            ra.objective,
            rb.objective
        );
    }
    let (oa, ob) = (fa.objective.unwrap(), fb.objective.unwrap());
    assert!((oa - ob).abs() < 1e-6 * oa.abs(), "{label}: {oa} vs {ob}");
    let pa = fa.model.predict(p.holdout_x()).unwrap();
    let pb = fb.model.predict(p.holdout_x()).unwrap();
    assert!(max_rel(&pb, &pa) < 1e-6, "{label}: {}", max_rel(&pb, &pa));
}

#[test]
fn one_view_fixed_identity_is_kernel_ridge_on_k_squared() {
    // H A H = K I K = K²: eq. (8) is kernel ridge with the kernel K² and the same λ.
    let p = problem(25, 10, &[3], 2, 11);
    let params = Params::new()
        .with("fixed_metric", Value::Bool(true))
        .with("lambda", Value::Float(0.2));
    let fit = mvml().fit(&p, &params, &mut Silent).unwrap();
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let k2 = k.dot(&k);
    let c = solve_ridge(k2.view(), p.y.view(), 0.2).unwrap();
    let kt = cross_gram(&p.kernel, p.holdout_x(), p.x.view()).unwrap();
    let expect = kt.dot(&k).dot(&c);
    let got = fit.model.predict(p.holdout_x()).unwrap();
    assert!(max_rel(&got, &expect) < 1e-8, "{}", max_rel(&got, &expect));
    assert_eq!(fit.iterations, 0);
}

#[test]
fn one_view_fixed_identity_in_root_space_is_kernel_ridge_on_k() {
    // --metric-space root: Ψ Ψᵀ = K, so A = I is kernel ridge with K itself (the paper's Ã = I).
    let p = problem(25, 10, &[3], 2, 11);
    let params = Params::new()
        .with("fixed_metric", Value::Bool(true))
        .with("metric_space", Value::Text("root".into()))
        .with("lambda", Value::Float(0.2));
    let fit = mvml().fit(&p, &params, &mut Silent).unwrap();
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let c = solve_ridge(k.view(), p.y.view(), 0.2).unwrap();
    let kt = cross_gram(&p.kernel, p.holdout_x(), p.x.view()).unwrap();
    let expect = kt.dot(&c);
    let got = fit.model.predict(p.holdout_x()).unwrap();
    assert!(max_rel(&got, &expect) < 1e-6, "{}", max_rel(&got, &expect));
}

#[test]
fn root_space_nystrom_with_every_point_equals_its_exact_fit() {
    let p = problem(24, 8, &[2, 3, 2], 2, 12);
    let base = Params::new()
        .with("lambda", Value::Float(0.5))
        .with("eta", Value::Float(0.05))
        .with("metric_space", Value::Text("root".into()));
    let fits = exact_and_full_nystrom(&p, &base);
    assert_same_fit("root", &p, &fits);
    assert!(fits[0].0.converged);
}

#[test]
fn nystrom_with_every_point_equals_the_exact_fit_on_the_default_route() {
    let p = problem(24, 8, &[2, 3, 2], 2, 12);
    for a_step in ["optimal", "gradient"] {
        let base = Params::new()
            .with("lambda", Value::Float(0.5))
            .with("eta", Value::Float(0.05))
            .with("max_iter", Value::Int(8))
            .with("a_step", Value::Text(a_step.into()));
        assert_same_fit(a_step, &p, &exact_and_full_nystrom(&p, &base));
    }
}

#[test]
fn default_route_converges_to_its_first_order_conditions() {
    let p = problem(40, 10, &[2, 3, 2], 3, 17);
    let mut obs = Collect::default();
    let fit = mvml()
        .fit(
            &p,
            &Params::new().with("lambda", Value::Float(0.2)),
            &mut obs,
        )
        .unwrap();
    assert!(fit.converged);
    for r in fit.details["first_order_residual"].as_array().unwrap() {
        assert!(r.as_f64().unwrap() < 1e-6, "{r}");
    }
    for w in obs.records.windows(2) {
        assert!(w[1].objective <= w[0].objective);
    }
    // σ per view, view names, and axes for every saved matrix
    let sig = fit.details["view_sigmas"].as_object().unwrap();
    assert_eq!(sig.len(), 3);
    assert!(sig["v1"].as_f64().unwrap() > 0.0);
    assert_eq!(
        fit.details["view_names"],
        serde_json::json!(["v0", "v1", "v2"])
    );
    let axes = fit.details["axes"].as_object().unwrap();
    for (name, m) in &fit.matrices {
        let ax = &axes[name.as_str()];
        let count = |a: &serde_json::Value| -> usize {
            if let Some(l) = a.get("labels") {
                l.as_array().unwrap().len()
            } else {
                a["blocks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b["size"].as_u64().unwrap() as usize)
                    .sum()
            }
        };
        assert_eq!(count(&ax["rows"]), m.nrows(), "{name}");
        assert_eq!(count(&ax["cols"]), m.ncols(), "{name}");
    }
    assert!(axes.contains_key("metric_2"));
}

#[test]
fn nystrom_with_every_point_equals_the_exact_fit() {
    let p = problem(24, 8, &[2, 3, 2], 2, 12);
    let base = Params::new()
        .with("lambda", Value::Float(0.5))
        .with("eta", Value::Float(0.05))
        .with("max_iter", Value::Int(8))
        .with("tol", Value::Float(1e-12))
        .with("learn_weights", Value::Bool(true));
    let fits = exact_and_full_nystrom(&p, &base);
    let [(exact, _), (ny, _)] = &fits;
    let terms = exact.details["rank_one_terms"].as_array().unwrap();
    assert!(
        terms.iter().all(|t| t.as_u64().unwrap() > 0),
        "A was never updated: {terms:?}"
    );
    assert_same_fit("general route", &p, &fits);
    // the block norms agree too (A itself is the same matrix)
    let na = &exact.details["block_norms"];
    let nb = &ny.details["block_norms"];
    let flat = |j: &serde_json::Value| -> Vec<f64> {
        j.as_array()
            .unwrap()
            .iter()
            .flat_map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    for (x, y) in flat(na).iter().zip(flat(nb)) {
        assert!((x - y).abs() < 1e-6 * x.abs().max(1.0));
    }
}

fn assert_monotone(obs: &Collect) {
    assert!(obs.records.len() > 2, "too few iterations to test");
    for w in obs.records.windows(2) {
        assert!(
            w[1].objective <= w[0].objective * (1.0 + 1e-12),
            "objective rose: {} → {}",
            w[0].objective,
            w[1].objective
        );
    }
}

#[test]
fn objective_never_increases_and_large_steps_are_halved() {
    let p = problem(30, 5, &[2, 2, 3], 1, 13);
    let params = Params::new()
        .with("a_step", Value::Text("gradient".into()))
        .with("lambda", Value::Float(0.1))
        .with("eta", Value::Float(1e-3))
        .with("mu", Value::Float(400.0))
        .with("max_iter", Value::Int(15))
        .with("tol", Value::Float(1e-12));
    let mut obs = Collect::default();
    let fit = mvml().fit(&p, &params, &mut obs).unwrap();
    assert_monotone(&obs);
    let halvings = fit.details["step_halvings"].as_u64().unwrap();
    assert!(halvings > 0, "μ = 400 should need halving");
    assert!(obs
        .records
        .iter()
        .any(|r| r.step.is_some_and(|s| s < 400.0)));
    // the learned metric beats the fixed start it came from
    assert!(obs.records.last().unwrap().objective < obs.records[0].objective);
}

#[test]
fn sparse_and_weighted_variants_are_monotone_too() {
    let p = problem(30, 5, &[2, 2, 3], 2, 14);
    for (sparse, init) in [
        (true, "identity"),
        (true, "covariance"),
        (false, "covariance"),
    ] {
        let params = Params::new()
            .with("sparse", Value::Bool(sparse))
            .with("init", Value::Text(init.into()))
            .with("learn_weights", Value::Bool(true))
            .with("eta", Value::Float(0.5))
            .with("mu", Value::Float(0.5))
            .with("max_iter", Value::Int(10))
            .with("tol", Value::Float(1e-12));
        let mut obs = Collect::default();
        mvml().fit(&p, &params, &mut obs).unwrap();
        assert_monotone(&obs);
    }
}

#[test]
fn classification_scores_one_column_per_class() {
    let mut p = problem(40, 12, &[2, 3], 1, 15);
    let lab = |v: f64| if v > 0.0 { [1.0, -1.0] } else { [-1.0, 1.0] };
    let code = |y: &Array2<f64>| {
        let mut o = Array2::zeros((y.nrows(), 2));
        for (i, r) in y.axis_iter(Axis(0)).enumerate() {
            let c = lab(r[0]);
            o[[i, 0]] = c[0];
            o[[i, 1]] = c[1];
        }
        o
    };
    p.y = code(&p.y);
    if let Some(h) = p.holdout.as_mut() {
        h.y = code(&h.y);
    }
    p.task = Task::Multiclass;
    let fit = mvml()
        .fit(
            &p,
            &Params::new().with("max_iter", Value::Int(5)),
            &mut Silent,
        )
        .unwrap();
    let pred = fit.model.predict(p.holdout_x()).unwrap();
    assert_eq!(pred.dim(), (12, 2));
    let names: Vec<&str> = fit.matrices.iter().map(|(n, _)| n.as_str()).collect();
    assert!(
        names.contains(&"metric") && names.contains(&"metric_1") && names.contains(&"view_weights")
    );
}

#[test]
fn no_views_is_a_clear_input_error() {
    let mut p = problem(10, 2, &[2], 1, 16);
    p.views.clear();
    let err = mvml().fit(&p, &Params::new(), &mut Silent).err().unwrap();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("mvml needs views"), "{err}");
}

#[test]
fn fixed_covariance_metric_is_kernel_ridge_on_the_squared_sum_of_views() {
    // A = 𝟙𝟙ᵀ ⊗ I (MVML_Cov): Z A Zᵀ = K_w² with K_w = Σ_l w_l K_l, and g_l = K_w c for every
    // view, so the fit predicts k_w(x)ᵀ K_w c, c = (K_w² + λI)⁻¹ y — exact, and block Nyström
    // with every point a landmark.
    let p = problem(24, 8, &[2, 3, 2], 2, 12);
    let lambda = 0.5;
    let w = 1.0 / 3.0;
    let mut kw = Array2::<f64>::zeros((24, 24));
    let mut kw_test = Array2::<f64>::zeros((8, 24));
    for view in &p.views {
        let xl = p.x.select(Axis(1), &view.columns);
        let xt = p.holdout_x().select(Axis(1), &view.columns);
        kw.scaled_add(w, &gram(&p.kernel, xl.view()).unwrap());
        kw_test.scaled_add(w, &cross_gram(&p.kernel, xt.view(), xl.view()).unwrap());
    }
    let c = solve_ridge(kw.dot(&kw).view(), p.y.view(), lambda).unwrap();
    let expect = kw_test.dot(&kw).dot(&c);
    let base = Params::new()
        .with("fixed_metric", Value::Bool(true))
        .with("init", Value::Text("covariance".into()))
        .with("lambda", Value::Float(lambda));
    for (route, (fit, _)) in ["exact", "Nyström 100 %"]
        .iter()
        .zip(exact_and_full_nystrom(&p, &base))
    {
        let got = fit.model.predict(p.holdout_x()).unwrap();
        let err = max_rel(&got, &expect);
        assert!(err < 1e-6, "{route}: {err}");
    }
}

/// A Nyström fit reports its decomposition step by step: one step per view, then the basis
/// the default route shares across views; the general route has no shared basis.
#[test]
fn nystrom_decomposition_reports_a_step_per_view_and_one_for_the_basis() {
    let p = problem(60, 10, &[2, 2, 3], 2, 5);
    let base = Params::default().with("nystrom", Value::Float(0.3));
    let general = base.clone().with("learn_weights", Value::Bool(true));
    for (params, basis) in [(base, 1), (general, 0)] {
        let mut obs = Collect::default();
        mvml().fit(&p, &params, &mut obs).unwrap();
        let total = 3 + basis;
        let mut want: Vec<(usize, usize)> = (1..=3).map(|i| (i, 3)).collect();
        want.extend((1..=total).map(|i| (i, total)));
        assert_eq!(obs.steps, want, "basis steps {basis}");
        let at = |ph| obs.phases.iter().position(|&q| q == ph).unwrap();
        assert!(at(ovk_core::methods::Phase::Gram) < at(ovk_core::methods::Phase::Decomposition));
    }
}

/// `--input-rank R` is block Nyström on R landmark columns in all, ⌊R/v⌋ per view — the same
/// fit as the fraction that takes those landmarks; a rank that leaves a view without a
/// landmark, exceeds v·n, or comes with `--nystrom` is refused naming the option.
#[test]
fn an_input_rank_is_r_over_v_landmarks_per_view() {
    use ovk_core::kernels::InputRank;
    let n = 60;
    let mut p = problem(n, 10, &[2, 2, 3], 2, 7);
    p.kernel_spec.input_rank = InputRank::Rank(31);
    let by_rank = mvml().fit(&p, &Params::default(), &mut Silent).unwrap();
    p.kernel_spec.input_rank = InputRank::Auto;
    let by_fraction = Params::default().with("nystrom", Value::Float(10.5 / n as f64));
    let by_nystrom = mvml().fit(&p, &by_fraction, &mut Silent).unwrap();
    let metric = |f: &Fit| {
        f.matrices
            .iter()
            .find(|(k, _)| k == "metric")
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(metric(&by_rank).dim(), (30, 30));
    // the user chose the rank: no note about an automatic choice
    assert!(
        by_rank.notes.iter().all(|n| !n.contains("exact limit")),
        "{:?}",
        by_rank.notes
    );
    assert!(max_rel(&metric(&by_rank), &metric(&by_nystrom)) < 1e-12);
    assert_eq!(by_rank.objective, by_nystrom.objective);
    for (rank, nystrom, want) in [
        (2, None, "no landmark"),
        (3 * n + 1, None, "larger than"),
        (30, Some(0.5), "--nystrom"),
    ] {
        p.kernel_spec.input_rank = InputRank::Rank(rank);
        let params = match nystrom {
            Some(f) => Params::default().with("nystrom", Value::Float(f)),
            None => Params::default(),
        };
        let err = mvml()
            .fit(&p, &params, &mut Silent)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains(&format!("--input-rank {rank}")) && err.contains(want),
            "{err}"
        );
    }
}

/// Beyond the exact limit, with no fraction given and `--input-rank auto`, mvml fits block
/// Nyström on AUTO_RANK landmark columns in all and says so; `--input-rank exact` keeps the
/// exact fit (its memory estimate is the n×n one).
#[test]
fn beyond_the_exact_limit_mvml_chooses_block_nystrom_and_says_so() {
    use ovk_core::kernels::InputRank;
    use ovk_core::methods::input::{AUTO_EXACT_MAX, AUTO_RANK};
    use ovk_core::methods::ProblemShape;
    /// Phases and notes in the order they come.
    #[derive(Default)]
    struct Events(Vec<String>);
    impl ovk_core::methods::Observer for Events {
        fn phase(&mut self, phase: ovk_core::methods::Phase, _total: Option<usize>) {
            self.0.push(format!("phase {}", phase.label()));
        }
        fn note(&mut self, msg: &str) {
            self.0.push(format!("note {msg}"));
        }
    }
    let n = AUTO_EXACT_MAX + 1;
    let p = problem(n, 5, &[2, 2], 1, 3);
    let mut events = Events::default();
    let fit = mvml().fit(&p, &Params::default(), &mut events).unwrap();
    let per_view = AUTO_RANK / 2;
    // said once, before any work
    let said: Vec<usize> = (0..events.0.len())
        .filter(|&i| events.0[i].contains("fitted by block Nyström"))
        .collect();
    assert_eq!(said, vec![0], "{:?}", events.0);
    assert!(
        fit.notes.iter().any(|m| m.contains(&format!(
            "fitted by block Nyström on {per_view} landmarks per view"
        ))),
        "{:?}",
        fit.notes
    );
    // the metric over all landmark columns is small enough to be saved
    let metric = &fit.matrices.iter().find(|(k, _)| k == "metric").unwrap().1;
    assert_eq!(metric.dim(), (AUTO_RANK, AUTO_RANK));
    // the fraction the note gives reproduces the same landmarks
    let note = fit.notes.iter().find(|m| m.contains("--nystrom ")).unwrap();
    let f: f64 = note
        .split("(--nystrom ")
        .nth(1)
        .and_then(|t| t.split(')').next())
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!((f * n as f64).floor() as usize, per_view);
    // --input-rank exact: no automatic choice, and the n×n memory estimate
    let mut shape = ProblemShape::of(&p);
    let auto = mvml().peak_bytes(&shape, &Params::default()).unwrap();
    shape.input_rank = InputRank::Exact;
    let exact = mvml().peak_bytes(&shape, &Params::default()).unwrap();
    assert!(exact > 2 * auto, "exact {exact} auto {auto}");
}

/// A Nyström fit predicts through the landmarks: its memory estimate has no test-by-training
/// cross Gram (at 80 000 training and 20 000 test rows that alone is 12.8 GB, and it refused a
/// fit that takes 2.9 GB).
#[test]
fn a_nystrom_memory_estimate_counts_predictions_against_the_landmarks() {
    use ovk_core::methods::ProblemShape;
    let p = problem(60, 10, &[2, 2], 1, 5);
    let mut shape = ProblemShape::of(&p);
    (shape.n_train, shape.n_labeled, shape.n_test) = (80_000, 80_000, 20_000);
    let params = Params::default().with("nystrom", Value::Float(0.0125));
    let est = mvml().peak_bytes(&shape, &params).unwrap();
    assert!(est < 8 * 20_000 * 80_000, "{est}");
}

/// A metric over the 2000×2000 limit is not saved, and the notes say so without naming a
/// 'metric' matrix the session does not hold; block norms are saved for every output.
#[test]
fn an_unsaved_metric_is_not_named_in_the_notes() {
    // Three views of 700 training rows: a 2100×2100 metric per output.
    let p = problem(700, 5, &[1, 1, 1], 2, 21);
    let fit = mvml().fit(&p, &Params::default(), &mut Silent).unwrap();
    assert!(fit.matrices.iter().all(|(k, _)| !k.starts_with("metric")));
    assert!(fit.matrices.iter().any(|(k, _)| k == "block_norms"));
    assert!(
        fit.notes
            .iter()
            .any(|n| n.contains("saved for 0 of 2 outputs")),
        "{:?}",
        fit.notes
    );
    assert!(
        !fit.notes
            .iter()
            .any(|n| n.contains("'metric' is output 0's")),
        "{:?}",
        fit.notes
    );
}
