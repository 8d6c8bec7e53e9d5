//! The parts of a run's `details` that the faces read, typed. A session saves `details` as the
//! JSON map it has always held (so sessions saved before these types keep loading); the
//! writers name its keys through [`key`] and the readers go through [`Details`], one typed
//! reading per key, parsed only when asked — a map may hold per-output tables of 10⁵ entries.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

use super::sweep_table::SweepResult;
pub use crate::methods::details::AxisBlock;
pub use crate::methods::details::FactorRecord;
pub use crate::methods::details::MatrixAxes;
pub use crate::methods::details::{key, DeclaredAxis};
use crate::metrics::PartDiagnostics;

/// A run's `details`, read through types.
#[derive(Debug, Clone, Copy)]
pub struct Details<'a> {
    map: &'a Map<String, Json>,
}

/// A run's memory: the estimate it was admitted on and the peak measured as it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    /// The admission estimate of the peak, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_peak_bytes: Option<u64>,
    /// The same, as text ("1.2 GiB").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimated_peak: Option<String>,
    /// The measuring process's peak resident set, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_peak_rss_bytes: Option<u64>,
    /// The measuring process's resident set as the run started, before loading: the part of
    /// the peak the estimate leaves out (the program itself), in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process_base_rss_bytes: Option<u64>,
    /// "worker" when the process ran nothing but this fit; absent when it was the whole
    /// process (older sessions, the CLI).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub process: Option<String>,
}

impl Memory {
    /// The record as `details.memory` holds it.
    pub(crate) fn to_json(&self) -> Json {
        serde_json::to_value(self).unwrap_or(Json::Null)
    }

    /// `process` when the measuring process ran only this fit.
    pub(crate) const WORKER: &'static str = "worker";

    /// True when the measured peak is the fit's own process's.
    pub fn measured_in_worker(&self) -> bool {
        self.process.as_deref() == Some(Self::WORKER)
    }
}

/// What a run saved of one part's diagnostics.
#[derive(Debug, Clone)]
pub enum SavedDiagnostics {
    /// The run saved no diagnostics at all (a session older than them).
    NotSaved,
    /// The run saved diagnostics, but none for this part (it had no labelled rows).
    PartAbsent,
    /// The part's diagnostics.
    Saved(Box<PartDiagnostics>),
    /// Saved, but they do not read as diagnostics; the reason.
    Unreadable(String),
}

/// A λ path's rows, as saved, and which of them the run kept.
#[derive(Debug, Clone, PartialEq)]
pub struct PathTable {
    /// One object per λ, in path order (its fields depend on the method's version).
    pub rows: Vec<Map<String, Json>>,
    /// The row whose λ (and rank, where rows have one) the run kept.
    pub kept: Option<usize>,
}

impl<'a> Details<'a> {
    /// Read `map` (a record's `details`).
    pub fn of(map: &'a Map<String, Json>) -> Details<'a> {
        Details { map }
    }

    /// The OKL solver's name, where the fit recorded it.
    pub fn solver(&self) -> Option<&'a str> {
        self.map.get(key::SOLVER)?.as_str()
    }

    /// How the fit labelled matrix `name`'s rows and columns, if it did and they read.
    pub fn axes(&self, name: &str) -> Option<MatrixAxes> {
        let a = self.map.get(key::AXES)?.get(name)?;
        MatrixAxes::deserialize(a).ok()
    }

    /// The view names of a multi-view fit (empty for other fits).
    pub fn views(&self) -> Vec<String> {
        self.strings(key::VIEWS)
    }

    /// Each view's kernel as the fit printed it, in view order (empty for other fits).
    pub(crate) fn view_kernels(&self) -> Vec<String> {
        self.strings(key::VIEW_KERNELS)
    }

    /// Each view's kernel width: `view_sigmas` where saved, else read from `views` paired with
    /// `view_kernels` (`gaussian(σ=9.1234)`), as sessions saved before `view_sigmas` hold them.
    pub fn view_sigmas(&self) -> Vec<(String, f64)> {
        if let Some(Json::Object(m)) = self.map.get(key::VIEW_SIGMAS) {
            return m
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                .collect();
        }
        let (names, kernels) = (self.views(), self.view_kernels());
        if names.len() != kernels.len() {
            return Vec::new();
        }
        names
            .into_iter()
            .zip(kernels)
            .filter_map(|(n, k)| Some((n, sigma_in_text(&k)?)))
            .collect()
    }

    /// View `view`'s width, where the fit recorded one.
    pub fn view_sigma(&self, view: &str) -> Option<f64> {
        self.view_sigmas()
            .into_iter()
            .find_map(|(n, s)| (n == view).then_some(s))
    }

    /// The diagnostics saved for `part` ("train" or "test").
    pub fn diagnostics(&self, part: &str) -> SavedDiagnostics {
        let Some(all) = self.map.get(key::DIAGNOSTICS) else {
            return SavedDiagnostics::NotSaved;
        };
        match all.get(part) {
            None => SavedDiagnostics::PartAbsent,
            Some(v) => match PartDiagnostics::deserialize(v) {
                Ok(d) => SavedDiagnostics::Saved(Box::new(d)),
                Err(e) => SavedDiagnostics::Unreadable(e.to_string()),
            },
        }
    }

    /// A sweep's table, if the run was a sweep's kept configuration and the table reads.
    pub fn sweep(&self) -> Option<SweepResult> {
        SweepResult::deserialize(self.map.get(key::SWEEP)?).ok()
    }

