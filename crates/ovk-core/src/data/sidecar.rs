//! Sidecars: `<stem>.toml` next to a data file says what the file is, where it came from, and
//! which columns play which role, so `ovk run --data datasets/digits.csv --method okl` needs no role flags.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Task;
use crate::error::input_at;
use crate::Result;

/// The description of one data file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sidecar {
    /// What the file is (optional: a generated file may carry only its roles).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Where the data comes from (a citation, a URL, or the generating command).
    pub source: String,
    /// The task the file is meant for, when the sidecar fixes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Task>,
    /// The class column (multi-class).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// Target columns (regression or multi-label); selectors allowed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<Vec<String>>,
    /// Feature columns; selectors allowed. Default: every other column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub features: Option<Vec<String>>,
    /// View name → column-name prefix, or a list of selectors.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub views: BTreeMap<String, ViewSpec>,
}

/// How a sidecar describes a view's columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ViewSpec {
    /// Feature columns named `<prefix>_…` (or the prefix itself).
    Prefix(String),
    /// Column selectors (names, globs, ranges in file order).
    Columns(Vec<String>),
}

/// Where the sidecar of `data_path` would be: same folder, same stem, `.toml`.
pub fn sidecar_path(data_path: &Path) -> Option<PathBuf> {
    let stem = data_path.file_stem()?;
    let mut name = stem.to_os_string();
    name.push(".toml");
    Some(data_path.with_file_name(name))
}

/// A sidecar is a few lines of TOML.
const SIDECAR_CAP: u64 = 1 << 20;

/// The sidecar of `data_path`, if there is one; a malformed sidecar is an error naming it.
pub fn sidecar_for(data_path: &Path) -> Result<Option<Sidecar>> {
    let Some(path) = sidecar_path(data_path) else {
        return Ok(None);
    };
    if let Err(e) = std::fs::metadata(&path) {
        if e.kind() == std::io::ErrorKind::NotFound {
            return Ok(None);
        }
    }
    let bytes = super::files::read_text_file(&path, SIDECAR_CAP, "a dataset sidecar")?;
    let text = String::from_utf8(bytes).map_err(|_| {
        input_at(
            &path,
            "malformed dataset sidecar: not UTF-8 text; save the file as UTF-8",
        )
    })?;
    parse_sidecar(&path, &text).map(Some)
}

/// The sidecar in `text` (read from `path`, which messages name), checked as a run checks it.
pub fn parse_sidecar(path: &Path, text: &str) -> Result<Sidecar> {
    let sidecar: Sidecar = toml::from_str(text)
        .map_err(|e| input_at(path, format!("malformed dataset sidecar: {e}")))?;
    if sidecar.class.is_some() && sidecar.targets.is_some() {
        return Err(input_at(
            path,
            "malformed dataset sidecar: give `class` or `targets`, not both",
        ));
    }
    Ok(sidecar)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("ovk-test-{}-{name}", std::process::id()))
    }

    #[test]
    fn reads_prefix_and_selector_views() {
        let data = temp("side.csv");
        let side = sidecar_path(&data).unwrap();
        std::fs::write(
            &side,
            "description = \"d\"\nsource = \"s\"\ntask = \"multilabel\"\ntargets = [\"label_*\"]\n\
             [views]\na = \"fou\"\nb = [\"x..y\", \"z\"]\n",
        )
        .unwrap();
        let s = sidecar_for(&data).unwrap().unwrap();
        assert_eq!(s.task, Some(Task::Multilabel));
        assert_eq!(s.views["a"], ViewSpec::Prefix("fou".into()));
        assert_eq!(
            s.views["b"],
            ViewSpec::Columns(vec!["x..y".into(), "z".into()])
        );
        std::fs::remove_file(side).unwrap();
        assert!(sidecar_for(&data).unwrap().is_none());
    }

    #[test]
    fn malformed_sidecar_is_named() {
        let data = temp("badside.csv");
        let side = sidecar_path(&data).unwrap();
        std::fs::write(&side, "description = \"d\"\nsource = \"s\"\nclas = \"c\"\n").unwrap();
        let e = sidecar_for(&data).unwrap_err().to_string();
        std::fs::remove_file(&side).unwrap();
        assert!(
            e.contains("badside.toml") && e.contains("malformed dataset sidecar"),
            "{e}"
        );
        assert!(e.contains("clas"), "{e}");
    }
}
