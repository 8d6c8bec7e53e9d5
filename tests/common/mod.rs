//! Scaffolding shared by the integration tests: random matrices and small problems, the
//! comparisons the numerical tests make, the real binary (`binary`), brute-force dense solves
//! (`dense`), a hand-built session (`fixture`) and the property tests' harness (`support`).
//! Included by `tests/it/main.rs` and `tests/prop/main.rs`; each uses a part of it.
#![allow(dead_code)]

pub mod binary;
pub mod dense;
pub mod fixture;
pub mod support;

use ndarray::Array2;
use ovk_core::data::rng::Rng;
use ovk_core::kernels::{input_factor, InputFactor, InputRank, Kernel, KernelSpec, Landmarks};
use ovk_core::methods::{self, Collect, Fit, Params, Problem, Value};

/// A rows×cols matrix of independent standard normal draws.
pub fn normal(rng: &mut Rng, rows: usize, cols: usize) -> Array2<f64> {
    Array2::from_shape_fn((rows, cols), |_| rng.normal())
}

/// ℓ points in 2-D, m correlated outputs (a smooth function of x mixed through a random map),
/// every row labeled, no test rows, a Gaussian kernel of width 1.
pub fn smooth_problem(ell: usize, m: usize, seed: u64) -> Problem {
    let mut rng = Rng::new(seed);
    let x = normal(&mut rng, ell, 2);
    let latent = x.mapv(|v| (1.5 * v).sin());
    let mix = normal(&mut rng, 2, m);
    let y = latent.dot(&mix) + normal(&mut rng, ell, m) * 0.1;
    Problem::new(x, y, Kernel::Gaussian { sigma: 1.0 })
}

/// ℓ + t rows in 3-D with m outputs (sin x mixed through a random map, noise 0.2), the last t
/// held out; `kernel` at input rank `rank` with RPCholesky landmarks.
pub fn sine_problem(
    seed: u64,
    l: usize,
    t: usize,
    m: usize,
    kernel: Kernel,
    rank: InputRank,
) -> Problem {
    let mut rng = Rng::new(seed);
    let x = normal(&mut rng, l + t, 3);
    let mix = normal(&mut rng, 3, m);
    let y = x.mapv(f64::sin).dot(&mix) + normal(&mut rng, l + t, m) * 0.2;
    let spec = KernelSpec {
        name: kernel.name(),
        input_rank: rank,
        landmarks: Landmarks::Rpcholesky,
        ..KernelSpec::default()
    };
    Problem::new(x, y, kernel)
        .holding_out(l)
        .with_kernel_spec(spec)
}

/// The input factor a fit of `p` at rank r builds (same seed, rank and landmarks).
pub fn fit_factor(p: &Problem, r: usize) -> InputFactor {
    input_factor(
        &p.kernel,
        p.x.view(),
        r,
        Landmarks::Rpcholesky,
        p.seed,
        &mut |_| Ok(()),
    )
    .unwrap()
}

/// Parameters from name/value pairs.
pub fn params(pairs: &[(&str, Value)]) -> Params {
    let mut p = Params::new();
    for (k, v) in pairs {
        p.set(k, v.clone());
    }
    p
}

/// Fit the registry's `method`, panicking with its message on failure.
pub fn fit(method: &str, p: &Problem, params: &Params) -> Fit {
    methods::find_named(method)
        .unwrap()
        .fit(p, params, &mut Collect::default())
        .unwrap_or_else(|e| panic!("{method}: {e}"))
}

/// The learned matrix a fit saves under `name`.
pub fn matrix<'a>(fit: &'a Fit, name: &str) -> &'a Array2<f64> {
    &fit.matrices
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no matrix {name}"))
        .1
}

/// max |a − b| over the entries (the shapes must agree).
pub fn max_abs_diff(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
    assert_eq!(a.dim(), b.dim());
    a.iter()
        .zip(b.iter())
        .fold(0.0_f64, |m, (x, y)| m.max((x - y).abs()))
}

/// max(1, max |a|): the scale a difference is compared to.
pub fn scale(a: &Array2<f64>) -> f64 {
    a.iter().fold(1.0_f64, |m, v| m.max(v.abs()))
}
