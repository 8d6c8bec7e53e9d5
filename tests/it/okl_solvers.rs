//! OKL (Dinuzzo et al. 2011) against brute force, its optimality conditions and monotonicity.

use crate::common::{matrix, normal, params};
use ndarray::{array, Array2};
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{gram, Kernel};
use ovk_core::linalg::{eigh, lu};
use ovk_core::methods::okl::{bcd, qn, LUpdate, Okl, Spectral};
use ovk_core::methods::{Collect, Method, Observer, Params, Problem, Value};
use ovk_core::{ErrorKind, OvkError};

/// ℓ points in 2-D with m correlated outputs (a shared latent signal plus noise).
fn random_problem(seed: u64, l: usize, m: usize) -> Problem {
    let mut rng = Rng::new(seed);
    let x = normal(&mut rng, l, 2);
    let mix = normal(&mut rng, 2, m);
    let y = x.mapv(f64::sin).dot(&mix) + normal(&mut rng, l, m) * 0.3;
    Problem::new(x, y, Kernel::Gaussian { sigma: 1.0 })
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn spectral(p: &Problem, lambda: f64) -> (Array2<f64>, Spectral) {
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let sp = Spectral::new(k.view(), p.y.view(), lambda).unwrap();
    (k, sp)
}

fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0, |m, v| m.max(v.abs()))
}

fn random_psd(rng: &mut Rng, m: usize) -> Array2<f64> {
    let a = normal(rng, m, m);
    a.dot(&a.t()) + Array2::<f64>::eye(m) * 0.1
}

// (a) the eigenbasis Sylvester solve against the dense Kronecker system.
#[test]
fn c_step_matches_dense_kronecker_system() {
    let (l_n, m) = (7, 3);
    for seed in 0..5 {
        let p = random_problem(seed, l_n, m);
        let lambda = 0.3 + seed as f64 * 0.2;
        let (k, sp) = spectral(&p, lambda);
        let mut rng = Rng::new(100 + seed);
        let l = random_psd(&mut rng, m);
        let c_fast = sp.coefficients(&sp.c_step(l.view()).unwrap().0);
        // (L ⊗ K + λI) vec C = vec Y, vec stacking columns.
        let n = l_n * m;
        let mut a = Array2::<f64>::zeros((n, n));
        for (bi, bj) in (0..m).flat_map(|i| (0..m).map(move |j| (i, j))) {
            for (i, j) in (0..l_n).flat_map(|i| (0..l_n).map(move |j| (i, j))) {
                a[[bi * l_n + i, bj * l_n + j]] = l[[bi, bj]] * k[[i, j]];
            }
        }
        a.diag_mut().mapv_inplace(|v| v + lambda);
        let vec_y = Array2::from_shape_fn((n, 1), |(r, _)| p.y[[r % l_n, r / l_n]]);
        let vec_c = lu(a.view()).unwrap().solve(vec_y.view());
        let c_dense = Array2::from_shape_fn((l_n, m), |(i, j)| vec_c[[j * l_n + i, 0]]);
        let rel = max_abs(&(&c_fast - &c_dense)) / max_abs(&c_dense);
        assert!(rel < 1e-8, "seed {seed}: relative difference {rel:e}");
        // The general row-by-row solve (used by the literal update) agrees too.
        let c_gen = sp.coefficients(&sp.c_step_general(l.view()).unwrap());
        assert!(max_abs(&(&c_gen - &c_dense)) / max_abs(&c_dense) < 1e-8);
    }
}

// (b) Q never increases over symmetric BCD sweeps.
#[test]
fn bcd_symmetric_objective_is_monotone() {
    for seed in 0..6 {
        let p = random_problem(10 + seed, 15, 3 + (seed as usize % 3));
        let lambda = [0.05, 0.3, 2.0][seed as usize % 3];
        let mut obs = Collect::default();
        let prm = params(&[
            ("solver", text("bcd")),
            ("lambda", Value::Float(lambda)),
            ("max_iter", Value::Int(300)),
            ("tol", Value::Float(1e-10)),
        ]);
        let fit = Okl.fit(&p, &prm, &mut obs).unwrap();
        let q: Vec<f64> = obs.records.iter().map(|r| r.objective).collect();
        assert!(q.len() > 5, "seed {seed}: only {} sweeps", q.len());
        for (k, w) in q.windows(2).enumerate() {
            assert!(
                w[1] <= w[0] + 1e-12 * w[0].abs(),
                "seed {seed}: Q rose at sweep {}: {} → {}",
                k + 2,
                w[0],
                w[1]
            );
        }
        // The returned pair re-solves C for the final L, which can only lower Q further.
        assert!(fit.objective.unwrap() <= q[q.len() - 1] * (1.0 + 1e-12));
    }
}

