//! MVML's building blocks against dense brute force: the g-step's normal equations, eq. (9)
//! keeping A symmetric PD, the proximal step of eq. (12), the block norms.

use ndarray::{s, Array1, Array2};
use ovk::data::rng::Rng;
use ovk::kernels::{gram, Kernel};
use ovk::linalg::eigh;
use ovk::methods::mvml::grams::{Grams, ViewGram};
use ovk::methods::mvml::metric::Metric;
use ovk::methods::mvml::solver::{a_step, profile, prox_factors, Settings};

fn random(r: &mut Rng, n: usize, d: usize) -> Array2<f64> {
    Array2::from_shape_fn((n, d), |_| r.normal())
}

fn setup(n: usize, v: usize, seed: u64) -> (Grams, Array1<f64>, Rng) {
    let mut r = Rng::new(seed);
    let views = (0..v)
        .map(|l| {
            let x = random(&mut r, n, 2 + l);
            ViewGram::Exact(gram(&Kernel::Gaussian { sigma: 1.5 }, x.view()).unwrap())
        })
        .collect();
    let y = Array1::from_shape_fn(n, |_| r.normal());
    (Grams::new(views, true), y, r)
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

fn k_of(g: &Grams, l: usize) -> Array2<f64> {
    match &g.views[l] {
        ViewGram::Exact(k) => k.clone(),
        ViewGram::Nystrom(f) => f.dot(&f.t()),
    }
}

/// A metric with a few random rank-one terms and off-diagonal identity blocks.
fn some_metric(grams: &Grams, n: usize, r: &mut Rng, terms: usize) -> Metric {
    let v = grams.n_views();
    let mut abar = Array2::eye(v) * 1.3;
    abar[[0, 1]] = 0.4;
    abar[[1, 0]] = 0.4;
    let mut m = Metric::new(abar, n);
    for _ in 0..terms {
        let h: Vec<Array1<f64>> = (0..v)
            .map(|_| Array1::from_shape_fn(n, |_| r.normal()))
            .collect();
        let kh: Vec<Array1<f64>> = (0..v).map(|l| grams.views[l].matvec(h[l].view())).collect();
        m = m.scaled_plus_rank_one(0.9, 0.7, &h, &kh);
    }
    m
}

fn z_matrix(grams: &Grams, w: &Array1<f64>, n: usize) -> Array2<f64> {
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
    let (grams, y, mut r) = setup(n, 3, 1);
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
    let ainv_g = ovk::linalg::cholesky(a.view())
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
    let (grams, _, mut r) = setup(n, 3, 2);
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

#[test]
fn gradient_step_keeps_a_symmetric_positive_definite() {
    let n = 8;
    let (grams, y, _) = setup(n, 2, 3);
    let st = Settings {
        eta: 0.6,
        mu: 0.5,
        ..settings()
    }; // μη = 0.3 < ½
    let w = Array1::from(vec![0.5, 0.5]);
    let mut m = Metric::new(Array2::eye(2), n);
    for _ in 0..6 {
        let p = profile(&grams, &m, &w, y.view(), &st).unwrap();
        let kh: Vec<Array1<f64>> = (0..2)
            .map(|l| grams.views[l].matvec(p.h[l].view()))
            .collect();
        let before = m.dense();
        let (next, capped) = a_step(&m, &p.h, &kh, st.mu, &st).unwrap();
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
    let (grams, y, _) = setup(n, 2, 4);
    let st = Settings {
        eta: 0.99,
        mu: 0.5,
        cond_cap: 50.0,
        ..settings()
    };
    let w = Array1::from(vec![0.5, 0.5]);
    let mut m = Metric::new(Array2::eye(2), n);
    let mut any = false;
    for _ in 0..6 {
        let p = profile(&grams, &m, &w, y.view(), &st).unwrap();
        let kh: Vec<Array1<f64>> = (0..2)
            .map(|l| grams.views[l].matvec(p.h[l].view()))
            .collect();
        let (next, capped) = a_step(&m, &p.h, &kh, st.mu, &st).unwrap();
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
    let (grams, _, mut r) = setup(n, 3, 5);
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
