//! The λ path (docs/methods.md §2): 25 log-spaced λ from α = √‖YᵀKY‖₂ (above which L = 0) down to
//! 10⁻⁵ α, warm-starting B, each λ scored on the validation part; and the sweep over ranks p.

use std::time::Instant;

use ndarray::{s, Array2, ArrayView2, Axis};
use serde::Serialize;

use super::algorithm::{solve, Fitted, Progress, Settings};
use super::certificate::Certificate;
use super::reduced::{Factor, Reduced, Solution};
use crate::kernels::Kernel;
use crate::linalg::{eigh, matmul, matmul_tn};
use crate::methods::input::{Basis, FactorSums};
use crate::{OvkError, Result};

/// `n` log-spaced values from `alpha` down to `1e-5 · alpha`.
pub fn lambda_grid(alpha: f64, n: usize) -> Vec<f64> {
    if n <= 1 {
        return vec![alpha];
    }
    (0..n)
        .map(|k| alpha * 10f64.powf(-5.0 * k as f64 / (n - 1) as f64))
        .collect()
}

/// What the validation MSE needs, precomputed once per fit: `K_val U₊` (t×ℓ₊),
/// `K_val U₀ Ỹ₀ Q_m` (t×r, the null rows' share `K_val U₀ V₀ = K_val U₀ Ỹ₀ Q_m B̂ U_Y / λ`),
/// `Y_val Q_m` (t×r) and `‖Y_val‖²_F`. Predictions are `Z Q_mᵀ` with `Z` t×r, so the MSE
/// `(‖Y_val‖² − 2⟨Y_val Q_m, Z⟩ + ‖Z‖²)/(t m)` never forms the t×m prediction.
pub struct Validation {
    k_u: Array2<f64>,
    k_null: Array2<f64>,
    y_q: Array2<f64>,
    y_sq: f64,
    rows: usize,
    count: f64,
}

impl Validation {
    /// Precompute the validation terms for `x_val`, `y_val` against the training rows of `red`.
    pub fn new(
        red: &Reduced,
        kernel: &Kernel,
        x_train: ArrayView2<f64>,
        x_val: ArrayView2<f64>,
        y_val: ArrayView2<f64>,
    ) -> Result<Self> {
        if y_val.ncols() != red.m || x_val.nrows() != y_val.nrows() {
            return Err(OvkError::internal(format!(
                "validation part has {}×{} targets for {} inputs and {} outputs",
                y_val.nrows(),
                y_val.ncols(),
                x_val.nrows(),
                red.m
            )));
        }
        let (k_u0, k_u) = red.cross(kernel, x_train, x_val)?;
        Ok(Self::from_rows(
            red,
            k_u0.view(),
            k_u,
            matmul(y_val, red.q_m.view()),
            y_val.iter().map(|v| v * v).sum(),
            y_val.nrows(),
        ))
    }

    /// The same terms from the validation rows' sums alone, when no validation row is kept (the
    /// streamed route). With `Z_vᵀZ_v = W Λ Wᵀ`, the k rows `Λ^{½} Wᵀ` stand in for `Z_v`: they
    /// give the same `‖K_val A Bᵀ‖²`, and the same cross term through `Λ^{-½} Wᵀ Z_vᵀY_v Q_m`
    /// since `Z_vᵀY_v` lies in the range of `Z_vᵀ` (directions of Λ below rounding dropped).
    pub(crate) fn from_sums(red: &Reduced, val: &FactorSums) -> Result<Self> {
        let Basis::Factor(f) = &red.basis else {
            return Err(OvkError::internal(
                "lowrank-okl: validation sums need a factor's basis",
            ));
        };
        if val.zty.ncols() != red.m || val.ztz.nrows() != f.order() {
            return Err(OvkError::internal(format!(
                "validation sums of {}×{} for a factor of {} columns and {} outputs",
                val.zty.nrows(),
                val.zty.ncols(),
                f.order(),
                red.m
            )));
        }
        let e = eigh(val.ztz.view())?;
        let top = e.values.iter().copied().fold(0.0, f64::max);
        let cut = top * e.values.len() as f64 * f64::EPSILON;
        let keep = e
            .values
            .iter()
            .position(|&v| v > cut)
            .unwrap_or(e.values.len());
        let (lam, w) = (e.values.slice(s![keep..]), e.vectors.slice(s![.., keep..]));
        let mut rows = w.t().to_owned(); // Λ^{½} Wᵀ (k×r_z)
        let mut y_q = matmul_tn(w, matmul(val.zty.view(), red.q_m.view()).view()); // Wᵀ Z_vᵀY_v Q_m
        for ((mut row, mut yq), &l) in rows
            .axis_iter_mut(Axis(0))
            .zip(y_q.axis_iter_mut(Axis(0)))
            .zip(lam)
        {
            row *= l.sqrt();
            yq /= l.sqrt();
        }
        let k_all = f.rows_times(rows); // stands for Z_v V diag(√s) = K_val U
        Ok(Self::from_rows(
            red,
            k_all.slice(s![.., ..red.ell0]),
            k_all.slice(s![.., red.ell0..]).to_owned(),
            y_q,
            val.y_sq,
            val.n,
        ))
    }

