//! MVML's building blocks against dense brute force: the g-step's normal equations, the
//! default route's A (its profile, its projected gradient step, its closed-form minimiser and
//! the first-order conditions there), and on the general route eq. (9) keeping A symmetric PD,
//! the proximal step of eq. (12), the block norms.

use ndarray::{s, Array1, Array2};
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{gram, Kernel};
use ovk_core::linalg::{cholesky, eigh};
use ovk_core::methods::mvml::basis::Basis;
use ovk_core::methods::mvml::grams::Features;
use ovk_core::methods::mvml::metric::Metric;
use ovk_core::methods::mvml::solver::{a_step, profile, prox_factors, Profile, Settings, Shared};
use ovk_core::methods::mvml::spectral;

fn random(r: &mut Rng, n: usize, d: usize) -> Array2<f64> {
    Array2::from_shape_fn((n, d), |_| r.normal())
}

fn view_grams(n: usize, v: usize, r: &mut Rng) -> Vec<Array2<f64>> {
    (0..v)
        .map(|l| {
            let x = random(r, n, 2 + l);
            gram(&Kernel::Gaussian { sigma: 1.5 }, x.view()).unwrap()
        })
        .collect()
}

/// Exact features of v random views (`Shared::new(&f, true)` borrows them).
fn setup(n: usize, v: usize, seed: u64) -> (Features, Array1<f64>, Rng) {
    let mut r = Rng::new(seed);
    let views = view_grams(n, v, &mut r);
    let y = Array1::from_shape_fn(n, |_| r.normal());
    (Features::exact(views), y, r)
}

fn settings() -> Settings {
    Settings {
        lambda: 0.3,
        eta: 0.2,
        mu: 0.5,
        sparse: false,
        learn_weights: false,
        fixed_metric: false,
        tol: 1e-8,
        cond_cap: 1e300,
    }
}

fn k_of(g: &Shared, l: usize) -> Array2<f64> {
    g.features.psi[l].clone()
}

/// A metric with a few random rank-one terms and off-diagonal identity blocks.
fn some_metric(grams: &Shared, n: usize, r: &mut Rng, terms: usize) -> Metric {
    let v = grams.n_views();
    let mut abar = Array2::eye(v) * 1.3;
    abar[[0, 1]] = 0.4;
    abar[[1, 0]] = 0.4;
    let mut m = Metric::new(abar, n, n);
    for _ in 0..terms {
        let h: Vec<Array1<f64>> = (0..v)
            .map(|_| Array1::from_shape_fn(n, |_| r.normal()))
            .collect();
        let kh: Vec<Array1<f64>> = (0..v)
            .map(|l| grams.features.apply(l, h[l].view()))
            .collect();
        m = m.scaled_plus_rank_one(0.9, 0.7, &h, &kh);
    }
    m
}

fn z_matrix(grams: &Shared, w: &Array1<f64>, n: usize) -> Array2<f64> {
    let v = grams.n_views();
    let mut z = Array2::zeros((n, n * v));
    for l in 0..v {
        z.slice_mut(s![.., l * n..(l + 1) * n])
            .assign(&(k_of(grams, l) * w[l]));
    }
    z
}

fn max_abs(a: &Array2<f64>) -> f64 {
    a.iter().fold(0.0_f64, |m, x| m.max(x.abs()))
}

#[test]
fn g_step_solves_its_normal_equations() {
    let n = 9;
    let (f, y, mut r) = setup(n, 3, 1);
    let grams = Shared::new(&f, true);
    let m = some_metric(&grams, n, &mut r, 3);
    let w = Array1::from(vec![0.5, 0.3, 0.9]);
    let st = settings();
    let p = profile(&grams, &m, &w, y.view(), &st).unwrap();
    let g: Vec<f64> = m.apply(&p.h).into_iter().flat_map(|x| x.to_vec()).collect();
    let g = Array1::from(g);
    let a = m.dense();
    let z = z_matrix(&grams, &w, n);
    // eq. (8) multiplied by A: A ZᵀZ g + λ g = A Zᵀ y (needs no A†)
    let lhs = a.dot(&z.t().dot(&z.dot(&g))) + &g * st.lambda;
    let rhs = a.dot(&z.t().dot(&y));
    let res = (&lhs - &rhs).iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    assert!(
        res <= 1e-8 * (1.0 + rhs.iter().fold(0.0_f64, |m, x| m.max(x.abs()))),
        "residual {res}"
    );
    // and the objective pieces are those of (7) at this g
    let fit = (&y - &z.dot(&g)).mapv(|x| x * x).sum();
    assert!((fit - p.fit).abs() < 1e-8 * (1.0 + fit));
    let ainv_g = ovk_core::linalg::cholesky(a.view())
        .unwrap()
        .solve(g.view().insert_axis(ndarray::Axis(1)))
        .column(0)
        .to_owned();
    let reg = st.lambda * g.dot(&ainv_g);
    assert!(
        (reg - p.reg).abs() < 1e-7 * (1.0 + reg),
        "{reg} vs {}",
        p.reg
    );
    let fro2 = a.mapv(|x| x * x).sum();
    assert!((st.eta * fro2 - p.pen).abs() < 1e-8 * fro2);
}

