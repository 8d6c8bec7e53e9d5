//! The exact KDE solve against the n²×n² Kronecker system, the kernel-ridge identities of
//! docs/methods.md §3, the objective's optimality, the tiny-nελ regime and the low-rank variant.

use crate::common::normal;
use ndarray::{Array2, Axis};
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{gram, Kernel};
use ovk_core::linalg::{eigh, sylvester_sym};
use ovk_core::methods::kde::incomplete_cholesky;
use ovk_core::methods::kde::lowrank::solve_low_rank;
use ovk_core::methods::kde::solve::{
    input_eigen, objective, residual, solve_alpha, solve_alpha_kronecker, solve_exact,
    solve_exact_by, solve_scores_by, t_matrix, Ovk, Route, RouteChoice, Side, BACKWARD_ERROR_LIMIT,
};

fn random(n: usize, d: usize, seed: u64) -> Array2<f64> {
    normal(&mut Rng::new(seed), n, d)
}

fn rel(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    let num = (a - b).mapv(|v| v * v).sum().sqrt();
    let den = b.mapv(|v| v * v).sum().sqrt();
    num / den
}

struct Case {
    x: Array2<f64>,
    y: Array2<f64>,
    k: Array2<f64>,
    lg: Array2<f64>,
}

fn case(n: usize, seed: u64, linear_out: bool) -> Case {
    let x = random(n, 3, seed);
    let y = random(n, 2, seed + 100);
    let k = gram(&Kernel::Gaussian { sigma: 1.5 }, x.view()).unwrap();
    let lk = if linear_out {
        Kernel::Linear
    } else {
        Kernel::Gaussian { sigma: 1.0 }
    };
    let lg = gram(&lk, y.view()).unwrap();
    Case { x, y, k, lg }
}

const KINDS: [Ovk; 3] = [
    Ovk::Identity,
    Ovk::Covariance,
    Ovk::Conditional { epsilon: 0.05 },
];

#[test]
fn fast_solve_matches_kronecker_for_all_kernels() {
    for seed in [1, 2] {
        let c = case(12, seed, false);
        let ke = input_eigen(c.k.view()).unwrap();
        for ovk in KINDS {
            for lambda in [0.5, 1e-2] {
                let fast = solve_alpha(ovk, &ke, c.lg.view(), lambda).unwrap();
                let t = t_matrix(ovk, &ke, c.lg.view());
                let naive = solve_alpha_kronecker(t.view(), c.k.view(), lambda).unwrap();
                let e = rel(&fast, &naive);
                assert!(e < 1e-8, "{ovk:?} λ={lambda}: relative error {e:e}");
            }
        }
    }
}

#[test]
fn blocked_back_substitution_matches_on_larger_n() {
    // n > 64 exercises the blocked (matrix-product) part of the quasi-triangular solve.
    let c = case(90, 7, false);
    let ke = input_eigen(c.k.view()).unwrap();
    let ovk = Ovk::Conditional { epsilon: 0.01 };
    let alpha = solve_alpha(ovk, &ke, c.lg.view(), 1e-3).unwrap();
    let t = t_matrix(ovk, &ke, c.lg.view());
    let r = residual(t.view(), c.k.view(), alpha.view(), 1e-3);
    assert!(r < 1e-11, "residual {r:e}");
}

