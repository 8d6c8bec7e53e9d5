//! load → split → scale → kernel → fit → predict → metrics: one run, start to finish, with
//! no terminal in sight. Both faces call `run`.

use ndarray::Array2;

use super::RunConfig;
use crate::methods::Observer;
use crate::session::SessionRecord;
use crate::{OvkError, Result};

/// A finished run: the session record and the matrices to save beside it.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub record: SessionRecord,
    /// (name, matrix): saved as `<name>.npy`; `record.matrices` maps the same names to files.
    pub matrices: Vec<(String, Array2<f64>)>,
}

/// Run `config` to completion, reporting progress to `obs`.
pub fn run(config: &RunConfig, _obs: &mut dyn Observer) -> Result<RunOutcome> {
    config.validate()?;
    Err(OvkError::internal("pipeline not yet wired"))
}
