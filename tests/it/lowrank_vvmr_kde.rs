//! vvmr and kde on the shared low-rank input factor `K ≈ ZZᵀ`: the sparse k-NN graph and
//! Laplacian equal the dense ones; with every point a landmark both equal their exact solves;
//! with fewer, vvmr solves eq. (17) exactly for `G = ZZᵀ` (a dense Kronecker system on a tiny
//! problem) and predicts `K̃_test A Q`; bad `--input-rank` values exit 2 naming the option.

use crate::common::{
    binary, dense, fit, fit_factor, matrix, max_abs_diff, normal, scale, sine_problem,
};
use ndarray::s;
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{
    knn_graph, knn_sparse, laplacian, laplacian_power, GraphWeights, InputRank, Kernel,
    LaplacianKind, SparseLaplacian,
};
use ovk_core::methods::{self, vvmr, Collect, Params, Problem, Value};

/// n training rows (the first `labeled` of them with targets, the rest NaN) and t test rows in
/// 3-D with m outputs.
fn problem(seed: u64, n: usize, labeled: usize, t: usize, m: usize, rank: InputRank) -> Problem {
    let kernel = Kernel::Gaussian { sigma: 1.3 };
    sine_problem(seed, n, t, m, kernel, rank)
        .with_labeled((0..n).map(|i| i < labeled).collect())
        .with_seed(5)
}

/// vvmr settings that make every part of eq. (17) matter.
fn vvmr_params(kind: &str, weights: &str, power: i64) -> Params {
    Params::new()
        .with("gamma_a", Value::Float(0.05))
        .with("gamma_i", Value::Float(0.02))
        .with("gamma_o", Value::Float(0.6))
        .with("knn", Value::Int(4))
        .with("output_knn", Value::Int(1))
        .with("laplacian", Value::Text(kind.into()))
        .with("graph_weights", Value::Text(weights.into()))
        .with("laplacian_power", Value::Int(power))
}

const SETTINGS: [(&str, &str, i64); 4] = [
    ("normalized", "heat", 1),
    ("unnormalized", "binary", 1),
    ("normalized", "binary", 2),
    ("unnormalized", "heat", 3),
];

#[test]
fn the_sparse_graph_and_laplacian_equal_the_dense_ones() {
    let mut rng = Rng::new(3);
    let x = normal(&mut rng, 150, 4);
    for k in [1, 5, 12] {
        for weights in [GraphWeights::Binary, GraphWeights::Heat] {
            let dense = knn_graph(x.view(), k, weights).unwrap();
            let sparse = knn_sparse(x.view(), k, weights, &mut |_| Ok(())).unwrap();
            let e = max_abs_diff(&sparse.to_dense(), &dense);
            assert!(e < 1e-12, "k={k} {weights:?}: graph {e:e}");
            for kind in [LaplacianKind::Normalized, LaplacianKind::Unnormalized] {
                for p in [1, 2, 3] {
                    let want = laplacian_power(&laplacian(&dense, kind), p);
                    let got = SparseLaplacian::new(sparse.clone(), kind, p).to_dense();
                    let e = max_abs_diff(&got, &want) / scale(&want);
                    assert!(e < 1e-12, "k={k} {weights:?} {kind:?} p={p}: {e:e}");
                }
            }
        }
    }
    // Ties are broken by row order, as in the dense graph; an isolated node is impossible
    // (k ≥ 1), so duplicates make zero-length edges with weight 1.
    let x = ndarray::array![[0.0], [1.0], [-1.0], [2.0], [2.0]];
    for weights in [GraphWeights::Binary, GraphWeights::Heat] {
        let dense = knn_graph(x.view(), 1, weights).unwrap();
        let sparse = knn_sparse(x.view(), 1, weights, &mut |_| Ok(())).unwrap();
        assert!(
            max_abs_diff(&sparse.to_dense(), &dense) < 1e-15,
            "{weights:?}"
        );
    }
}

