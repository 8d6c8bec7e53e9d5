//! Low-rank OKL (Dinuzzo & Fukumizu, ACML 2011) against closed forms, a brute-force convex
//! solver, the paper's optimality certificate, and monotone descent.

use crate::common::{matrix, max_abs_diff, normal, smooth_problem};
use ndarray::{Array1, Array2, Axis};
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{gram, Kernel};
use ovk_core::linalg::{cholesky, eigh, sylvester_sym};
use ovk_core::methods::lowrank_okl::{LowRankOkl, Reduced, TrainSplit};
use ovk_core::methods::{Collect, Method, Observer, Params, Phase, Problem, Silent, Value};

fn alpha_of(p: &Problem) -> f64 {
    let k = gram(&p.kernel, p.x.view()).unwrap();
    Reduced::new(k.view(), p.y.view()).unwrap().alpha
}

fn params(lambda: Option<f64>, rank: usize) -> Params {
    let mut ps = Params::new()
        .with("rank", Value::Int(rank as i64))
        .with("tol", Value::Float(1e-10))
        .with("max_iter", Value::Int(100_000));
    if let Some(l) = lambda {
        ps.set("lambda", Value::Float(l));
    }
    ps
}

/// With K = I the trace-penalised problem has a closed form: `YᵀY = W diag(σ²) Wᵀ` gives
/// `L* = W diag(max(0, σ − λ)) Wᵀ`. At p = m the low-rank algorithm must reach it — including
/// the directions that the threshold switches off.
#[test]
fn identity_kernel_matches_closed_form() {
    let mut rng = Rng::new(3);
    let (ell, m) = (9, 4);
    // Points 10 apart with σ = 0.01: every off-diagonal of K is exp(−5·10⁵) = 0.
    let x = Array2::from_shape_fn((ell, 1), |(i, _)| 10.0 * i as f64);
    let y = normal(&mut rng, ell, m);
    let p = Problem::new(x, y.clone(), Kernel::Gaussian { sigma: 0.01 });
    let yty = y.t().dot(&y);
    let e = eigh(yty.view()).unwrap();
    let sigma: Array1<f64> = e.values.mapv(|v| v.max(0.0).sqrt());
    // λ between the singular values so that L* has rank 2 of 4.
    let lambda = 0.5 * (sigma[1] + sigma[2]);
    let t = sigma.mapv(|s| (s - lambda).max(0.0));
    let l_star = e.vectors.dot(&Array2::from_diag(&t)).dot(&e.vectors.t());

    let fit = LowRankOkl
        .fit(&p, &params(Some(lambda), m), &mut Silent)
        .unwrap();
    let l = matrix(&fit, "output_kernel");
    assert!(
        max_abs_diff(l, &l_star) < 1e-6,
        "L = {l:?}\nclosed form {l_star:?}"
    );
    // Predictions on the training inputs: K C L with C = Y (L + λI)⁻¹.
    let mut reg = l_star.clone();
    reg.diag_mut().mapv_inplace(|d| d + lambda);
    let c = cholesky(reg.view()).unwrap().solve(y.t()).t().to_owned();
    let want = c.dot(&l_star);
    let got = fit.model.predict(p.x.view()).unwrap();
    assert!(max_abs_diff(&got, &want) < 1e-6);
    assert_eq!(fit.details["certificate"]["certified"], true);
}

/// The trace-penalised full-rank problem eliminated over C (docs/methods.md §1–2):
/// `f(L) = ½ Σᵢ ỹᵢᵀ (sᵢ L + λ I)⁻¹ ỹᵢ + ½ tr L`, convex over L ⪰ 0.
fn reduced_objective(s: &Array1<f64>, yt: &Array2<f64>, l: &Array2<f64>, lambda: f64) -> f64 {
    let m = l.nrows();
    let mut f = 0.5 * l.diag().sum();
    for (i, row) in yt.axis_iter(Axis(0)).enumerate() {
        let mut a = l * s[i];
        a.diag_mut().mapv_inplace(|d| d + lambda);
        let yi = row.to_owned().into_shape_with_order((m, 1)).unwrap();
        let z = cholesky(a.view()).unwrap().solve(yi.view());
        f += 0.5 * yi.t().dot(&z)[[0, 0]];
    }
    f
}

