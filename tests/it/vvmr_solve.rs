//! Vector-valued manifold regularisation (docs/methods.md §4): the fast Sylvester solve of eq. (17)
//! against the dense Kronecker system and against its special cases.

use crate::common::{matrix, normal};
use ndarray::{Array1, Array2, Axis};
use ovk_core::data::rng::Rng;
use ovk_core::data::Task;
use ovk_core::kernels::{
    gram, knn_graph, laplacian, laplacian_power, pinv_psd, GraphWeights, Kernel, KernelSpec,
    LaplacianKind,
};
use ovk_core::linalg::{eigh, lu, sylvester_sym};
use ovk_core::methods::krr::solve_ridge;
use ovk_core::methods::vvmr::{self, Vvmr};
use ovk_core::methods::{Collect, Method, Params, Problem, Value};

fn signs(r: usize, c: usize, rng: &mut Rng) -> Array2<f64> {
    Array2::from_shape_fn((r, c), |_| if rng.uniform() < 0.5 { -1.0 } else { 1.0 })
}

/// A random semi-supervised problem: inputs, Gram, Laplacian, labeled mask, Q, masked Y.
struct Case {
    x: Array2<f64>,
    g: Array2<f64>,
    l: Array2<f64>,
    labeled: Vec<bool>,
    q: Array2<f64>,
    y: Array2<f64>,
}

fn case(n_all: usize, d: usize, n_out: usize, kernel: Kernel, gamma_o: f64, seed: u64) -> Case {
    let mut rng = Rng::new(seed);
    let x = normal(&mut rng, n_all, d);
    let g = gram(&kernel, x.view()).unwrap();
    let l = vvmr::input_laplacian(
        x.view(),
        3,
        GraphWeights::Heat,
        LaplacianKind::Normalized,
        1,
    )
    .unwrap();
    let labeled: Vec<bool> = (0..n_all).map(|i| i % 3 != 2).collect();
    let mut y = signs(n_all, n_out, &mut rng);
    for (i, mut row) in y.rows_mut().into_iter().enumerate() {
        if !labeled[i] {
            row.fill(0.0);
        }
    }
    let rows: Vec<usize> = (0..n_all).filter(|&i| labeled[i]).collect();
    let (_, q) = vvmr::output_kernel(
        y.select(Axis(0), &rows).view(),
        2,
        GraphWeights::Heat,
        gamma_o,
    )
    .unwrap();
    Case {
        x,
        g,
        l,
        labeled,
        q,
        y,
    }
}

/// The dense (Nn)×(Nn) form of eq. (17) with column-major vec(A):
/// `(Q ⊗ M + ℓγ_A I) vec(A) = vec(Y)`, Q symmetric.
fn dense_solve(c: &Case, gamma_a: f64, gamma_i: f64) -> Array2<f64> {
    let (n_all, n_out) = c.y.dim();
    let ell = c.labeled.iter().filter(|&&b| b).count() as f64;
    let m = vvmr::left_matrix(c.g.view(), c.l.view(), &c.labeled, gamma_i);
    let size = n_all * n_out;
    let mut big = Array2::<f64>::zeros((size, size));
    for a in 0..n_out {
        for b in 0..n_out {
            for i in 0..n_all {
                for j in 0..n_all {
                    big[[a * n_all + i, b * n_all + j]] = c.q[[a, b]] * m[[i, j]];
                }
            }
        }
    }
    big.diag_mut().mapv_inplace(|v| v + ell * gamma_a);
    let rhs = Array2::from_shape_fn((size, 1), |(k, _)| c.y[[k % n_all, k / n_all]]);
    let v = lu(big.view()).unwrap().solve(rhs.view());
    Array2::from_shape_fn((n_all, n_out), |(i, a)| v[[a * n_all + i, 0]])
}

fn rel_err(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let d = (a - b).mapv(|v| v * v).sum().sqrt();
    d / b.mapv(|v| v * v).sum().sqrt().max(1e-300)
}

#[test]
fn fast_solve_equals_dense_kronecker_system() {
    for (seed, gamma_a, gamma_i, gamma_o) in [
        (1, 1e-2, 0.1, 0.5),
        (2, 1e-3, 1.0, 0.9),
        (3, 0.5, 0.01, 0.2),
    ] {
        let c = case(15, 3, 4, Kernel::Gaussian { sigma: 1.2 }, gamma_o, seed);
        let fast = vvmr::Terms {
            g: c.g.view(),
            l: c.l.view(),
            labeled: &c.labeled,
            q: c.q.view(),
            y: c.y.view(),
            gamma_a,
            gamma_i,
        }
        .solve()
        .unwrap();
        let dense = dense_solve(&c, gamma_a, gamma_i);
        let e = rel_err(&fast, &dense);
        assert!(e < 1e-8, "seed {seed}: relative error {e:e}");
    }
}