#[test]
fn vvmr_with_every_point_a_landmark_equals_the_exact_solve() {
    let (n, ell, t, m) = (60, 25, 15, 4);
    for (kind, weights, power) in SETTINGS {
        let params = vvmr_params(kind, weights, power);
        let exact = problem(7, n, ell, t, m, InputRank::Exact);
        let full = problem(7, n, ell, t, m, InputRank::Rank(n));
        let fe = fit("vvmr", &exact, &params);
        let ff = fit("vvmr", &full, &params);
        let what = format!("{kind} {weights} p={power}");
        let pe = fe.model.predict(exact.holdout_x()).unwrap();
        let pf = ff.model.predict(full.holdout_x()).unwrap();
        let e = max_abs_diff(&pe, &pf) / scale(&pe);
        assert!(e < 1e-8, "{what}: test predictions differ by {e:e}");
        for name in ["predictions_unlabeled", "coefficients", "output_q"] {
            let (a, b) = (matrix(&fe, name), matrix(&ff, name));
            let e = max_abs_diff(a, b) / scale(a);
            assert!(e < 1e-8, "{what}: {name} differs by {e:e}");
        }
        let (qe, qf) = (fe.objective.unwrap(), ff.objective.unwrap());
        assert!((qe - qf).abs() < 1e-8 * qe.abs(), "{what}: {qe} vs {qf}");
        let res = ff.details["sylvester_residual"].as_f64().unwrap();
        assert!(res < 1e-10, "{what}: residual {res:e}");
        assert_eq!(ff.details["input_factor"]["route"], "low_rank");
        assert!(!fe.details.contains_key("input_factor"));
    }
}

#[test]
fn vvmr_without_the_graph_term_skips_the_graph_and_still_equals_the_exact_solve() {
    // γ_I = 0: the factor route builds no k-NN graph (its term weighs 0) and must still solve
    // eq. (17) as the exact route does with its dense graph.
    let (n, ell, t, m) = (60, 25, 15, 4);
    let params = vvmr_params("normalized", "heat", 2).with("gamma_i", Value::Float(0.0));
    let exact = problem(7, n, ell, t, m, InputRank::Exact);
    let full = problem(7, n, ell, t, m, InputRank::Rank(n));
    let (fe, ff) = (fit("vvmr", &exact, &params), fit("vvmr", &full, &params));
    let pe = fe.model.predict(exact.holdout_x()).unwrap();
    let pf = ff.model.predict(full.holdout_x()).unwrap();
    let e = max_abs_diff(&pe, &pf) / scale(&pe);
    assert!(e < 1e-8, "test predictions differ by {e:e}");
    let (qe, qf) = (fe.objective.unwrap(), ff.objective.unwrap());
    assert!((qe - qf).abs() < 1e-8 * qe.abs(), "{qe} vs {qf}");
    assert_eq!(ff.details["graph_edges"], 0);
    let with_graph = fit("vvmr", &full, &vvmr_params("normalized", "heat", 2));
    assert!(with_graph.details["graph_edges"].as_u64().unwrap() > 0);
}

