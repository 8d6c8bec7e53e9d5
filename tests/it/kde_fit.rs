//! The `kde` method end to end: pre-images, parameters, candidates files, session details.

use crate::common::normal;
use ndarray::Array2;
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{cross_gram, gram, Kernel};
use ovk_core::methods::kde::solve::{input_eigen, solve_alpha, solve_exact, Ovk};
use ovk_core::methods::{find, load_model, Collect, MethodName, Params, Problem, Value};
use ovk_core::ErrorKind;

fn random(n: usize, d: usize, seed: u64) -> Array2<f64> {
    normal(&mut Rng::new(seed), n, d)
}

fn problem(n: usize, n_test: usize) -> Problem {
    let x = random(n + n_test, 3, 1);
    // outputs: a smooth function of the inputs
    let y = Array2::from_shape_fn((n + n_test, 2), |(i, j)| {
        (x[[i, 0]] * (j as f64 + 1.0)).sin() + 0.5 * x[[i, 1]]
    });
    Problem::new(x, y, Kernel::Gaussian { sigma: 1.0 })
        .holding_out(n)
        .with_names(&["a", "b", "c"], &["u", "v"])
}

fn fit(p: &Problem, params: Params) -> ovk_core::Result<ovk_core::methods::Fit> {
    let m = find(MethodName::Kde);
    params.validate("kde", m.params())?;
    m.fit(p, &params, &mut Collect::default())
}

#[test]
fn preimage_returns_the_true_output_when_interpolating() {
    let p = problem(25, 5);
    for ovk in ["identity", "covariance", "conditional"] {
        let params = Params::new()
            .with("ovk", Value::Text(ovk.into()))
            .with("lambda", Value::Float(1e-6))
            .with("epsilon", Value::Float(1e-3));
        let f = fit(&p, params).unwrap();
        let pred = f.model.predict(p.x.view()).unwrap();
        let wrong = (0..25).filter(|&i| pred.row(i) != p.y.row(i)).count();
        assert_eq!(
            wrong, 0,
            "{ovk}: {wrong} training rows mapped to another candidate"
        );
    }
}

#[test]
fn details_and_trace_are_recorded() {
    let p = problem(30, 10);
    let m = find(MethodName::Kde);
    let mut obs = Collect::default();
    let f = m.fit(&p, &Params::new(), &mut obs).unwrap();
    let d = &f.details;
    assert_eq!(d["ovk"], "conditional");
    assert_eq!(d["solver"], "exact-sylvester");
    assert_eq!(d["output_kernel"], "gaussian");
    assert!(d["output_sigma"].as_f64().unwrap() > 0.0);
    // The fit never scores the held-out rows itself: the pipeline does, once.
    assert!(d.get("rbf_loss_test").is_none() && d.get("mse_test").is_none());
    assert_eq!(obs.records.len(), 1);
    assert!(obs.records[0].residual.unwrap() < 1e-10);
    assert!(f.objective.unwrap().is_finite());
    // α is not formed: the model holds the score operator, factored.
    assert!(f.matrices.is_empty());
    assert!(f.notes.iter().any(|n| n.contains("score_left·score_right")));
    let parts = f.model.parts();
    let dim = |name: &str| {
        parts
            .arrays
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, a)| a.dim())
    };
    assert_eq!(dim("score_left"), Some((30, 30)));
    assert_eq!(dim("score_right"), Some((30, 30)));
    assert_eq!(dim("candidate_gram"), None);
    assert_eq!(parts.settings["folded"], true);
}