/// Eq. (3) of Kadri et al. by brute force: `Ψ = (K + λI)⁻¹Φ_l`, so
/// `score(x, y) = l_yᵀ (K + λI)⁻¹ k_x` — ridge λ, not nλ (the n of Proposition 1 belongs to the
/// covariance operators' 1/n), the KDE of Cortes et al. (2005). The low-rank route at full rank
/// and the objective's minimiser must agree with it too.
#[test]
fn identity_kernel_is_eq3_ridge_with_lambda() {
    let nn = 15;
    let c = case(nn, 3, false);
    let lambda = 0.03;
    let ke = input_eigen(c.k.view()).unwrap();
    let sol = solve_exact(Ovk::Identity, &ke, c.lg.view(), lambda).unwrap();
    // (K + λI)⁻¹ by LU, as printed
    let mut reg = c.k.clone();
    reg.diag_mut().mapv_inplace(|v| v + lambda);
    let ridge = ovk_core::linalg::lu(reg.view())
        .unwrap()
        .solve(Array2::<f64>::eye(nn).view());
    let e = rel(&sol.w, &ridge);
    assert!(e < 1e-10, "W vs (K + λI)⁻¹: {e:e}");
    // the scores on new points: Φ_lᵀ Ψ-form l_yᵀ (K + λI)⁻¹ k_x
    let xt = random(4, 3, 99);
    let kx = ovk_core::kernels::cross_gram(&Kernel::Gaussian { sigma: 1.5 }, c.x.view(), xt.view())
        .unwrap();
    let s1 = c.lg.dot(&sol.w).dot(&kx);
    let s2 = c.lg.dot(&ridge.dot(&kx));
    let e = rel(&s1, &s2);
    assert!(e < 1e-10, "scores: {e:e}");
    // the old behaviour, ridge nλ, is far from it
    let mut reg_n = c.k.clone();
    reg_n.diag_mut().mapv_inplace(|v| v + nn as f64 * lambda);
    let ridge_n = ovk_core::linalg::lu(reg_n.view())
        .unwrap()
        .solve(Array2::<f64>::eye(nn).view());
    assert!(rel(&sol.w, &ridge_n) > 0.1);
    // the low-rank route at full rank
    let a = incomplete_cholesky(&Kernel::Gaussian { sigma: 1.5 }, c.x.view(), nn).unwrap();
    let b = incomplete_cholesky(&Kernel::Gaussian { sigma: 1.0 }, c.y.view(), nn).unwrap();
    let op = solve_low_rank(Ovk::Identity, a.view(), b.view(), lambda).unwrap();
    let e = rel(&op.dense(), &ridge);
    assert!(e < 1e-8, "low rank at full rank: {e:e}");
    // J(g) = Σ‖g(xᵢ) − Φ(yᵢ)‖² + λ‖g‖² with W = Ψ-coefficients: tr((Wk−I)ᵀLg(Wk−I)) + λ tr(Wᵀ Lg W k)
    let mut r = ridge.dot(&c.k);
    r.diag_mut().mapv_inplace(|v| v - 1.0);
    let j = (&r * &c.lg.dot(&r)).sum() + lambda * (&ridge.t().dot(&c.lg).dot(&ridge) * &c.k).sum();
    assert!(
        (sol.objective - j).abs() <= 1e-10 * j.abs(),
        "objective {} vs brute force {j}",
        sol.objective
    );
}

#[test]
fn conditional_with_huge_epsilon_approaches_covariance() {
    let c = case(14, 4, false);
    let ke = input_eigen(c.k.view()).unwrap();
    let cov = solve_alpha(Ovk::Covariance, &ke, c.lg.view(), 0.05).unwrap();
    let mut last = f64::INFINITY;
    for eps in [1e1, 1e3, 1e6] {
        let cond = solve_alpha(Ovk::Conditional { epsilon: eps }, &ke, c.lg.view(), 0.05).unwrap();
        let e = rel(&cond, &cov);
        assert!(e < last, "ε={eps}: {e:e} did not decrease");
        last = e;
    }
    assert!(last < 1e-5, "ε=1e6 still {last:e} from covariance");
}

/// Vector-valued kernel ridge `K C Γ + λ C = Y`, prediction `K_x C Γ`.
fn vv_krr(k: &Array2<f64>, y: &Array2<f64>, gamma: &Array2<f64>, nl: f64) -> Array2<f64> {
    sylvester_sym(k.view(), gamma.view(), y.view(), nl)
        .unwrap()
        .dot(gamma)
}

#[test]
fn linear_output_kernel_equals_vector_valued_kernel_ridge() {
    let nn = 16;
    let c = case(nn, 5, true);
    let n = nn as f64;
    let lambda = 0.02;
    let eps = 0.3;
    let ke = input_eigen(c.k.view()).unwrap();
    for ovk in [Ovk::Covariance, Ovk::Conditional { epsilon: eps }] {
        let alpha = solve_alpha(ovk, &ke, c.lg.view(), lambda).unwrap();
        let t = t_matrix(ovk, &ke, c.lg.view());
        let w = t.dot(&alpha) / n;
        // closed-form pre-image on the training inputs: ŷ = k Wᵀ Y
        let yhat = c.k.dot(&w.t()).dot(&c.y);
        let gamma = match ovk {
            Ovk::Covariance => c.y.t().dot(&c.y) / n,
            _ => {
                // Γ = Yᵀ M' Y / n, M' = nε (k + nεI)⁻¹
                let mut m = c.k.clone();
                m.diag_mut().mapv_inplace(|v| v + n * eps);
                let mp = ovk_core::linalg::lu(m.view()).unwrap().solve(c.y.view()) * (n * eps);
                c.y.t().dot(&mp) / n
            }
        };
        let coef = vv_krr(&c.k, &c.y, &gamma, lambda);
        let yref = c.k.dot(&coef);
        let e = rel(&yhat, &yref);
        assert!(e < 1e-9, "{ovk:?}: {e:e}");
    }
}

