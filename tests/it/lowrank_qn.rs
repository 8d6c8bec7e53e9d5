//! The quasi-Newton solver of low-rank OKL (L-BFGS on g(B) = min_A Q(A, B)) against a dense
//! Kronecker solve for min_A, finite differences for ∇g, and the paper's Algorithm 1.

use crate::common::{matrix, normal, smooth_problem};
use ndarray::{Array1, Array2};
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{gram, Kernel};
use ovk_core::linalg::cholesky;
use ovk_core::methods::lowrank_okl::{value_and_gradient, LowRankOkl, Reduced};
use ovk_core::methods::{Collect, Method, Params, Problem, Value};

/// Eq. (4) at full size.
fn q_full(k: &Array2<f64>, y: &Array2<f64>, a: &Array2<f64>, b: &Array2<f64>, lambda: f64) -> f64 {
    let r = y - &k.dot(a).dot(&b.t());
    let fit: f64 = r.iter().map(|v| v * v).sum();
    let reg: f64 = (a * &k.dot(a)).sum();
    let bb: f64 = b.iter().map(|v| v * v).sum();
    fit / (2.0 * lambda) + reg / 2.0 + bb / 2.0
}

/// `argmin_A Q(A, B)` by the dense Kronecker system `(BᵀB ⊗ K + λI) vec A = vec(Y B)` — the
/// stationarity condition `K A BᵀB + λA = Y B` (K invertible).
fn brute_a(k: &Array2<f64>, y: &Array2<f64>, b: &Array2<f64>, lambda: f64) -> Array2<f64> {
    let (ell, p) = (k.nrows(), b.ncols());
    let btb = b.t().dot(b);
    let yb = y.dot(b);
    // vec by columns: index (i, j) → j·ℓ + i. Symmetrise with K: (BᵀB ⊗ K)(I ⊗ K)… is not
    // symmetric, so solve the K-weighted system (BᵀB ⊗ K² + λ I ⊗ K) vec A = vec(K Y B) instead.
    let k2 = k.dot(k);
    let n = ell * p;
    let mut m = Array2::<f64>::zeros((n, n));
    let mut rhs = Array1::<f64>::zeros(n);
    let kyb = k.dot(&yb);
    for j in 0..p {
        for i in 0..ell {
            rhs[j * ell + i] = kyb[(i, j)];
            for jj in 0..p {
                for ii in 0..ell {
                    let mut v = btb[(j, jj)] * k2[(i, ii)];
                    if j == jj {
                        v += lambda * k[(i, ii)];
                    }
                    m[(j * ell + i, jj * ell + ii)] = v;
                }
            }
        }
    }
    let sol = cholesky(m.view())
        .unwrap()
        .solve(rhs.into_shape_with_order((n, 1)).unwrap().view());
    Array2::from_shape_fn((ell, p), |(i, j)| sol[(j * ell + i, 0)])
}

#[test]
fn g_is_min_over_a_of_q_and_its_gradient_is_exact() {
    let p = smooth_problem(7, 5, 3);
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let red = Reduced::new(k.view(), p.y.view()).unwrap();
    let mut rng = Rng::new(11);
    let bhat = normal(&mut rng, red.r(), 2);
    let lambda = 0.3;
    let (g, grad) = value_and_gradient(&red, &bhat, lambda).unwrap();
    let b = red.q_m.dot(&bhat);
    let a = brute_a(&k, &p.y, &b, lambda);
    let q_min = q_full(&k, &p.y, &a, &b, lambda);
    assert!(
        (g - q_min).abs() < 1e-8 * q_min.abs(),
        "g = {g}, min_A Q = {q_min}"
    );
    // Any other A does worse.
    let a2 = &a + &(normal(&mut rng, 7, 2) * 1e-3);
    assert!(q_full(&k, &p.y, &a2, &b, lambda) > q_min);
    // Central differences of g in B̂.
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for i in 0..bhat.nrows() {
        for j in 0..bhat.ncols() {
            let mut plus = bhat.clone();
            plus[(i, j)] += h;
            let mut minus = bhat.clone();
            minus[(i, j)] -= h;
            let fd = (value_and_gradient(&red, &plus, lambda).unwrap().0
                - value_and_gradient(&red, &minus, lambda).unwrap().0)
                / (2.0 * h);
            worst = worst.max((fd - grad[(i, j)]).abs() / grad[(i, j)].abs().max(1.0));
        }
    }
    assert!(worst < 1e-5, "gradient off by {worst}");
}

fn fit(
    p: &Problem,
    solver: &str,
    lambda: Option<f64>,
    rank: usize,
    obs: &mut Collect,
) -> ovk_core::methods::Fit {
    let mut ps = Params::new()
        .with("solver", Value::Text(solver.into()))
        .with("rank", Value::Int(rank as i64))
        .with("tol", Value::Float(1e-10))
        .with("max_iter", Value::Int(200_000))
        .with("lambda_path", Value::Int(6));
    if let Some(l) = lambda {
        ps.set("lambda", Value::Float(l));
    }
    LowRankOkl.fit(p, &ps, obs).unwrap()
}

