//! The contents of `session.json`. Schema changes bump `SCHEMA`; readers refuse unknown schemas
//! with a message instead of guessing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::RunConfig;
use crate::data::{ClassCoding, DatasetInfo, Scale, Scaler, Task};
use crate::kernels::Kernel;
use crate::methods::{Params, TraceRecord};
use crate::metrics::MetricMap;

/// The schema tag written into every `session.json`; a reader refuses any other.
pub const SCHEMA: &str = "ovk.session/1";

/// Which file rows went where.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    /// Seed of the shuffle that drew the test rows.
    pub seed: u64,
    /// Fraction of the rows held out for testing (0–1).
    pub test_fraction: f64,
    /// Row indices of the original file (0-based, header excluded).
    pub train: Vec<usize>,
    /// Row indices of the original file held out for testing (0-based, header excluded).
    pub test: Vec<usize>,
    /// Semi-supervised runs: training rows with and without labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeled: Option<Vec<usize>>,
    /// Semi-supervised runs: training rows whose labels were hidden.
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
    pub(crate) fn id_or_computed(&self, sha256: &str) -> String {
        self.id.clone().unwrap_or_else(|| self.fingerprint(sha256))
    }
}

/// The folds of `--cv K` over the training part: runs with the same id were cross-validated on
/// the same folds (the same rows in each), so their per-fold scores pair up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoldAssignment {
    /// Number of folds K.
    pub k: usize,
    /// Seed of the shuffle that assigned rows to folds.
    pub seed: u64,
    /// Fingerprint of the fold assignment: equal ids mean the same folds.
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
    /// The fit ran to its end; model, matrices and metrics are saved.
    #[default]
    Finished,
    /// The fit was stopped; only configuration, trace and notes are saved.
    Cancelled,
}

impl RunStatus {
    /// True when the run ran to its end (serde skips writing the default status).
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
    /// Why those parts are optimistic (what was chosen on them), for the user.
    pub reason: String,
}

/// One metric estimated by cross-validation: its mean and sample standard deviation over the
/// folds, and each fold's value (NaN where a fold could not score it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CvStat {
    /// Mean of the metric over the folds.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub mean: f64,
    /// Sample standard deviation of the metric over the folds.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub sd: f64,
    /// The metric on each fold, in fold order.
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

/// Scores of a finished run on each part of the data.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Scores on the training rows.
    #[serde(deserialize_with = "crate::util::nan::map")]
    pub train: MetricMap,
    /// Scores on the held-out test rows.
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
    /// Reading, splitting and scaling the data, in seconds.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub load_s: f64,
    /// Fitting the model, in seconds.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub fit_s: f64,
    /// Predicting and scoring train and test rows, in seconds.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub predict_s: f64,
    /// The whole run, in seconds.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub total_s: f64,
}

/// The input kernel of a run, both as configured and as resolved on the data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelRecord {
    /// The kernel as chosen (σ may be "median") …
    pub spec: crate::kernels::KernelSpec,
    /// … and as used (σ a number).
    pub resolved: Kernel,
}

