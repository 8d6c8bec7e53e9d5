//! The low-rank input kernel `K ≈ ZZᵀ` under krr, okl and lowrank-okl: with every point a
//! landmark it equals the exact solve; with fewer it solves the approximated kernel exactly
//! (checked against dense brute-force formulas on K̃ = ZZᵀ); the linear kernel's primal route
//! is exact; and bad `--input-rank` values are refused naming the option.

use crate::common::{self, dense, max_abs_diff, params, scale};
use ndarray::{Array2, Axis};
use ovk_core::kernels::{gram, input_factor, InputRank, Kernel, KernelName, Landmarks};
use ovk_core::linalg::cholesky;
use ovk_core::methods::{
    self, Collect, Fit, MethodName, Params, Problem, ProblemShape, Route, Value,
};

/// ℓ training and t test points in 3-D with m correlated outputs, problem seed 11.
fn problem(seed: u64, l: usize, t: usize, m: usize, kernel: Kernel, rank: InputRank) -> Problem {
    common::sine_problem(seed, l, t, m, kernel, rank).with_seed(11)
}

fn fit(method: &str, p: &Problem, pairs: &[(&str, Value)]) -> Fit {
    common::fit(method, p, &params(pairs))
}

fn f(v: f64) -> Value {
    Value::Float(v)
}

/// krr, okl (qn), okl (bcd), lowrank-okl: the parameters of each are `method_params(i)`.
const CASES: [&str; 4] = ["krr", "okl", "okl", "lowrank-okl"];

fn method_params(i: usize) -> Vec<(&'static str, Value)> {
    match i {
        0 => vec![("lambda", f(0.1))],
        1 => vec![("lambda", f(0.1)), ("tol", f(1e-11))],
        2 => vec![
            ("lambda", f(0.1)),
            ("solver", Value::Text("bcd".into())),
            ("tol", f(1e-11)),
            ("max_iter", Value::Int(200_000)),
        ],
        _ => vec![
            ("lambda", f(0.05)),
            ("rank", Value::Int(2)),
            ("tol", f(1e-11)),
        ],
    }
}

#[test]
fn every_landmark_reproduces_the_exact_solve() {
    let (l, t, m) = (50, 20, 4);
    let kernel = Kernel::Gaussian { sigma: 1.3 };
    for (i, method) in CASES.iter().enumerate() {
        let params = method_params(i);
        let exact = problem(3, l, t, m, kernel, InputRank::Exact);
        let full = problem(3, l, t, m, kernel, InputRank::Rank(l));
        let fe = fit(method, &exact, &params);
        let ff = fit(method, &full, &params);
        let pe = fe.model.predict(exact.holdout_x()).unwrap();
        let pf = ff.model.predict(full.holdout_x()).unwrap();
        let err = max_abs_diff(&pe, &pf) / scale(&pe);
        assert!(
            err < 1e-8,
            "{method} (case {i}): predictions differ by {err:e}"
        );
        let (qe, qf) = (fe.objective.unwrap(), ff.objective.unwrap());
        assert!(
            (qe - qf).abs() < 1e-8 * qe.abs(),
            "{method} (case {i}): objective {qe} vs {qf}"
        );
        assert!(ff.details.contains_key("input_factor"), "{method}");
        assert!(!fe.details.contains_key("input_factor"), "{method}");
    }
}

/// Dense K̃ = ZZᵀ from the same factor the fit builds (same seed, rank and landmarks).
fn dense_approximation(p: &Problem, r: usize) -> (Array2<f64>, Array2<f64>) {
    let z = common::fit_factor(p, r);
    let zt = z.map.features(p.holdout_x()).unwrap();
    (z.z.dot(&z.z.t()), zt.dot(&z.z.t()))
}

