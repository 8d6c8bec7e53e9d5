//! The models most methods return: `f(x) = Σᵢ k(x, xᵢ) cᵢ`, i.e. `Ŷ = K(X_new, X) · Coef`, and
//! its low-rank counterpart `Ŷ = Z(X_new) · β` through a factor's feature map.

use ndarray::{s, Array2, ArrayView2, Axis};
use rayon::prelude::*;

use super::{Model, ModelParts};
use crate::kernels::{cross_gram, FeatureMap, Kernel};
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

    fn into_parts(self: Box<Self>) -> ModelParts {
        ModelParts::new(Self::KIND)
            .with_setting("kernel", &self.kernel)
            .with_array("x_train", self.x_train)
            .with_array("coef", self.coef)
    }

    fn n_features(&self) -> Option<usize> {
        Some(self.x_train.ncols())
    }
}

/// The model on a low-rank (or primal) input kernel: `f(x) = z(x)ᵀ β` with the factor's feature
/// map z and `β = ZᵀC` (r×m) — the landmarks stand in for the training set.
pub struct FeatureExpansion {
    pub map: FeatureMap,
    /// r×m coefficients in the factor's coordinates.
    pub coef: Array2<f64>,
}

impl FeatureExpansion {
    pub const KIND: &'static str = "feature-expansion";

    pub fn from_parts(mut parts: ModelParts) -> Result<Self> {
        let map = map_from_parts(&mut parts)?;
        let coef = parts.take_array("coef")?;
        if let FeatureMap::Nystrom { l_s, .. } = &map {
            if coef.nrows() != l_s.nrows() {
                return Err(parts.mismatch(&format!(
                    "{} landmarks but {} rows of coefficients",
                    l_s.nrows(),
                    coef.nrows()
                )));
            }
        }
        Ok(FeatureExpansion { map, coef })
    }
}

/// A feature map's parts: `feature_map` (`linear` or `nystrom`); for Nyström its `kernel`, the
/// landmarks' scaled inputs (`landmarks`, r×d) and `L_S` (`l_s`, r×r).
pub(crate) fn with_map(parts: ModelParts, map: &FeatureMap) -> ModelParts {
    match map {
        FeatureMap::Linear => parts.with_setting("feature_map", &"linear"),
        FeatureMap::Nystrom {
            kernel,
            x_landmarks,
            l_s,
        } => parts
            .with_setting("feature_map", &"nystrom")
            .with_setting("kernel", kernel)
            .with_array("landmarks", x_landmarks.clone())
            .with_array("l_s", l_s.clone()),
    }
}

/// The feature map back from `with_map`'s parts, its shapes checked.
pub(crate) fn map_from_parts(parts: &mut ModelParts) -> Result<FeatureMap> {
    let which: String = parts.setting("feature_map")?;
    match which.as_str() {
        "linear" => Ok(FeatureMap::Linear),
        "nystrom" => {
            let kernel = parts.setting("kernel")?;
            let x_landmarks = parts.take_array("landmarks")?;
            let l_s = parts.take_array("l_s")?;
            let r = x_landmarks.nrows();
            if l_s.dim() != (r, r) {
                return Err(parts.mismatch(&format!("{r} landmarks but L_S is {:?}", l_s.dim())));
            }
            Ok(FeatureMap::Nystrom {
                kernel,
                x_landmarks,
                l_s,
            })
        }
        other => Err(parts.mismatch(&format!("unknown feature map `{other}`"))),
    }
}

/// The number of input columns a feature map reads (`None` for the linear map, whose
/// coefficients say it).
pub(crate) fn map_features(map: &FeatureMap) -> Option<usize> {
    match map {
        FeatureMap::Linear => None,
        FeatureMap::Nystrom { x_landmarks, .. } => Some(x_landmarks.ncols()),
    }
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

    fn parts(&self) -> ModelParts {
        with_map(ModelParts::new(Self::KIND), &self.map).with_array("coef", self.coef.clone())
    }

    fn into_parts(self: Box<Self>) -> ModelParts {
        with_map(ModelParts::new(Self::KIND), &self.map).with_array("coef", self.coef)
    }

    fn n_features(&self) -> Option<usize> {
        map_features(&self.map).or(Some(self.coef.nrows()))
    }
}