#[test]
fn zero_output_coupling_is_independent_laplacian_rls() {
    let c = case(14, 2, 3, Kernel::Gaussian { sigma: 1.0 }, 0.0, 7);
    // γ_O = 0 gives Q = I exactly.
    assert!(rel_err(&c.q, &Array2::eye(3)) < 1e-15);
    let (gamma_a, gamma_i) = (0.05, 0.3);
    let fast = vvmr::Terms {
        g: c.g.view(),
        l: c.l.view(),
        labeled: &c.labeled,
        q: c.q.view(),
        y: c.y.view(),
        gamma_a,
        gamma_i,
    }
    .solve()
    .unwrap();
    // Scalar Laplacian RLS per output: (J G + ℓγ_I L G + ℓγ_A I) a = y.
    let ell = c.labeled.iter().filter(|&&b| b).count() as f64;
    let mut m = vvmr::left_matrix(c.g.view(), c.l.view(), &c.labeled, gamma_i);
    m.diag_mut().mapv_inplace(|v| v + ell * gamma_a);
    let f = lu(m.view()).unwrap();
    for j in 0..3 {
        let col = c.y.column(j).to_owned().insert_axis(Axis(1));
        let a = f.solve(col.view());
        let got = fast.column(j).to_owned().insert_axis(Axis(1));
        assert!(rel_err(&got, &a) < 1e-9, "output {j}");
    }
}

#[test]
fn zero_manifold_weight_is_vector_valued_rls_with_kernel_kq() {
    let c = case(16, 3, 4, Kernel::Gaussian { sigma: 1.5 }, 0.6, 11);
    let gamma_a = 0.02;
    let fast = vvmr::Terms {
        g: c.g.view(),
        l: c.l.view(),
        labeled: &c.labeled,
        q: c.q.view(),
        y: c.y.view(),
        gamma_a,
        gamma_i: 0.0,
    }
    .solve()
    .unwrap();
    // Vector-valued RLS on the labeled points: G_ll A_l Q + ℓγ_A A_l = Y_l; A_u = 0.
    let rows: Vec<usize> = (0..16).filter(|&i| c.labeled[i]).collect();
    let ell = rows.len() as f64;
    let g_ll = c.g.select(Axis(0), &rows).select(Axis(1), &rows);
    let y_l = c.y.select(Axis(0), &rows);
    let a_l = sylvester_sym(g_ll.view(), c.q.view(), y_l.view(), ell * gamma_a).unwrap();
    assert!(rel_err(&fast.select(Axis(0), &rows), &a_l) < 1e-9);
    for i in (0..16).filter(|&i| !c.labeled[i]) {
        assert!(fast.row(i).iter().all(|v| v.abs() < 1e-10), "row {i}");
    }
}

#[test]
fn fully_labeled_without_graphs_is_kernel_ridge() {
    let mut rng = Rng::new(5);
    let n_all = 20;
    let x = normal(&mut rng, n_all, 3);
    let y = normal(&mut rng, n_all, 3);
    let g = gram(&Kernel::Gaussian { sigma: 1.0 }, x.view()).unwrap();
    let l = vvmr::input_laplacian(
        x.view(),
        4,
        GraphWeights::Binary,
        LaplacianKind::Normalized,
        1,
    )
    .unwrap();
    let labeled = vec![true; n_all];
    let (_, q) = vvmr::output_kernel(y.view(), 2, GraphWeights::Heat, 0.0).unwrap();
    let gamma_a = 0.01;
    let a = vvmr::Terms {
        g: g.view(),
        l: l.view(),
        labeled: &labeled,
        q: q.view(),
        y: y.view(),
        gamma_a,
        gamma_i: 0.0,
    }
    .solve()
    .unwrap();
    let c = solve_ridge(g.view(), y.view(), n_all as f64 * gamma_a).unwrap();
    assert!(rel_err(&a, &c) < 1e-9);
}

