//! A model fitted on scaled targets (`--target-scale`), answering in the targets' own units:
//! every prediction — the run's, the baseline's, `ovk predict`'s — goes through `invert`.

use ndarray::{Array2, ArrayView2};

use super::{Model, ModelParts};
use crate::data::Scaler;
use crate::{OvkError, Result};

pub(crate) struct TargetScaled {
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
        // a session whose model arrays disagree with its saved scaling is refused, not indexed
        if y.ncols() != self.scaler.mean.len() {
            return Err(OvkError::input(format!(
                "the model predicts {} outputs but its target scaling has {}",
                y.ncols(),
                self.scaler.mean.len()
            )));
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    struct Fixed(Array2<f64>);
    impl Model for Fixed {
        fn predict(&self, _: ArrayView2<f64>) -> Result<Array2<f64>> {
            Ok(self.0.clone())
        }
        fn parts(&self) -> ModelParts {
            ModelParts::new("fixed")
        }
    }

    #[test]
    fn maps_back_and_refuses_a_scaling_of_another_width() {
        let scaler = Scaler {
            mean: vec![10.0, -1.0],
            std: vec![2.0, 1.0],
        };
        let x = Array2::<f64>::zeros((1, 1));
        let m = TargetScaled::wrap(Box::new(Fixed(array![[1.0, 3.0]])), Some(&scaler));
        assert_eq!(m.predict(x.view()).unwrap(), array![[12.0, 2.0]]);
        let wide = TargetScaled::wrap(Box::new(Fixed(array![[1.0, 2.0, 3.0]])), Some(&scaler));
        let e = wide.predict(x.view()).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("3 outputs"), "{e}");
    }
}
