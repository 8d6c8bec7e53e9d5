//! The synthetic benchmark of Dinuzzo & Fukumizu (ACML 2011, §6; methods.md §2): m outputs,
//! each a U(0, 1)-weighted mix of 50 latent Gaussian-process paths with covariance
//! `exp(−10|x − x'|)` on 200 grid points in [−1, 1], plus Gaussian noise at SNR 1:1.

use std::io::Write as _;
use std::path::Path;

use ndarray::{Array1, Array2, Axis};

use super::rng::Rng;
use super::sidecar::{sidecar_path, Sidecar};
use super::write::{write_atomically, write_table, OutColumn};
use super::Task;
use crate::linalg::matmul;
use crate::{OvkError, Result};

/// Grid points on [−1, 1].
pub const GRID: usize = 200;
/// Latent GP paths mixed into every output.
pub const LATENT: usize = 50;
/// The covariance `exp(−DECAY |x − x'|)`.
pub const DECAY: f64 = 10.0;

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
    pub x: Array2<f64>,
    pub signal: Array2<f64>,
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

/// Write the grid and outputs as a table in the format `path`'s extension names (CSV, TSV,
/// Parquet): column `x`, then `y0 … y{m-1}`; and a sidecar naming those roles, so `ovk run
/// --data FILE` needs no role flags. Both are written atomically.
pub fn write(path: &Path, x: &Array2<f64>, y: &Array2<f64>, seed: u64) -> Result<()> {
    if x.nrows() != y.nrows() {
        return Err(OvkError::internal(format!(
            "gp-mix: {} input rows but {} output rows",
            x.nrows(),
            y.nrows()
        )));
    }
    let sidecar = sidecar_path(path)
        .ok_or_else(|| OvkError::input(format!("{}: not a file name", path.display())))?;
    let side = Sidecar {
        description: format!(
            "gp-mix: {} outputs mixed from {LATENT} latent Gaussian-process paths on {GRID} grid \
             points in [-1, 1], noise at SNR 1:1 (seed {seed})",
            y.ncols()
        ),
        source: format!("{SOURCE} (Dinuzzo & Fukumizu, ACML 2011, §6)"),
        task: Some(Task::Regression),
        class: None,
        targets: Some(vec![format!("y0..y{}", y.ncols() - 1)]),
        features: Some(vec!["x".to_string()]),
        views: Default::default(),
    };
    // A sidecar beside the file that `ovk gen` did not write is the user's: keep it.
    if let Ok(text) = std::fs::read_to_string(&sidecar) {
        if !text.contains(SOURCE) {
            return Err(OvkError::input(format!(
                "{}: a sidecar that ovk gen did not write is already there; choose another \
                 --out name",
                sidecar.display()
            )));
        }
    }
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
    write_table(path, &columns)?;
    let text = toml::to_string(&side)
        .map_err(|e| OvkError::internal(format!("writing the gp-mix sidecar: {e}")))?;
    write_atomically(&sidecar, |f| {
        let mut f = f;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    })
}

/// How a sidecar written by `ovk gen` starts its `source`.
const SOURCE: &str = "ovk gen gp-mix";
