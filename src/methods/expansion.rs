//! The models most methods return: `f(x) = Σᵢ k(x, xᵢ) cᵢ`, i.e. `Ŷ = K(X_new, X) · Coef`, and
//! its low-rank counterpart `Ŷ = Z(X_new) · β` through a factor's feature map.

use ndarray::{s, Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::Model;
use crate::kernels::{cross_gram, FeatureMap, Kernel};
use crate::linalg::matmul;
use crate::Result;

pub struct KernelExpansion {
    pub kernel: Kernel,
    pub x_train: Array2<f64>,
    /// ℓ×m coefficients (for OKL `C L`, for low-rank OKL `A Bᵀ`).
    pub coef: Array2<f64>,
}

impl Model for KernelExpansion {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let k = cross_gram(&self.kernel, x, self.x_train.view())?;
        Ok(matmul(k.view(), self.coef.view()))
    }
}

/// The model on a low-rank (or primal) input kernel: `f(x) = z(x)ᵀ β` with the factor's feature
/// map z and `β = ZᵀC` (r×m) — the landmarks stand in for the training set.
pub struct FeatureExpansion {
    pub map: FeatureMap,
    /// r×m coefficients in the factor's coordinates.
    pub coef: Array2<f64>,
}

/// Rows per block when predicting through a feature map: keeps the n×r features of a large
/// input from ever being whole in memory.
const PREDICT_ROWS: usize = 4096;

impl Model for FeatureExpansion {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let mut out = Array2::<f64>::zeros((x.nrows(), self.coef.ncols()));
        let blocks: Vec<_> = out
            .axis_chunks_iter_mut(Axis(0), PREDICT_ROWS)
            .enumerate()
            .collect();
        blocks
            .into_par_iter()
            .try_for_each(|(b, mut block)| -> Result<()> {
                let start = b * PREDICT_ROWS;
                let z = self
                    .map
                    .features(x.slice(s![start..start + block.nrows(), ..]))?;
                block.assign(&matmul(z.view(), self.coef.view()));
                Ok(())
            })?;
        Ok(out)
    }
}