    fn from_rows(
        red: &Reduced,
        k_u0: ArrayView2<f64>,
        k_u: Array2<f64>,
        y_q: Array2<f64>,
        y_sq: f64,
        rows: usize,
    ) -> Self {
        Validation {
            k_u,
            k_null: matmul(k_u0, red.rt_null.view()),
            y_q,
            y_sq,
            rows,
            count: (rows * red.m) as f64,
        }
    }

    /// The validation rows it scores on.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Mean squared error of `K_val A Bᵀ` against the validation targets.
    pub fn mse(&self, sol: &Solution) -> f64 {
        let w = matmul(sol.a.u_y.t(), sol.bhat.t()); // U_Yᵀ B̂ᵀ, p×r
                                                     // K_val A U_Y = K_val U₊ V + K_val U₀ Ỹ₀ Q_m B̂ U_Y / λ (t×p).
        let mut kau = matmul(self.k_u.view(), sol.a.v.view());
        kau.scaled_add(
            1.0 / sol.a.lambda,
            &matmul(
                matmul(self.k_null.view(), sol.bhat.view()).view(),
                sol.a.u_y.view(),
            ),
        );
        let z = matmul(kau.view(), w.view()); // t×r
        let cross: f64 = self.y_q.iter().zip(z.iter()).map(|(a, b)| a * b).sum();
        let zz: f64 = z.iter().map(|v| v * v).sum();
        ((self.y_sq - 2.0 * cross + zz) / self.count).max(0.0)
    }
}

/// One row of `details["path"]`.
#[derive(Debug, Clone, Serialize)]
pub struct PathPoint {
    /// λ of this point.
    pub lambda: f64,
    /// Iterations the fit at this λ took.
    pub iterations: usize,
    /// Seconds the fit at this λ took.
    pub seconds: f64,
    /// Eq. (4) at the returned solution.
    pub objective: f64,
    /// Mean squared error on the rows the path is fitted on.
    pub train_mse: f64,
    /// Mean squared error on the validation rows, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation_mse: Option<f64>,
    /// Whether the solver met its stopping test.
    pub converged: bool,
    /// Lemma 8's optimality check at this λ.
    pub certificate: Certificate,
}

/// A path at one rank: its table, and the fit at the chosen λ.
pub struct PathRun {
    /// One point per λ, in path order (λ decreasing).
    pub points: Vec<PathPoint>,
    /// Index into `points` of the chosen λ.
    pub best: usize,
    pub(crate) best_fit: Fitted,
    /// Iterations over the whole path.
    pub iterations: usize,
    /// Seconds over the whole path.
    pub seconds: f64,
}

