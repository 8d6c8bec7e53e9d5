//! A sweep's table as a session saves it (`details.sweep`): one row per configuration, its
//! cross-validated score, and which row is best. Running a sweep is `train::sweep`'s job.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One configuration's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// Position in the grid (stable across runs and job counts).
    pub index: usize,
    /// The swept settings, by key (only keys that vary across the grid).
    pub values: BTreeMap<String, String>,
    /// Name of the validation metric and whether higher is better.
    pub metric: String,
    /// True when a larger metric is better (AUC, accuracy); false for errors.
    pub higher_is_better: bool,
    /// Mean and standard deviation of the metric over folds (NaN when a fold failed; JSON
    /// writes NaN as null, so a saved sweep reads null back as NaN).
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub mean: f64,
    /// Sample standard deviation of the metric over the folds.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub sd: f64,
    /// The metric on each fold, in fold order.
    #[serde(deserialize_with = "crate::util::nan::vec")]
    pub fold_scores: Vec<f64>,
    /// Wall-clock seconds spent scoring this configuration.
    #[serde(deserialize_with = "crate::util::nan::f64")]
    pub seconds: f64,
    /// Why the configuration could not be scored, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Successive halving: the last rung it reached (0 first) and the training rows it had.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rung: Option<usize>,
    /// Successive halving: the training rows it had at that rung.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub train_rows: Option<usize>,
}

/// A whole sweep: its rows in grid order and the best row's index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    /// Number of CV folds; `None`: scored on the test part.
    pub folds: Option<usize>,
    /// One row per configuration, in grid order.
    pub rows: Vec<SweepRow>,
    /// Index into `rows` of the best scored row; `None` when none scored.
    pub best: Option<usize>,
    /// True when the sweep was interrupted; the rows hold the configurations that finished.
    pub interrupted: bool,
}

impl SweepResult {
    /// The rows scored so far (any order) as an interrupted sweep's table.
    pub fn interrupted(folds: Option<usize>, mut rows: Vec<SweepRow>) -> SweepResult {
        rows.sort_by_key(|r| r.index);
        let mut result = SweepResult {
            folds,
            rows,
            best: None,
            interrupted: true,
        };
        result.pick_best();
        result
    }

    /// Set `best` to the best row that scored, if any.
    pub(crate) fn pick_best(&mut self) {
        self.best = self
            .ranked()
            .first()
            .filter(|r| r.error.is_none() && r.mean.is_finite())
            .map(|r| r.index);
    }

    /// Rows sorted best first (failed rows last).
    pub fn ranked(&self) -> Vec<&SweepRow> {
        let mut v: Vec<&SweepRow> = self.rows.iter().collect();
        v.sort_by(|a, b| compare(a, b).then(a.index.cmp(&b.index)));
        v
    }
}

/// Later rungs of a halving first, then the better score.
fn compare(a: &SweepRow, b: &SweepRow) -> std::cmp::Ordering {
    let rung = |r: &SweepRow| std::cmp::Reverse(r.rung.unwrap_or(0));
    let key = |r: &SweepRow| {
        if r.error.is_some() || !r.mean.is_finite() {
            f64::INFINITY
        } else if r.higher_is_better {
            -r.mean
        } else {
            r.mean
        }
    };
    rung(a).cmp(&rung(b)).then(key(a).total_cmp(&key(b)))
}
