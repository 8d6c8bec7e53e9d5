//! Tables in (CSV, Parquet via polars; ARFF and LIBSVM by ovk's own readers), matrices out: column roles, class encoding, seeded
//! splits, scaling, and the sidecar files that describe the bundled datasets.

mod apply;
mod arff;
pub(crate) mod batches;
pub use batches::StreamChoice;
mod cells_fit;
mod csv_shape;
mod encode;
mod features;
pub mod files;
pub mod gen_size;
pub mod gpmix;
mod guard;
mod implied_roles;
pub use implied_roles::implied_roles_toml;
mod impute;
mod libsvm;
mod load;
mod numeric_csv;
pub mod options;
mod parquet_footer;
mod parquet_sparse;
mod parquet_write;
mod prepare;
mod raw;
mod research_formats;
pub(crate) use raw::row_label;
pub use research_formats::RESEARCH_EXTENSIONS;
mod roles;
mod rows;
mod scale;
mod select;
mod sidecar;
mod sparse;
pub use sparse::{SparseChoice, AUTO_DENSE_BYTES, AUTO_DENSITY};
mod split;
mod table;
mod thrift_compact;
mod views;
mod write;

pub use crate::util::rng;
pub(crate) use apply::{read_new_rows, NewRows, TrainedColumns, TrainedOutputs, Truth};
pub use features::{Categorical, MAX_LEVELS};
pub(crate) use load::format_of;
pub use load::write_parquet;
pub use load::Format;
pub(crate) use prepare::MAX_MAGNITUDE;
pub use prepare::{sha256_file, sha256_hex};
pub(crate) use scale::finite_moments;
pub use select::resolve as select_columns;
pub use sidecar::Sidecar;
pub use sidecar::ViewSpec;
pub use sidecar::{parse_sidecar, sidecar_for, sidecar_path};
pub use table::{
    column_text, load_table, read_numeric_columns, read_numeric_table, ColumnSummary, Table,
};
pub use views::view_columns;
pub(crate) use write::BlockWriter;
pub use write::{output_format, write_table, OutColumn};

use std::path::PathBuf;

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::util::choice::choice_enum;

choice_enum! {
    /// What the outputs are.
    pub enum Task: "task" {
        /// Real-valued outputs (one or more target columns).
        Regression = "regression",
        /// One class column, one-hot coded into one output per class; prediction = argmax.
        Multiclass = "multiclass",
        /// Several 0/1 label columns coded ±1; prediction = sign, scored by mean AUC.
        Multilabel = "multilabel",
    }
}

choice_enum! {
    /// Feature scaling fitted on the training rows.
    #[derive(Default)]
    pub enum Scale: "scale" {
        /// Training mean and population standard deviation (ddof = 0); a constant column divides
        /// by 1.
        #[default]
        Standard = "standard",
        /// No scaling: features enter the kernel as in the file.
        None = "none",
    }
}

choice_enum! {
    /// Target scaling fitted on the labeled training rows; the fit sees the scaled targets and
    /// every prediction is mapped back to the targets' own units.
    #[derive(Default)]
    pub enum TargetScale: "target_scale" {
        /// The targets as in the file (the papers' formulations: no intercept).
        #[default]
        None = "none",
        /// Training mean 0 per output: an intercept, so shifting a target shifts its predictions.
        Center = "center",
        /// Mean 0 and population std 1 per output: every output weighs the same in the squared
        /// loss (a rare label as much as a frequent one).
        Standard = "standard",
    }
}

impl TargetScale {
    /// True when the targets are left unscaled.
    pub fn is_none(&self) -> bool {
        *self == TargetScale::None
    }
}

choice_enum! {
    /// How a one-hot class target is coded. `pm1` (+1 / −1) is the default.
    #[derive(Default)]
    pub enum ClassCoding: "class_coding" {
        /// +1 for the row's class, −1 for the others.
        #[default]
        Pm1 = "pm1",
        /// 1 for the row's class, 0 for the others.
        ZeroOne = "01",
    }
}

choice_enum! {
    /// What a missing cell in a used column does (`--missing`); a session stores it as
    /// `DataConfig`'s two flags.
    #[derive(Default)]
    pub enum Missing: "missing" {
        /// The run is refused; the error names the first such cell.
        #[default]
        Refuse = "refuse",
        /// Rows with a missing cell are left out.
        Drop = "drop",
        /// Feature cells are filled in (numeric: the column mean; text: the most frequent value
        /// over the training rows); rows missing an output are dropped.
        Impute = "impute",
    }
}