// (c) the counterexample of docs/methods.md §1.
#[test]
fn literal_update_is_not_symmetric_on_the_counterexample() {
    let k = array![[2.0, 0.0], [0.0, 1.0]];
    let y = array![[1.0, 0.0], [1.0, 1.0]];
    let sp = Spectral::new(k.view(), y.view(), 1.0).unwrap();
    let l0 = Array2::<f64>::zeros((2, 2));
    let lit = bcd::sweep(&sp, &l0, LUpdate::Literal).unwrap();
    let expected = array![[5.0, 1.0], [3.0, 5.0]] / 22.0;
    assert!(
        max_abs(&(&lit.l - &expected)) < 1e-14,
        "literal L = {:?}",
        lit.l
    );
    assert!((lit.l[[0, 1]] - lit.l[[1, 0]]).abs() > 0.09);
    let sym = bcd::sweep(&sp, &l0, LUpdate::Symmetric).unwrap();
    assert_eq!(sym.l, sym.l.t());

    // Through the method: linear kernel on x = diag(√2, 1) gives K = diag(2, 1).
    let x = array![[2f64.sqrt(), 0.0], [0.0, 1.0]];
    let p = Problem::new(x, y, Kernel::Linear);
    let prm = params(&[
        ("solver", text("bcd")),
        ("l_update", text("literal")),
        ("lambda", Value::Float(1.0)),
        ("max_iter", Value::Int(1)),
    ]);
    let mut obs = Collect::default();
    let fit = Okl.fit(&p, &prm, &mut obs).unwrap();
    assert!(max_abs(&(matrix(&fit, "output_kernel") - &expected)) < 1e-12);
    assert!(fit.notes.iter().any(|n| n.contains("non-symmetric")));
    assert!(!fit.converged);
}

// (d) at convergence L = CᵀKC/2, symmetric and PSD, for both solvers.
#[test]
fn converged_l_is_the_fixed_point() {
    for (seed, solver) in [(20, "qn"), (21, "qn"), (22, "bcd")] {
        let p = random_problem(seed, 20, 4);
        let prm = params(&[
            ("solver", text(solver)),
            ("lambda", Value::Float(0.5)),
            ("max_iter", Value::Int(20_000)),
            ("tol", Value::Float(1e-10)),
        ]);
        let fit = Okl.fit(&p, &prm, &mut Collect::default()).unwrap();
        assert!(fit.converged, "{solver}: {:?}", fit.notes);
        let l = matrix(&fit, "output_kernel");
        let c = matrix(&fit, "coefficients");
        let k = gram(&p.kernel, p.x.view()).unwrap();
        let half = c.t().dot(&k).dot(c) * 0.5;
        let rel = max_abs(&(l - &half)) / max_abs(l);
        assert!(rel < 1e-6, "{solver}: ‖L − CᵀKC/2‖ relative {rel:e}");
        assert_eq!(l, &l.t(), "{solver}: L not exactly symmetric");
        let min_eig = eigh(l.view()).unwrap().values[0];
        assert!(min_eig >= -1e-10, "{solver}: min eigenvalue {min_eig}");
        let fp = fit.details["fixed_point_residual"].as_f64().unwrap();
        assert!(fp < 1e-6, "{solver}: reported fixed-point residual {fp}");
        // C solves eq. (6) for the returned L: K C L + λ C = Y.
        let res = k.dot(c).dot(l) + c * 0.5 - &p.y;
        assert!(
            max_abs(&res) < 1e-9,
            "{solver}: Sylvester residual {}",
            max_abs(&res)
        );
    }
}

