//! The baseline: independent kernel ridge regression, OKL with the output kernel fixed to I.
//! `C = (K + λI)⁻¹ Y`, `Ŷ = K_test C` (methods.md, "the baseline").

use super::expansion::KernelExpansion;
use super::params::{common, ParamSpec};
use super::{
    check_cancel, ensure_finite, Clock, Fit, Method, Observer, Params, Phase, Problem, TraceRecord,
};
use crate::kernels::gram;
use crate::linalg::cholesky;
use crate::Result;
use ndarray::{Array2, ArrayView2};

pub struct Krr;

const PARAMS: &[ParamSpec] = &[common::LAMBDA];

impl Method for Krr {
    fn name(&self) -> &'static str {
        "krr"
    }
    fn summary(&self) -> &'static str {
        "independent kernel ridge per output (identity output kernel) — the baseline"
    }
    fn citation(&self) -> &'static str {
        "kernel ridge regression; OKL (Dinuzzo et al. 2011) with L = I"
    }
    fn params(&self) -> &'static [ParamSpec] {
        PARAMS
    }

    fn fit(&self, p: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let clock = Clock::start();
        let lambda = params.resolve(PARAMS).f64("lambda")?;
        let rows = p.labeled_rows();
        let x = p.x.select(ndarray::Axis(0), &rows);
        let y = p.y.select(ndarray::Axis(0), &rows);
        obs.phase(Phase::Gram, None);
        let k = gram(&p.kernel, x.view())?;
        check_cancel(obs)?;
        obs.phase(Phase::Decomposition, None);
        let c = solve_ridge(k.view(), y.view(), lambda)?;
        let objective = objective_identity(k.view(), y.view(), c.view(), lambda);
        ensure_finite("objective", objective)?;
        obs.record(&TraceRecord {
            iter: 1,
            objective,
            elapsed_ms: clock.ms(),
            ..Default::default()
        });
        let mut fit = Fit::new(Box::new(KernelExpansion {
            kernel: p.kernel,
            x_train: x,
            coef: c.clone(),
        }));
        fit.iterations = 1;
        fit.objective = objective;
        fit.matrices.push(("coefficients".into(), c));
        Ok(fit)
    }
}

/// `(K + λI)⁻¹ Y` by Cholesky.
pub fn solve_ridge(k: ArrayView2<f64>, y: ArrayView2<f64>, lambda: f64) -> Result<Array2<f64>> {
    let mut a = k.to_owned();
    a.diag_mut().mapv_inplace(|v| v + lambda);
    Ok(cholesky(a.view())?.solve(y))
}

/// OKL's eq. (3) at L = I: ‖Y − KC‖²/(2λ) + tr(CᵀKC)/2 + m/2.
pub fn objective_identity(
    k: ArrayView2<f64>,
    y: ArrayView2<f64>,
    c: ArrayView2<f64>,
    lambda: f64,
) -> f64 {
    let kc = crate::linalg::matmul(k, c);
    let fit = (&y - &kc).mapv(|v| v * v).sum() / (2.0 * lambda);
    let reg = (&c * &kc).sum() / 2.0;
    fit + reg + y.ncols() as f64 / 2.0
}
