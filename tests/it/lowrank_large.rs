//! Nothing m×m is formed: m = 20 000 outputs (one m×m matrix would take 3.2 GB). Its own test
//! binary, so the process's peak memory is this fit's alone.

use crate::common::matrix;
use ndarray::Array2;
use ovk_core::data::rng::Rng;
use ovk_core::kernels::Kernel;
use ovk_core::methods::lowrank_okl::LowRankOkl;
use ovk_core::methods::{Method, Params, Problem, Silent, Value};

fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line.split_whitespace().nth(1)?.parse::<u64>().ok()? * 1024)
}

#[test]
fn twenty_thousand_outputs_without_an_m_by_m_matrix() {
    let (ell, m, p) = (30, 20_000, 5);
    let mut rng = Rng::new(4);
    let x = Array2::from_shape_fn((ell, 1), |_| 2.0 * rng.uniform() - 1.0);
    let latent = Array2::from_shape_fn((ell, 8), |(i, k)| ((k + 1) as f64 * x[[i, 0]]).sin());
    let mix = Array2::from_shape_fn((8, m), |_| rng.uniform());
    let y = latent.dot(&mix) + Array2::from_shape_fn((ell, m), |_| 0.3 * rng.normal());
    let (x_test, y_test) = (
        x.slice(ndarray::s![..10, ..]).to_owned(),
        y.slice(ndarray::s![..10, ..]).to_owned(),
    );
    let problem = Problem::new(x, y, Kernel::Gaussian { sigma: 0.3 }).with_holdout(x_test, y_test);
    let params = Params::new()
        .with("rank", Value::Int(p as i64))
        .with("lambda_path", Value::Int(5));
    let fit = LowRankOkl.fit(&problem, &params, &mut Silent).unwrap();
    let names: Vec<&str> = fit.matrices.iter().map(|(n, _)| n.as_str()).collect();
    assert!(!names.contains(&"output_kernel"), "{names:?}");
    let b = matrix(&fit, "factor_b");
    assert_eq!(b.dim(), (m, p));
    assert!(b.iter().all(|v| v.is_finite()) && b.iter().any(|v| *v != 0.0));
    assert!(fit.objective.unwrap().is_finite());
    let pred = fit.model.predict(problem.holdout_x()).unwrap();
    assert_eq!(pred.dim(), (10, m));
    assert!(pred.iter().all(|v| v.is_finite()));
    if let Some(peak) = peak_rss_bytes() {
        assert!(peak < 1 << 30, "peak memory {} MB", peak >> 20);
    }
}