#[test]
fn vvmr_on_a_factor_solves_eq_17_for_the_approximated_kernel() {
    let (n, ell, t, m, r) = (40, 15, 10, 3, 9);
    for (kind, weights, power) in SETTINGS {
        let what = format!("{kind} {weights} p={power}");
        let params = vvmr_params(kind, weights, power);
        let p = problem(11, n, ell, t, m, InputRank::Rank(r));
        let got = fit("vvmr", &p, &params);
        // Brute force with the same factor (same seed, rank and landmarks) and the dense graph.
        let f = fit_factor(&p, r);
        assert_eq!(f.rank(), r);
        let g = f.z.dot(&f.z.t());
        let kind_l = <LaplacianKind as ovk_core::util::choice::Choice>::parse(kind).unwrap();
        let w = knn_graph(
            p.x.view(),
            4,
            <GraphWeights as ovk_core::util::choice::Choice>::parse(weights).unwrap(),
        )
        .unwrap();
        let l = laplacian_power(&laplacian(&w, kind_l), power as usize);
        let (gamma_a, gamma_i) = (0.05, 0.02);
        let mg = vvmr::left_matrix(g.view(), l.view(), &p.labeled, gamma_i);
        let q = matrix(&got, "output_q");
        let y = p.y.mapv(|v| if v.is_finite() { v } else { 0.0 });
        let a = dense::kronecker_solve(&mg, q, ell as f64 * gamma_a, &y);
        let a_fit = matrix(&got, "coefficients");
        let e = max_abs_diff(a_fit, &a) / scale(&a);
        assert!(e < 1e-8, "{what}: A vs the Kronecker solve: {e:e}");
        // Predictions through z(x) equal K̃_test A Q.
        let kt_test = f.map.features(p.holdout_x()).unwrap().dot(&f.z.t());
        let want = kt_test.dot(&a).dot(q);
        let pred = got.model.predict(p.holdout_x()).unwrap();
        let e = max_abs_diff(&pred, &want) / scale(&want);
        assert!(e < 1e-8, "{what}: predictions vs K̃_test A Q: {e:e}");
        // Objective (12) and the Sylvester residual on K̃, by the dense formulas.
        let terms = vvmr::Terms {
            g: g.view(),
            l: l.view(),
            labeled: &p.labeled,
            q: q.view(),
            y: y.view(),
            gamma_a,
            gamma_i,
        };
        let obj = terms.objective(a.view());
        let qf = got.objective.unwrap();
        assert!((obj - qf).abs() < 1e-9 * obj.abs(), "{what}: {qf} vs {obj}");
        let res = terms.residual(a_fit.view());
        let rf = got.details["sylvester_residual"].as_f64().unwrap();
        assert!(
            res < 1e-10 && rf < 1e-10,
            "{what}: residual {res:e} / {rf:e}"
        );
        // The unlabeled rows' predictions are K̃ A Q on them.
        let f_train = g.dot(&a).dot(q);
        let unl = f_train.slice(s![ell.., ..]).to_owned();
        let e = max_abs_diff(matrix(&got, "predictions_unlabeled"), &unl) / scale(&unl);
        assert!(e < 1e-8, "{what}: unlabeled predictions {e:e}");
    }
}

fn kde_params(ovk: &str, output: &str, preimage: &str) -> Params {
    Params::new()
        .with("lambda", Value::Float(0.1))
        .with("ovk", Value::Text(ovk.into()))
        .with("output_kernel", Value::Text(output.into()))
        .with("preimage", Value::Text(preimage.into()))
}

#[test]
fn kde_with_every_point_a_landmark_equals_the_exact_solve() {
    let (n, t, m) = (40, 12, 3);
    for ovk in ["identity", "covariance", "conditional"] {
        // Continuous predictions: linear output kernel, closed-form pre-image.
        let params = kde_params(ovk, "linear", "closed-form");
        let exact = problem(4, n, n, t, m, InputRank::Exact);
        let full = problem(4, n, n, t, m, InputRank::Rank(n));
        let pe = fit("kde", &exact, &params)
            .model
            .predict(exact.holdout_x())
            .unwrap();
        let ff = fit("kde", &full, &params);
        let pf = ff.model.predict(full.holdout_x()).unwrap();
        let e = max_abs_diff(&pe, &pf) / scale(&pe);
        assert!(e < 1e-8, "{ovk}: closed-form predictions differ by {e:e}");
        assert_eq!(ff.details["input_factor"]["rank"], n, "{ovk}");
        // The same through --low-rank n,n (no --input-rank).
        let lr = kde_params(ovk, "linear", "closed-form")
            .with("low_rank", Value::Text(format!("{n},{n}")));
        let pl = fit("kde", &exact, &lr)
            .model
            .predict(exact.holdout_x())
            .unwrap();
        let e = max_abs_diff(&pe, &pl) / scale(&pe);
        assert!(e < 1e-8, "{ovk}: --low-rank n,n differs by {e:e}");
        // A Gaussian output kernel and candidates: the same pre-images.
        let params = kde_params(ovk, "gaussian", "candidates");
        let pe = fit("kde", &exact, &params)
            .model
            .predict(exact.holdout_x())
            .unwrap();
        let pf = fit("kde", &full, &params)
            .model
            .predict(full.holdout_x())
            .unwrap();
        assert!(max_abs_diff(&pe, &pf) < 1e-12, "{ovk}: candidates differ");
    }
}