    /// A λ path's rows and the one kept, if the run walked a path.
    pub fn path(&self) -> Option<PathTable> {
        let rows: Vec<Map<String, Json>> = self
            .map
            .get(key::PATH)?
            .as_array()?
            .iter()
            .filter_map(|r| r.as_object().cloned())
            .collect();
        let number = |m: &Map<String, Json>, k: &str| m.get(k).and_then(Json::as_f64);
        let (lambda, rank) = (number(self.map, key::LAMBDA), number(self.map, key::RANK));
        let kept = rows.iter().position(|r| {
            lambda.is_some()
                && number(r, key::LAMBDA) == lambda
                && (!r.contains_key(key::RANK) || (rank.is_some() && number(r, key::RANK) == rank))
        });
        Some(PathTable { rows, kept })
    }

    /// The estimated and measured memory, if the run recorded them.
    pub fn memory(&self) -> Option<Memory> {
        Memory::deserialize(self.map.get(key::MEMORY)?).ok()
    }

    /// The low-rank input factor's summary, if the fit used one and it reads.
    pub fn input_factor(&self) -> Option<FactorRecord> {
        FactorRecord::deserialize(self.map.get(key::INPUT_FACTOR)?).ok()
    }

    /// The input factor's summary as saved (printed as is by `--json`).
    pub fn input_factor_json(&self) -> Option<&'a Json> {
        self.map.get(key::INPUT_FACTOR)
    }

    /// The memory record as saved (printed as is by `--json`).
    pub fn memory_json(&self) -> Option<&'a Json> {
        self.map.get(key::MEMORY)
    }

    fn strings(&self, k: &str) -> Vec<String> {
        self.map
            .get(k)
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The number after `σ=` in a kernel's text, e.g. 9.1234 in `gaussian(σ=9.1234)`.
fn sigma_in_text(text: &str) -> Option<f64> {
    let at = text.find("σ=")? + "σ=".len();
    let num: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || ".-+eE".contains(*c))
        .collect();
    num.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::details::axes_json;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn map(v: Json) -> Map<String, Json> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn axes_read_labels_and_blocks_and_numbers_as_text() {
        let d = map(json!({"axes": {
            "metric": {"rows": {"blocks": [{"name": "x", "size": 2}]}, "cols": {"labels": [1, "b"]}}
        }}));
        let a = Details::of(&d).axes("metric").unwrap();
        assert_eq!(
            a.rows.unwrap().blocks.unwrap(),
            vec![AxisBlock {
                name: "x".into(),
                size: 2
            }]
        );
        assert_eq!(a.cols.unwrap().labels.unwrap(), vec!["1", "b"]);
        assert!(Details::of(&d).axes("other").is_none());
    }

    #[test]
    fn written_axes_read_back() {
        let mut axes = BTreeMap::new();
        axes.insert(
            "w".to_string(),
            MatrixAxes {
                rows: Some(DeclaredAxis::labels(vec!["a".into()])),
                cols: Some(DeclaredAxis::blocks(vec![AxisBlock {
                    name: "v".into(),
                    size: 3,
                }])),
            },
        );
        let d = map(json!({ "axes": axes_json(&axes) }));
        assert_eq!(Details::of(&d).axes("w"), axes.get("w").cloned());
    }

    #[test]
    fn view_sigmas_fall_back_to_the_kernels_text() {
        let d = map(json!({"views": ["a", "b"], "view_kernels": ["gaussian(σ=2.5)", "linear"]}));
        assert_eq!(Details::of(&d).view_sigmas(), vec![("a".to_string(), 2.5)]);
        let d = map(json!({"views": ["a"], "view_sigmas": {"a": 3.0}}));
        assert_eq!(Details::of(&d).view_sigma("a"), Some(3.0));
        assert_eq!(Details::of(&d).view_sigma("b"), None);
    }

    #[test]
    fn the_kept_path_row_matches_lambda_and_rank() {
        let d = map(json!({"lambda": 0.5, "rank": 2, "path": [
            {"lambda": 1.0, "rank": 2}, {"lambda": 0.5, "rank": 3}, {"lambda": 0.5, "rank": 2}
        ]}));
        let p = Details::of(&d).path().unwrap();
        assert_eq!((p.rows.len(), p.kept), (3, Some(2)));
        let d = map(json!({"path": [{"lambda": 1.0}]}));
        assert_eq!(Details::of(&d).path().unwrap().kept, None);
    }

    #[test]
    fn diagnostics_say_whether_they_were_saved() {
        let none = map(json!({}));
        assert!(matches!(
            Details::of(&none).diagnostics("test"),
            SavedDiagnostics::NotSaved
        ));
        let d = map(json!({"diagnostics": {"train": 3}}));
        assert!(matches!(
            Details::of(&d).diagnostics("test"),
            SavedDiagnostics::PartAbsent
        ));
        assert!(matches!(
            Details::of(&d).diagnostics("train"),
            SavedDiagnostics::Unreadable(_)
        ));
    }

    #[test]
    fn memory_knows_a_worker_measured_it() {
        let d = map(json!({"memory": {"process_peak_rss_bytes": 5, "process": "worker"}}));
        let m = Details::of(&d).memory().unwrap();
        assert!(m.measured_in_worker());
        assert_eq!(m.process_peak_rss_bytes, Some(5));
    }
}
