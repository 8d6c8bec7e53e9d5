//! The baseline: independent kernel ridge regression, OKL with the output kernel fixed to I.
//! `C = (K + λI)⁻¹ Y`, `Ŷ = K_test C` (methods.md, "the baseline").

use super::expansion::KernelExpansion;
use super::params::{common, ParamSpec};
use super::{
    check_cancel, ensure_finite, mats, Clock, Fit, Method, Observer, Params, Phase, Problem,
    ProblemShape, TraceRecord,
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

    fn peak_bytes(&self, s: &ProblemShape, _: &Params) -> Result<u64> {
        let l = s.n_labeled;
        // K, K + λI, its Cholesky factor and the prediction's cross-Gram on the training rows
        // (measured: see tests/resource_limits.rs); the ℓ×m blocks; the test cross-Gram.
        Ok(mats(4, l, l) + mats(4, l, s.m) + mats(1, s.n_test, l))
    }
    fn memory_advice(&self) -> &'static str {
        crate::large_n_advice!()
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
        fit.objective = Some(objective);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Task;
    use crate::kernels::{cross_gram, Kernel, KernelSpec};
    use crate::methods::{Collect, Value};
    use ndarray::Array2;

    /// Gauss–Jordan inverse, independent of the Cholesky path under test.
    fn inverse(a: &Array2<f64>) -> Array2<f64> {
        let n = a.nrows();
        let mut m = a.clone();
        let mut inv = Array2::<f64>::eye(n);
        for c in 0..n {
            let p = (c..n)
                .max_by(|&i, &j| m[[i, c]].abs().total_cmp(&m[[j, c]].abs()))
                .unwrap();
            for j in 0..n {
                m.swap([c, j], [p, j]);
                inv.swap([c, j], [p, j]);
            }
            let d = m[[c, c]];
            for j in 0..n {
                m[[c, j]] /= d;
                inv[[c, j]] /= d;
            }
            for i in 0..n {
                if i != c {
                    let f = m[[i, c]];
                    for j in 0..n {
                        m[[i, j]] -= f * m[[c, j]];
                        inv[[i, j]] -= f * inv[[c, j]];
                    }
                }
            }
        }
        inv
    }

    #[test]
    fn krr_equals_the_closed_form() {
        let x = Array2::from_shape_fn((12, 2), |(i, j)| ((i * 5 + j * 7) % 13) as f64 / 6.0 - 1.0);
        let y = Array2::from_shape_fn((12, 3), |(i, j)| ((i * 3 + j) % 5) as f64 - 2.0);
        let xt = Array2::from_shape_fn((4, 2), |(i, j)| (i as f64 - j as f64) / 3.0);
        let kernel = Kernel::Gaussian { sigma: 0.8 };
        let lambda = 0.3;
        let p = Problem {
            x: x.clone(),
            y: y.clone(),
            labeled: vec![true; 12],
            x_test: xt.clone(),
            y_test: Array2::zeros((4, 3)),
            kernel,
            kernel_spec: KernelSpec::default(),
            task: Task::Regression,
            feature_names: vec!["a".into(), "b".into()],
            output_names: vec!["u".into(), "v".into(), "w".into()],
            views: vec![],
            seed: 0,
        };
        let fit = Krr
            .fit(
                &p,
                &Params::new().with("lambda", Value::Float(lambda)),
                &mut Collect::default(),
            )
            .unwrap();
        // Ŷ = K_test (K + λI)⁻¹ Y
        let mut k = gram(&kernel, x.view()).unwrap();
        k.diag_mut().mapv_inplace(|v| v + lambda);
        let expected = cross_gram(&kernel, xt.view(), x.view())
            .unwrap()
            .dot(&inverse(&k))
            .dot(&y);
        let got = fit.model.predict(xt.view()).unwrap();
        let err = (&got - &expected)
            .iter()
            .fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(err < 1e-10, "max error {err}");
        // The reported objective is OKL's eq. (3) at L = I.
        let c = inverse(&k).dot(&y);
        let kc = gram(&kernel, x.view()).unwrap().dot(&c);
        let q = (&y - &kc).mapv(|v| v * v).sum() / (2.0 * lambda) + (&c * &kc).sum() / 2.0 + 1.5;
        assert!((fit.objective.unwrap() - q).abs() < 1e-9 * q.abs());
    }
}