/// A saved run: everything in `session.json` (configuration, data, results, model).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Schema tag (`SCHEMA`) this record was written with.
    pub schema: String,
    /// Unique id of the run, also its directory name in the store.
    pub id: String,
    /// Name shown to the user (given, or derived from the configuration).
    pub name: String,
    /// RFC 3339, UTC.
    pub created: String,
    /// Version of ovk that wrote the record.
    pub ovk_version: String,
    /// The training file: path, size, hash, rows and columns.
    pub dataset: DatasetInfo,
    /// The learning task the run solved.
    pub task: Task,
    /// Name of the method (`MethodName`'s word, e.g. `lowrank-okl`).
    pub method: String,
    /// The input kernel, as configured and as resolved.
    pub kernel: KernelRecord,
    /// Hyperparameters with defaults filled in.
    pub params: Params,
    /// The feature scaling applied before fitting.
    pub scale: Scale,
    /// Which rows trained and which were held out.
    pub split: Split,
    /// Input columns used as features, in model order.
    pub feature_names: Vec<String>,
    /// Outputs in model order (target columns, or classes for multi-class).
    pub output_names: Vec<String>,
    /// Per-iteration progress of the fit (objective, timings) as the method reported it.
    pub trace: Vec<TraceRecord>,
    /// Number of iterations the fit ran.
    pub iterations: usize,
    /// Whether the method's stopping test was met (false when stopped or capped).
    pub converged: bool,
    /// `None` (written as `null`) when the method does not compute it (a note says why).
    #[serde(default)]
    pub objective: Option<f64>,
    /// The run's scores on train, test (and unlabeled) rows.
    pub metrics: Metrics,
    /// The identity-output-kernel baseline (krr) at the same λ and kernel, for comparison.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<Metrics>,
    /// Wall-clock seconds of each stage.
    pub timings: Timings,
    /// Matrix name → file name in the session directory.
    pub matrices: BTreeMap<String, String>,
    /// Method-specific results (λ path, certificate, block norms …).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub details: serde_json::Map<String, serde_json::Value>,
    /// Remarks for the user (warnings, why a value is absent), in the order they arose.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The full configuration, so the run can be replayed and verified.
    pub config: RunConfig,
    /// What `ovk predict` needs besides the model's arrays (`model_<name>` in `matrices`);
    /// absent in sessions saved before ovk kept models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelRecord>,
    /// Whether the run finished or was cancelled.
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

impl SessionRecord {
    /// Columns of the inputs the model reads: the feature columns, their packed rows when
    /// they were kept sparse (`kernels::packed`), or for a precomputed kernel one `[j | K row]`
    /// block per Gram over the split's rows (`kernels::precomputed`).
    pub fn model_inputs(&self) -> usize {
        match self.kernel.resolved {
            Kernel::Precomputed => {
                self.kernel.spec.gram.len() * (1 + self.split.train.len() + self.split.test.len())
            }
            _ => match self.dataset.packed_width {
                Some(w) => crate::kernels::packed::columns_for(w),
                None => self.feature_names.len(),
            },
        }
    }
}

/// A fitted model and the data transformations in front of it, as saved in `session.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRecord {
    /// Which loader reads the parts (`methods::load_model`).
    pub kind: String,
    /// The method's scalar settings the loader needs (λ, kernel, sizes …).
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
    /// How classes were turned into outputs (one-hot, ±1 …), to decode predictions.
    pub class_coding: ClassCoding,
    /// `--missing impute`: per feature column, the unscaled value a missing cell of a new row
    /// takes (the training rows' mean, or a text column's most frequent level).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<Vec<f64>>,
}

impl ModelRecord {
    /// Whether `other` is the same kind of model in another format: the same loader, but other
    /// array names or setting keys, as when a session saved by an older ovk is re-run by a
    /// newer one whose method keeps its model differently (kde's exact solve kept W and the
    /// candidates' Gram rows before 2026-12-02, and keeps W factored with the output side
    /// folded in since). Its arrays then cannot match the re-run's, whatever the numbers.
    pub fn format_differs(&self, other: &ModelRecord) -> bool {
        self.kind == other.kind
            && (self.arrays != other.arrays || self.settings.keys().ne(other.settings.keys()))
    }
}

/// The class column of a multi-class run, to map output indices back to labels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClassRecord {
    /// Name of the class column in the training file.
    pub column: String,
    /// polars dtype of the class column.
    pub dtype: String,
    /// The class labels, in output order.
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
            KernelName::Cosine => Kernel::Cosine,
            KernelName::Polynomial => Kernel::Polynomial {
                degree: spec.degree,
                coef0: spec.coef0,
            },
            KernelName::Precomputed => Kernel::Precomputed,
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
                packed_width: None,
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