/// The user's choices about the data: which file, which columns play which role, the split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DataConfig {
    /// The data file (CSV or Parquet), as the user gave it.
    pub path: PathBuf,
    /// Feature columns: names, globs (`p_0_*`) or ranges (`p_0_0..p_3_7`). Default: every column
    /// that is not a target/class (or the sidecar's choice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    /// Target columns (regression or multi-label), same syntax as features.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<String>>,
    /// One class column (multi-class), one-hot coded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// The task; `None`: inferred from the roles (a class column means multi-class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Task>,
    /// Views by column-name prefix (`fou,fac,kar`); default: the sidecar's views, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub views: Option<Vec<String>>,
    /// Fraction of the rows drawn at random for testing (0–1), when no `test_column`.
    #[serde(default = "default_test_fraction")]
    pub test_fraction: f64,
    /// A column marking the test rows (nonzero = test), e.g. a dataset's official split
    /// (`is_test`); it replaces the random split and is never a feature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test_column: Option<String>,
    /// Seed of the random split, the labeled subset and the folds.
    #[serde(default)]
    pub seed: u64,
    /// Scaling of the features, fitted on the training rows.
    #[serde(default)]
    pub scale: Scale,
    /// Scaling of the targets (an intercept, or equal weight per output); none by default.
    #[serde(default, skip_serializing_if = "TargetScale::is_none")]
    pub target_scale: TargetScale,
    /// How a class column's one-hot outputs are coded.
    #[serde(default)]
    pub class_coding: ClassCoding,
    /// Drop rows with missing/NaN cells instead of refusing them.
    #[serde(default)]
    pub drop_missing: bool,
    /// Fill missing feature cells instead (numeric: the column mean; text: its most frequent
    /// value); rows with a missing output are dropped.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub impute_missing: bool,
    /// The one-hot encoding of text feature columns, fixed by an earlier run (a replay encodes
    /// identically); `None`: derived from the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub categories: Option<Vec<Categorical>>,
    /// Semi-supervised: keep this many labels of the training part (≥ 1), or this fraction
    /// (< 1), chosen at random with `seed`; the rest become unlabeled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labeled: Option<f64>,
    /// Cross-validation: replace the test part by fold `fold` of `folds` of the training part
    /// (seeded), and train on the other folds. Sweeps run one such fit per fold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<CvFold>,
    /// Nested cross-validation: first make fold `fold` of `folds` of the training part the
    /// held-out part (the outer test), then apply `cv` (the inner folds) to the rest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outer: Option<CvFold>,
    /// Successive halving: train on this many training rows only (a seeded subset; the folds
    /// of `cv` are cut from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train_rows: Option<usize>,
    /// Whether a sparse file's features stay sparse (LIBSVM, sparse ARFF; `--sparse`).
    #[serde(default, skip_serializing_if = "SparseChoice::is_auto")]
    pub sparse: SparseChoice,
    /// Whether the table is read in row batches, the factor Z never stored (`--stream`).
    #[serde(default, skip_serializing_if = "StreamChoice::is_auto")]
    pub stream: StreamChoice,
}

/// One fold of a k-fold split of the training part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CvFold {
    /// Number of folds K.
    pub folds: usize,
    /// 0-based.
    pub fold: usize,
}

fn default_test_fraction() -> f64 {
    options::TEST_FRACTION_DEFAULT
}

impl DataConfig {
    /// The defaults for the file at `path`: every role from the file or its sidecar, standard scaling.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        DataConfig {
            path: path.into(),
            features: None,
            targets: None,
            class: None,
            task: None,
            views: None,
            test_fraction: default_test_fraction(),
            test_column: None,
            seed: 0,
            scale: Scale::Standard,
            target_scale: TargetScale::None,
            class_coding: ClassCoding::Pm1,
            drop_missing: false,
            impute_missing: false,
            categories: None,
            labeled: None,
            cv: None,
            outer: None,
            train_rows: None,
            sparse: SparseChoice::Auto,
            stream: StreamChoice::Auto,
        }
    }

    /// The missing-cell policy the two flags stand for (`drop_missing` wins, as the workbench
    /// shows them).
    pub fn missing(&self) -> Missing {
        match (self.drop_missing, self.impute_missing) {
            (true, _) => Missing::Drop,
            (false, true) => Missing::Impute,
            (false, false) => Missing::Refuse,
        }
    }

    /// Set the two flags to stand for `missing`.
    pub fn set_missing(&mut self, missing: Missing) {
        self.drop_missing = missing == Missing::Drop;
        self.impute_missing = missing == Missing::Impute;
    }

    /// How the test rows were chosen: "test rows marked by `is_test`" or "test fraction 0.25".
    pub fn split_description(&self) -> String {
        match &self.test_column {
            Some(c) => format!("test rows marked by `{c}`"),
            None => format!("test fraction {}", self.test_fraction),
        }
    }
}