#[test]
fn block_norms_match_the_dense_metric() {
    let n = 7;
    let (f, _, mut r) = setup(n, 3, 2);
    let grams = Shared::new(&f, true);
    let m = some_metric(&grams, n, &mut r, 4);
    let a = m.dense();
    let bn = m.block_norms();
    for l in 0..3 {
        for k in 0..3 {
            let b = a.slice(s![l * n..(l + 1) * n, k * n..(k + 1) * n]);
            let f = b.mapv(|x| x * x).sum().sqrt();
            assert!((f - bn[[l, k]]).abs() < 1e-9 * (1.0 + f));
        }
    }
}

/// The g-step at A = m, then one A-step of length `st.mu` from it: the g-step's profile, A⁺ and
/// whether the condition cap acted.
fn g_then_a_step(
    grams: &Shared,
    m: &Metric,
    w: &Array1<f64>,
    y: &Array1<f64>,
    st: &Settings,
) -> (Profile, Metric, bool) {
    let p = profile(grams, m, w, y.view(), st).unwrap();
    let kh: Vec<Array1<f64>> = (0..grams.n_views())
        .map(|l| grams.features.apply(l, p.h[l].view()))
        .collect();
    let (next, capped) = a_step(m, &p.h, &kh, st.mu, st).unwrap();
    (p, next, capped)
}

#[test]
fn gradient_step_keeps_a_symmetric_positive_definite() {
    let n = 8;
    let (f, y, _) = setup(n, 2, 3);
    let grams = Shared::new(&f, true);
    let st = Settings {
        eta: 0.6,
        mu: 0.5,
        ..settings()
    }; // μη = 0.3 < ½
    let w = Array1::from(vec![0.5, 0.5]);
    let mut m = Metric::new(Array2::eye(2), n, n);
    for _ in 0..6 {
        let before = m.dense();
        let (p, next, capped) = g_then_a_step(&grams, &m, &w, &y, &st);
        assert!(!capped);
        let a = next.dense();
        // eq. (9) with A†g = h
        let hv = Array1::from(p.h.iter().flat_map(|x| x.to_vec()).collect::<Vec<_>>());
        let hh = hv
            .view()
            .insert_axis(ndarray::Axis(1))
            .dot(&hv.view().insert_axis(ndarray::Axis(0)));
        let expect = &before * (1.0 - 2.0 * st.mu * st.eta) + &hh * (st.mu * st.lambda);
        assert!(max_abs(&(&a - &expect)) < 1e-10);
        assert!(max_abs(&(&a - &a.t())) < 1e-12);
        let e = eigh(a.view()).unwrap();
        assert!(e.values[0] > 0.0, "smallest eigenvalue {}", e.values[0]);
        // the Weyl bounds bracket the true spectrum
        let (lo, hi) = next.spectrum_bounds().unwrap();
        assert!(lo <= e.values[0] * (1.0 + 1e-9) && hi >= e.values[2 * n - 1] * (1.0 - 1e-9));
        m = next;
    }
}

#[test]
fn condition_cap_bounds_the_condition_number() {
    let n = 6;
    let (f, y, _) = setup(n, 2, 4);
    let grams = Shared::new(&f, true);
    let st = Settings {
        eta: 0.99,
        mu: 0.5,
        cond_cap: 50.0,
        ..settings()
    };
    let w = Array1::from(vec![0.5, 0.5]);
    let mut m = Metric::new(Array2::eye(2), n, n);
    let mut any = false;
    for _ in 0..6 {
        let (_, next, capped) = g_then_a_step(&grams, &m, &w, &y, &st);
        any |= capped;
        let e = eigh(next.dense().view()).unwrap();
        let cond = e.values[2 * n - 1] / e.values[0];
        assert!(cond <= 50.0 * (1.0 + 1e-8), "condition {cond}");
        m = next;
    }
    assert!(any, "the test should drive A to the cap");
}