#[test]
fn solution_minimises_the_objective() {
    let c = case(10, 6, false);
    let ke = input_eigen(c.k.view()).unwrap();
    let lambda = 0.05;
    for ovk in KINDS {
        let alpha = solve_alpha(ovk, &ke, c.lg.view(), lambda).unwrap();
        let t = t_matrix(ovk, &ke, c.lg.view());
        let j0 = objective(t.view(), c.k.view(), c.lg.view(), alpha.view(), lambda);
        let mut worse = 0;
        for s in 0..5 {
            let d = random(10, 10, 500 + s) * 1e-2;
            let j1 = objective(
                t.view(),
                c.k.view(),
                c.lg.view(),
                (&alpha + &d).view(),
                lambda,
            );
            assert!(
                j1 >= j0 - 1e-12 * j0.abs(),
                "{ovk:?}: J decreased {j0} → {j1}"
            );
            if j1 > j0 {
                worse += 1;
            }
        }
        assert!(worse > 0, "{ovk:?}: objective flat in every direction");
    }
}

#[test]
fn tiny_n_epsilon_lambda_regime_is_accurate() {
    // ε = 1e-6, λ = 1e-4 (docs/methods.md §3): the symmetrising route loses digits here.
    let c = case(30, 8, false);
    let (eps, lambda) = (1e-6, 1e-4);
    let ovk = Ovk::Conditional { epsilon: eps };
    let ke = input_eigen(c.k.view()).unwrap();
    let alpha = solve_alpha(ovk, &ke, c.lg.view(), lambda).unwrap();
    let t = t_matrix(ovk, &ke, c.lg.view());
    let r = residual(t.view(), c.k.view(), alpha.view(), lambda);
    let naive = solve_alpha_kronecker(t.view(), c.k.view(), lambda).unwrap();
    let e = rel(&alpha, &naive);
    let sym = symmetrised_route(&ke, &c.lg, eps, lambda);
    let e_sym = rel(&sym, &naive);
    let r_sym = residual(t.view(), c.k.view(), sym.view(), lambda);
    println!(
        "Schur route: residual {r:e}, vs Kronecker {e:e}; symmetrised route: residual {r_sym:e}, \
         vs Kronecker {e_sym:e}"
    );
    // normwise backward error of the Sylvester equation (residual is ‖R‖_F/√n)
    let nf = 30.0f64;
    let fro = |a: &Array2<f64>| a.mapv(|v| v * v).sum().sqrt();
    let scale = fro(&t) * fro(&alpha) * fro(&c.k) / nf + lambda * fro(&alpha) + nf.sqrt();
    let eta = r * nf.sqrt() / scale;
    assert!(eta < 1e-15, "backward error {eta:e}");
    assert!(e < 1e-9, "relative error against the Kronecker solve {e:e}");
}

/// The route docs/methods.md §3 warns about, transcribed independently of the library's:
/// `S = D^{1/2} G D^{1/2} = P diag(t) Pᵀ`, `α̃ = D^{1/2} P [(Pᵀ D^{-1/2}) ⊘ (t sᵀ/n + λ)]`.
fn symmetrised_route(
    ke: &ovk_core::linalg::SymEigen,
    lg: &Array2<f64>,
    eps: f64,
    lambda: f64,
) -> Array2<f64> {
    let u = &ke.vectors;
    let s = &ke.values;
    let n = s.len() as f64;
    let d = s.mapv(|v| n * eps / (v + n * eps));
    let g = u.t().dot(lg).dot(u);
    let dh = d.mapv(f64::sqrt);
    let sm = Array2::from_shape_fn(g.dim(), |(i, j)| dh[i] * g[[i, j]] * dh[j]);
    let sm = (&sm + &sm.t()) * 0.5;
    let e = eigh(sm.view()).unwrap();
    let p = &e.vectors;
    let mut w = p.t().to_owned();
    for ((k, j), v) in w.indexed_iter_mut() {
        *v /= dh[j] * (e.values[k].max(0.0) * s[j] / n + lambda);
    }
    let mut at = p.dot(&w);
    for (i, mut row) in at.axis_iter_mut(Axis(0)).enumerate() {
        row *= dh[i];
    }
    u.dot(&at).dot(&u.t())
}