fn reduced_gradient(
    s: &Array1<f64>,
    yt: &Array2<f64>,
    l: &Array2<f64>,
    lambda: f64,
) -> Array2<f64> {
    let m = l.nrows();
    let mut g = Array2::<f64>::eye(m) * 0.5;
    for (i, row) in yt.axis_iter(Axis(0)).enumerate() {
        let mut a = l * s[i];
        a.diag_mut().mapv_inplace(|d| d + lambda);
        let yi = row.to_owned().into_shape_with_order((m, 1)).unwrap();
        let z = cholesky(a.view()).unwrap().solve(yi.view());
        g = g - z.dot(&z.t()) * (0.5 * s[i]);
    }
    g
}

fn project_psd(l: &Array2<f64>) -> Array2<f64> {
    let sym = (l + &l.t()) * 0.5;
    let e = eigh(sym.view()).unwrap();
    let t = e.values.mapv(|v| v.max(0.0));
    e.vectors.dot(&Array2::from_diag(&t)).dot(&e.vectors.t())
}

/// Brute force: projected gradient with backtracking on f over the PSD cone.
fn brute_force_l(s: &Array1<f64>, yt: &Array2<f64>, m: usize, lambda: f64) -> Array2<f64> {
    let mut l = Array2::<f64>::zeros((m, m));
    let mut f = reduced_objective(s, yt, &l, lambda);
    let mut step = 1.0;
    for _ in 0..20_000 {
        let g = reduced_gradient(s, yt, &l, lambda);
        loop {
            let cand = project_psd(&(&l - &(&g * step)));
            let fc = reduced_objective(s, yt, &cand, lambda);
            let d = &cand - &l;
            let model = f + (&g * &d).sum() + (&d * &d).sum() / (2.0 * step);
            if fc <= model + 1e-15 {
                l = cand;
                f = fc;
                step *= 1.5;
                break;
            }
            step *= 0.5;
        }
    }
    l
}

#[test]
fn full_rank_agrees_with_brute_force_minimiser() {
    let p = smooth_problem(10, 3, 11);
    let lambda = 0.05 * alpha_of(&p);
    let k = gram(&p.kernel, p.x.view()).unwrap();
    let e = eigh(k.view()).unwrap();
    let s = e.values.mapv(|v| v.max(0.0));
    let yt = e.vectors.t().dot(&p.y);
    let l_bf = brute_force_l(&s, &yt, 3, lambda);

    let fit = LowRankOkl
        .fit(&p, &params(Some(lambda), 3), &mut Silent)
        .unwrap();
    let l = matrix(&fit, "output_kernel");
    let f_bf = reduced_objective(&s, &yt, &l_bf, lambda);
    // Q(A, B) at the fit equals f(BBᵀ) (A optimal for B), and no larger than the brute force.
    let q = fit.objective.unwrap();
    assert!(
        (q - reduced_objective(&s, &yt, l, lambda)).abs() < 1e-9 * f_bf.abs(),
        "Q = {} but f(BBᵀ) = {}",
        q,
        reduced_objective(&s, &yt, l, lambda)
    );
    assert!(q <= f_bf + 1e-9 * f_bf.abs());
    assert!(
        max_abs_diff(l, &l_bf) < 1e-5,
        "L {l:?}\nbrute force {l_bf:?}"
    );
    // Same predictions: K C L with C solving K C L + λ C = Y.
    let c = sylvester_sym(k.view(), l_bf.view(), p.y.view(), lambda).unwrap();
    let want = k.dot(&c).dot(&l_bf);
    let got = fit.model.predict(p.x.view()).unwrap();
    assert!(max_abs_diff(&got, &want) < 1e-5);
    assert_eq!(fit.details["certificate"]["certified"], true);
}

#[test]
fn objective_never_increases() {
    let p = smooth_problem(25, 6, 5);
    let mut obs = Collect::default();
    let ps = params(None, 3)
        .with("lambda_path", Value::Int(8))
        .with("tol", Value::Float(1e-8))
        .with("max_iter", Value::Int(3000));
    LowRankOkl.fit(&p, &ps, &mut obs).unwrap();
    assert!(obs.records.len() > 8);
    let mut checked = 0;
    for w in obs.records.windows(2) {
        if w[0].lambda == w[1].lambda {
            let (a, b) = (w[0].objective, w[1].objective);
            assert!(
                b <= a + 1e-12 * a.abs(),
                "Q rose from {a} to {b} at λ = {:?}",
                w[0].lambda
            );
            checked += 1;
        }
        assert_eq!(w[1].extra["rank"], 3.0);
        assert_eq!(w[1].iter, w[0].iter + 1);
    }
    assert!(checked > 0);
}