#[test]
fn qn_and_bcd_reach_the_same_optimum() {
    let p = smooth_problem(20, 6, 5);
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let alpha = Reduced::new(k.view(), p.y.view()).unwrap().alpha;
    for (lambda, rank) in [(Some(0.1 * alpha), 3), (Some(0.01 * alpha), 6), (None, 2)] {
        let qn = fit(&p, "qn", lambda, rank, &mut Collect::default());
        let bcd = fit(&p, "bcd", lambda, rank, &mut Collect::default());
        let (fq, fb) = (qn.objective.unwrap(), bcd.objective.unwrap());
        assert!(
            (fq - fb).abs() < 1e-6 * fb.abs(),
            "objective qn {fq} vs bcd {fb}"
        );
        let yq = qn.model.predict(p.x.view()).unwrap();
        let yb = bcd.model.predict(p.x.view()).unwrap();
        let diff = (&yq - &yb).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let scale = yb.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(
            diff < 1e-4 * scale,
            "predictions differ by {diff} (scale {scale})"
        );
        if rank == 6 {
            // Rank free: the qn optimum passes Lemma 8.
            assert_eq!(qn.details["certificate"]["certified"], true);
        }
    }
}

#[test]
fn qn_records_a_nonincreasing_objective_every_iteration() {
    let p = smooth_problem(20, 6, 8);
    let mut obs = Collect::default();
    let f = fit(&p, "qn", None, 3, &mut obs);
    // One record per iteration, plus one for each λ ≥ α set to B = 0 directly.
    assert!(obs.records.len() >= f.iterations && f.iterations > 6);
    let mut checked = 0;
    for w in obs.records.windows(2) {
        assert_eq!(w[1].iter, w[0].iter + 1);
        if w[0].lambda == w[1].lambda {
            let (a, b) = (w[0].objective, w[1].objective);
            assert!(b <= a + 1e-10 * a.abs(), "g rose from {a} to {b}");
            checked += 1;
        }
    }
    assert!(checked > 0);
}

/// K's null space is decoupled (docs/methods.md §2, `reduced.rs`): on a linear kernel of rank 3
/// over 14 points the fit iterates on the 3 range rows only, yet (i) its objective is eq. (4)
/// evaluated at full size on the returned A and B, (ii) A is a minimiser of Q(·, B) — the
/// stationarity `K A BᵀB + λA = Y B` holds on every row, null rows included, which pins A's
/// null component to `A₀ = Ỹ₀B/λ` (the limit sᵢ → 0, `A = C B`) — and (iii) ∇g = B − (CᵀKC)B
/// vanishes at full size (Lemma 8), with C = (Y − K A Bᵀ)/λ.
#[test]
fn null_space_reduction_is_exact_on_a_singular_kernel() {
    let (ell, d, m) = (14, 3, 6);
    let mut rng = Rng::new(21);
    let x = normal(&mut rng, ell, d);
    let y = x.dot(&normal(&mut rng, d, m)) + normal(&mut rng, ell, m) * 0.3;
    let mut p = smooth_problem(ell, m, 1);
    p.x = x;
    p.y = y;
    p.kernel = Kernel::Linear;
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let red = Reduced::new(k.view(), p.y.view()).unwrap();
    assert_eq!(
        red.rank_k, d,
        "a linear kernel on {d} features has rank {d}"
    );
    assert_eq!(red.r(), d, "the loop runs on the range rows only");
    for rank in [2, 3] {
        let lambda = 0.05 * red.alpha;
        let f = fit(&p, "qn", Some(lambda), rank, &mut Collect::default());
        let get = |name: &str| matrix(&f, name).clone();
        let (a, b) = (get("coefficients"), get("factor_b"));
        let q = q_full(&k, &p.y, &a, &b, lambda);
        let objective = f.objective.expect("low-rank OKL reports its objective");
        assert!(
            (q - objective).abs() < 1e-10 * q.abs(),
            "rank {rank}: objective {objective} vs eq. (4) at full size {q}"
        );
        // (ii) K A BᵀB + λA = Y B, all ℓ rows.
        let stat = k.dot(&a).dot(&b.t().dot(&b)) + &a * lambda - p.y.dot(&b);
        let worst = stat.iter().fold(0.0f64, |w, v| w.max(v.abs()));
        let scale = p.y.dot(&b).iter().fold(0.0f64, |w, v| w.max(v.abs()));
        assert!(
            worst < 1e-8 * scale,
            "rank {rank}: A-stationarity off by {worst}"
        );
        // (iii) (CᵀKC)B = B at full size (the rank is free here: 3 = rank K).
        let c = (&p.y - &k.dot(&a).dot(&b.t())) / lambda;
        let grad = &b - &c.t().dot(&k).dot(&c).dot(&b);
        let g = grad.iter().map(|v| v * v).sum::<f64>().sqrt();
        let bn = b.iter().map(|v| v * v).sum::<f64>().sqrt();
        assert!(
            g < 1e-7 * bn.max(1.0),
            "rank {rank}: ‖∇g‖ = {g}, ‖B‖ = {bn}"
        );
        // Predictions are K(x, X) A Bᵀ: the model agrees with the formula on new points.
        let x_new = normal(&mut rng, 4, d);
        let k_new = ovk_core::kernels::cross_gram(&p.kernel, x_new.view(), p.x.view()).unwrap();
        let want = k_new.dot(&a).dot(&b.t());
        let got = f.model.predict(x_new.view()).unwrap();
        let diff = (&got - &want).iter().fold(0.0f64, |w, v| w.max(v.abs()));
        let s = want.iter().fold(0.0f64, |w, v| w.max(v.abs()));
        assert!(
            diff < 1e-9 * s.max(1.0),
            "rank {rank}: predictions off by {diff}"
        );
    }
}