#[test]
fn closed_form_needs_a_linear_output_kernel() {
    let p = problem(10, 0);
    let params = Params::new().with("preimage", Value::Text("closed-form".into()));
    match fit(&p, params) {
        Err(e) if e.kind() == ErrorKind::InvalidParameter => {
            assert!(e.to_string().contains("linear output kernel"), "{e}")
        }
        other => panic!("expected an input error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn closed_form_is_the_weighted_sum_of_training_outputs() {
    let p = problem(20, 6);
    let lambda = 0.1;
    let base = Params::new()
        .with("output_kernel", Value::Text("linear".into()))
        .with("ovk", Value::Text("covariance".into()))
        .with("lambda", Value::Float(lambda));
    let f = fit(
        &p,
        base.clone()
            .with("preimage", Value::Text("closed-form".into())),
    )
    .unwrap();
    let pred = f.model.predict(p.holdout_x()).unwrap();
    // ŷ = Σᵢ yᵢ [W k_x]ᵢ, W = Lg α / n (covariance, linear l: Lg = Y Yᵀ)
    let lg = p.y.dot(&p.y.t());
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let ke = input_eigen(k.view()).unwrap();
    let alpha = solve_alpha(Ovk::Covariance, &ke, lg.view(), lambda).unwrap();
    let w = lg.dot(&alpha) / 20.0;
    let kx = cross_gram(&p.kernel, p.x.view(), p.holdout_x()).unwrap();
    let reference = w.dot(&kx).t().dot(&p.y);
    let e = (&pred - &reference)
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(e < 1e-10, "{e:e}");
    assert_eq!(f.details["preimage"], "closed-form");
}

/// The fit keeps the score operator factored (`left · Uᵀ`, with the output side folded into
/// `left`): its predictions are those of the dense W of `solve_exact`, for every operator,
/// for the closed form (W) and for the training outputs as candidates (Lg W), and a model
/// loaded back from its parts predicts the same to the bit.
#[test]
fn fitted_model_predicts_as_the_dense_score_operator() {
    let p = problem(20, 6);
    let (lambda, eps) = (0.05, 0.1);
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let ke = input_eigen(k.view()).unwrap();
    let kx = cross_gram(&p.kernel, p.x.view(), p.holdout_x()).unwrap();
    let ovks = [
        (Ovk::Identity, "identity"),
        (Ovk::Covariance, "covariance"),
        (Ovk::Conditional { epsilon: eps }, "conditional"),
    ];
    for (ovk, name) in ovks {
        let base = Params::new()
            .with("ovk", Value::Text(name.into()))
            .with("lambda", Value::Float(lambda))
            .with("epsilon", Value::Float(eps));
        // The closed form: ŷ = Σᵢ yᵢ [W k_x]ᵢ.
        let lg = p.y.dot(&p.y.t());
        let params = base
            .clone()
            .with("output_kernel", Value::Text("linear".into()))
            .with("preimage", Value::Text("closed-form".into()));
        let f = fit(&p, params).unwrap();
        let w = solve_exact(ovk, &ke, lg.view(), lambda).unwrap().w;
        let reference = w.dot(&kx).t().dot(&p.y);
        let pred = f.model.predict(p.holdout_x()).unwrap();
        let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let e = (&pred - &reference)
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(
            e <= 1e-10 * scale,
            "{name}, closed form: {e:e} of {scale:e}"
        );
        // The training outputs as candidates: argmin_c l(y_c, y_c) − 2 [Lg W k_x]_c, l(y, y) = 1.
        let sigma = 0.7;
        let lg = gram(&Kernel::Gaussian { sigma }, p.y.view()).unwrap();
        let params = base.with("output_sigma", Value::Text(sigma.to_string()));
        let f = fit(&p, params).unwrap();
        let w = solve_exact(ovk, &ke, lg.view(), lambda).unwrap().w;
        let scores = lg.dot(&w).dot(&kx);
        let pred = f.model.predict(p.holdout_x()).unwrap();
        for (t, col) in scores.columns().into_iter().enumerate() {
            let mut order: Vec<usize> = (0..col.len()).collect();
            order.sort_by(|&a, &b| col[b].total_cmp(&col[a]));
            let gap = col[order[0]] - col[order[1]];
            assert!(gap > 1e-9, "{name}: test row {t} has a near tie ({gap:e})");
            assert_eq!(pred.row(t), p.y.row(order[0]), "{name}: test row {t}");
        }
        let back = load_model(f.model.parts()).unwrap();
        assert_eq!(
            back.predict(p.holdout_x()).unwrap(),
            pred,
            "{name}: reloaded"
        );
    }
}

/// A model saved before the output side was folded in (2026-12-02: `score_left` = W, no
/// `score_right`, the candidates' Gram rows as `candidate_gram`, no `folded` setting) still
/// loads and predicts as the folded one, for both pre-images.
#[test]
fn models_saved_unfolded_still_load_and_predict() {
    let p = problem(20, 6);
    let lambda = 0.05;
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let ke = input_eigen(k.view()).unwrap();
    let sigma = 0.7;
    let lg_gauss = gram(&Kernel::Gaussian { sigma }, p.y.view()).unwrap();
    let cases = [
        (
            "candidates",
            Params::new().with("output_sigma", Value::Text(sigma.to_string())),
            lg_gauss.clone(),
            lg_gauss,
        ),
        (
            "closed-form",
            Params::new()
                .with("output_kernel", Value::Text("linear".into()))
                .with("preimage", Value::Text("closed-form".into())),
            p.y.dot(&p.y.t()),
            Array2::zeros((0, 0)),
        ),
    ];
    for (what, params, lg, cand_gram) in cases {
        let params = params
            .with("ovk", Value::Text("covariance".into()))
            .with("lambda", Value::Float(lambda));
        let f = fit(&p, params).unwrap();
        let w = solve_exact(Ovk::Covariance, &ke, lg.view(), lambda)
            .unwrap()
            .w;
        let mut old = f.model.parts();
        old.settings.remove("folded");
        old.settings
            .insert("has_right".into(), serde_json::json!(false));
        old.arrays
            .retain(|(n, _)| n != "score_left" && n != "score_right");
        old.arrays.push(("score_left".into(), w));
        old.arrays.push(("candidate_gram".into(), cand_gram));
        let back = load_model(old).unwrap();
        let (a, b) = (
            back.predict(p.holdout_x()).unwrap(),
            f.model.predict(p.holdout_x()).unwrap(),
        );
        let e = (&a - &b).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(e < 1e-10, "{what}: {e:e}");
    }
}

#[test]
fn low_rank_solver_is_reported_with_ranks() {
    let p = problem(40, 10);
    let params = Params::new().with("low_rank", Value::Text("10,8".into()));
    let f = fit(&p, params).unwrap();
    assert_eq!(f.details["solver"], "incomplete-cholesky");
    assert_eq!(f.details["rank_input"], 10);
    assert_eq!(f.details["rank_output"], 8);
    let pred = f.model.predict(p.holdout_x()).unwrap();
    assert_eq!(pred.dim(), (10, 2));
}

#[test]
fn bad_low_rank_text_is_an_input_error() {
    let p = problem(10, 0);
    for bad in ["10", "a,b", "0,3", "1,2,3"] {
        let params = Params::new().with("low_rank", Value::Text(bad.into()));
        let kind = fit(&p, params).err().map(|e| e.kind());
        assert_eq!(kind, Some(ErrorKind::InvalidParameter), "{bad}");
    }
}

#[test]
fn candidates_file_is_read_and_checked() {
    let dir = crate::common::binary::temp_dir("kde", "candidates", true);
    let good = dir.join("cands.csv");
    std::fs::write(&good, "v,u\n1.0,2.0\n-1.0,0.5\n3.0,3.0\n").unwrap();
    let p = problem(15, 4);
    let f = fit(
        &p,
        Params::new().with("candidates", Value::Text(good.display().to_string())),
    )
    .unwrap();
    let pred = f.model.predict(p.holdout_x()).unwrap();
    // every prediction is one of the candidates, columns in the output order (u, v)
    let cands = [[2.0, 1.0], [0.5, -1.0], [3.0, 3.0]];
    for r in pred.rows() {
        assert!(cands.iter().any(|c| r[0] == c[0] && r[1] == c[1]), "{r:?}");
    }
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "u,w\n1.0,2.0\n").unwrap();
    match fit(
        &p,
        Params::new().with("candidates", Value::Text(bad.display().to_string())),
    ) {
        Err(e) => {
            assert_eq!(e.exit_code(), 2, "{e}");
            assert!(e.to_string().contains("`v`"), "{e}")
        }
        other => panic!("expected an input error, got {:?}", other.map(|_| ())),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