#[test]
fn laplacians_are_symmetric_psd_with_their_null_vector() {
    let mut rng = Rng::new(9);
    let x = normal(&mut rng, 25, 2);
    for weights in [GraphWeights::Binary, GraphWeights::Heat] {
        let w = knn_graph(x.view(), 4, weights).unwrap();
        assert_eq!(w, w.t());
        let d: Array1<f64> = w.sum_axis(Axis(1));
        assert!(d.iter().all(|&v| v > 0.0));
        for kind in [LaplacianKind::Normalized, LaplacianKind::Unnormalized] {
            let l = laplacian(&w, kind);
            assert!(rel_err(&l, &l.t().to_owned()) < 1e-15);
            let e = eigh(l.view()).unwrap();
            let top = e.values[e.values.len() - 1];
            assert!(e.values[0] > -1e-12 * top, "{kind:?}: {}", e.values[0]);
            if kind == LaplacianKind::Normalized {
                assert!(top <= 2.0 + 1e-12);
            }
            let null = match kind {
                LaplacianKind::Normalized => d.mapv(f64::sqrt),
                LaplacianKind::Unnormalized => Array1::ones(25),
            };
            let r = l.dot(&null);
            assert!(r.iter().all(|v| v.abs() < 1e-12), "{kind:?}");
            let l2 = laplacian_power(&l, 2);
            assert!(l2.dot(&null).iter().all(|v| v.abs() < 1e-11));
        }
    }
}

#[test]
fn pseudo_inverse_of_a_laplacian() {
    let mut rng = Rng::new(13);
    let x = normal(&mut rng, 8, 2);
    let w = knn_graph(x.view(), 2, GraphWeights::Heat).unwrap();
    let l = laplacian(&w, LaplacianKind::Normalized);
    let p = pinv_psd(&l, 1e-10).unwrap();
    // Moore–Penrose conditions (symmetric case): L P L = L, P L P = P.
    assert!(rel_err(&l.dot(&p).dot(&l), &l) < 1e-10);
    assert!(rel_err(&p.dot(&l).dot(&p), &p) < 1e-10);
}

#[test]
fn singular_gram_still_solves_accurately() {
    // Linear kernel on 2 features: G has rank 2 out of 18.
    let c = case(18, 2, 3, Kernel::Linear, 0.5, 17);
    let rank_gap = eigh(c.g.view()).unwrap().values[15].abs();
    assert!(rank_gap < 1e-10, "G should be singular");
    for gamma_i in [0.0, 0.5] {
        let fast = vvmr::Terms {
            g: c.g.view(),
            l: c.l.view(),
            labeled: &c.labeled,
            q: c.q.view(),
            y: c.y.view(),
            gamma_a: 1e-3,
            gamma_i,
        }
        .solve()
        .unwrap();
        let dense = dense_solve(&c, 1e-3, gamma_i);
        assert!(rel_err(&fast, &dense) < 1e-8, "γ_I = {gamma_i}");
        let res = vvmr::Terms {
            g: c.g.view(),
            l: c.l.view(),
            labeled: &c.labeled,
            q: c.q.view(),
            y: c.y.view(),
            gamma_a: 1e-3,
            gamma_i,
        }
        .residual(fast.view());
        assert!(res < 1e-12, "residual {res:e}");
    }
    assert_eq!(c.x.ncols(), 2);
}

fn problem(n_all: usize, seed: u64) -> Problem {
    let mut rng = Rng::new(seed);
    let x = normal(&mut rng, n_all, 3);
    // Labels driven by the inputs, with two tied labels.
    let y = Array2::from_shape_fn((n_all, 4), |(i, j)| {
        let s = match j {
            0 | 1 => x[[i, 0]],
            2 => x[[i, 1]],
            _ => x[[i, 2]] - x[[i, 0]],
        };
        if s > 0.0 {
            1.0
        } else {
            -1.0
        }
    });
    let kernel = KernelSpec::default().resolve(x.view()).unwrap();
    let x_test = normal(&mut rng, 5, 3);
    Problem::new(x, y, kernel)
        .with_labeled((0..n_all).map(|i| i % 2 == 0).collect())
        .with_holdout(x_test, Array2::zeros((5, 4)))
        .with_task(Task::Multilabel)
        .with_names(&["a", "b", "c"], &["l0", "l1", "l2", "l3"])
        .with_seed(seed)
}

