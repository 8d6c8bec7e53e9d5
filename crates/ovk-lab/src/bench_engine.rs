//! The scaling ledger's engine: one deterministic synthetic problem per (n, outputs), one timed
//! fit of one method variant on it with its defaults at a fixed λ, and the floor it is measured
//! against — one symmetric eigendecomposition of the n×n Gram matrix of the same inputs.
//! `ovk bench` runs each configuration in a child process so that peak memory is its own.

use std::fmt::Write as _;
use std::time::Instant;

use ndarray::{Array2, Axis};
use serde::{Deserialize, Serialize};

use ovk_core::data::{Task, View};
use ovk_core::kernels::{gram, KernelSpec};
use ovk_core::linalg::eigh;
use ovk_core::methods::{self, Params, Problem, Silent, Value};
use ovk_core::util::rng::Rng;
use ovk_core::{OvkError, Result};

/// Input dimension d of the synthetic problems.
pub const INPUTS: usize = 10;
/// Smooth latent functions mixed into every output.
const LATENT: usize = 5;
/// Standard deviation of the additive noise (the latent mix has unit-order variance).
const NOISE: f64 = 0.3;
/// Held-out rows generated beside the training rows (used by methods that validate).
const TEST_ROWS: usize = 100;
/// Fraction of training rows whose labels vvmr sees (the rest are unlabeled).
const VVMR_LABELED: f64 = 0.5;
/// MVML's Nyström fraction in the ledger (the middle one of `cargo bench --bench mvml`).
const MVML_NYSTROM: f64 = 0.12;
/// Written to stderr by `ovk bench one` once the fit is over (the parent's time cap is the fit's).
pub const FIT_DONE: &str = "ovk bench: fit done";
/// The fixed regularisation every λ-taking method gets (no path, no search).
pub const LAMBDA: f64 = 0.1;

/// The method variants the ledger knows: the registry's methods with the defaults they run at,
/// KDE per operator-valued kernel, MVML exact and Nyström. `eigh` is the floor alone.
pub const VARIANTS: &[(&str, &str)] = &[
    ("krr", "kernel ridge, Cholesky of K + λI"),
    ("okl", "OKL, quasi-Newton solver (default), tol 1e-8"),
    (
        "lowrank-okl",
        "low-rank OKL at one λ (no path), rank min(m, 10)",
    ),
    ("kde-identity", "KDE, identity operator, exact solve"),
    ("kde-covariance", "KDE, covariance operator, exact solve"),
    (
        "kde-conditional",
        "KDE, conditional covariance operator, exact solve",
    ),
    ("vvmr", "VVMR, half the labels hidden, multi-label ±1"),
    (
        "mvml-exact",
        "MVML, 3 views, 50 rounds at most, exact Grams",
    ),
    ("mvml-nystrom", "MVML, 3 views, block Nyström 12%"),
    ("eigh", "floor: Gram of K and one eigendecomposition"),
];

/// The default `--methods` of the scaling table (every variant but the floor).
pub fn default_variants() -> Vec<String> {
    VARIANTS
        .iter()
        .map(|(v, _)| v.to_string())
        .filter(|v| v != "eigh")
        .collect()
}

/// Check a variant name, listing the valid ones otherwise.
pub fn check_variant(name: &str) -> Result<()> {
    if VARIANTS.iter().any(|(v, _)| *v == name) {
        Ok(())
    } else {
        let names: Vec<&str> = VARIANTS.iter().map(|(v, _)| *v).collect();
        Err(OvkError::input(format!(
            "unknown benchmark method '{name}' (choose from: {})",
            names.join(", ")
        )))
    }
}

/// One configuration's measurements (the JSON `ovk bench one` prints).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchResult {
    pub method: String,
    pub n: usize,
    pub outputs: usize,
    /// Seconds of `Method::fit` (Gram matrices included); absent for the floor alone.
    pub fit_s: Option<f64>,
    /// Seconds of the Gram matrix of the floor (not part of the ratio).
    pub gram_s: Option<f64>,
    /// Seconds of one `eigh` of the n×n Gram matrix: the floor.
    pub eigh_s: Option<f64>,
    /// fit_s / eigh_s.
    pub ratio: Option<f64>,
    /// VmHWM of the process after the fit (after the floor for `eigh`), data included.
    pub peak_rss_bytes: Option<u64>,
    /// The peak the run's memory guard expects: the process before the problem (VmRSS), the
    /// problem's x and y, the method's own `peak_bytes` and the fit's runtime
    /// (`methods::RUNTIME_BYTES`).
    #[serde(default)]
    pub estimate_bytes: Option<u64>,
    pub iterations: usize,
    pub converged: bool,
    /// The method's objective at the returned solution (absent when it reports none).
    pub objective: Option<f64>,
}

