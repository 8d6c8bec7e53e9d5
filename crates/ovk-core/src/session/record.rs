//! The contents of `session.json`. Schema changes bump `SCHEMA`; readers refuse unknown schemas
//! with a message instead of guessing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::data::{ClassCoding, DatasetInfo, Scale, Scaler, Task};
use crate::kernels::Kernel;
use crate::methods::{Params, TraceRecord};
use crate::metrics::MetricMap;

pub const SCHEMA: &str = "ovk.session/1";

/// Which file rows went where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub seed: u64,
    pub test_fraction: f64,
    /// Row indices of the original file (0-based, header excluded).
    pub train: Vec<usize>,
    pub test: Vec<usize>,
    /// Semi-supervised runs: training rows with and without labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeled: Option<Vec<usize>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unlabeled: Option<Vec<usize>>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    #[serde(deserialize_with = "crate::util::nan::map")]
    pub train: MetricMap,
    #[serde(deserialize_with = "crate::util::nan::map")]
    pub test: MetricMap,
    /// Semi-supervised runs: transductive scores on the unlabeled training rows.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::util::nan::opt_map"
    )]
    pub unlabeled: Option<MetricMap>,
}

impl Metrics {
    /// The metric names of the train and test parts, sorted, each once.
    pub fn names(&self) -> Vec<&String> {
        let mut keys: Vec<&String> = self.test.keys().chain(self.train.keys()).collect();
        keys.sort();
        keys.dedup();
        keys
    }
}

/// Wall-clock seconds of each stage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timings {
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub load_s: f64,
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub fit_s: f64,
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub predict_s: f64,
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub total_s: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRecord {
    /// The kernel as chosen (σ may be "median") …
    pub spec: crate::kernels::KernelSpec,
    /// … and as used (σ a number).
    pub resolved: Kernel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    pub schema: String,
    pub id: String,
    pub name: String,
    /// RFC 3339, UTC.
    pub created: String,
    pub ovk_version: String,
    pub dataset: DatasetInfo,
    pub task: Task,
    pub method: String,
    pub kernel: KernelRecord,
    /// Hyperparameters with defaults filled in.
    pub params: Params,
    pub scale: Scale,
    pub split: Split,
    pub feature_names: Vec<String>,
    pub output_names: Vec<String>,
    pub trace: Vec<TraceRecord>,
    pub iterations: usize,
    pub converged: bool,
    /// `None` (written as `null`) when the method does not compute it (a note says why).
    #[serde(default)]
    pub objective: Option<f64>,
    pub metrics: Metrics,
    /// The identity-output-kernel baseline (krr) at the same λ and kernel, for comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Metrics>,
    pub timings: Timings,
    /// Matrix name → file name in the session directory.
    pub matrices: BTreeMap<String, String>,
    /// Method-specific results (λ path, certificate, block norms …).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub details: serde_json::Map<String, serde_json::Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The full configuration, so the run can be replayed and verified.
    pub config: RunConfig,
    /// What `ovk predict` needs besides the model's arrays (`model_<name>` in `matrices`);
    /// absent in sessions saved before ovk kept models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRecord>,
}

/// A fitted model and the data transformations in front of it, as saved in `session.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// Which loader reads the parts (`methods::load_model`).
    pub kind: String,
    pub settings: serde_json::Map<String, serde_json::Value>,
    /// The model's array names; each is the matrix `model_<name>` (`model_<name>.npy`).
    pub arrays: Vec<String>,
    /// Feature scaling fitted on the training rows, one entry per feature column.
    pub scaler: Scaler,
    /// `--target-scale`: the targets' scaling fitted on the labeled training rows, one entry
    /// per output; the model predicts scaled targets and `invert` maps them back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_scaler: Option<Scaler>,
    /// polars dtypes of the feature columns in the training file.
    pub feature_dtypes: Vec<String>,
    /// Multi-class: the class column, its dtype, and its classes in output order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<ClassRecord>,
    pub class_coding: ClassCoding,
    /// `--missing impute`: per feature column, the unscaled value a missing cell of a new row
    /// takes (the training rows' mean, or a text column's most frequent level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<Vec<f64>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRecord {
    pub column: String,
    pub dtype: String,
    pub values: Vec<String>,
}

/// The matrix name under which a model array is saved.
pub fn model_matrix_name(array: &str) -> String {
    format!("model_{array}")
}
