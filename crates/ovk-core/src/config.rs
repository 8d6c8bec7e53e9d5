//! A run, fully specified: data choices, method, kernel and hyperparameters. It is what a TOML
//! config holds, what the TUI's panes edit, and what a session stores for replay.

use serde::{Deserialize, Serialize};

use crate::data::options::TEST_FRACTION;
use crate::data::DataConfig;
use crate::kernels::KernelSpec;
use crate::methods::{self, Method, MethodName, Params, Value};
use crate::Result;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    pub data: DataConfig,
    /// Saved as its name (`"lowrank-okl"`).
    pub method: MethodName,
    #[serde(default)]
    pub kernel: KernelSpec,
    #[serde(default)]
    pub params: Params,
    /// Session name; default: `<dataset>-<method>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl RunConfig {
    /// Check every hyperparameter is valid, before any work is done.
    pub fn validate(&self) -> Result<()> {
        self.checked_method().map(|_| ())
    }

    /// `validate`, returning the method.
    pub fn checked_method(&self) -> Result<&'static dyn Method> {
        let m = methods::find(self.method);
        self.params.validate(m.name(), m.params())?;
        TEST_FRACTION.check(&Value::Float(self.data.test_fraction))?;
        self.kernel.check()?;
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
