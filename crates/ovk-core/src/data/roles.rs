//! Which columns are features and which are outputs: the user's choice, else the sidecar's,
//! else an error asking for one. Features default to every column that is not an output.

use std::path::Path;

use super::select::resolve;
use super::sidecar::{sidecar_for, sidecar_path, Sidecar};
use super::{DataConfig, Task};
use crate::error::input_at;
use crate::Result;

/// The output columns of a run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OutputColumns {
    Class(usize),
    Targets(Vec<usize>),
}

impl OutputColumns {
    pub fn indices(&self) -> Vec<usize> {
        match self {
            OutputColumns::Class(c) => vec![*c],
            OutputColumns::Targets(t) => t.clone(),
        }
    }
}

/// Column roles resolved against a file.
#[derive(Debug, Clone)]
pub(crate) struct Roles {
    pub features: Vec<usize>,
    pub outputs: OutputColumns,
    /// The task the user (or sidecar) asked for; `None` means infer it from the values.
    pub task: Option<Task>,
    /// The column marking test rows (`--test-column`), never a feature.
    pub test_column: Option<usize>,
}

/// The sidecar, read at most once and only when a default is needed.
pub(crate) struct SidecarCache<'a> {
    data_path: &'a Path,
    loaded: Option<Option<Sidecar>>,
}

impl<'a> SidecarCache<'a> {
    pub fn new(data_path: &'a Path) -> Self {
        SidecarCache {
            data_path,
            loaded: None,
        }
    }

    pub fn get(&mut self) -> Result<Option<&Sidecar>> {
        if self.loaded.is_none() {
            let side = match sidecar_for(self.data_path)? {
                Some(s) => Some(s),
                None => super::implied_roles::implied_roles(self.data_path)?,
            };
            self.loaded = Some(side);
        }
        Ok(self.loaded.as_ref().and_then(|s| s.as_ref()))
    }
}

/// The one class column; a list is most likely several label columns meant as targets.
fn class_column(path: &Path, columns: &[&str], class: &str) -> Result<usize> {
    if class.contains(',') && !columns.contains(&class) {
        return Err(input_at(
            path,
            format!(
                "--class takes one class column, not a list (`{class}`); several label \
                 columns (0/1 or ±1, multi-label) are --targets {class}"
            ),
        ));
    }
    super::select::exact(path, columns, class)
}

pub(crate) fn resolve_roles(
    cfg: &DataConfig,
    columns: &[&str],
    sidecar: &mut SidecarCache,
) -> Result<Roles> {
    let path = cfg.path.as_path();
    if cfg.class.is_some() && cfg.targets.is_some() {
        return Err(input_at(
            path,
            "give either a class column (multi-class) or target columns, not both",
        ));
    }
    let (class, targets, features, task) = if cfg.class.is_some() || cfg.targets.is_some() {
        (
            cfg.class.clone(),
            cfg.targets.clone(),
            cfg.features.clone(),
            cfg.task,
        )
    } else {
        match sidecar.get()? {
            Some(s) if s.class.is_some() || s.targets.is_some() => (
                s.class.clone(),
                s.targets.clone(),
                cfg.features.clone().or_else(|| s.features.clone()),
                cfg.task.or(s.task),
            ),
            found => return Err(no_roles(path, found.is_some())),
        }
    };
    let outputs = match (class, targets) {
        (Some(c), _) => OutputColumns::Class(class_column(path, columns, c.trim())?),
        (None, Some(t)) => OutputColumns::Targets(resolve(path, columns, &t)?),
        (None, None) => return Err(no_roles(path, false)),
    };
    let outputs = match (outputs, task) {
        // One target column asked to be multi-class is a class column.
        (OutputColumns::Targets(t), Some(Task::Multiclass)) if t.len() == 1 => {
            OutputColumns::Class(t[0])
        }
        (OutputColumns::Targets(t), Some(Task::Multiclass)) => {
            return Err(input_at(
                path,
                format!(
                    "task multiclass needs one class column (--class NAME), not {} target columns",
                    t.len()
                ),
            ))
        }
        (OutputColumns::Class(c), Some(t @ (Task::Regression | Task::Multilabel))) => {
            return Err(input_at(
                path,
                format!(
                    "task {} needs target columns (--targets), but `{}` was given as the class column",
                    t.name(),
                    columns[c]
                ),
            ))
        }
        (o, _) => o,
    };
    let mut is_output = vec![false; columns.len()];
    for i in outputs.indices() {
        is_output[i] = true;
    }
    let test_column = match &cfg.test_column {
        Some(name) => {
            let c = super::select::exact(path, columns, name.trim())?;
            if is_output[c] {
                return Err(input_at(
                    path,
                    format!("column `{name}` is chosen both as the test column and as an output"),
                ));
            }
            is_output[c] = true;
            Some(c)
        }
        None => None,
    };
    let features = match features {
        Some(sel) => {
            let f = resolve(path, columns, &sel)?;
            if let Some(&both) = f.iter().find(|&&i| is_output[i]) {
                return Err(input_at(
                    path,
                    format!(
                        "column `{}` is chosen both as a feature and as an output (or the test \
                         column)",
                        columns[both]
                    ),
                ));
            }
            f
        }
        None => (0..columns.len()).filter(|&i| !is_output[i]).collect(),
    };
    if features.is_empty() {
        return Err(input_at(
            path,
            "no feature columns are left once the outputs are taken out",
        ));
    }
    Ok(Roles {
        features,
        outputs,
        task,
        test_column,
    })
}

fn no_roles(path: &Path, has_sidecar: bool) -> crate::OvkError {
    let side = sidecar_path(path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "a sidecar".into());
    let why = if has_sidecar {
        format!("its sidecar {side} names no class or targets")
    } else {
        format!("no sidecar {side} describes this file")
    };
    input_at(
        path,
        format!(
            "say which columns are the outputs: the class column (--class NAME) or the target \
             columns (--targets NAMES); {why}"
        ),
    )
}
