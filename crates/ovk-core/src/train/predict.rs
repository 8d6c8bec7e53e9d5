//! A saved model applied to new rows: read the trained feature columns by name, scale them
//! with the training scaler, predict, and decode classes or labels — the engine behind
//! `ovk predict` and the workbench's Sessions pane.

use std::path::Path;

use ndarray::{Array2, Axis};

use crate::data::{self, OutColumn, Task, TrainedColumns};
use crate::metrics::coding_midpoint;
use crate::session::{self, ModelRecord};
use crate::Result;

/// Predictions for every row of a file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionTable {
    /// The session's output names: one score column each.
    pub output_names: Vec<String>,
    /// rows × outputs: regression values, or class/label scores.
    pub scores: Array2<f64>,
    /// Classification: the decoded prediction beside the scores — one column named after the
    /// class column (multi-class), or `<label>_predicted` 0/1 columns (multi-label).
    pub decoded: Vec<(String, Vec<String>)>,
    /// Rows with a missing feature cell filled in as in training (`--missing impute`).
    pub filled_rows: usize,
    /// When the file holds the model's outputs: the metrics of its predictions on the rows
    /// that have them (the same metrics a run scores its test rows with).
    pub scored: Option<Scored>,
}

/// Predictions scored against the outputs the file holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub metrics: crate::metrics::MetricMap,
    /// The file rows (0-based) that were scored: those with every output present.
    pub rows: Vec<usize>,
}

impl PredictionTable {
    pub fn n_rows(&self) -> usize {
        self.scores.nrows()
    }

    /// Every column, scores first, as a table writer takes them.
    pub fn columns(&self) -> Vec<(String, OutColumn)> {
        let mut cols: Vec<(String, OutColumn)> = self
            .output_names
            .iter()
            .zip(self.scores.axis_iter(Axis(1)))
            .map(|(n, c)| (n.clone(), OutColumn::Numbers(c.to_vec())))
            .collect();
        for (n, v) in &self.decoded {
            cols.push((n.clone(), OutColumn::Text(v.clone())));
        }
        cols
    }
}

/// Apply the model saved in `session_dir` to the rows of `data_path`.
pub fn predict_file(session_dir: &Path, data_path: &Path) -> Result<PredictionTable> {
    let loaded = session::load(session_dir)?;
    let (rec, model) = session::load_model(&loaded)?;
    let r = &loaded.record;
    let trained = TrainedColumns {
        features: &r.feature_names,
        feature_dtypes: &rec.feature_dtypes,
        class: rec
            .class
            .as_ref()
            .map(|c| (c.column.as_str(), c.dtype.as_str(), c.values.as_slice())),
        categories: r.config.data.categories.as_deref().unwrap_or(&[]),
        fill: rec.fill.as_deref(),
        outputs: data::TrainedOutputs {
            task: r.task,
            names: &r.output_names,
            coding: rec.class_coding,
        },
    };
    let data::NewRows {
        mut x,
        filled_rows,
        truth,
    } = data::read_new_rows(data_path, &trained)?;
    rec.scaler.apply(&mut x);
    let scores = model.predict(x.view())?;
    if scores.ncols() != r.output_names.len() {
        return Err(crate::OvkError::input(format!(
            "{}: the model predicts {} outputs but the session names {}",
            session_dir.display(),
            scores.ncols(),
            r.output_names.len()
        )));
    }
    if let Some(i) = scores
        .rows()
        .into_iter()
        .position(|row| row.iter().any(|v| !v.is_finite()))
    {
        return Err(crate::error::input_at(
            data_path,
            format!(
                "the model's prediction for {} is not a finite number: its features lie so far \
                 outside the training data that the kernel overflows",
                data::row_label(i)
            ),
        ));
    }
    let decoded = decode(r.task, &rec, &r.output_names, &scores);
    let scored = truth.map(|t| score_against(r, &rec, &scores, t));
    Ok(PredictionTable {
        output_names: r.output_names.clone(),
        scores,
        decoded,
        filled_rows,
        scored,
    })
}

/// The run's own test metrics, computed on the file's rows that hold every output.
fn score_against(
    r: &session::SessionRecord,
    rec: &ModelRecord,
    scores: &Array2<f64>,
    truth: data::Truth,
) -> Scored {
    let yhat = scores.select(Axis(0), &truth.rows);
    let mut metrics = if truth.rows.is_empty() {
        crate::metrics::MetricMap::new()
    } else {
        crate::metrics::scores(r.task, rec.class_coding, truth.y.view(), yhat.view())
    };
    // Structured outputs (kde) are also scored by their output kernel's RBF loss, in the units
    // the fit saw them (scaled under --target-scale), as the run scored them.
    if let (Some(sigma), false) = (
        r.details.get("output_sigma").and_then(|v| v.as_f64()),
        truth.rows.is_empty(),
    ) {
        let (mut y, mut p) = (truth.y.clone(), yhat.clone());
        if let Some(t) = &rec.target_scaler {
            t.apply(&mut y);
            t.apply(&mut p);
        }
        metrics.insert(
            "rbf_loss".into(),
            crate::metrics::rbf_loss(y.view(), p.view(), sigma),
        );
    }
    Scored {
        metrics,
        rows: truth.rows,
    }
}

/// Classes by argmax (first on ties, as the accuracy metric counts them); labels by the
/// coding's midpoint.
fn decode(
    task: Task,
    rec: &ModelRecord,
    names: &[String],
    scores: &Array2<f64>,
) -> Vec<(String, Vec<String>)> {
    match (task, &rec.class) {
        (Task::Multiclass, Some(class)) => {
            let picked = scores
                .rows()
                .into_iter()
                .map(|row| {
                    let best = row
                        .iter()
                        .enumerate()
                        .fold(
                            (0, f64::NEG_INFINITY),
                            |b, (k, &v)| if v > b.1 { (k, v) } else { b },
                        )
                        .0;
                    class.values[best].clone()
                })
                .collect();
            vec![(class.column.clone(), picked)]
        }
        (Task::Multilabel, _) => {
            let mid = coding_midpoint(rec.class_coding);
            names
                .iter()
                .zip(scores.axis_iter(Axis(1)))
                .map(|(n, c)| {
                    let v = c
                        .iter()
                        .map(|&s| if s > mid { "1" } else { "0" }.to_string());
                    (format!("{n}_predicted"), v.collect())
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

/// Write a prediction table where `out` was planned: CSV or Parquet by the name's extension
/// (CSV on standard output).
pub fn write_predictions(table: &PredictionTable, out: &session::Output) -> Result<()> {
    let format = data::output_format(out.path())?;
    let columns = table.columns();
    out.write_with(|w| data::write_table(w, format, &columns))
}