/// The synthetic problem: x ~ N(0, I_d); `LATENT` smooth functions sin(aⱼᵀx + bⱼ) with
/// aⱼ ~ N(0, I/d), mixed into `outputs` columns by a Gaussian matrix, plus noise. Inputs depend
/// on (seed, n) only, so every method and output count sees the same x. Returns
/// (x_train, y_train, x_test, y_test).
pub fn synthetic(
    n: usize,
    outputs: usize,
    seed: u64,
) -> (Array2<f64>, Array2<f64>, Array2<f64>, Array2<f64>) {
    let rows = n + TEST_ROWS;
    let mut rx = Rng::new(seed);
    let x = Array2::from_shape_fn((rows, INPUTS), |_| rx.normal());
    let mut rf = Rng::new(seed ^ 0x5eed_f00d);
    let scale = 1.0 / (INPUTS as f64).sqrt();
    let a = Array2::from_shape_fn((INPUTS, LATENT), |_| scale * rf.normal());
    let b: Vec<f64> = (0..LATENT)
        .map(|_| std::f64::consts::PI * rf.uniform())
        .collect();
    let mix_scale = 1.0 / (LATENT as f64).sqrt();
    let mut rm = Rng::new(seed ^ (outputs as u64).wrapping_mul(0x9e37_79b9));
    let mix = Array2::from_shape_fn((LATENT, outputs), |_| mix_scale * rm.normal());
    let mut h = x.dot(&a);
    for (j, mut col) in h.axis_iter_mut(Axis(1)).enumerate() {
        col.mapv_inplace(|t| (t + b[j]).sin());
    }
    let mut y = h.dot(&mix);
    y.mapv_inplace(|v| v + NOISE * rm.normal());
    let train: Vec<usize> = (0..n).collect();
    let test: Vec<usize> = (n..rows).collect();
    (
        x.select(Axis(0), &train),
        y.select(Axis(0), &train),
        x.select(Axis(0), &test),
        y.select(Axis(0), &test),
    )
}

/// The problem and hyperparameters a variant runs on (registry method name, problem, params).
fn setup(
    variant: &str,
    n: usize,
    outputs: usize,
    seed: u64,
) -> Result<(&'static str, Problem, Params)> {
    check_variant(variant)?;
    // The held-out rows are drawn (so the training rows stay those of every earlier ledger)
    // but a timing fit has nothing to choose on them.
    let (x, mut y, _x_test, mut y_test) = synthetic(n, outputs, seed);
    let spec = KernelSpec::default();
    let kernel = spec.resolve(x.view())?;
    let mut labeled = vec![true; n];
    let mut task = Task::Regression;
    let mut views = Vec::new();
    let lambda = Params::new().with("lambda", Value::Float(LAMBDA));
    let (method, params) = match variant {
        "krr" | "okl" | "lowrank-okl" => (variant_method(variant), lambda),
        "kde-identity" | "kde-covariance" | "kde-conditional" => {
            let op = variant.trim_start_matches("kde-");
            ("kde", lambda.with("ovk", Value::Text(op.into())))
        }
        "vvmr" => {
            task = Task::Multilabel;
            for v in y.iter_mut().chain(y_test.iter_mut()) {
                *v = if *v >= 0.0 { 1.0 } else { -1.0 };
            }
            let mut r = Rng::new(seed ^ 0x1abe1);
            let keep = ((VVMR_LABELED * n as f64).round() as usize).clamp(1, n);
            labeled = vec![false; n];
            for i in r.sample(n, keep) {
                labeled[i] = true;
            }
            for (i, mut row) in y.axis_iter_mut(Axis(0)).enumerate() {
                if !labeled[i] {
                    row.fill(f64::NAN);
                }
            }
            ("vvmr", Params::new())
        }
        "mvml-exact" | "mvml-nystrom" => {
            views = vec![
                View {
                    name: "v0".into(),
                    columns: (0..4).collect(),
                },
                View {
                    name: "v1".into(),
                    columns: (4..7).collect(),
                },
                View {
                    name: "v2".into(),
                    columns: (7..INPUTS).collect(),
                },
            ];
            let p = if variant == "mvml-nystrom" {
                lambda.with("nystrom", Value::Float(MVML_NYSTROM))
            } else {
                lambda
            };
            ("mvml", p)
        }
        _ => ("eigh", Params::new()),
    };
    let problem = Problem {
        x,
        y,
        labeled,
        holdout: None,
        kernel,
        kernel_spec: spec,
        task,
        feature_names: (0..INPUTS).map(|j| format!("x_{j}")).collect(),
        output_names: (0..outputs).map(|k| format!("y_{k}")).collect(),
        views,
        seed,
    };
    Ok((method, problem, params))
}

fn variant_method(v: &str) -> &'static str {
    match v {
        "krr" => "krr",
        "okl" => "okl",
        _ => "lowrank-okl",
    }
}

