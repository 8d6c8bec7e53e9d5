//! The fitted multi-view predictor: `ŷ(x) = Σ_l k_l(x, X_ref,l) · coef_l`, where the reference
//! points are the training rows (exact: coef = w_l g_l) or the Nyström landmarks
//! (coef = w_l W_l^{†1/2} N_lᵀ g_l, the approximated test kernel of eq. 17).

use ndarray::{Array2, ArrayView2, Axis};

use crate::kernels::{cross_gram, Kernel};
use crate::linalg::matmul;
use crate::methods::Model;
use crate::Result;

pub struct ViewPredictor {
    pub kernel: Kernel,
    /// The view's feature columns.
    pub columns: Vec<usize>,
    /// Reference rows restricted to the view's columns.
    pub x_ref: Array2<f64>,
    /// n_ref × outputs.
    pub coef: Array2<f64>,
}

pub struct MvmlModel {
    pub views: Vec<ViewPredictor>,
}

impl Model for MvmlModel {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let m = self.views.first().map_or(0, |v| v.coef.ncols());
        let mut out = Array2::zeros((x.nrows(), m));
        for v in &self.views {
            let xv = x.select(Axis(1), &v.columns);
            let k = cross_gram(&v.kernel, xv.view(), v.x_ref.view())?;
            out += &matmul(k.view(), v.coef.view());
        }
        Ok(out)
    }
}