#[test]
fn certificate_holds_when_rank_is_free_and_flags_an_active_constraint() {
    let p = smooth_problem(20, 4, 7);
    let alpha = alpha_of(&p);
    // p = m: the rank constraint cannot bind; converged fits must pass Lemma 8.
    for factor in [1.5, 0.5, 0.1, 0.01, 0.002] {
        let ps = params(Some(factor * alpha), 4).with("tol", Value::Float(1e-12));
        let fit = LowRankOkl.fit(&p, &ps, &mut Silent).unwrap();
        let c = &fit.details["certificate"];
        assert_eq!(c["certified"], true, "λ = {factor}α not certified: {c}");
        assert!(c["top_eigenvalue"].as_f64().unwrap() <= 1.0 + 1e-6);
        assert!(c["residual"].as_f64().unwrap() < 1e-6);
    }
    // The warm-started path (which starts at B = 0 and must leave saddles) certifies too, where
    // block coordinate descent converges in reasonable time.
    let ps = params(None, 4)
        .with("lambda_path", Value::Int(7))
        .with("tol", Value::Float(1e-11));
    let fit = LowRankOkl.fit(&p, &ps, &mut Silent).unwrap();
    let path = fit.details["path"].as_array().unwrap();
    let escapes: u64 = path
        .iter()
        .map(|pt| pt["certificate"]["escapes"].as_u64().unwrap())
        .sum();
    assert!(
        escapes > 0,
        "the warm path from B = 0 should have escaped a saddle"
    );
    for point in path
        .iter()
        .filter(|pt| pt["lambda"].as_f64().unwrap() >= 1e-3 * alpha)
    {
        assert_eq!(
            point["certificate"]["certified"], true,
            "not certified: {point}"
        );
    }
    // p = 1 at a small λ: the optimum has rank > 1, so ‖CᵀKC‖₂ > 1 must show.
    let fit1 = LowRankOkl
        .fit(&p, &params(Some(1e-3 * alpha), 1), &mut Silent)
        .unwrap();
    let c = &fit1.details["certificate"];
    assert_eq!(c["certified"], false);
    assert!(c["top_eigenvalue"].as_f64().unwrap() > 1.0 + 1e-3);
    assert!(fit1
        .notes
        .iter()
        .any(|n| n.contains("rank constraint is active")));
}

#[test]
fn warm_start_needs_fewer_iterations_than_cold() {
    let p = smooth_problem(30, 8, 9);
    let base = params(None, 4)
        .with("lambda_path", Value::Int(8))
        .with("tol", Value::Float(1e-7));
    let warm = LowRankOkl.fit(&p, &base, &mut Silent).unwrap();
    let cold = LowRankOkl
        .fit(
            &p,
            &base.clone().with("warm_start", Value::Bool(false)),
            &mut Silent,
        )
        .unwrap();
    assert!(
        warm.iterations < cold.iterations,
        "warm {} vs cold {}",
        warm.iterations,
        cold.iterations
    );
}

/// p above min(rank K, m) is an inactive constraint: the fit is the one at the bound (bit for
/// bit) and a note names both bounds.
#[test]
fn rank_above_bounds_is_fitted_at_the_bound_with_a_note() {
    let fit = |p: &Problem, rank| {
        LowRankOkl
            .fit(p, &params(Some(0.1), rank), &mut Silent)
            .unwrap()
    };
    let p = smooth_problem(12, 3, 1);
    let (above, at) = (fit(&p, 4), fit(&p, 3));
    let note = above.notes.join("\n");
    assert!(
        note.contains("rank p = 4") && note.contains("rank K = 12") && note.contains("m = 3"),
        "{note}"
    );
    assert_eq!(matrix(&above, "coefficients"), matrix(&at, "coefficients"));
    assert!(!at.notes.iter().any(|n| n.contains("is above min")));

    // A linear kernel on 2-D inputs has rank 2.
    let mut q = smooth_problem(12, 5, 1);
    q.kernel = Kernel::Linear;
    let (above, at) = (fit(&q, 3), fit(&q, 2));
    let note = above.notes.join("\n");
    assert!(
        note.contains("rank K = 2") && note.contains("m = 5"),
        "{note}"
    );
    assert_eq!(matrix(&above, "coefficients"), matrix(&at, "coefficients"));
}

