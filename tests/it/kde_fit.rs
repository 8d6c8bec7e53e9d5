//! The `kde` method end to end: pre-images, parameters, candidates files, session details.

use crate::common::normal;
use ndarray::Array2;
use ovk_core::data::rng::Rng;
use ovk_core::kernels::Kernel;
use ovk_core::methods::{find, Collect, Params, Problem, Value};
use ovk_core::OvkError;

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
    let m = find("kde")?;
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
    let m = find("kde").unwrap();
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
    let (name, alpha) = &f.matrices[0];
    assert_eq!(name, "coefficients");
    assert_eq!(alpha.dim(), (30, 30));
}

#[test]
fn closed_form_needs_a_linear_output_kernel() {
    let p = problem(10, 0);
    let params = Params::new().with("preimage", Value::Text("closed-form".into()));
    match fit(&p, params) {
        Err(OvkError::Input(msg)) => assert!(msg.contains("linear output kernel"), "{msg}"),
        other => panic!("expected an input error, got {:?}", other.map(|_| ())),
    }
}

#[test]
fn closed_form_is_the_weighted_sum_of_training_outputs() {
    let p = problem(20, 6);
    let base = Params::new()
        .with("output_kernel", Value::Text("linear".into()))
        .with("ovk", Value::Text("covariance".into()));
    let f = fit(
        &p,
        base.clone()
            .with("preimage", Value::Text("closed-form".into())),
    )
    .unwrap();
    let pred = f.model.predict(p.holdout_x()).unwrap();
    // ŷ = Σᵢ yᵢ [W k_x]ᵢ, W = Lg α / n (covariance, linear l: Lg = Y Yᵀ)
    let alpha = &f.matrices[0].1;
    let lg = p.y.dot(&p.y.t());
    let w = lg.dot(alpha) / 20.0;
    let kx = ovk_core::kernels::cross_gram(&p.kernel, p.x.view(), p.holdout_x()).unwrap();
    let reference = w.dot(&kx).t().dot(&p.y);
    let e = (&pred - &reference)
        .iter()
        .fold(0.0f64, |m, v| m.max(v.abs()));
    assert!(e < 1e-10, "{e:e}");
    assert_eq!(f.details["preimage"], "closed-form");
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
        assert!(matches!(fit(&p, params), Err(OvkError::Input(_))), "{bad}");
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
        Err(OvkError::Input(msg)) => assert!(msg.contains("'v'"), "{msg}"),
        other => panic!("expected an input error, got {:?}", other.map(|_| ())),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
