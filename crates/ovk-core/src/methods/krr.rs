//! The baseline: independent kernel ridge regression, OKL with the output kernel fixed to I.
//! `C = (K + λI)⁻¹ Y`, `Ŷ = K_test C` (docs/methods.md §0).
//!
//! Exact route: one Cholesky factorisation of K + λI. On a low-rank or primal factor
//! `K̃ = ZZᵀ` (`methods::input`) the model keeps `ZᵀC = (ZᵀZ + λI)⁻¹ZᵀY` — ridge regression on
//! the features z(x) — from one r×r Cholesky factorisation, or diagonally (`C̃ = Ỹ ⊘ (s + λ)`)
//! in the spectrum `K̃ = U diag(s) Uᵀ` when the method it is the baseline of left one behind.
//! A linear kernel on sparse rows takes the Krylov route instead of the exact one
//! (`methods::krylov`): the same diagonal solve on a block Krylov basis of Y.

use super::expansion::{FeatureExpansion, KernelExpansion, TrainingFeatures};
use super::input::{
    cached, factor_observed, factor_peak_bytes, krylov_key, Basis, FactorSummary, InputSpectrum,
    Route,
};
use super::krylov::{sylvester_residual, KrylovSpace};
use super::params::{common, MethodConfig, ParamSpec};
use super::{
    check_cancel, mats, record_solved, Clock, Fit, Method, Observer, Params, Phase, Problem,
    ProblemShape,
};
use crate::kernels::{gram, gram_block_rows, packed, InputFactor};
use crate::linalg::{cholesky, gram_tn, interruptible, matmul, matmul_tn, solve_shifted_in_place};
use crate::methods::details::key;
use crate::{OvkError, Result};
use ndarray::{Array2, ArrayView2, Zip};
use std::sync::Arc;

/// Kernel ridge regression, each output independent (the identity output kernel): the baseline.
pub struct Krr;

const PARAMS: &[ParamSpec] = &[common::LAMBDA];

/// krr's hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct KrrConfig {
    /// Ridge weight λ.
    pub lambda: f64,
}

impl MethodConfig for KrrConfig {
    fn from_params(params: &Params) -> Result<Self> {
        Ok(KrrConfig {
            lambda: params.f64(&common::LAMBDA)?,
        })
    }
}

impl Method for Krr {
    fn name(&self) -> &'static str {
        super::MethodName::Krr.name()
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

    fn input_factor(&self) -> bool {
        true
    }
    fn input_route(&self, s: &ProblemShape) -> Result<Route> {
        s.route_or_krylov(s.n_labeled)
    }
    fn exact_eighs(&self) -> f64 {
        // one Cholesky factorisation: measured 0.06–0.13 of an eigh at n = 2000–4000
        // (`ovk bench scaling`, 2026-11-24)
        0.08
    }

    fn row_copy_bytes(&self, s: &ProblemShape, _: &Params) -> Result<u64> {
        // A factor is built from the rows where they are (the labeled part copied only when
        // some rows are unlabeled); the exact and Krylov routes copy them for their model.
        Ok(match self.input_route(s)?.factor_columns(s.d) {
            Some(_) => s.labeled_part_bytes(),
            None => mats(1, s.n_labeled, s.d + s.m),
        })
    }

