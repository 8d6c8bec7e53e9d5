//! The model most methods return: `f(x) = Σᵢ k(x, xᵢ) cᵢ`, i.e. `Ŷ = K(X_new, X) · Coef`.

use ndarray::{Array2, ArrayView2};

use super::Model;
use crate::kernels::{cross_gram, Kernel};
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