#[test]
fn krr_on_a_factor_solves_the_approximated_kernel_exactly() {
    let (l, t, m, r) = (80, 15, 3, 12);
    let kernel = Kernel::Gaussian { sigma: 0.9 };
    let p = problem(5, l, t, m, kernel, InputRank::Rank(r));
    let lambda = 0.05;
    let got = fit("krr", &p, &[("lambda", f(lambda))]);
    // Brute force on the approximated kernel: C = (K̃ + λI)⁻¹ Y, Ŷ_test = K̃_test C.
    let (kt, kt_test) = dense_approximation(&p, r);
    let mut a = kt.clone();
    a.diag_mut().mapv_inplace(|v| v + lambda);
    let c = cholesky(a.view()).unwrap().solve(p.y.view());
    let want = kt_test.dot(&c);
    let pred = got.model.predict(p.holdout_x()).unwrap();
    let err = max_abs_diff(&pred, &want) / scale(&want);
    assert!(err < 1e-9, "prediction through z(x) vs K̃_test C: {err:e}");
    // The objective: OKL's eq. (3) at L = I on K̃.
    let kc = kt.dot(&c);
    let q = (&p.y - &kc).mapv(|v| v * v).sum() / (2.0 * lambda)
        + (&c * &kc).sum() / 2.0
        + m as f64 / 2.0;
    let qf = got.objective.unwrap();
    assert!(
        (q - qf).abs() < 1e-9 * q,
        "objective {qf} vs brute force {q}"
    );
    // After a method on the same rows (the pipeline's baseline), krr solves in the spectrum
    // that method left behind instead of by Cholesky: the same model and objective.
    // okl's test predictions come first, as in the pipeline: krr's may take the landmark
    // kernel of those rows that okl's kept.
    let okl = fit("okl", &p, &[("lambda", f(lambda))]);
    let _ = okl.model.predict(p.holdout_x()).unwrap();
    let again = fit("krr", &p, &[("lambda", f(lambda))]);
    let pred2 = again.model.predict(p.holdout_x()).unwrap();
    let err = max_abs_diff(&pred2, &want) / scale(&want);
    assert!(err < 1e-9, "spectral route vs K̃_test C: {err:e}");
    let q2 = again.objective.unwrap();
    assert!(
        (q - q2).abs() < 1e-9 * q,
        "objective {q2} vs brute force {q}"
    );
    // The factor is recorded with its rank and trace error.
    let info = &got.details["input_factor"];
    assert_eq!(info["rank"], r);
    let te = info["trace_error"].as_f64().unwrap();
    let k = gram(&kernel, p.x.view()).unwrap();
    let brute_te = (k.diag().sum() - kt.diag().sum()) / k.diag().sum();
    assert!(
        (te - brute_te).abs() < 1e-12,
        "trace error {te} vs {brute_te}"
    );
}

#[test]
fn okl_on_a_factor_meets_its_optimality_condition_on_the_approximated_kernel() {
    let (l, t, m, r) = (70, 10, 4, 15);
    let kernel = Kernel::Gaussian { sigma: 1.0 };
    let p = problem(8, l, t, m, kernel, InputRank::Rank(r));
    let lambda = 0.1;
    let got = fit("okl", &p, &[("lambda", f(lambda)), ("tol", f(1e-12))]);
    let lmat = got
        .matrices
        .iter()
        .find(|(n, _)| n == "output_kernel")
        .unwrap()
        .1
        .clone();
    // On K̃: C solves K̃ C L + λ C = Y (eq. 6); at the optimum L = CᵀK̃C / 2.
    let (kt, kt_test) = dense_approximation(&p, r);
    let c = dense::kronecker_solve(&kt, &lmat, lambda, &p.y);
    let fixed = c.t().dot(&kt).dot(&c) * 0.5;
    let rel = max_abs_diff(&lmat, &fixed) / scale(&lmat);
    assert!(rel < 1e-6, "L vs CᵀK̃C/2: {rel:e}");
    let want = kt_test.dot(&c).dot(&lmat);
    let pred = got.model.predict(p.holdout_x()).unwrap();
    let err = max_abs_diff(&pred, &want) / scale(&want);
    assert!(err < 1e-8, "prediction vs K̃_test C L: {err:e}");
    // Q(L, C) on K̃, eq. (3).
    let kcl = kt.dot(&c).dot(&lmat);
    let q = (&p.y - &kcl).mapv(|v| v * v).sum() / (2.0 * lambda)
        + (c.t().dot(&kt).dot(&c) * &lmat).sum() / 2.0
        + lmat.mapv(|v| v * v).sum() / 2.0;
    let qf = got.objective.unwrap();
    assert!((q - qf).abs() < 1e-8 * q, "objective {qf} vs {q}");
}

