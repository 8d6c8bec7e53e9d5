//! A run, fully specified: data choices, method, kernel and hyperparameters. It is what a TOML
//! config holds, what the TUI's panes edit, and what a session stores for replay.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::data::options::TEST_FRACTION;
use crate::data::DataConfig;
use crate::kernels::KernelSpec;
use crate::methods::{self, Method, MethodName, Params, Value};
use crate::util::choice::choice_enum;
use crate::Result;

/// A run fully specified: the data, the method, the kernel and the hyperparameters (`--config` files, sessions).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// The data file, column roles, split and scaling.
    pub data: DataConfig,
    /// Saved as its name (`"lowrank-okl"`).
    pub method: MethodName,
    /// The input kernel as chosen.
    #[serde(default)]
    pub kernel: KernelSpec,
    /// The method's hyperparameters as given (defaults fill the rest).
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

choice_enum! {
    /// Which rows may choose hyperparameters.
    #[derive(Default)]
    pub enum SelectOn: "select_on" {
        /// A validation part or the folds of the training rows; the test rows are touched once,
        /// to score the final model.
        #[default]
        Train = "train",
        /// The test rows (the papers' protocols); their metrics are marked optimistic.
        Test = "test",
    }
}

impl SelectOn {
    pub(crate) fn is_train(&self) -> bool {
        *self == SelectOn::Train
    }

    /// True when hyperparameters are chosen on the test part (the papers' protocol).
    pub fn is_test(&self) -> bool {
        *self == SelectOn::Test
    }
}

/// A precomputed kernel with a method that needs the inputs themselves is refused, saying why;
/// a multi-view method needs one Gram per view.
fn precomputed_fits(method: MethodName, kernel: &KernelSpec) -> Result<()> {
    use crate::kernels::KernelName;
    if kernel.name != KernelName::Precomputed {
        return Ok(());
    }
    let why = match method {
        MethodName::Vvmr => Some(
            "vvmr's graph joins each row to its k nearest neighbours by distance between the \
             inputs, which a Gram matrix does not give",
        ),
        _ => None,
    };
    if let Some(why) = why {
        return Err(crate::OvkError::input(format!(
            "--kernel precomputed does not work with --method {method}: {why}; use krr, okl, \
             lowrank-okl, kde or mvml, or give {method} a kernel function"
        )));
    }
    let per_view = kernel.gram.iter().any(|g| g.view.is_some());
    let multi = methods::find(method).multi_view();
    if multi && !per_view {
        return Err(crate::OvkError::input(format!(
            "{method} learns from several views: give one Gram per view with --gram-view \
             NAME=FILE (repeated), not --gram"
        )));
    }
    if !multi && per_view {
        return Err(crate::OvkError::input(format!(
            "{method} fits one kernel: give --gram FILE, not --gram-view (that is for multi-view \
             methods such as mvml)"
        )));
    }
    Ok(())
}

/// At most this many folds (`--cv K`): each fold is a whole fit.
pub(crate) const MAX_CV_FOLDS: usize = 100;

impl RunConfig {
    /// Check every hyperparameter is valid, before any work is done.
    pub fn validate(&self) -> Result<()> {
        self.checked_method().map(|_| ())
    }

    /// `validate`, returning the method.
    pub(crate) fn checked_method(&self) -> Result<&'static dyn Method> {
        let m = methods::find(self.method);
        self.params.validate(m.name(), m.params())?;
        TEST_FRACTION.check(&Value::Float(self.data.test_fraction))?;
        self.kernel.check()?;
        precomputed_fits(self.method, &self.kernel)?;
        if let Some(k) = self.cv {
            if !(2..=MAX_CV_FOLDS).contains(&k) {
                return Err(crate::OvkError::input(format!(
                    "--cv {k}: cross-validation takes 2 to {MAX_CV_FOLDS} folds"
                )));
            }
            if self.data.cv.is_some() {
                return Err(crate::OvkError::input(
                    "--cv K estimates a configuration over K folds; it cannot be combined with \
                     --cv-fold (one fold of a sweep plan)",
                ));
            }
        }
        Ok(m)
    }

    /// The settings of a configuration that a sweep can vary, flattened to text by key.
    pub fn settings(&self) -> BTreeMap<String, String> {
        let c = self;
        let mut m = BTreeMap::new();
        m.insert("method".into(), c.method.name().into());
        m.insert("kernel".into(), c.kernel.name.name().into());
        if c.kernel.name.uses_sigma() {
            m.insert("sigma".into(), c.kernel.sigma.to_string());
        }
        if c.kernel.name == crate::kernels::KernelName::Polynomial {
            m.insert("degree".into(), c.kernel.degree.to_string());
            m.insert("coef0".into(), c.kernel.coef0.to_string());
        }
        m.insert("input_rank".into(), c.kernel.input_rank.to_string());
        // as a config file spells them
        let d = &c.data;
        for (key, name) in [
            ("landmarks", c.kernel.landmarks.name()),
            ("scale", d.scale.name()),
            ("target_scale", d.target_scale.name()),
            ("class_coding", d.class_coding.name()),
        ] {
            m.insert(key.into(), name.into());
        }
        for (k, v) in &c.params.0 {
            m.insert(k.clone(), v.to_string());
        }
        m
    }

    /// The session name when none is given: `<file stem>-<method>`.
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