/// Solve at every λ (large to small), warm-starting B from the previous λ when `warm`.
/// The best λ by validation MSE wins; without validation data, the last λ.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run_path(
    red: &Reduced,
    p: usize,
    lambdas: &[f64],
    warm: bool,
    settings: &Settings,
    validation: Option<&Validation>,
    prog: &mut Progress<'_>,
) -> Result<PathRun> {
    let started = Instant::now();
    let train_count = (red.ell() * red.m) as f64;
    let mut points = Vec::with_capacity(lambdas.len());
    let mut best: Option<(usize, f64, Fitted)> = None;
    let mut previous: Option<Array2<f64>> = None;
    let mut iterations = 0;
    for (k, &lambda) in lambdas.iter().enumerate() {
        let t0 = Instant::now();
        let start = match (&previous, warm) {
            (Some(b), true) => Factor::Reduced(b.clone()),
            _ => Factor::Identity(p),
        };
        let fitted = solve(red, start, p, lambda, settings, prog)?;
        iterations += fitted.iterations;
        let validation_mse = validation.map(|v| v.mse(&fitted.solution));
        prog.finish_lambda(validation_mse, fitted.certificate.certified);
        points.push(PathPoint {
            lambda,
            iterations: fitted.iterations,
            seconds: t0.elapsed().as_secs_f64(),
            objective: fitted.objective,
            train_mse: fitted.fit_sq / train_count,
            validation_mse,
            converged: fitted.converged,
            certificate: fitted.certificate.clone(),
        });
        previous = Some(fitted.solution.bhat.clone());
        // Without validation the last λ wins (score 0 never loses to an earlier one's 0).
        let score = validation_mse.unwrap_or(0.0);
        let better = match &best {
            None => true,
            Some((_, s, _)) => score < *s || (validation.is_none() && score <= *s),
        };
        if better {
            best = Some((k, score, fitted));
        }
    }
    let (best, _, best_fit) =
        best.ok_or_else(|| OvkError::internal("lowrank-okl: empty λ path"))?;
    Ok(PathRun {
        points,
        best,
        best_fit,
        iterations,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// A rank sweep tries at most this many ranks (each is a whole λ path).
pub(crate) const MAX_SWEEP_RANKS: usize = 1000;
/// The largest rank a sweep may name (as `--rank`).
pub(crate) const MAX_SWEEP_RANK: usize = 1_000_000;

/// Parse a rank sweep: `"1..8"` (inclusive), `"1..40:5"` (step 5; the upper end is always
/// included), or a list `"2,5,10"`. Repeated ranks count once (in their first place); more than
/// `MAX_SWEEP_RANKS` ranks or a rank above `MAX_SWEEP_RANK` is refused before anything is
/// allocated for them.
pub(crate) fn parse_ranks(text: &str) -> Result<Vec<usize>> {
    let t = text.trim();
    let bad = || {
        OvkError::input(format!(
            "rank_sweep: '{}' is not a range like 1..8, 1..40:5, or a list like 2,5,10",
            crate::util::text::display_safe(&text.chars().take(80).collect::<String>())
        ))
    };
    let num = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
    let too_large = |r: usize| {
        OvkError::input(format!(
            "rank_sweep: rank {r} is above {MAX_SWEEP_RANK}, the largest rank ovk fits"
        ))
    };
    let too_many = |n: String| {
        OvkError::input(format!(
            "rank_sweep: {n} ranks; a sweep tries at most {MAX_SWEEP_RANKS} (use a step, e.g. \
             1..400:10)"
        ))
    };
    let mut ranks: Vec<usize> = Vec::new();
    if let Some((lo, rest)) = t.split_once("..") {
        let (hi, step) = match rest.split_once(':') {
            Some((h, s)) => (num(h)?, num(s)?),
            None => (num(rest)?, 1),
        };
        let lo = num(lo)?;
        if step == 0 || lo > hi {
            return Err(bad());
        }
        if hi > MAX_SWEEP_RANK {
            return Err(too_large(hi));
        }
        let count = (hi - lo) / step + 1;
        if count > MAX_SWEEP_RANKS {
            return Err(too_many(count.to_string()));
        }
        ranks.extend((lo..=hi).step_by(step));
        if ranks.last() != Some(&hi) {
            ranks.push(hi);
        }
    } else {
        for part in t.split(',') {
            let r = num(part)?;
            if r > MAX_SWEEP_RANK {
                return Err(too_large(r));
            }
            if !ranks.contains(&r) {
                if ranks.len() == MAX_SWEEP_RANKS {
                    return Err(too_many(format!("more than {MAX_SWEEP_RANKS} distinct")));
                }
                ranks.push(r);
            }
        }
    }
    if ranks.is_empty() || ranks.contains(&0) {
        return Err(OvkError::input(format!(
            "rank_sweep: '{}' must list ranks ≥ 1",
            crate::util::text::display_safe(&text.chars().take(80).collect::<String>())
        )));
    }
    Ok(ranks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::FeatureMap;
    use crate::linalg::gram_tn;
    use crate::methods::input::{FactorSummary, InputSpectrum};
    use crate::methods::lowrank_okl::Settings;
    use crate::methods::Silent;
    use crate::util::rng::Rng;

    fn sums(x: &Array2<f64>, y: &Array2<f64>) -> FactorSums {
        FactorSums {
            ztz: gram_tn(x.view()),
            zty: matmul_tn(x.view(), y.view()),
            y_sq: y.iter().map(|v| v * v).sum(),
            n: x.nrows(),
        }
    }

    #[test]
    fn validation_from_sums_scores_every_lambda_as_from_the_rows() {
        // A linear factor (Z = X): the rows' route and the sums' route see the same validation
        // rows, so their MSEs must agree at every B — with more validation rows than factor
        // columns, and with fewer (a rank-deficient Z_vᵀZ_v).
        let mut rng = Rng::new(3);
        let (d, m) = (6, 5);
        let mut draw = |n: usize, c: usize| Array2::from_shape_fn((n, c), |_| rng.normal());
        let (x_fit, y_fit) = (draw(80, d), draw(80, m));
        let summary = FactorSummary {
            route: "primal",
            requested: d,
            rank: d,
            landmarks: None,
            trace_error: 0.0,
            seconds: 0.0,
        };
        let input =
            InputSpectrum::from_sums(sums(&x_fit, &y_fit), FeatureMap::Linear, summary).unwrap();
        let red = Reduced::from_input(input).unwrap();
        for t in [30, 3] {
            let (x_val, y_val) = (draw(t, d), draw(t, m));
            let rows = Validation::new(
                &red,
                &Kernel::Linear,
                x_fit.view(),
                x_val.view(),
                y_val.view(),
            )
            .unwrap();
            let from_sums = Validation::from_sums(&red, &sums(&x_val, &y_val)).unwrap();
            let mut silent = Silent;
            let mut prog = Progress::new(&mut silent);
            for lambda in [red.alpha * 0.5, red.alpha * 1e-2, red.alpha * 1e-4] {
                let f = solve(
                    &red,
                    Factor::Identity(2),
                    2,
                    lambda,
                    &Settings::new(1e-10, 500),
                    &mut prog,
                )
                .unwrap();
                let (a, b) = (rows.mse(&f.solution), from_sums.mse(&f.solution));
                assert!(a > 0.0);
                assert!(
                    (a - b).abs() < 1e-10 * a,
                    "t = {t}, λ = {lambda}: {a} against {b}"
                );
            }
        }
    }

    #[test]
    fn ranks_parse() {
        assert_eq!(parse_ranks("1..4").unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(parse_ranks("1..12:5").unwrap(), vec![1, 6, 11, 12]);
        assert_eq!(parse_ranks("2, 5,10").unwrap(), vec![2, 5, 10]);
        assert!(parse_ranks("0..3").is_err());
        assert!(parse_ranks("5..3").is_err());
        assert!(parse_ranks("a..b").is_err());
        assert_eq!(parse_ranks("3,3,5,3").unwrap(), vec![3, 5]);
        assert_eq!(parse_ranks(&vec!["3"; 200_000].join(",")).unwrap(), vec![3]);
        for huge in [
            "1..4000000000",
            "1..18446744073709551615",
            "1..1001",
            "5000000",
        ] {
            let e = parse_ranks(huge).unwrap_err().to_string();
            assert!(
                e.contains("at most 1000") || e.contains("above 1000000"),
                "{e}"
            );
        }
        assert_eq!(parse_ranks("1..1000").unwrap().len(), 1000);
    }

    #[test]
    fn grid_spans_five_decades() {
        let g = lambda_grid(2.0, 25);
        assert_eq!(g.len(), 25);
        assert!((g[0] - 2.0).abs() < 1e-15);
        assert!((g[24] - 2e-5).abs() < 1e-18);
        assert!(g.windows(2).all(|w| w[1] < w[0]));
    }
}