#[test]
fn proximal_step_zeroes_small_blocks_and_shrinks_the_rest() {
    let n = 6;
    let (f, _, mut r) = setup(n, 3, 5);
    let grams = Shared::new(&f, true);
    let mut m = some_metric(&grams, n, &mut r, 2);
    // make block (0, 2) small
    m.abar[[0, 2]] = 0.0;
    m.abar[[2, 0]] = 0.0;
    let f_small = Array2::from_shape_fn((3, 3), |(l, k)| {
        if (l, k) == (0, 2) || (l, k) == (2, 0) {
            0.01
        } else {
            1.0
        }
    });
    m.scale_blocks(&f_small);
    let norms = m.block_norms();
    let tau = 0.5
        * (norms[[0, 2]]
            + norms
                .iter()
                .copied()
                .filter(|&x| x > norms[[0, 2]] * 1.01)
                .fold(f64::INFINITY, f64::min));
    assert!(norms[[0, 2]] < tau);
    let f = prox_factors(&norms, tau);
    let before = m.dense();
    let mut after = m.clone();
    after.scale_blocks(&f);
    let a = after.dense();
    for l in 0..3 {
        for k in 0..3 {
            let b = before.slice(s![l * n..(l + 1) * n, k * n..(k + 1) * n]);
            let nb = b.mapv(|x| x * x).sum().sqrt();
            let got = a.slice(s![l * n..(l + 1) * n, k * n..(k + 1) * n]);
            let expect = if nb <= tau {
                b.mapv(|_| 0.0)
            } else {
                &b * (1.0 - tau / nb)
            };
            assert!(max_abs(&(&got - &expect)) < 1e-9, "block ({l},{k})");
        }
    }
    assert!(a.slice(s![0..n, 2 * n..3 * n]).iter().all(|&x| x == 0.0));
}

// ---- the default route: A = sI + F diag(e) Fᵀ in a basis shared by all outputs ----

struct Dense {
    /// Z = [w_l K_l] (n × nv).
    z: Array2<f64>,
    y: Array1<f64>,
    lambda: f64,
    eta: f64,
}

impl Dense {
    /// `c = (Z A Zᵀ + λI)⁻¹ y`, `h = Zᵀc` and `J(A) = λ yᵀc + η‖A‖²_F`.
    fn eval(&self, a: &Array2<f64>) -> (Array1<f64>, Array1<f64>, f64) {
        let mut m = self.z.dot(a).dot(&self.z.t());
        m.diag_mut().mapv_inplace(|x| x + self.lambda);
        let c = cholesky(m.view())
            .unwrap()
            .solve(self.y.view().insert_axis(ndarray::Axis(1)))
            .column(0)
            .to_owned();
        let h = self.z.t().dot(&c);
        let j = self.lambda * self.y.dot(&c) + self.eta * a.mapv(|x| x * x).sum();
        (c, h, j)
    }

    fn gradient(&self, a: &Array2<f64>) -> Array2<f64> {
        let (_, h, _) = self.eval(a);
        let hh = h
            .view()
            .insert_axis(ndarray::Axis(1))
            .dot(&h.view().insert_axis(ndarray::Axis(0)));
        a * (2.0 * self.eta) - hh * self.lambda
    }
}

/// Projection onto `{A ⪰ εI}` by eigenvalue clipping.
fn project_floor(a: &Array2<f64>, eps: f64) -> Array2<f64> {
    let e = eigh(((a + &a.t()) * 0.5).view()).unwrap();
    let vals = e.values.mapv(|x| x.max(eps));
    (&e.vectors * &vals.view().insert_axis(ndarray::Axis(0))).dot(&e.vectors.t())
}

fn spectral_setup(
    n: usize,
    v: usize,
    seed: u64,
) -> (Features, Basis, spectral::Target, spectral::Settings, Dense) {
    let mut r = Rng::new(seed);
    let grams = view_grams(n, v, &mut r);
    let y = Array1::from_shape_fn(n, |_| r.normal());
    let w = Array1::from_elem(v, 1.0 / v as f64);
    let mut z = Array2::zeros((n, n * v));
    for (l, k) in grams.iter().enumerate() {
        z.slice_mut(s![.., l * n..(l + 1) * n]).assign(&(k * w[l]));
    }
    let f = Features::exact(grams);
    let basis = Basis::new(&f, &w).unwrap();
    let target = spectral::Target::all(&basis, &y.clone().insert_axis(ndarray::Axis(1))).remove(0);
    let st = spectral::Settings {
        lambda: 0.3,
        eta: 0.05,
        mu: 0.5,
        floor: 1e-6,
        tol: 1e-12,
        optimal: false,
    };
    let dense = Dense {
        z,
        y,
        lambda: st.lambda,
        eta: st.eta,
    };
    (f, basis, target, st, dense)
}

