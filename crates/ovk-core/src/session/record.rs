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
    /// Which rows trained and which were held out, as a short fingerprint of the data's bytes
    /// and the two row sets: runs with the same id were scored on the same rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `--cv K`: how the training part was cut into folds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folds: Option<FoldAssignment>,
}

impl Split {
    /// The fingerprint of these rows of the file whose SHA-256 is `sha256`.
    pub fn fingerprint(&self, sha256: &str) -> String {
        fingerprint(&(sha256, &self.train, &self.test))
    }

    /// The recorded id, or the one these rows have (sessions saved before ids were recorded).
    pub fn id_or_computed(&self, sha256: &str) -> String {
        self.id.clone().unwrap_or_else(|| self.fingerprint(sha256))
    }
}

/// The folds of `--cv K` over the training part: runs with the same id were cross-validated on
/// the same folds (the same rows in each), so their per-fold scores pair up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldAssignment {
    pub k: usize,
    pub seed: u64,
    pub id: String,
}

/// Twelve hex digits of the SHA-256 of `value`'s JSON: short enough for a table column, long
/// enough that two different row sets never share one in practice.
pub fn fingerprint<T: Serialize>(value: &T) -> String {
    use sha2::{Digest, Sha256};
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    let digest = Sha256::digest(&bytes);
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// How a run ended. A cancelled run keeps its configuration, the trace so far and its notes,
/// but no model, matrices or metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    #[default]
    Finished,
    Cancelled,
}

impl RunStatus {
    pub fn is_finished(&self) -> bool {
        *self == RunStatus::Finished
    }
}

/// Metrics computed on rows that also chose something (the paper's protocols, asked for by
/// name): which parts, and what was chosen on them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Optimistic {
    /// `"test"`: the test metrics are optimistic.
    pub parts: Vec<String>,
    pub reason: String,
}

/// One metric estimated by cross-validation: its mean and sample standard deviation over the
/// folds, and each fold's value (NaN where a fold could not score it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CvStat {
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub mean: f64,
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub sd: f64,
    #[serde(deserialize_with = "crate::util::nan::vec")]
    pub folds: Vec<f64>,
}

/// Per metric name, its cross-validated estimate.
pub type CvEstimate = BTreeMap<String, CvStat>;

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
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
    #[serde(default, skip_serializing_if = "RunStatus::is_finished")]
    pub status: RunStatus,
    /// False for a fit the workbench recorded by itself and the user has not kept (`s`);
    /// `ovk sessions --prune-unkept` removes those. Sessions of `ovk run`, and every session
    /// saved before fits were recorded, are kept.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub kept: bool,
    /// Set when some metrics come from rows that also chose something.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimistic: Option<Optimistic>,
    /// `--cv K`: the configuration's metrics on the held-out folds of the training part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<CvEstimate>,
    /// `--cv K`: the krr baseline's metrics on the same folds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv_baseline: Option<CvEstimate>,
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

impl SessionRecord {
    /// The run's `details`, read through types.
    pub fn read_details(&self) -> super::Details<'_> {
        super::Details::of(&self.details)
    }

    /// The record of a run stopped before it returned — killed by its face, or ended by a
    /// watchdog while a decomposition that cannot be interrupted ran: the configuration, the
    /// trace and notes the face received, the seconds it ran. Of the data only the file's name
    /// is known; a σ chosen as the median is recorded as 0 (unresolved).
    pub fn stopped(
        config: &RunConfig,
        trace: Vec<TraceRecord>,
        notes: Vec<String>,
        seconds: f64,
    ) -> SessionRecord {
        use crate::kernels::{KernelName, Sigma};
        let name = config.name.clone().unwrap_or_else(|| config.default_name());
        let spec = &config.kernel;
        let sigma = match spec.sigma {
            Sigma::Value(v) => v,
            Sigma::Median => 0.0,
        };
        let resolved = match spec.name {
            KernelName::Linear => Kernel::Linear,
            KernelName::Gaussian => Kernel::Gaussian { sigma },
            KernelName::Laplacian => Kernel::Laplacian { sigma },
            KernelName::Polynomial => Kernel::Polynomial {
                degree: spec.degree,
                coef0: spec.coef0,
            },
        };
        SessionRecord {
            schema: SCHEMA.to_string(),
            id: super::new_id(&name),
            name,
            created: super::now_rfc3339(),
            ovk_version: env!("CARGO_PKG_VERSION").to_string(),
            dataset: DatasetInfo {
                path: config.data.path.clone(),
                absolute_path: None,
                size: None,
                sha256: String::new(),
                rows: 0,
                features: Vec::new(),
                targets: Vec::new(),
            },
            task: config.data.task.unwrap_or(Task::Regression),
            method: config.method.name().to_string(),
            kernel: KernelRecord {
                spec: spec.clone(),
                resolved,
            },
            params: config.params.clone(),
            scale: config.data.scale,
            split: Split {
                seed: config.data.seed,
                test_fraction: config.data.test_fraction,
                train: Vec::new(),
                test: Vec::new(),
                labeled: None,
                unlabeled: None,
                id: None,
                folds: None,
            },
            feature_names: Vec::new(),
            output_names: Vec::new(),
            iterations: trace.last().map_or(0, |t| t.iter),
            objective: trace.last().map(|t| t.objective),
            trace,
            converged: false,
            metrics: Metrics::default(),
            baseline: None,
            timings: Timings {
                total_s: seconds,
                fit_s: seconds,
                ..Timings::default()
            },
            matrices: BTreeMap::new(),
            details: serde_json::Map::new(),
            notes,
            config: config.clone(),
            model: None,
            status: RunStatus::Cancelled,
            kept: false,
            optimistic: None,
            cv: None,
            cv_baseline: None,
        }
    }
}

/// The matrix name under which a model array is saved.
pub fn model_matrix_name(array: &str) -> String {
    format!("model_{array}")
}