// (e) the two solvers agree.
#[test]
fn bcd_and_qn_reach_the_same_optimum() {
    for seed in [30, 31] {
        let p = random_problem(seed, 25, 3);
        let run = |solver: &str| {
            let prm = params(&[
                ("solver", text(solver)),
                ("lambda", Value::Float(0.4)),
                ("max_iter", Value::Int(50_000)),
                ("tol", Value::Float(1e-11)),
            ]);
            Okl.fit(&p, &prm, &mut Collect::default()).unwrap()
        };
        let (a, b) = (run("bcd"), run("qn"));
        assert!(a.converged && b.converged);
        let (qa, qb) = (a.objective.unwrap(), b.objective.unwrap());
        let rel = (qa - qb).abs() / qa.abs();
        assert!(rel < 5e-7, "objectives {qa} vs {qb}");
        let (la, lb) = (matrix(&a, "output_kernel"), matrix(&b, "output_kernel"));
        let d = max_abs(&(la - lb)) / max_abs(la);
        assert!(d < 1e-6, "L differs by {d:e}");
        // Same predictions on the training inputs.
        let pa = a.model.predict(p.x.view()).unwrap();
        let pb = b.model.predict(p.x.view()).unwrap();
        assert!(max_abs(&(&pa - &pb)) / max_abs(&pa) < 1e-6);
    }
}

// (f) the paper's stopping rule: stop at the first sweep with residual < δ.
#[test]
fn bcd_stops_at_the_first_residual_below_tol() {
    let p = random_problem(40, 15, 3);
    let tol = 1e-4;
    let bcd = |max_iter| {
        params(&[
            ("solver", text("bcd")),
            ("lambda", Value::Float(0.3)),
            ("tol", Value::Float(tol)),
            ("max_iter", Value::Int(max_iter)),
        ])
    };
    let prm = bcd(10_000);
    let mut obs = Collect::default();
    let fit = Okl.fit(&p, &prm, &mut obs).unwrap();
    let r: Vec<f64> = obs.records.iter().map(|r| r.residual.unwrap()).collect();
    assert!(fit.converged);
    assert_eq!(fit.iterations, r.len());
    assert!(r[r.len() - 1] < tol);
    assert!(r[..r.len() - 1].iter().all(|&v| v >= tol), "{r:?}");
    // The recorded residual is ‖Z + λC − Y‖/‖Y‖ with C of the last sweep: recompute it.
    let (_, sp) = spectral(&p, 0.3);
    let mut l = Array2::zeros((3, 3));
    let mut last = f64::NAN;
    for _ in 0..fit.iterations {
        let sw = bcd::sweep(&sp, &l, LUpdate::Symmetric).unwrap();
        last = sw.residual / sp.y_norm;
        l = sw.l;
    }
    assert!((last - r[r.len() - 1]).abs() <= 1e-12 * last.max(1e-300) + 1e-15);

    // Too few sweeps: not converged, and a note says so.
    let prm = bcd(2);
    let mut obs = Collect::default();
    let fit = Okl.fit(&p, &prm, &mut obs).unwrap();
    assert!(!fit.converged);
    assert_eq!((fit.iterations, obs.records.len()), (2, 2));
    assert!(fit.notes.iter().any(|n| n.contains("max-iter")));
}

// (g) the reduced objective is eq. (3) at C(L), and its gradient is the finite difference.
#[test]
fn reduced_objective_equals_q_at_c_of_l() {
    let mut rng = Rng::new(50);
    for seed in 0..4 {
        let p = random_problem(50 + seed, 12, 4);
        let (_, sp) = spectral(&p, 0.2 + 0.3 * seed as f64);
        let l = random_psd(&mut rng, 4);
        let red = sp.evaluate(&l).unwrap();
        let (ct, _) = sp.c_step(l.view()).unwrap();
        let q = sp.objective(&l, &ct);
        assert!(
            (red.value - q).abs() <= 1e-12 * q.abs(),
            "f = {}, Q = {q}",
            red.value
        );
        assert!(max_abs(&(&red.ct - &ct)) <= 1e-10 * max_abs(&ct));
        // Directional derivative along a symmetric direction D: ⟨∇f, D⟩.
        let d = {
            let a = normal(&mut rng, 4, 4);
            (&a + &a.t()) * 0.5
        };
        let h = 1e-6;
        let fp = sp.evaluate(&(&l + &(&d * h))).unwrap().value;
        let fm = sp.evaluate(&(&l - &(&d * h))).unwrap().value;
        let fd = (fp - fm) / (2.0 * h);
        let an = (&red.grad * &d).sum();
        assert!((fd - an).abs() < 1e-6 * an.abs().max(1.0), "{fd} vs {an}");
    }
}