#[test]
fn default_route_profile_and_projected_step_match_dense_brute_force() {
    let (f, basis, t, st, dense) = spectral_setup(10, 3, 21);
    let mut o = spectral::OutputFit::start_all(&basis, &f, std::slice::from_ref(&t), &st)
        .unwrap()
        .remove(0);
    for round in 0..6 {
        let a = o.a.dense();
        let (_, h, j) = dense.eval(&a);
        assert!(
            (j - o.prof.objective).abs() < 1e-9 * j,
            "round {round}: {j} vs {}",
            o.prof.objective
        );
        assert!(max_abs(&(h.clone() - &o.prof.h).insert_axis(ndarray::Axis(0))) < 1e-8);
        // one projected gradient step at a fixed μ, against the dense projection
        let mu = 0.7;
        let dir = spectral::Direction::new(&basis, &f, &o.a, &o.prof.h);
        let trial = dir.trial(&o.a, mu, &st).unwrap();
        let expect = project_floor(&(&a - &(dense.gradient(&a) * mu)), st.floor);
        assert!(
            max_abs(&(&trial.a.dense() - &expect)) < 1e-9 * (1.0 + max_abs(&expect)),
            "round {round}"
        );
        let e = eigh(trial.a.dense().view()).unwrap();
        assert!(e.values[0] >= st.floor * (1.0 - 1e-9));
        // the Armijo slope ⟨∇J, A⁺ − A⟩ and ‖A⁺ − A‖
        let d = &expect - &a;
        let slope: f64 = (&dense.gradient(&a) * &d).sum();
        assert!((slope - trial.slope).abs() < 1e-8 * (1.0 + slope.abs()));
        let change = d.mapv(|x| x * x).sum().sqrt();
        assert!((change - trial.change).abs() < 1e-8 * (1.0 + change));
        o.iterate(&basis, &f, &t, &st).unwrap();
    }
}

#[test]
fn optimal_metric_meets_the_first_order_conditions_and_the_g_step_normal_equations() {
    let (f, basis, t, st, dense) = spectral_setup(12, 3, 22);
    let st = spectral::Settings {
        optimal: true,
        ..st
    };
    let mut o = spectral::OutputFit::start_all(&basis, &f, std::slice::from_ref(&t), &st)
        .unwrap()
        .remove(0);
    let j0 = o.prof.objective;
    o.iterate(&basis, &f, &t, &st).unwrap();
    assert!(o.progress.converged);
    assert!(o.prof.objective < j0);
    let a = o.a.dense();
    let (_, h, j) = dense.eval(&a);
    assert!((j - o.prof.objective).abs() < 1e-9 * j);
    // KKT on {A ⪰ εI}: ∇J ⪰ 0 and ∇J (A − εI) = 0
    let g = dense.gradient(&a);
    let scale = max_abs(&g).max(1.0);
    let eg = eigh(((&g + &g.t()) * 0.5).view()).unwrap();
    assert!(
        eg.values[0] >= -1e-6 * scale,
        "λ_min(∇J) = {}",
        eg.values[0]
    );
    let mut b = a.clone();
    b.diag_mut().mapv_inplace(|x| x - st.floor);
    let comp = max_abs(&g.dot(&b));
    assert!(comp <= 1e-6 * scale * max_abs(&b), "‖∇J (A − εI)‖ = {comp}");
    // the same condition as the fit reports it
    let foc = o.first_order_residual(&basis, &f, &st).unwrap();
    assert!(foc < 1e-6, "first-order residual {foc}");
    let fixed = project_floor(&(&a - &(g.clone() * (0.5 / st.eta))), st.floor);
    let dense_foc = (&fixed - &a).mapv(|x| x * x).sum().sqrt() / a.mapv(|x| x * x).sum().sqrt();
    assert!((dense_foc - foc).abs() < 1e-6);
    // eq. (8) multiplied by A: A ZᵀZ g + λ g = A Zᵀ y, at g = A h
    let gv = a.dot(&h);
    let z = &dense.z;
    let lhs = a.dot(&z.t().dot(&z.dot(&gv))) + &gv * st.lambda;
    let rhs = a.dot(&z.t().dot(&dense.y));
    let res = (&lhs - &rhs).iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    let top = rhs.iter().fold(0.0_f64, |m, x| m.max(x.abs()));
    assert!(res <= 1e-6 * (1.0 + top), "normal equations residual {res}");
    assert!(max_abs(&(o.g() - &gv).insert_axis(ndarray::Axis(0))) < 1e-8 * (1.0 + top));
}

