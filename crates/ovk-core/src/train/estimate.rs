//! How long a fit will take, before it starts: the floor rates of this machine (one symmetric
//! eigendecomposition and one matrix product, timed once per process on small matrices) scaled
//! to the problem's sizes. A floor, not a promise — iterations come on top — but enough to say
//! "the exact fit takes minutes; a low-rank input kernel takes seconds".

use std::sync::OnceLock;
use std::time::Instant;

use ndarray::Array2;

use crate::linalg::{eigh, matmul};
use crate::methods::{Phase, ProblemShape, Route};
use crate::util::rng::Rng;

/// Seconds per unit of work, measured here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rates {
    /// One n×n symmetric eigendecomposition takes `eigh · n³` seconds.
    pub eigh: f64,
    /// A product of (a×b)(b×c) takes `gemm · a·b·c` seconds.
    pub(crate) gemm: f64,
}

/// Calibration size: big enough to reach the kernels' steady speed, small enough to cost a
/// few tens of milliseconds.
const CALIBRATE_N: usize = 400;

/// Rates of a 2-core machine of this class (n = 400, 2026-12-02), taken when the calibration
/// cannot run: under an address-space limit too tight for a product's workspace
/// (`kernels::product_workspace_bytes`), its first product would abort the process.
const TYPICAL: Rates = Rates {
    eigh: 1.5e-10,
    gemm: 4e-11,
};

/// This process's rates, measured on first use.
fn rates() -> Rates {
    static RATES: OnceLock<Rates> = OnceLock::new();
    *RATES.get_or_init(|| {
        if !crate::kernels::product_can_reserve() {
            return TYPICAL;
        }
        let mut rng = Rng::new(1);
        let n = CALIBRATE_N;
        // Uniform entries: AAᵀ then has the spectrum's shape a normal matrix gives (Marchenko–
        // Pastur, scaled), and the 160 000 draws take under 1 ms where normal ones took 4.9 ms
        // of the calibration's 27.
        let a = Array2::from_shape_fn((n, n), |_| rng.uniform() - 0.5);
        let t = Instant::now();
        let p = matmul(a.view(), a.t());
        let gemm = t.elapsed().as_secs_f64() / (n * n * n) as f64;
        let t = Instant::now();
        let _ = eigh(p.view());
        let eigh = t.elapsed().as_secs_f64() / (n * n * n) as f64;
        Rates {
            eigh: eigh.max(1e-12),
            gemm: gemm.max(1e-13),
        }
    })
}

/// Floor seconds of a fit: on the exact route `eighs` eigendecompositions of the n×n kernel
/// (the method's own multiple) plus the Gram matrix; on a factor the landmark columns, the
/// factor's products (about 2·n·r² multiply-adds) and the r×r eigenproblem.
pub fn fit_seconds(route: Route, n: usize, shape: &ProblemShape, eighs: f64) -> f64 {
    phase_seconds(route, n, shape, eighs)
        .iter()
        .map(|(_, s)| s)
        .sum()
}

/// A fit the typical rates put under this many seconds is not worth the calibration's 30 ms:
/// even on a machine several times slower than the typical one it stays far below the minute
/// a note is written for, and its progress bar fills in a moment either way.
const NOT_WORTH_TIMING: f64 = 1.0;

/// `fit_seconds` phase by phase, in the order the fit runs them: building the Gram matrix (or
/// the factor) and the eigendecompositions — the long phases that report no steps, whose
/// progress a face can only show against this floor. At this machine's measured rates, unless
/// the typical rates put the fit under [`NOT_WORTH_TIMING`].
pub(crate) fn phase_seconds(
    route: Route,
    n: usize,
    shape: &ProblemShape,
    eighs: f64,
) -> Vec<(Phase, f64)> {
    let typical = phase_seconds_at(TYPICAL, route, n, shape, eighs);
    if typical.iter().map(|(_, s)| s).sum::<f64>() < NOT_WORTH_TIMING {
        return typical;
    }
    phase_seconds_at(rates(), route, n, shape, eighs)
}

fn phase_seconds_at(
    r8: Rates,
    route: Route,
    n: usize,
    shape: &ProblemShape,
    eighs: f64,
) -> Vec<(Phase, f64)> {
    let (n_f, d) = (n as f64, shape.d.max(1) as f64);
    if route == Route::Krylov {
        // A floor: a basis of about 20 blocks of m, each reorthogonalised against the last.
        let q = (20 * shape.m.max(1)).min(n) as f64;
        return vec![(Phase::Decomposition, r8.gemm * 4.0 * n_f * q * q)];
    }
    match route.factor_columns(shape.d) {
        None => vec![
            (Phase::Gram, r8.gemm * n_f * n_f * d),
            (Phase::Decomposition, eighs * r8.eigh * n_f.powi(3)),
        ],
        Some(r) => {
            let r = r as f64;
            vec![
                (
                    Phase::Factor,
                    r8.gemm * (2.0 * n_f * r * r + n_f * r * d + n_f * r * shape.m as f64),
                ),
                (Phase::Decomposition, eighs * r8.eigh * r.powi(3)),
            ]
        }
    }
}

/// "12 s", "3.4 min", "2.1 h".
pub(crate) fn format_seconds(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.2} s")
    } else if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::Landmarks;

    #[test]
    fn a_factor_is_estimated_far_below_the_exact_route_at_scale() {
        let shape = ProblemShape {
            n_train: 20_000,
            n_labeled: 20_000,
            d: 50,
            m: 10,
            ..Default::default()
        };
        let exact = fit_seconds(Route::Exact, 20_000, &shape, 1.0);
        let low = fit_seconds(
            Route::LowRank {
                rank: 1000,
                landmarks: Landmarks::Rpcholesky,
                automatic: false,
            },
            20_000,
            &shape,
            1.0,
        );
        assert!(exact.is_finite() && low.is_finite() && low > 0.0);
        assert!(low * 20.0 < exact, "low {low} vs exact {exact}");
        assert_eq!(format_seconds(0.5), "0.50 s");
        assert_eq!(format_seconds(600.0), "10.0 min");
    }

    #[test]
    fn only_a_fit_worth_timing_is_estimated_at_measured_rates() {
        let shape = |n| ProblemShape {
            n_train: n,
            n_labeled: n,
            d: 20,
            m: 10,
            ..Default::default()
        };
        let phases = |n| phase_seconds(Route::Exact, n, &shape(n), 1.0);
        // 800 rows: a few ms at typical rates, so no calibration
        let small = phases(800);
        assert_eq!(
            small,
            phase_seconds_at(TYPICAL, Route::Exact, 800, &shape(800), 1.0)
        );
        // 8000 rows: over a minute at typical rates, so this machine's own
        let big = phases(8000);
        assert_eq!(
            big,
            phase_seconds_at(rates(), Route::Exact, 8000, &shape(8000), 1.0)
        );
        let typical_big = phase_seconds_at(TYPICAL, Route::Exact, 8000, &shape(8000), 1.0);
        assert!(typical_big.iter().map(|(_, s)| s).sum::<f64>() > NOT_WORTH_TIMING);
    }
}
