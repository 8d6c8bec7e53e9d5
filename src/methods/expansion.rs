//! The model most methods return: `f(x) = Σᵢ k(x, xᵢ) cᵢ`, i.e. `Ŷ = K(X_new, X) · Coef`.

use ndarray::{Array2, ArrayView2};

use super::{Model, ModelParts};
use crate::kernels::{cross_gram, Kernel};
use crate::linalg::matmul;
use crate::Result;

pub struct KernelExpansion {
    pub kernel: Kernel,
    pub x_train: Array2<f64>,
    /// ℓ×m coefficients (for OKL `C L`, for low-rank OKL `A Bᵀ`).
    pub coef: Array2<f64>,
}

impl KernelExpansion {
    pub const KIND: &'static str = "kernel-expansion";

    pub fn from_parts(mut parts: ModelParts) -> Result<Self> {
        let kernel = parts.setting("kernel")?;
        let x_train = parts.take_array("x_train")?;
        let coef = parts.take_array("coef")?;
        if x_train.nrows() != coef.nrows() {
            return Err(parts.mismatch(&format!(
                "{} training rows but {} rows of coefficients",
                x_train.nrows(),
                coef.nrows()
            )));
        }
        Ok(KernelExpansion {
            kernel,
            x_train,
            coef,
        })
    }
}

impl Model for KernelExpansion {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let k = cross_gram(&self.kernel, x, self.x_train.view())?;
        Ok(matmul(k.view(), self.coef.view()))
    }

    fn parts(&self) -> ModelParts {
        ModelParts::new(Self::KIND)
            .with_setting("kernel", &self.kernel)
            .with_array("x_train", self.x_train.clone())
            .with_array("coef", self.coef.clone())
    }

    fn n_features(&self) -> Option<usize> {
        Some(self.x_train.ncols())
    }
}