#[test]
fn projected_gradient_never_increases_and_approaches_the_optimum() {
    let (f, basis, t, st, _) = spectral_setup(12, 2, 23);
    let opt = spectral::optimal_metric(&basis, &f, &t, &st).unwrap();
    let j_opt = spectral::profile(&basis, &f, &t, &opt, &st)
        .unwrap()
        .objective;
    let mut o = spectral::OutputFit::start_all(&basis, &f, std::slice::from_ref(&t), &st)
        .unwrap()
        .remove(0);
    let mut prev = o.prof.objective;
    for _ in 0..400 {
        if o.progress.converged {
            break;
        }
        o.iterate(&basis, &f, &t, &st).unwrap();
        assert!(o.prof.objective <= prev, "{} → {}", prev, o.prof.objective);
        assert!(
            o.prof.objective >= j_opt * (1.0 - 1e-12),
            "below the minimiser"
        );
        prev = o.prof.objective;
    }
    assert!(
        (prev - j_opt) / j_opt < 1e-3,
        "gradient {prev} vs minimiser {j_opt}"
    );
}

#[test]
fn covariance_start_on_nystrom_features_solves_the_dense_g_step() {
    // A₀ = 𝟙𝟙ᵀ ⊗ I (MVML_Cov) seen through block Nyström features: in `gram` coordinates
    // Z A₀ Zᵀ = Σ_lm w_l w_m K̃_l K̃_m = S Sᵀ with S = Σ_l w_l N_l N_lᵀ, in `root` coordinates
    // (the identity between views in the landmark frame) Σ_lm w_l w_m N_l N_mᵀ = S Sᵀ with
    // S = Σ_l w_l N_l; the g-step must give c = (S Sᵀ + λI)⁻¹ y and g = A h.
    let (n, p, v) = (12, 5, 3);
    let mut r = Rng::new(31);
    let mut factors: Vec<Array2<f64>> = (0..v).map(|_| random(&mut r, n, p)).collect();
    // a rank-deficient factor, as when the landmark Gram's pseudo-inverse cuts a direction
    let dup = factors[1].column(0).to_owned();
    factors[1].column_mut(p - 1).assign(&dup);
    let y = Array1::from_shape_fn(n, |_| r.normal());
    let st = Settings {
        fixed_metric: true,
        ..settings()
    };
    for root in [false, true] {
        let f = Features::nystrom(&factors, root).unwrap();
        let shared = Shared::new(&f, true);
        let o = ovk_core::methods::mvml::solver::OutputFit::start(
            &shared,
            Array2::ones((v, v)),
            y.view(),
            &st,
        )
        .unwrap();
        let mut s_sum = Array2::<f64>::zeros((n, if root { p } else { n }));
        for nl in &factors {
            let fl = if root { nl.clone() } else { nl.dot(&nl.t()) };
            s_sum.scaled_add(1.0 / v as f64, &fl);
        }
        let mut m = s_sum.dot(&s_sum.t());
        m.diag_mut().mapv_inplace(|x| x + st.lambda);
        let c = cholesky(m.view())
            .unwrap()
            .solve(y.view().insert_axis(ndarray::Axis(1)))
            .column(0)
            .to_owned();
        let err = (&c - &o.prof.c).iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        let top = c.iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        assert!(err <= 1e-8 * top, "root {root}: c off by {err} (max {top})");
        // the fitted values Z g = Σ_l w_l Ψ_l g_l are the dense y − λc
        let g = o.g();
        let mut zg = Array1::<f64>::zeros(n);
        for (l, gl) in g.iter().enumerate() {
            zg.scaled_add(1.0 / v as f64, &shared.features.apply(l, gl.view()));
        }
        let expect = &y - &(&c * st.lambda);
        let err = (&zg - &expect).iter().fold(0.0_f64, |a, x| a.max(x.abs()));
        assert!(
            err <= 1e-8 * (1.0 + top),
            "root {root}: fitted values off by {err}"
        );
    }
}