    fn peak_bytes(&self, s: &ProblemShape, _: &Params) -> Result<u64> {
        let l = s.n_labeled;
        if let Some(r) = self.input_route(s)?.factor_columns(s.d) {
            return Ok(factor_peak_bytes(l, r, s.m, s.n_test) + mats(3, l, s.m));
        }
        // K, factored in place (the training rows' predictions come from the solve, not from a
        // second Gram matrix), and the blocks it was computed in; the ℓ×m blocks; then, with K
        // gone, the test cross-Gram (counted beside K it read 1.17–1.20× the peak at ℓ = 1600
        // and 3200, `bench lowrank --suite compare`). Measured: 578 MB at ℓ = 8000, m = 10, of
        // which K is 512 MB.
        let fit = mats(1, l, l) + mats(1, gram_block_rows(), l);
        Ok(fit.max(mats(1, s.n_test, l)) + mats(4, l, s.m))
    }
    fn memory_advice(&self) -> &'static str {
        "use fewer training points (--test-fraction, or subsample the file)"
    }

    fn fit(&self, p: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit> {
        let clock = Clock::start();
        let KrrConfig { lambda } = KrrConfig::from_params(params)?;
        let route = self.input_route(&ProblemShape::of(p))?;
        // The pipeline's baseline reuses the spectrum a method just built on these rows
        // (diagonal in its eigenbasis or factor); on a factor its model reads Z's rows.
        let part = p.labeled_part();
        if let Some(sp) = InputSpectrum::cached_for(route, &p.kernel, part.x(), part.y(), p.seed) {
            let x = sp.basis.model_rows(part.x());
            return fit_spectral(p, sp, x, part.y(), lambda, obs, &clock);
        }
        if route.factor_columns(p.x.ncols()).is_some() {
            // the factor is built from the rows where they are: its model reads Z's rows
            return fit_on_factor(p, route, part.x(), part.y(), lambda, obs, &clock);
        }
        let (x, y) = part.into_owned();
        if route == Route::Krylov {
            return fit_on_krylov(p, x, y, lambda, obs, &clock);
        }
        obs.phase(Phase::Gram, None);
        let k = gram(&p.kernel, x.view())?;
        check_cancel(obs)?;
        obs.phase(Phase::Decomposition, None);
        let y = Arc::new(y);
        let yw = y.clone();
        // K is factored in place: the fit keeps no n×n matrix beside it.
        let c = interruptible(&|| obs.is_cancelled(), move || {
            solve_shifted_in_place(k, lambda, yw.view())
        })?;
        // (K + λI)C = Y: K C = Y − λC, the training rows' predictions and the objective's.
        let kc = &*y - &(&c * lambda);
        let objective = objective_identity(y.view(), c.view(), kc.view(), lambda);
        record_solved(obs, objective, None, &clock)?;
        let mut fit = Fit::new(Box::new(KernelExpansion {
            kernel: p.kernel,
            x_train: x,
            coef: c.clone().into(),
            fitted: Some(Arc::new(kc)),
        }));
        fit.iterations = 1;
        fit.objective = Some(objective);
        fit.matrices.push(("coefficients".into(), c));
        Ok(fit)
    }
}

