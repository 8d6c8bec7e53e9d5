//! A run, fully specified: data choices, method, kernel and hyperparameters. It is what a TOML
//! config holds, what the TUI's panes edit, and what a session stores for replay.

use serde::{Deserialize, Serialize};

use crate::data::options::TEST_FRACTION;
use crate::data::DataConfig;
use crate::kernels::KernelSpec;
use crate::methods::{self, Method, Params, Value};
use crate::Result;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub data: DataConfig,
    pub method: String,
    #[serde(default)]
    pub kernel: KernelSpec,
    #[serde(default)]
    pub params: Params,
    /// Session name; default: `<dataset>-<method>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Estimate the configuration by K-fold cross-validation on the training part (mean, sd
    /// and per-fold values of each metric) before the final fit on the whole training part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cv: Option<usize>,
    /// Where a method chooses what it chooses (lowrank-okl's λ and p, a sweep's best
    /// configuration): on the training part (default), or on the test rows — the papers'
    /// protocol, whose test metrics are then marked optimistic.
    #[serde(default, skip_serializing_if = "SelectOn::is_train")]
    pub select_on: SelectOn,
}

/// Which rows may choose hyperparameters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SelectOn {
    /// A validation part or the folds of the training rows; the test rows are touched once,
    /// to score the final model.
    #[default]
    Train,
    /// The test rows (the papers' protocols); their metrics are marked optimistic.
    Test,
}

impl SelectOn {
    pub const ALL: [SelectOn; 2] = [SelectOn::Train, SelectOn::Test];

    pub fn is_train(&self) -> bool {
        *self == SelectOn::Train
    }

    pub fn is_test(&self) -> bool {
        *self == SelectOn::Test
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            SelectOn::Train => "train",
            SelectOn::Test => "test",
        }
    }
}

/// At most this many folds (`--cv K`): each fold is a whole fit.
pub const MAX_CV_FOLDS: usize = 100;

impl RunConfig {
    /// Check the method exists and every hyperparameter is valid, before any work is done.
    pub fn validate(&self) -> Result<()> {
        self.checked_method().map(|_| ())
    }

    /// `validate`, returning the method it found (one lookup by name per run).
    pub fn checked_method(&self) -> Result<&'static dyn Method> {
        let m = methods::find(&self.method)?;
        self.params.validate(m.name(), m.params())?;
        TEST_FRACTION.check(&Value::Float(self.data.test_fraction))?;
        self.kernel.check()?;
        if let Some(k) = self.cv {
            if !(2..=MAX_CV_FOLDS).contains(&k) {
                return Err(crate::OvkError::input(format!(
                    "--cv {k}: cross-validation takes 2 to {MAX_CV_FOLDS} folds"
                )));
            }
            if self.data.cv.is_some() {
                return Err(crate::OvkError::input(
                    "--cv K estimates a configuration over K folds; it cannot be combined with                      --cv-fold (one fold of a sweep plan)",
                ));
            }
        }
        Ok(m)
    }

    pub fn default_name(&self) -> String {
        let stem = self
            .data
            .path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "data".into());
        format!("{stem}-{}", self.method)
    }
}
