//! A fitted model taken apart for a session and put back together for `ovk predict`.
//!
//! The pattern, for every model (and any new one):
//! 1. `Model::parts` returns a `ModelParts`: a `kind` unique among models (kebab-case), the
//!    model's scalar settings as JSON (`with_setting("kernel", &self.kernel)`: anything serde
//!    writes — kernels, enums, index lists), and its arrays by name (`with_array("coef", …)`).
//!    Only what prediction reads: the scaled training inputs or the landmarks, coefficients.
//! 2. A `from_parts(parts) -> Result<Self>` takes them back with `setting` and `take_array`
//!    (both refuse a missing or malformed part, naming it) and checks that the shapes agree
//!    with each other.
//! 3. `load_model` gets one arm for the kind.
//!
//! The session saves the arrays as `model_<name>.npy` and the rest in `session.json`; it checks
//! finiteness and presence of every file before `load_model` runs.

use ndarray::Array2;
use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{kde, mvml, FeatureExpansion, KernelExpansion, Model};
use crate::{OvkError, Result};

/// A fitted model taken apart for saving: its kind, scalar settings and named arrays.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelParts {
    /// Which loader reads the parts (`kernel-expansion`, `kde`, `mvml` …).
    pub kind: String,
    /// Scalar settings and small structures, as JSON.
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// Arrays by name (saved as `model_<name>.npy`).
    pub arrays: Vec<(String, Array2<f64>)>,
}

impl ModelParts {
    /// Empty parts of a model of this kind.
    pub fn new(kind: &str) -> Self {
        ModelParts {
            kind: kind.to_string(),
            settings: serde_json::Map::new(),
            arrays: Vec::new(),
        }
    }

    pub(crate) fn with_setting(mut self, key: &str, value: &impl Serialize) -> Self {
        let v = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
        self.settings.insert(key.to_string(), v);
        self
    }

    pub(crate) fn with_array(mut self, name: &str, a: Array2<f64>) -> Self {
        self.arrays.push((name.to_string(), a));
        self
    }

    /// A setting read back; a missing or malformed one names the model kind and key.
    pub fn setting<T: DeserializeOwned>(&self, key: &str) -> Result<T> {
        let v = self.settings.get(key).ok_or_else(|| {
            OvkError::bad_session(format!(
                "the saved {} model has no setting `{key}` (the session is incomplete)",
                self.kind
            ))
        })?;
        serde_json::from_value(v.clone()).map_err(|e| {
            OvkError::bad_session(format!(
                "the saved {} model's setting `{key}` is malformed: {e}",
                self.kind
            ))
        })
    }

    pub(crate) fn has_array(&self, name: &str) -> bool {
        self.arrays.iter().any(|(n, _)| n == name)
    }

    /// An array removed from the parts (so a large one is not copied).
    pub(crate) fn take_array(&mut self, name: &str) -> Result<Array2<f64>> {
        let i = self
            .arrays
            .iter()
            .position(|(n, _)| n == name)
            .ok_or_else(|| {
                OvkError::bad_session(format!(
                    "the saved {} model lacks its array `{name}` (model_{name}.npy)",
                    self.kind
                ))
            })?;
        Ok(self.arrays.swap_remove(i).1)
    }

    /// A shape disagreement between two parts, as a message naming both.
    pub(crate) fn mismatch(&self, what: &str) -> OvkError {
        OvkError::bad_session(format!(
            "the saved {} model's parts disagree: {what} (the session is corrupt)",
            self.kind
        ))
    }
}

/// Every kind `load_model` knows.
pub const KINDS: [&str; 4] = [
    KernelExpansion::KIND,
    FeatureExpansion::KIND,
    kde::KIND,
    mvml::KIND,
];

/// Put a saved model back together.
pub fn load_model(parts: ModelParts) -> Result<Box<dyn Model>> {
    Ok(match parts.kind.as_str() {
        KernelExpansion::KIND => Box::new(KernelExpansion::from_parts(parts)?),
        FeatureExpansion::KIND => Box::new(FeatureExpansion::from_parts(parts)?),
        kde::KIND => Box::new(kde::model_from_parts(parts)?),
        mvml::KIND => Box::new(mvml::model_from_parts(parts)?),
        other => {
            return Err(OvkError::bad_session(format!(
                "unknown model kind `{other}` (this ovk reads {}); use the ovk version that \
                 saved the session",
                KINDS.join(", ")
            )))
        }
    })
}