/// Ridge on a factor no method left behind (see `Krr::fit`): one Cholesky factorisation of
/// the r×r `ZᵀZ + λI` gives `β = ZᵀC` without the r×r eigenproblem the spectrum costs.
fn fit_on_factor(
    p: &Problem,
    route: Route,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
    lambda: f64,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Fit> {
    let started = std::time::Instant::now();
    let (f, route_name) = match route {
        Route::LowRank {
            rank, landmarks, ..
        } => (
            factor_observed(&p.kernel, x, rank, landmarks, p.seed, obs)?,
            "low_rank",
        ),
        Route::Primal => (InputFactor::linear(x), "primal"),
        Route::Exact | Route::Krylov => {
            return Err(OvkError::internal("krr: the exact route has no factor"))
        }
    };
    let seconds = started.elapsed().as_secs_f64();
    check_cancel(obs)?;
    obs.phase(Phase::Decomposition, None);
    let zty = matmul_tn(f.z.view(), y);
    let mut g = gram_tn(f.z.view());
    g.diag_mut().mapv_inplace(|v| v + lambda);
    let Ok(chol) = cholesky(g.view()) else {
        // λ below rounding against ZᵀZ: the spectral solve drops the directions it cannot see
        let sp = InputSpectrum::of_factor(f, y, route_name, seconds)?;
        let rows = sp.basis.model_rows(x);
        return fit_spectral(p, sp, rows, y, lambda, obs, clock);
    };
    // β = ZᵀC = (ZᵀZ + λI)⁻¹ZᵀY, C = (Y − Zβ)/λ: eq. (3) at L = I is
    // ‖Y − Zβ‖²/(2λ) + ‖β‖²/2 + m/2 (CᵀKC = βᵀβ)
    let beta = chol.solve(zty.view());
    let fit_sq = (&y - &matmul(f.z.view(), beta.view()))
        .mapv(|v| v * v)
        .sum();
    let reg = beta.mapv(|v| v * v).sum();
    let objective = fit_sq / (2.0 * lambda) + reg / 2.0 + y.ncols() as f64 / 2.0;
    record_solved(obs, objective, None, clock)?;
    let summary = FactorSummary::of(route_name, &f, seconds);
    // Z stays for the training-row predictions (the primal route's z(x) = x costs nothing).
    let training = matches!(route, Route::LowRank { .. }).then(|| TrainingFeatures::kept(x, f.z));
    let mut fit = Fit::new(Box::new(FeatureExpansion::new(
        f.map,
        beta.clone().into(),
        training,
    )));
    fit.iterations = 1;
    fit.objective = Some(objective);
    fit.matrices.push(("feature_coefficients".into(), beta));
    fit.details
        .insert(key::INPUT_FACTOR.into(), summary.to_json());
    Ok(fit)
}

/// Ridge on the Krylov route (`methods::krylov`): the shift-1 system `(K + λI)C = Y` on a block
/// Krylov basis of Y — okl's, when okl just built one on these rows (the pipeline's baseline) —
/// checked against K itself with one product.
fn fit_on_krylov(
    p: &Problem,
    x: Array2<f64>,
    y: Array2<f64>,
    lambda: f64,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Fit> {
    let key = krylov_key(&p.kernel, x.view(), y.view(), lambda);
    let x_model = x.clone();
    let products = packed::LinearGram::new(x.view())?;
    let apply = |v: ArrayView2<f64>| products.apply(x.view(), v);
    let sp = match cached(key) {
        Some(sp) => sp,
        None => {
            obs.phase(Phase::Decomposition, None);
            let mut space = KrylovSpace::new(&apply, y.view());
            space.grow_for(1.0, lambda, obs)?;
            space.spectrum()?
        }
    };
    let dim = sp.s.len();
    let mut fit = fit_spectral(p, sp, x_model, y.view(), lambda, obs, clock)?;
    let c = &fit.matrices[0].1;
    let eye = Array2::<f64>::eye(y.ncols());
    let residual = sylvester_residual(&apply, c.view(), eye.view(), lambda, y.view())?;
    fit.details.insert(
        "krylov".into(),
        serde_json::json!({ "dim": dim, "sylvester_residual": residual }),
    );
    fit.notes.push(format!(
        "linear kernel on sparse rows: solved on a {dim}-column block Krylov basis of the \
         targets; residual ‖KC + λC − Y‖/‖Y‖ = {residual:.1e}"
    ));
    Ok(fit)
}

/// Ridge on a factor whose sums were streamed (`train::pipeline::stream`): `p` names the
/// problem but holds no rows.
pub(crate) fn fit_streamed(
    p: &Problem,
    sp: InputSpectrum,
    params: &Params,
    obs: &mut dyn Observer,
) -> Result<Fit> {
    let clock = Clock::start();
    let KrrConfig { lambda } = KrrConfig::from_params(params)?;
    let no_targets = Array2::zeros((0, sp.yt.ncols()));
    let no_rows = Array2::zeros((0, p.x.ncols()));
    fit_spectral(p, sp, no_rows, no_targets.view(), lambda, obs, &clock)
}

/// Ridge in a factor's spectrum: `C̃ = Ỹ ⊘ (s + λ)` row-wise, objective OKL's eq. (3) at L = I
/// with the null-space rows' constant `‖Y − UUᵀY‖²/(2λ)`.
fn fit_spectral(
    p: &Problem,
    sp: InputSpectrum,
    x: Array2<f64>,
    y: ArrayView2<f64>,
    lambda: f64,
    obs: &mut dyn Observer,
    clock: &Clock,
) -> Result<Fit> {
    let mut ct = sp.yt.clone();
    Zip::from(ct.rows_mut())
        .and(&sp.s)
        .for_each(|mut row, &s| row.mapv_inplace(|v| v / (s + lambda)));
    // ‖Ỹ − diag(s) C̃‖² + null part, and tr(CᵀKC) = Σ sᵢ ‖c̃ᵢ‖².
    let mut fit_sq = sp.null_sq;
    let mut reg = 0.0;
    Zip::from(sp.yt.rows())
        .and(ct.rows())
        .and(&sp.s)
        .for_each(|yr, cr, &s| {
            fit_sq += yr
                .iter()
                .zip(cr.iter())
                .map(|(a, c)| (a - s * c) * (a - s * c))
                .sum::<f64>();
            reg += s * cr.dot(&cr);
        });
    let objective = fit_sq / (2.0 * lambda) + reg / 2.0 + y.ncols() as f64 / 2.0;
    record_solved(obs, objective, None, clock)?;
    let beta = sp.basis.lift(ct.view());
    let name = match sp.basis {
        Basis::Eigen(_) => "coefficients",
        Basis::Factor(_) => "feature_coefficients",
    };
    let fitted = sp.basis.fitted(&sp.s, ct.view());
    let mut fit = Fit::new(sp.basis.model(p.kernel, x, beta.clone().into(), fitted));
    fit.iterations = 1;
    fit.objective = Some(objective);
    fit.matrices.push((name.into(), beta));
    if let Some(f) = sp.basis.factor_summary() {
        fit.details.insert(key::INPUT_FACTOR.into(), f.to_json());
    }
    Ok(fit)
}

/// `(K + λI)⁻¹ Y` by Cholesky, on a copy of K.
pub fn solve_ridge(k: ArrayView2<f64>, y: ArrayView2<f64>, lambda: f64) -> Result<Array2<f64>> {
    solve_shifted_in_place(k.to_owned(), lambda, y)
}

/// OKL's eq. (3) at L = I from `KC`: ‖Y − KC‖²/(2λ) + tr(CᵀKC)/2 + m/2.
pub(crate) fn objective_identity(
    y: ArrayView2<f64>,
    c: ArrayView2<f64>,
    kc: ArrayView2<f64>,
    lambda: f64,
) -> f64 {
    // One pass, no ℓ×m temporaries (with 10⁵ outputs each is 100+ MB).
    let (sq, ckc) = ndarray::Zip::from(&y)
        .and(&kc)
        .and(&c)
        .fold((0.0, 0.0), |(sq, ckc), &y, &kc, &c| {
            (sq + (y - kc) * (y - kc), ckc + c * kc)
        });
    sq / (2.0 * lambda) + ckc / 2.0 + y.ncols() as f64 / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{cross_gram, Kernel};
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
        let p =
            Problem::new(x.clone(), y.clone(), kernel).with_names(&["a", "b"], &["u", "v", "w"]);
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
        // The training rows' predictions are the solve's own K C = Y − λC, no second Gram.
        let on_train = fit.model.predict(x.view()).unwrap();
        let err = (&on_train - &kc).iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(err < 1e-10, "training rows: max error {err}");
        // Rows one value apart go through the kernel.
        let mut moved = x.clone();
        moved[[3, 1]] += 1e-6;
        let want = cross_gram(&kernel, moved.view(), x.view()).unwrap().dot(&c);
        let got = fit.model.predict(moved.view()).unwrap();
        let err = (&got - &want).iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(err < 1e-10, "moved rows: max error {err}");
        assert!((&got - &on_train).iter().any(|v| v.abs() > 1e-9));
    }

    /// After okl's exact fit (which leaves its eigendecomposition for the pipeline's krr
    /// baseline), okl's training rows are predicted from that eigenbasis and krr solves in it:
    /// both agree with the brute-force formulas. Another test running at the same time may
    /// replace the cached spectrum; krr then factors K instead, to the same answer.
    #[test]
    fn after_okls_exact_fit_the_eigenbasis_predicts_training_rows_and_solves_krr() {
        let x = Array2::from_shape_fn((14, 2), |(i, j)| ((i * 5 + j * 7) % 13) as f64 / 6.0 - 1.0);
        let y = Array2::from_shape_fn((14, 3), |(i, j)| ((i * 3 + j) % 5) as f64 - 2.0);
        let kernel = Kernel::Gaussian { sigma: 0.8 };
        let lambda = 0.3;
        let p = Problem::new(x.clone(), y.clone(), kernel);
        let with_lambda = Params::new().with("lambda", Value::Float(lambda));
        let okl = crate::methods::find(crate::methods::MethodName::Okl)
            .fit(&p, &with_lambda, &mut Collect::default())
            .unwrap();
        let k = gram(&kernel, x.view()).unwrap();
        let coef = okl
            .matrices
            .iter()
            .find(|(n, _)| n == "coefficients")
            .map(|(_, c)| c.clone())
            .unwrap();
        let l = &okl.matrices[0].1; // output_kernel
        let want = k.dot(&coef).dot(l); // K C L
        let got = okl.model.predict(x.view()).unwrap();
        let err = (&got - &want).iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(err < 1e-9, "okl's training rows: {err}");

        let krr = Krr.fit(&p, &with_lambda, &mut Collect::default()).unwrap();
        let mut shifted = k.clone();
        shifted.diag_mut().mapv_inplace(|v| v + lambda);
        let c = inverse(&shifted).dot(&y);
        let xt = Array2::from_shape_fn((4, 2), |(i, j)| (i as f64 - j as f64) / 3.0);
        for (rows, want) in [
            (&x, k.dot(&c)),
            (
                &xt,
                cross_gram(&kernel, xt.view(), x.view()).unwrap().dot(&c),
            ),
        ] {
            let got = krr.model.predict(rows.view()).unwrap();
            let err = (&got - &want).iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(err < 1e-9, "krr: {err}");
        }
    }
}