#[test]
fn the_linear_kernel_is_solved_exactly_in_the_primal() {
    let (l, t, m) = (40, 10, 3);
    let spec_rank = [InputRank::Auto, InputRank::Exact];
    for (i, method) in CASES.iter().enumerate() {
        let params = method_params(i);
        // Reference: the exact Gram route, forced by a kernel the primal route does not take
        // (a polynomial of degree 1 with c = 0 is the linear kernel).
        let mut reference = problem(2, l, t, m, Kernel::Linear, InputRank::Exact);
        reference.kernel = Kernel::Polynomial {
            degree: 1,
            coef0: 0.0,
        };
        reference.kernel_spec.name = KernelName::Polynomial;
        let want = fit(method, &reference, &params)
            .model
            .predict(reference.holdout_x())
            .unwrap();
        for rank in spec_rank {
            let p = problem(2, l, t, m, Kernel::Linear, rank);
            let got = fit(method, &p, &params);
            assert_eq!(got.details["input_factor"]["route"], "primal", "{method}");
            let pred = got.model.predict(p.holdout_x()).unwrap();
            let err = max_abs_diff(&pred, &want) / scale(&want);
            assert!(
                err < 1e-8,
                "{method} (case {i}, {rank}): primal vs Gram {err:e}"
            );
        }
    }
}

#[test]
fn landmarks_are_deterministic_for_a_seed_and_trace_error_falls_with_rank() {
    let kernel = Kernel::Gaussian { sigma: 1.0 };
    let p = problem(9, 300, 0, 2, kernel, InputRank::Auto);
    let run = |r, seed| {
        input_factor(
            &kernel,
            p.x.view(),
            r,
            Landmarks::Rpcholesky,
            seed,
            &mut |_| Ok(()),
        )
        .unwrap()
    };
    let (a, b) = (run(30, 4), run(30, 4));
    assert_eq!(a.landmarks, b.landmarks);
    assert_eq!(a.z, b.z);
    let errs: Vec<f64> = [5, 20, 80].iter().map(|&r| run(r, 4).trace_error).collect();
    assert!(errs[0] > errs[1] && errs[1] > errs[2], "{errs:?}");
    // Rows of Z are z(x) for the training rows.
    let zx = a.map.features(p.x.view()).unwrap();
    assert!(max_abs_diff(&zx, &a.z) < 1e-8);
    let _ = p.x.axis_iter(Axis(0)).count();
}

/// Every method takes a rank: the shared factor's methods solve on a rank-R factor, mvml on its
/// own block Nyström (R landmark columns in all, tested in mvml_fit.rs) with no shared factor;
/// the workbench's flags agree with the route the engine takes.
#[test]
fn every_method_resolves_an_explicit_rank() {
    let p = problem(
        1,
        30,
        5,
        2,
        Kernel::Gaussian { sigma: 1.0 },
        InputRank::Rank(10),
    );
    let shape = ProblemShape::of(&p);
    for m in methods::registry() {
        assert!(m.takes_input_rank(), "{}", m.name());
        let route = m.input_route(&shape).unwrap();
        if m.input_factor() {
            assert!(
                matches!(route, Route::LowRank { rank: 10, .. }),
                "{}: {route:?}",
                m.name()
            );
        } else {
            assert_eq!((m.name(), route), ("mvml", Route::Exact));
        }
    }
    for name in ["krr", "okl", "lowrank-okl", "kde", "vvmr"] {
        assert!(methods::find_named(name).unwrap().input_factor(), "{name}");
    }
}

#[test]
fn an_input_rank_above_n_is_refused_naming_the_option() {
    let p = problem(
        1,
        30,
        5,
        2,
        Kernel::Gaussian { sigma: 1.0 },
        InputRank::Rank(31),
    );
    let e = methods::find(MethodName::Okl)
        .fit(&p, &Params::new(), &mut Collect::default())
        .err()
        .expect("rank 31 on 30 rows must be refused");
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("--input-rank 31"), "{e}");
}