#[test]
fn kde_input_rank_and_low_rank_agree_or_are_refused() {
    let p = problem(2, 30, 30, 5, 2, InputRank::Rank(10));
    // --input-rank 10 alone: M1 = M2 = 10.
    let f = fit("kde", &p, &Params::new());
    assert_eq!(f.details["rank_input_requested"], 10);
    assert_eq!(f.details["rank_output_requested"], 10);
    // --low-rank 10,6 with it: M2 from --low-rank.
    let f = fit(
        "kde",
        &p,
        &Params::new().with("low_rank", Value::Text("10,6".into())),
    );
    assert_eq!(f.details["rank_output_requested"], 6);
    // Different input ranks: refused naming both options.
    let e = methods::find(methods::MethodName::Kde)
        .fit(
            &p,
            &Params::new().with("low_rank", Value::Text("12,6".into())),
            &mut Collect::default(),
        )
        .err()
        .expect("disagreeing ranks must be refused");
    assert_eq!(e.exit_code(), 2);
    let msg = e.to_string();
    assert!(
        msg.contains("--input-rank") && msg.contains("--low-rank"),
        "{msg}"
    );
}

#[test]
fn an_input_rank_above_n_is_refused_naming_the_option() {
    for method in ["vvmr", "kde"] {
        let p = problem(1, 30, 30, 5, 2, InputRank::Rank(31));
        let e = methods::find_named(method)
            .unwrap()
            .fit(&p, &Params::new(), &mut Collect::default())
            .err()
            .expect("rank 31 on 30 rows must be refused");
        assert_eq!(e.exit_code(), 2, "{method}");
        assert!(e.to_string().contains("--input-rank 31"), "{method}: {e}");
    }
}

#[test]
fn bad_input_ranks_exit_2_from_the_command_line() {
    let dir = binary::temp_dir("lowrank2", "cli", true);
    let data = dir.join("t.csv");
    let mut rng = Rng::new(9);
    let mut text = String::from("a,b,y0,y1\n");
    for _ in 0..30 {
        let v: Vec<String> = (0..4).map(|_| format!("{:.4}", rng.normal())).collect();
        text.push_str(&v.join(","));
        text.push('\n');
    }
    std::fs::write(&data, text).unwrap();
    let store = dir.join("store");
    let cases: &[(&str, &[&str])] = &[("vvmr", &["--labeled", "0.5"]), ("kde", &[])];
    for (method, extra) in cases {
        for bad in ["0", "1000", "many"] {
            let mut args = vec![
                "run",
                "--data",
                data.to_str().unwrap(),
                "--targets",
                "y0,y1",
                "--method",
                method,
                "--input-rank",
                bad,
            ];
            args.extend_from_slice(extra);
            let out = binary::ovk(&args, &store);
            let err = binary::stderr(&out);
            assert_eq!(out.status.code(), Some(2), "{method} {bad}: {err}");
            assert!(err.contains("--input-rank"), "{method} {bad}: {err}");
            assert!(!err.contains("panicked"), "{method} {bad}: {err}");
            assert!(!binary::stdout(&out).contains("metrics"), "{method} {bad}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