#[test]
fn low_rank_at_full_rank_equals_exact() {
    let nn = 14;
    let c = case(nn, 9, false);
    let lambda = 0.1;
    let ke = input_eigen(c.k.view()).unwrap();
    let a = incomplete_cholesky(&Kernel::Gaussian { sigma: 1.5 }, c.x.view(), nn).unwrap();
    let b = incomplete_cholesky(&Kernel::Gaussian { sigma: 1.0 }, c.y.view(), nn).unwrap();
    for ovk in KINDS {
        let alpha = solve_alpha(ovk, &ke, c.lg.view(), lambda).unwrap();
        let t = t_matrix(ovk, &ke, c.lg.view());
        let w = t.dot(&alpha) / nn as f64;
        let op = solve_low_rank(ovk, a.view(), b.view(), lambda).unwrap();
        let e = rel(&op.dense(), &w);
        assert!(e < 1e-6, "{ovk:?}: {e:e}");
    }
}

#[test]
fn low_rank_error_shrinks_with_rank() {
    let nn = 40;
    let c = case(nn, 10, false);
    let lambda = 0.1;
    let ovk = Ovk::Conditional { epsilon: 0.1 };
    let ke = input_eigen(c.k.view()).unwrap();
    let alpha = solve_alpha(ovk, &ke, c.lg.view(), lambda).unwrap();
    let t = t_matrix(ovk, &ke, c.lg.view());
    let w = t.dot(&alpha) / nn as f64;
    let scores = c.lg.dot(&w).dot(&c.k);
    let err = |r: usize| {
        let a = incomplete_cholesky(&Kernel::Gaussian { sigma: 1.5 }, c.x.view(), r).unwrap();
        let b = incomplete_cholesky(&Kernel::Gaussian { sigma: 1.0 }, c.y.view(), r).unwrap();
        let op = solve_low_rank(ovk, a.view(), b.view(), lambda).unwrap();
        rel(&c.lg.dot(&op.apply(c.k.view())), &scores)
    };
    let (e5, e15, e30) = (err(5), err(15), err(30));
    assert!(
        e30 < e15 && e15 < e5,
        "errors {e5:e}, {e15:e}, {e30:e} do not shrink with rank"
    );
    assert!(e30 < 1e-2, "rank 30 error {e30:e}");
}

#[test]
fn eigenbasis_objective_residual_and_score_operator_equal_the_original_basis_formulas() {
    let c = case(25, 11, false);
    let ke = input_eigen(c.k.view()).unwrap();
    for ovk in KINDS {
        for lambda in [1e-1, 1e-4] {
            let sol = solve_exact(ovk, &ke, c.lg.view(), lambda).unwrap();
            let t = t_matrix(ovk, &ke, c.lg.view());
            let obj = objective(t.view(), c.k.view(), c.lg.view(), sol.alpha.view(), lambda);
            assert!(
                (sol.objective - obj).abs() <= 1e-10 * obj.abs(),
                "{ovk:?} λ={lambda}: objective {} vs {obj}",
                sol.objective
            );
            let res = residual(t.view(), c.k.view(), sol.alpha.view(), lambda);
            assert!(
                sol.residual < 1e-11 && res < 1e-11,
                "{ovk:?} λ={lambda}: residual {} (eigenbasis) vs {res}",
                sol.residual
            );
            let w = t.dot(&sol.alpha) / 25.0;
            assert!(rel(&sol.w, &w) < 1e-10, "{ovk:?} λ={lambda}: W ≠ Tα/n");
            assert!(sol.backward_error < 1e-14, "{ovk:?} λ={lambda}");
        }
    }
}