/// A group of feature columns forming one view (multi-view methods).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct View {
    /// The view's name (its column-name prefix).
    pub name: String,
    /// Indices into the feature columns (not the file's columns).
    pub columns: Vec<usize>,
}

/// Facts about the file a run used, for the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetInfo {
    /// As the user gave it (relative to the working directory of the run, or absolute).
    pub path: PathBuf,
    /// The same file made absolute when the run read it, so a replay finds it from anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub absolute_path: Option<PathBuf>,
    /// Bytes, and the SHA-256 of those bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Hex SHA-256 of the file's bytes (empty when the run never read the file).
    pub sha256: String,
    /// Number of data rows in the file.
    pub rows: usize,
    /// Feature columns used, in model order.
    pub features: Vec<String>,
    /// Target (or class) columns used.
    pub targets: Vec<String>,
    /// Features kept as a sparse block (`--sparse`): their packed rows' width, the widest
    /// training or test row's non-zero count (`kernels::packed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packed_width: Option<usize>,
}

/// The fitted feature scaling (identity for `Scale::None`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scaler {
    /// Per column, the value subtracted (the training mean; 0 for no scaling).
    pub mean: Vec<f64>,
    /// Per column, the divisor after centring (the training std; 1 for no scaling).
    pub std: Vec<f64>,
}

/// Matrices ready for a method, and where every row came from.
#[derive(Debug, Clone)]
pub struct Prepared {
    /// Training features, scaled: one row per training point.
    pub x_train: Array2<f64>,
    /// Training targets; rows of unlabeled points are NaN.
    pub y_train: Array2<f64>,
    /// The unlabeled training rows' targets as in the file, one row per `false` in `labeled`
    /// in training order: those `--labeled` hid (for transductive evaluation), NaN where the
    /// file itself has no label. Only these rows: a copy of every training target would hold
    /// 100+ MB through the fit with 10⁵ outputs.
    pub y_unlabeled_true: Array2<f64>,
    /// Per training row, whether its label is shown to the fit.
    pub labeled: Vec<bool>,
    /// Test features, scaled with the training scaler.
    pub x_test: Array2<f64>,
    /// Test targets, coded as the training ones.
    pub y_test: Array2<f64>,
    /// Row indices in the original file (0-based, header excluded).
    pub train_rows: Vec<usize>,
    /// Test row indices in the original file (0-based, header excluded).
    pub test_rows: Vec<usize>,
    /// Feature column names, in column order of `x_train` (one-hot levels expanded).
    pub feature_names: Vec<String>,
    /// Output column names: the target columns, or `<class>=<value>` per class.
    pub output_names: Vec<String>,
    /// For multi-class: the class values in output-column order.
    pub class_values: Option<Vec<String>>,
    /// The task the outputs were coded for.
    pub task: Task,
    /// Feature column groups for multi-view methods (empty when no views).
    pub views: Vec<View>,
    /// The feature scaling fitted on the training rows.
    pub scaler: Scaler,
    /// Facts about the file, for the session.
    pub info: DatasetInfo,
    /// polars dtypes of the feature columns, in feature order (checked again at prediction).
    pub feature_dtypes: Vec<String>,
    /// Multi-class: the class column's name and polars dtype.
    pub(crate) class_column: Option<(String, String)>,
    /// The text feature columns that were one-hot encoded, and their levels.
    pub categories: Vec<Categorical>,
    /// Rows with a missing feature cell filled in (`impute_missing`).
    pub imputed_rows: usize,
    /// `impute_missing`: per feature, the value a missing cell takes (unscaled).
    pub fill: Option<Vec<f64>>,
    /// Rows left out for a missing cell (`drop_missing`, or a missing output when imputing).
    pub dropped_rows: usize,
    /// Columns the default feature set left out, each with why ("a date", "a row ID", …).
    pub(crate) left_out: Vec<(String, &'static str)>,
    /// Precomputed kernel: the Gram files as read, with their SHA-256 (empty otherwise).
    pub grams: Vec<crate::kernels::GramFile>,
    /// Precomputed kernel: the ids file of `--gram-ids` as read, with its SHA-256.
    pub gram_ids: Option<crate::kernels::GramFile>,
    /// Warnings about the inputs for the session (a Gram that is not PSD).
    pub notes: Vec<String>,
}

/// Options that come from the method rather than the user.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrepareOptions {
    /// Rows whose target cells are all empty become unlabeled training rows instead of an error.
    pub allow_unlabeled: bool,
}

/// Turn a file and the user's role choices into training/test matrices.
pub fn prepare(cfg: &DataConfig, opts: PrepareOptions) -> crate::Result<Prepared> {
    prepare::prepare(cfg, opts)
}
