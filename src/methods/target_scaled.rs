//! A model fitted on scaled targets (`--target-scale`), answering in the targets' own units:
//! every prediction — the run's, the baseline's, `ovk predict`'s — goes through `invert`.

use ndarray::{Array2, ArrayView2};

use super::{Model, ModelParts};
use crate::data::Scaler;
use crate::Result;

pub struct TargetScaled {
    pub inner: Box<dyn Model>,
    /// The targets' scaling, fitted on the labeled training rows.
    pub scaler: Scaler,
}

impl TargetScaled {
    /// `model` as is when the targets were not scaled.
    pub fn wrap(model: Box<dyn Model>, scaler: Option<&Scaler>) -> Box<dyn Model> {
        match scaler {
            Some(s) => Box::new(TargetScaled {
                inner: model,
                scaler: s.clone(),
            }),
            None => model,
        }
    }
}

impl Model for TargetScaled {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let mut y = self.inner.predict(x)?;
        self.scaler.invert(&mut y);
        Ok(y)
    }
    /// The inner model's parts: the scaling is saved beside them (`ModelRecord::target_scaler`).
    fn parts(&self) -> ModelParts {
        self.inner.parts()
    }
    fn into_parts(self: Box<Self>) -> ModelParts {
        self.inner.into_parts()
    }
    fn n_features(&self) -> Option<usize> {
        self.inner.n_features()
    }
}