#[test]
fn path_chooses_by_validation_and_rank_sweep_reports_each_rank() {
    let mut p = smooth_problem(40, 6, 21);
    let v = smooth_problem(40, 6, 21); // same generator, reseeded rows below
    let mut rng = Rng::new(99);
    let xv = normal(&mut rng, 15, 2);
    let mix = {
        // Refit the same latent map: the validation targets share the training outputs' mix.
        let lat = p.x.mapv(|v| (1.5 * v).sin());
        let sol = lat.t().dot(&lat);
        let rhs = lat.t().dot(&v.y);
        cholesky(sol.view()).unwrap().solve(rhs.view())
    };
    let yv = xv.mapv(|v| (1.5 * v).sin()).dot(&mix);
    p = p.with_holdout(xv, yv);
    let ps = params(None, 2)
        .with("lambda_path", Value::Int(6))
        .with("tol", Value::Float(1e-8))
        .with("max_iter", Value::Int(1500))
        .with("rank_sweep", Value::Text("1..3".into()));
    let fit = LowRankOkl.fit(&p, &ps, &mut Silent).unwrap();
    let sweep = fit.details["rank_sweep"].as_array().unwrap();
    assert_eq!(sweep.len(), 3);
    let best = sweep
        .iter()
        .map(|r| r["validation_mse"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(fit.details["validation_mse"].as_f64().unwrap(), best);
    let path = fit.details["path"].as_array().unwrap();
    let best_on_path = path
        .iter()
        .map(|r| r["validation_mse"].as_f64().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(best_on_path, best);
    // The reported validation MSE is the model's: predict and compare.
    let pred = fit.model.predict(p.holdout_x()).unwrap();
    let mse = (&pred - &p.holdout_y()).mapv(|d| d * d).mean().unwrap();
    assert!(
        (mse - best).abs() < 1e-9 * best.max(1e-12),
        "{mse} vs {best}"
    );
    let b = matrix(&fit, "factor_b");
    assert_eq!(b.nrows(), 6);
    assert_eq!(b.ncols() as u64, fit.details["rank"].as_u64().unwrap());
}

/// By default the λ path is scored on a seeded share of the training rows (`val_fraction`) and
/// the model refitted on all of them: the problem holds no test rows at all. The chosen λ is the
/// one the path picks with that share as its validation part, and the model is the fixed-λ fit
/// on every training row. Held-out rows given to the fit (`--select-on test`) choose instead,
/// and say so.
#[test]
fn a_val_fraction_chooses_on_training_rows_and_refits_on_all() {
    let with_test = smooth_problem(60, 3, 8).holding_out(48);
    let mut p = with_test.clone();
    p.holdout = None;
    let base = params(None, 3)
        .with("lambda_path", Value::Int(8))
        .with("tol", Value::Float(1e-10))
        .with("max_iter", Value::Int(50_000));
    let ps = base.clone().with("val_fraction", Value::Float(0.25));
    let fit = LowRankOkl.fit(&p, &ps, &mut Silent).unwrap();
    let lambda = fit.details["lambda"].as_f64().unwrap();
    let pred = fit.model.predict(with_test.holdout_x()).unwrap();
    assert!(fit.chose_on_test.is_none());

    // On the held-out rows (the paper's protocol, asked for by name) their targets choose λ,
    // and a change of them moves it.
    let mut shuffled = with_test.clone();
    if let Some(h) = shuffled.holdout.as_mut() {
        h.y.mapv_inplace(|v| 1.0 - 3.0 * v);
    }
    let on_test = LowRankOkl.fit(&with_test, &ps, &mut Silent).unwrap();
    let on_shuffled = LowRankOkl.fit(&shuffled, &ps, &mut Silent).unwrap();
    assert_ne!(on_test.details["lambda"], on_shuffled.details["lambda"]);
    assert!(on_test.chose_on_test.is_some());

    let split = TrainSplit::draw(48, 0.25, p.seed).unwrap();
    let by_hand = Problem::new(
        p.x.select(Axis(0), &split.fit),
        p.y.select(Axis(0), &split.fit),
        p.kernel,
    )
    .with_holdout(
        p.x.select(Axis(0), &split.val),
        p.y.select(Axis(0), &split.val),
    );
    let path = LowRankOkl.fit(&by_hand, &base, &mut Silent).unwrap();
    assert_eq!(path.details["lambda"].as_f64().unwrap(), lambda);
    let scores = |f: &ovk_core::methods::Fit| -> Vec<(f64, f64)> {
        f.details["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let v = |k: &str| r[k].as_f64().unwrap();
                (v("lambda"), v("validation_mse"))
            })
            .collect()
    };
    assert_eq!(scores(&path), scores(&fit));

    let fixed = LowRankOkl
        .fit(&p, &params(Some(lambda), 3), &mut Silent)
        .unwrap();
    let want = fixed.model.predict(with_test.holdout_x()).unwrap();
    assert!(
        max_abs_diff(&pred, &want) < 1e-6,
        "{}",
        max_abs_diff(&pred, &want)
    );
    assert!(fit
        .notes
        .iter()
        .any(|n| n.contains("refitted on all 48 rows")));
}

#[test]
fn a_val_fraction_that_leaves_no_rows_is_refused() {
    let p = smooth_problem(3, 2, 1);
    let ps = params(None, 1).with("val_fraction", Value::Float(0.1));
    let e = LowRankOkl
        .fit(&p, &ps, &mut Silent)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("--val-fraction"), "{e}");
}

/// A path reports its progress in fits: one `λ path` phase announcing ranks × λ values, then
/// one step per finished fit, in order, ending at the total; a fixed λ is plain iterations.
#[test]
fn a_path_counts_its_fits_as_steps() {
    #[derive(Default)]
    struct Steps {
        phases: Vec<(Phase, Option<usize>)>,
        steps: Vec<(usize, usize)>,
    }
    impl Observer for Steps {
        fn phase(&mut self, phase: Phase, total: Option<usize>) {
            self.phases.push((phase, total));
        }
        fn step(&mut self, done: usize, total: usize) {
            self.steps.push((done, total));
        }
    }
    let p = smooth_problem(40, 6, 21);
    let ps = params(None, 2)
        .with("lambda_path", Value::Int(6))
        .with("val_fraction", Value::Float(0.25))
        .with("rank_sweep", Value::Text("1..3".into()));
    let mut obs = Steps::default();
    LowRankOkl.fit(&p, &ps, &mut obs).unwrap();
    assert!(
        obs.phases.contains(&(Phase::Path, Some(18))),
        "{:?}",
        obs.phases
    );
    let want: Vec<(usize, usize)> = (1..=18).map(|k| (k, 18)).collect();
    assert_eq!(obs.steps, want);

    let mut obs = Steps::default();
    LowRankOkl.fit(&p, &params(Some(0.5), 2), &mut obs).unwrap();
    assert!(
        obs.phases.iter().all(|(ph, _)| *ph != Phase::Path),
        "{:?}",
        obs.phases
    );
    assert!(
        obs.phases.contains(&(Phase::Iterating, None)),
        "{:?}",
        obs.phases
    );
    assert!(obs.steps.is_empty(), "{:?}", obs.steps);
}

/// α = √‖YᵀKY‖₂, above which L = 0 is optimal, from the reduced problem's r×r eigenproblem:
/// equal to the brute-force largest eigenvalue of YᵀKY, with more outputs than K's rank (a
/// linear kernel on 3 features) and with fewer.
#[test]
fn alpha_is_the_root_of_the_largest_eigenvalue_of_yt_k_y() {
    let mut rng = Rng::new(17);
    for (kernel, d, m) in [
        (Kernel::Linear, 3, 6),
        (Kernel::Gaussian { sigma: 1.5 }, 4, 3),
    ] {
        let x = normal(&mut rng, 30, d);
        let y = normal(&mut rng, 30, m);
        let p = Problem::new(x, y.clone(), kernel);
        let k = gram(&p.kernel, p.x.view()).unwrap();
        let ytky = y.t().dot(&k).dot(&y);
        let top = eigh(ytky.view()).unwrap().values[m - 1];
        let alpha = alpha_of(&p);
        assert!(
            (alpha - top.sqrt()).abs() < 1e-9 * top.sqrt(),
            "{kernel:?}: α = {alpha}, √λmax(YᵀKY) = {}",
            top.sqrt()
        );
    }
}