/// Run one configuration in this process: the fit (unless `variant` is `eigh`), then, when
/// `floor` is set, the Gram matrix and one eigendecomposition of it.
pub fn run_one(
    variant: &str,
    n: usize,
    outputs: usize,
    seed: u64,
    floor: bool,
) -> Result<BenchResult> {
    if n < 2 || outputs == 0 {
        return Err(OvkError::input(
            "--n must be at least 2 and --outputs at least 1",
        ));
    }
    let before = status_kib("/proc/self/status", "VmRSS:").map(|k| k * 1024);
    let (method, problem, params) = setup(variant, n, outputs, seed)?;
    let mut out = BenchResult {
        method: variant.to_string(),
        n,
        outputs,
        fit_s: None,
        gram_s: None,
        eigh_s: None,
        ratio: None,
        peak_rss_bytes: None,
        estimate_bytes: None,
        iterations: 0,
        converged: true,
        objective: None,
    };
    if method != "eigh" {
        let m = methods::find_named(method)?;
        let shape = methods::ProblemShape::of(&problem);
        // the pipeline's fit-side estimate (`train::pipeline::admit`) without its loading: the
        // rows are generated in this process
        let own = m.peak_bytes(&shape, &params)? + m.row_copy_bytes(&shape, &params)?;
        out.estimate_bytes = before.map(|rss| {
            rss + own
                + methods::mats(1, n, problem.x.ncols() + problem.y.ncols())
                + methods::RUNTIME_BYTES
        });
        let start = Instant::now();
        let fit = m.fit(&problem, &params, &mut Silent)?;
        let fit_s = start.elapsed().as_secs_f64();
        out.fit_s = Some(fit_s);
        out.iterations = fit.iterations;
        out.converged = fit.converged;
        out.objective = fit.objective.filter(|q| q.is_finite());
        out.peak_rss_bytes = peak_rss_bytes();
        drop(fit);
        eprintln!("{FIT_DONE}");
    }
    if floor || method == "eigh" {
        let (g, e) = time_floor(&problem)?;
        out.gram_s = Some(g);
        out.eigh_s = Some(e);
        out.ratio = out.fit_s.map(|f| f / e);
        if method == "eigh" {
            out.peak_rss_bytes = peak_rss_bytes();
        }
    }
    Ok(out)
}

/// (Gram seconds, eigh seconds) on the problem's training inputs.
fn time_floor(p: &Problem) -> Result<(f64, f64)> {
    let start = Instant::now();
    let k = gram(&p.kernel, p.x.view())?;
    let gram_s = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let e = eigh(k.view())?;
    let eigh_s = start.elapsed().as_secs_f64();
    drop(e);
    Ok((gram_s, eigh_s))
}

/// VmHWM (the peak resident set) of this process, from /proc/self/status.
pub fn peak_rss_bytes() -> Option<u64> {
    status_kib("/proc/self/status", "VmHWM:").map(|k| k * 1024)
}

/// A `… kB` field of a /proc status file, in KiB.
pub fn status_kib(path: &str, field: &str) -> Option<u64> {
    let s = std::fs::read_to_string(path).ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The synthetic problem as CSV (columns x_0 … x_{d−1}, y_0 … y_{m−1}; training rows then the
/// held-out rows), so Python peers and `ovk run` read the very same numbers.
pub fn synthetic_csv(n: usize, outputs: usize, seed: u64) -> String {
    let (x, y, xt, yt) = synthetic(n, outputs, seed);
    let mut s = String::new();
    let head: Vec<String> = (0..INPUTS)
        .map(|j| format!("x_{j}"))
        .chain((0..outputs).map(|k| format!("y_{k}")))
        .collect();
    s.push_str(&head.join(","));
    s.push('\n');
    for (xs, ys) in [(&x, &y), (&xt, &yt)] {
        for (xr, yr) in xs.rows().into_iter().zip(ys.rows()) {
            let cells: Vec<String> = xr.iter().chain(yr.iter()).map(|v| format!("{v}")).collect();
            let _ = writeln!(s, "{}", cells.join(","));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_is_deterministic_and_shares_inputs_across_output_counts() {
        let (x1, y1, _, _) = synthetic(50, 3, 4);
        let (x2, y2, _, _) = synthetic(50, 3, 4);
        let (x3, y3, _, _) = synthetic(50, 7, 4);
        assert_eq!(x1, x2);
        assert_eq!(y1, y2);
        assert_eq!(x1, x3);
        assert_eq!(y3.ncols(), 7);
        // the outputs carry signal: their variance exceeds the noise's
        let var = y3.var(0.0);
        assert!(var > 2.0 * NOISE * NOISE, "variance {var}");
    }

    #[test]
    fn every_variant_fits_a_tiny_problem() {
        for (v, _) in VARIANTS {
            let r = run_one(v, 40, 3, 1, true).unwrap_or_else(|e| panic!("{v}: {e}"));
            assert!(r.eigh_s.is_some_and(|e| e >= 0.0), "{v}");
            if *v != "eigh" {
                assert!(
                    r.fit_s.is_some_and(|f| f >= 0.0) && r.ratio.is_some(),
                    "{v}"
                );
                assert!(r.iterations >= 1, "{v}: {} iterations", r.iterations);
            }
        }
    }
}
