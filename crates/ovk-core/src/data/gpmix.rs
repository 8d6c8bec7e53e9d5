//! The synthetic benchmark of Dinuzzo & Fukumizu (ACML 2011, §6; docs/methods.md §2): m outputs,
//! each a U(0, 1)-weighted mix of 50 latent Gaussian-process paths with covariance
//! `exp(−10|x − x'|)` on 200 grid points in [−1, 1], plus Gaussian noise at SNR 1:1.

use ndarray::{Array1, Array2, Axis};

use super::sidecar::Sidecar;
use super::write::OutColumn;
use super::Task;
use crate::linalg::matmul;
use crate::util::rng::Rng;
use crate::{OvkError, Result};

/// Grid points on [−1, 1].
pub const GRID: usize = 200;
/// Latent GP paths mixed into every output.
pub const LATENT: usize = 50;
/// The covariance `exp(−DECAY |x − x'|)`.
pub(crate) const DECAY: f64 = 10.0;

/// `(x, y)`: x is the 200×1 grid, y the 200×m noisy outputs.
///
/// The covariance `exp(−10|x−x'|)` is that of an Ornstein–Uhlenbeck process, so each latent
/// path is sampled exactly by its AR(1) recursion `z₀ ~ N(0, 1)`,
/// `zᵢ = ρ zᵢ₋₁ + √(1 − ρ²) εᵢ`, `ρ = exp(−10 h)` on the uniform grid of step h — no 200×200
/// Cholesky needed. The noise variance of each output equals the empirical variance of its
/// noiseless signal over the grid (SNR 1:1).
pub fn gp_mix(outputs: usize, seed: u64) -> (Array2<f64>, Array2<f64>) {
    let parts = gp_mix_parts(outputs, seed);
    (parts.x, parts.signal + parts.noise)
}

/// The pieces of `gp_mix`: grid, noiseless signal and noise (their sum is `gp_mix`'s y).
pub struct GpMix {
    /// The inputs: a regular grid (n×1).
    pub x: Array2<f64>,
    /// The noiseless outputs (n×m).
    pub signal: Array2<f64>,
    /// The noise added to `signal` (n×m).
    pub noise: Array2<f64>,
}

/// `gp_mix` with its signal and noise kept apart (for checking the SNR).
pub fn gp_mix_parts(outputs: usize, seed: u64) -> GpMix {
    let mut rng = Rng::new(seed);
    let h = 2.0 / (GRID - 1) as f64;
    let x = Array2::from_shape_fn((GRID, 1), |(i, _)| -1.0 + h * i as f64);
    let rho = (-DECAY * h).exp();
    let innovation = (1.0 - rho * rho).sqrt();
    let mut z = Array2::<f64>::zeros((GRID, LATENT));
    for k in 0..LATENT {
        z[[0, k]] = rng.normal();
        for i in 1..GRID {
            z[[i, k]] = rho * z[[i - 1, k]] + innovation * rng.normal();
        }
    }
    let w = Array2::from_shape_fn((LATENT, outputs), |_| rng.uniform());
    let signal = matmul(z.view(), w.view()); // GRID×m
    let variance: Array1<f64> = signal.var_axis(Axis(0), 0.0);
    let mut noise = Array2::<f64>::zeros((GRID, outputs));
    for i in 0..GRID {
        for j in 0..outputs {
            noise[[i, j]] = variance[j].sqrt() * rng.normal();
        }
    }
    GpMix { x, signal, noise }
}

/// The grid and outputs as named columns: `x` (or `x0 …`), then `y0 … y{m-1}` — what `ovk gen`
/// writes in the format its `--out` names.
pub fn columns(x: &Array2<f64>, y: &Array2<f64>) -> Vec<(String, OutColumn)> {
    let mut columns = Vec::with_capacity(x.ncols() + y.ncols());
    for (j, c) in x.columns().into_iter().enumerate() {
        let name = if x.ncols() == 1 {
            "x".to_string()
        } else {
            format!("x{j}")
        };
        columns.push((name, OutColumn::Numbers(c.to_vec())));
    }
    for (j, c) in y.columns().into_iter().enumerate() {
        columns.push((format!("y{j}"), OutColumn::Numbers(c.to_vec())));
    }
    columns
}

/// The sidecar of a generated file: its roles, so `ovk run --data FILE` needs no role flags.
pub fn sidecar(outputs: usize, seed: u64) -> Sidecar {
    Sidecar {
        description: format!(
            "gp-mix: {outputs} outputs mixed from {LATENT} latent Gaussian-process paths on \
             {GRID} grid points in [-1, 1], noise at SNR 1:1 (seed {seed})"
        ),
        source: format!("{SOURCE} (Dinuzzo & Fukumizu, ACML 2011, §6)"),
        task: Some(Task::Regression),
        class: None,
        targets: Some(vec![format!("y0..y{}", outputs.saturating_sub(1))]),
        features: Some(vec!["x".to_string()]),
        views: Default::default(),
    }
}

/// The sidecar's TOML text.
pub fn sidecar_text(outputs: usize, seed: u64) -> Result<String> {
    toml::to_string(&sidecar(outputs, seed))
        .map_err(|e| OvkError::internal(format!("writing the gp-mix sidecar: {e}")))
}

/// Whether a sidecar's text is one `ovk gen` wrote (so a new `gen` may replace it; any other
/// sidecar is the user's).
pub fn is_generated_sidecar(text: &str) -> bool {
    text.contains(SOURCE)
}

/// How a sidecar written by `ovk gen` starts its `source`.
const SOURCE: &str = "ovk gen gp-mix";