/// The symmetric route of the conditional kernel against the Schur route over the regimes
/// docs/methods.md §3 worries about (ε down to 1e-14, λ down to 1e-10, narrow and wide kernels):
/// the symmetric route is backward stable (η ≤ 1e-14 measured since it reduces to tridiagonal
/// form; the Schur route's reached 5e-12 at n = 120), no further from the Kronecker solve than
/// the Schur route, chosen by default, and the automatic choice keeps the smaller backward
/// error when asked to compare.
#[test]
fn conditional_routes_agree_and_the_better_one_is_kept() {
    for n in [30usize, 120] {
        for sigma in [0.3, 1.5, 5.0] {
            let x = random(n, 3, 5);
            let y = random(n, 2, 105);
            let k = gram(&Kernel::Gaussian { sigma }, x.view()).unwrap();
            let lg = gram(&Kernel::Gaussian { sigma: 1.0 }, y.view()).unwrap();
            let ke = input_eigen(k.view()).unwrap();
            for eps in [1e-2, 1e-6, 1e-10, 1e-14] {
                for lambda in [1e-2, 1e-6, 1e-10] {
                    let ovk = Ovk::Conditional { epsilon: eps };
                    let at = |choice| solve_exact_by(ovk, &ke, lg.view(), lambda, choice).unwrap();
                    let case = format!("n={n} σ={sigma} ε={eps:e} λ={lambda:e}");
                    let auto = solve_exact(ovk, &ke, lg.view(), lambda).unwrap();
                    assert_eq!(auto.route, Route::Symmetric, "{case}");
                    assert!(
                        auto.backward_error < BACKWARD_ERROR_LIMIT,
                        "{case}: {auto:?}"
                    );
                    if n > 30 {
                        continue; // faer's QZ takes seconds on some of the n = 120 cases
                    }
                    let sch = at(RouteChoice::Only(Route::Schur));
                    assert!(sch.backward_error < 1e-10, "{case}: {sch:?}");
                    // Against the n²×n² Kronecker solve: at λ = 1e-10 both routes are 4e-6
                    // from it (the problem's conditioning), neither worse than the other.
                    let t = t_matrix(ovk, &ke, lg.view());
                    let kron = solve_alpha_kronecker(t.view(), k.view(), lambda).unwrap();
                    let (e_sym, e_sch) = (rel(&auto.alpha, &kron), rel(&sch.alpha, &kron));
                    assert!(
                        e_sym <= 3.0 * e_sch + 1e-13,
                        "{case}: {e_sym:e} vs {e_sch:e}"
                    );
                    let both = at(RouteChoice::Auto { limit: 0.0 });
                    let best = auto.backward_error.min(sch.backward_error);
                    assert_eq!(both.backward_error, best, "{case}");
                }
            }
        }
    }
}

/// The fit's solve forms no α and returns W (or Lg W) as `left · Uᵀ`: against the dense solve
/// (checked against the Kronecker system above) on every route and both sides, with the same
/// objective, residual and backward error. With a fold F (k×n, k < n) it returns `F · left`,
/// formed in another order, and the same figures bit for bit.
#[test]
fn factored_scores_are_the_dense_score_operator() {
    let c = case(20, 4, false);
    let ke = input_eigen(c.k.view()).unwrap();
    let routes = [Route::Symmetric, Route::Schur];
    for ovk in KINDS {
        for route in routes {
            if route == Route::Schur && !matches!(ovk, Ovk::Conditional { .. }) {
                continue;
            }
            let choice = RouteChoice::Only(route);
            let dense = solve_exact_by(ovk, &ke, c.lg.view(), 0.05, choice).unwrap();
            for side in [Side::Score, Side::GramScore] {
                let sol =
                    solve_scores_by(ovk, &ke, c.lg.clone(), 0.05, side, None, choice).unwrap();
                let f =
                    Array2::from_shape_fn((3, c.lg.nrows()), |(i, j)| ((7 * i + j) as f64).sin());
                let by_f =
                    solve_scores_by(ovk, &ke, c.lg.clone(), 0.05, side, Some(f.view()), choice)
                        .unwrap();
                assert_eq!(by_f.left.dim(), (3, c.lg.nrows()));
                let e = rel(&by_f.left, &f.dot(&sol.left));
                assert!(e < 1e-12, "{ovk:?} {route:?} {side:?} folded: {e:e}");
                assert_eq!(
                    (
                        by_f.objective,
                        by_f.residual,
                        by_f.backward_error,
                        by_f.route
                    ),
                    (sol.objective, sol.residual, sol.backward_error, sol.route),
                    "{ovk:?} {route:?} {side:?} folded"
                );
                assert!(sol.alpha.is_none());
                assert_eq!(sol.route, dense.route);
                let want = match side {
                    Side::Score => dense.w.clone(),
                    Side::GramScore => c.lg.dot(&dense.w),
                };
                let got = sol.left.dot(&ke.vectors.t());
                let e = rel(&got, &want);
                assert!(e < 1e-12, "{ovk:?} {route:?} {side:?}: {e:e}");
                let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1e-300);
                assert!(
                    same(sol.objective, dense.objective),
                    "{ovk:?} {route:?} {side:?}"
                );
                assert!(
                    same(sol.residual, dense.residual),
                    "{ovk:?} {route:?} {side:?}"
                );
                assert!(
                    same(sol.backward_error, dense.backward_error),
                    "{ovk:?} {route:?} {side:?}"
                );
            }
        }
    }
}