#[test]
fn fit_saves_consistent_matrices_and_a_stationary_objective() {
    let p = problem(30, 21);
    let mut obs = Collect::default();
    let params = Params::new()
        .with("output_knn", Value::Int(1))
        .with("gamma_i", Value::Float(0.1));
    let fit = Vvmr.fit(&p, &params, &mut obs).unwrap();
    assert_eq!(obs.records.len(), 1);
    assert!(obs.records[0].residual.unwrap() < 1e-10);
    let get = |name: &str| matrix(&fit, name).clone();
    let a = get("coefficients");
    let q = get("output_q");
    assert_eq!(get("output_graph").dim(), (4, 4));
    let unl = get("predictions_unlabeled");
    assert_eq!(unl.dim(), (15, 4));
    // Transductive predictions equal the inductive model evaluated on the unlabeled rows.
    let rows: Vec<usize> = (0..30).filter(|&i| !p.labeled[i]).collect();
    let pred = fit
        .model
        .predict(p.x.select(Axis(0), &rows).view())
        .unwrap();
    assert!(rel_err(&pred, &unl) < 1e-10);
    // The identical labels l0, l1 are the heaviest output-graph edge (weight 1, distance 0).
    let ties = fit.details["tied_labels"].as_array().unwrap();
    assert_eq!(ties[0]["a"], "l0");
    assert_eq!(ties[0]["b"], "l1");
    assert_eq!(ties[0]["weight"].as_f64(), Some(1.0));
    assert_eq!(ties[0]["q"].as_f64(), Some(q[[0, 1]]));
    let top = fit.details["output_q_top"].as_array().unwrap();
    assert_eq!(top.len(), 6);
    let v0 = top[0]["value"].as_f64().unwrap().abs();
    assert!(top.iter().all(|e| e["value"].as_f64().unwrap().abs() <= v0));
    // The objective of problem (12) is minimal: any perturbation of A raises it.
    let g = gram(&p.kernel, p.x.view()).unwrap();
    let l = vvmr::input_laplacian(
        p.x.view(),
        10,
        GraphWeights::Heat,
        LaplacianKind::Normalized,
        1,
    )
    .unwrap();
    let mut y = p.y.clone();
    y.mapv_inplace(|v| if v.is_nan() { 0.0 } else { v });
    let obj = |a: &Array2<f64>| {
        vvmr::Terms {
            g: g.view(),
            l: l.view(),
            labeled: &p.labeled,
            q: q.view(),
            y: y.view(),
            gamma_a: 1e-2,
            gamma_i: 0.1,
        }
        .objective(a.view())
    };
    let f0 = obj(&a);
    assert!((f0 - fit.objective.unwrap()).abs() <= 1e-10 * f0.abs());
    let mut rng = Rng::new(3);
    for _ in 0..5 {
        let da = normal(&mut rng, 30, 4) * 1e-3;
        assert!(obj(&(&a + &da)) > f0);
    }
}

#[test]
fn gamma_o_one_is_rejected_with_a_clear_message() {
    let p = problem(12, 1);
    let params = Params::new().with("gamma_o", Value::Float(1.0));
    let err = Vvmr
        .fit(&p, &params, &mut Collect::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("gamma_o") && err.contains("< 1"), "{err}");
    assert!(vvmr::check_gamma_o(0.99).is_ok());
}

#[test]
fn single_output_regression_fits() {
    let mut p = problem(20, 4);
    p.y = p.y.select(Axis(1), &[2]);
    if let Some(h) = p.holdout.as_mut() {
        h.y = h.y.select(Axis(1), &[2]);
    }
    p.output_names = vec!["only".into()];
    p.task = Task::Regression;
    let fit = Vvmr
        .fit(&p, &Params::new(), &mut Collect::default())
        .unwrap();
    // One output: no output graph, Q = (1 − γ_O) = 0.5.
    let q = matrix(&fit, "output_q");
    assert_eq!(q.dim(), (1, 1));
    assert!((q[[0, 0]] - 0.5).abs() < 1e-15);
    let pred = fit.model.predict(p.holdout_x()).unwrap();
    assert_eq!(pred.dim(), (5, 1));
    assert!(pred.iter().all(|v| v.is_finite()));
}

#[test]
fn no_labeled_rows_is_an_input_error() {
    let mut p = problem(10, 2);
    p.labeled = vec![false; 10];
    let err = Vvmr.fit(&p, &Params::new(), &mut Collect::default());
    assert_eq!(
        err.err().map(|e| e.kind()),
        Some(ovk_core::ErrorKind::Input)
    );
}

/// Belkin et al.'s γ_I/(u + ℓ)² is eq. (12)'s γ_I divided by N²: the two scales give the same
/// fit when the Belkin γ_I is N² times the paper's, and a different one at the same number.
#[test]
fn belkin_gamma_i_scale_divides_by_n_squared() {
    let p = problem(30, 22);
    let fit = |gamma_i: f64, scale: &str| {
        let params = Params::new()
            .with("output_knn", Value::Int(1))
            .with("gamma_i", Value::Float(gamma_i))
            .with("gamma_i_scale", Value::Text(scale.into()));
        let f = Vvmr.fit(&p, &params, &mut Collect::default()).unwrap();
        (matrix(&f, "coefficients").clone(), f.details)
    };
    let (paper, _) = fit(0.2, "paper");
    let (belkin, details) = fit(0.2 * 900.0, "belkin");
    assert!(rel_err(&paper, &belkin) < 1e-10);
    assert_eq!(details["gamma_i_scale"], "belkin");
    assert!((details["gamma_i_eq12"].as_f64().unwrap() - 0.2).abs() < 1e-12);
    let (same_number, _) = fit(0.2, "belkin");
    assert!(rel_err(&paper, &same_number) > 1e-3);
}