// (h) cancellation.
#[test]
fn cancelled_observer_stops_the_fit() {
    struct Cancel;
    impl Observer for Cancel {
        fn is_cancelled(&self) -> bool {
            true
        }
    }
    let p = random_problem(60, 10, 2);
    for solver in ["qn", "bcd"] {
        let r = Okl.fit(&p, &params(&[("solver", text(solver))]), &mut Cancel);
        assert!(matches!(r, Err(OvkError::Cancelled)), "{solver}");
    }
}

#[test]
fn literal_with_qn_is_rejected_and_unlabeled_rows_are_ignored() {
    let p = random_problem(70, 10, 2);
    let r = Okl.fit(
        &p,
        &params(&[("l_update", text("literal"))]),
        &mut Collect::default(),
    );
    let e = r.err().expect("qn with the literal L-step is refused");
    assert_eq!(e.kind(), ErrorKind::InvalidParameter);
    assert!(e.to_string().contains("--solver bcd"), "{e}");

    // Hiding rows (NaN targets, labeled = false) gives the fit on the remaining rows.
    let mut q = random_problem(71, 12, 2);
    let keep: Vec<usize> = (0..8).collect();
    let sub = Problem::new(
        q.x.select(ndarray::Axis(0), &keep),
        q.y.select(ndarray::Axis(0), &keep),
        q.kernel,
    );
    for i in 8..12 {
        q.labeled[i] = false;
        q.y.row_mut(i).fill(f64::NAN);
    }
    let a = Okl
        .fit(&q, &Params::new(), &mut Collect::default())
        .unwrap();
    let b = Okl
        .fit(&sub, &Params::new(), &mut Collect::default())
        .unwrap();
    assert_eq!(a.objective, b.objective);
    assert_eq!(matrix(&a, "coefficients").nrows(), 8);
}

#[test]
fn qn_trace_and_scalar_start() {
    let p = random_problem(80, 20, 3);
    let (_, sp) = spectral(&p, 0.3);
    // α* is the minimiser of f(αI): f is higher a little to either side.
    let a = qn::scalar_start(&sp);
    let f = |t: f64| sp.evaluate(&(Array2::<f64>::eye(3) * t)).unwrap().value;
    assert!(a > 0.0 && f(a) <= f(a * 1.01) && f(a) <= f(a * 0.99));
    let mut obs = Collect::default();
    let fit = Okl.fit(&p, &Params::new(), &mut obs).unwrap();
    assert!(fit.converged);
    assert_eq!(obs.records.len(), fit.iterations);
    let last = obs.records.last().unwrap();
    assert!(last.residual.unwrap() < 1e-8);
    let q = fit.objective.unwrap();
    assert!((last.objective - q).abs() <= 1e-10 * q.abs());
    assert!(obs
        .records
        .windows(2)
        .all(|w| w[1].objective <= w[0].objective * (1.0 + 1e-12)));
}

// The flaw behind (b): the literal Lemma 4.1 update lets Q rise (well above rounding) on a
// problem where the symmetric update is monotone — so the monotonicity check can fail.
#[test]
fn literal_update_can_increase_q() {
    let mut rng = Rng::new(9);
    let (n, m) = (8, 3);
    let a = normal(&mut rng, n, n);
    let k = a.dot(&a.t());
    let y = normal(&mut rng, n, m);
    let sp = Spectral::new(k.view(), y.view(), 1.0).unwrap();
    let worst_rise = |update: LUpdate| {
        let mut l = Array2::<f64>::zeros((m, m));
        let mut prev = f64::INFINITY;
        let mut worst: f64 = 0.0;
        for _ in 0..300 {
            let sw = bcd::sweep(&sp, &l, update).unwrap();
            let q = sp.objective(&sw.l, &sw.ct);
            worst = worst.max((q - prev) / prev.abs());
            prev = q;
            l = sw.l;
        }
        worst
    };
    let literal = worst_rise(LUpdate::Literal);
    let symmetric = worst_rise(LUpdate::Symmetric);
    assert!(literal > 1e-8, "literal: largest relative rise {literal:e}");
    assert!(
        symmetric <= 1e-12,
        "symmetric: largest relative rise {symmetric:e}"
    );
}
