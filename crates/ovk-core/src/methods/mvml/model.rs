//! The fitted multi-view predictor: `ŷ(x) = Σ_l k_l(x, X_ref,l) · coef_l`, where the reference
//! points are the training rows (exact: coef = w_l g_l) or the Nyström landmarks
//! (coef = w_l W_l^{†1/2} N_lᵀ g_l, the approximated test kernel of eq. 17).

use ndarray::{Array2, ArrayView2, Axis};

use crate::kernels::{cross_gram, Kernel};
use crate::linalg::matmul;
use crate::methods::{Model, ModelParts};
use crate::Result;

/// The model kind MVML saves (`methods::load_model`).
pub(crate) const KIND: &str = "mvml";

pub(crate) struct ViewPredictor {
    pub kernel: Kernel,
    /// The view's feature columns.
    pub columns: Vec<usize>,
    /// Reference rows restricted to the view's columns.
    pub(crate) x_ref: Array2<f64>,
    /// n_ref × outputs.
    pub coef: Array2<f64>,
}

pub(crate) struct MvmlModel {
    pub views: Vec<ViewPredictor>,
}

/// One view's saved settings (its arrays are `view<l>_x_ref` and `view<l>_coef`).
#[derive(serde::Serialize, serde::Deserialize)]
struct ViewSettings {
    kernel: Kernel,
    columns: Vec<usize>,
}

/// The MVML model back from its saved parts.
pub(crate) fn model_from_parts(mut parts: ModelParts) -> Result<MvmlModel> {
    let settings: Vec<ViewSettings> = parts.setting("views")?;
    let mut views = Vec::with_capacity(settings.len());
    for (l, s) in settings.into_iter().enumerate() {
        let x_ref = parts.take_array(&format!("view{l}_x_ref"))?;
        let coef = parts.take_array(&format!("view{l}_coef"))?;
        if x_ref.nrows() != coef.nrows() || x_ref.ncols() != s.columns.len() {
            return Err(parts.mismatch(&format!(
                "view {l}: reference rows {:?} for {} columns, coefficients {:?}",
                x_ref.dim(),
                s.columns.len(),
                coef.dim()
            )));
        }
        views.push(ViewPredictor {
            kernel: s.kernel,
            columns: s.columns,
            x_ref,
            coef,
        });
    }
    let m = views.first().map_or(0, |v| v.coef.ncols());
    if views.is_empty() || views.iter().any(|v| v.coef.ncols() != m) {
        return Err(parts.mismatch("the views predict different numbers of outputs"));
    }
    Ok(MvmlModel { views })
}

impl Model for MvmlModel {
    fn parts(&self) -> ModelParts {
        let settings: Vec<ViewSettings> = self
            .views
            .iter()
            .map(|v| ViewSettings {
                kernel: v.kernel,
                columns: v.columns.clone(),
            })
            .collect();
        let mut parts = ModelParts::new(KIND).with_setting("views", &settings);
        for (l, v) in self.views.iter().enumerate() {
            parts = parts
                .with_array(&format!("view{l}_x_ref"), v.x_ref.clone())
                .with_array(&format!("view{l}_coef"), v.coef.clone());
        }
        parts
    }

    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let m = self.views.first().map_or(0, |v| v.coef.ncols());
        let mut out = Array2::zeros((x.nrows(), m));
        for v in &self.views {
            if let Some(&c) = v.columns.iter().find(|&&c| c >= x.ncols()) {
                return Err(crate::OvkError::input(format!(
                    "the multi-view model reads feature column {c} but the inputs have {}",
                    x.ncols()
                )));
            }
            let xv = x.select(Axis(1), &v.columns);
            let k = cross_gram(&v.kernel, xv.view(), v.x_ref.view())?;
            out += &matmul(k.view(), v.coef.view());
        }
        Ok(out)
    }
}
