//! A saved model applied to new rows: read the trained feature columns by name, scale them
//! with the training scaler, predict, and decode classes or labels — the engine behind
//! `ovk predict` and the workbench's Sessions pane.

use std::ops::Range;
use std::path::{Path, PathBuf};

use ndarray::{s, Array2, Axis};

use crate::data::{self, OutColumn, Task, TrainedColumns};
use crate::kernels::{check_fits_or, usable_bytes, GramFile, Kernel};
use crate::linalg::select_rows;
use crate::methods::Model;
use crate::metrics::coding_midpoint;
use crate::session::{self, ModelRecord};
use crate::{OvkError, Result};

/// Predictions for every row of a file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct PredictionTable {
    /// The session's output names: one score column each.
    pub output_names: Vec<String>,
    /// rows × outputs: regression values, or class/label scores.
    pub scores: Array2<f64>,
    /// Classification: the decoded prediction — one column named after the class column
    /// (multi-class), or one 0/1 column per label named after the label (multi-label).
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
    /// The scores, by metric name.
    pub metrics: crate::metrics::MetricMap,
    /// The file rows (0-based) that hold every output: their true values are shown.
    pub rows: Vec<usize>,
    /// Of those, the rows that trained the model — the file is the very one it was fitted on
    /// (same SHA-256) — left out of `metrics`, which come from the other rows only, so a score
    /// on the training table is the held-out score and never an optimistic one.
    pub trained_left_out: usize,
    /// The true values on those rows, named and decoded like the predictions (`<output>`: a
    /// regression value, a label's 0/1, the class), for showing them side by side.
    pub truth: Vec<(String, Vec<String>)>,
}

impl PredictionTable {
    /// Number of predicted rows.
    pub fn n_rows(&self) -> usize {
        self.scores.nrows()
    }

    /// Every column, as a table writer takes them and the workbench shows them: one naming,
    /// `<output>` for the predicted value and `<output>_score` for a classifier's score —
    /// regression `y0`; multi-label `label_a`, `label_a_score`, … (each label beside its
    /// score); multi-class the class column, then `species=setosa_score`, ….
    pub fn columns(&self) -> Vec<(String, OutColumn)> {
        let score =
            |k: usize, name: String| (name, OutColumn::Numbers(self.scores.column(k).to_vec()));
        let text = |(n, v): &(String, Vec<String>)| (n.clone(), OutColumn::Text(v.clone()));
        let names = &self.output_names;
        if self.decoded.is_empty() {
            return (0..names.len())
                .map(|k| score(k, names[k].clone()))
                .collect();
        }
        if self.decoded.len() == names.len() {
            return (0..names.len())
                .flat_map(|k| {
                    [
                        text(&self.decoded[k]),
                        score(k, format!("{}_score", names[k])),
                    ]
                })
                .collect();
        }
        let mut cols: Vec<(String, OutColumn)> = self.decoded.iter().map(text).collect();
        cols.extend((0..names.len()).map(|k| score(k, format!("{}_score", names[k]))));
        cols
    }
}

/// A session's model with the rows of one file read and scaled, ready to predict them whole
/// or a block of rows at a time.
pub struct Prediction {
    session_dir: PathBuf,
    data_path: PathBuf,
    record: session::SessionRecord,
    rec: ModelRecord,
    model: Box<dyn Model>,
    /// The feature columns of every row, scaled as in training.
    x: Array2<f64>,
    filled_rows: usize,
    /// The outputs the file holds, when it holds them: the whole prediction is scored on them.
    truth: Option<data::Truth>,
    /// When the file is the one the model was fitted on: its training rows (sorted), which
    /// the score leaves out.
    trained_rows: Option<Vec<usize>>,
    /// The file's columns the model does not read.
    ignored: Vec<String>,
    /// Numbers the model holds per predicted row besides the result (`load_model_sized`).
    work_per_row: usize,
    /// A precomputed kernel's model: whether `x` holds the new-rows Gram yet (`with_gram`).
    gram_given: bool,
}

/// Copies of a block's scores on the way out: the scores, their columns, the writer's frame
/// and its encoding.
const RESULT_COPIES: u64 = 4;

/// Bytes of one decoded label cell (a `String` and its text).
const TEXT_CELL_BYTES: u64 = 32;

/// How many rows to predict at a time, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Batching {
    /// Rows predicted per block.
    pub rows: usize,
    /// Set when the whole would not fit and the block size was chosen here: what the whole
    /// would need, for the note that says so.
    pub chosen_because: Option<u64>,
}

impl Prediction {
    /// Load the model saved in `session_dir` and read the rows of `data_path` for it.
    pub fn prepare(session_dir: &Path, data_path: &Path) -> Result<Prediction> {
        let loaded = session::load(session_dir)?;
        let (rec, model, work_per_row) = session::load_model_sized(&loaded)?;
        // The rows a kernel expansion was fitted on, to recognise them in another file.
        let x_train = loaded
            .record
            .matrices
            .contains_key(&session::model_matrix_name("x_train"))
            .then(|| loaded.matrix(&session::model_matrix_name("x_train")))
            .transpose()?;
        let r = loaded.record;
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
            sparse: r.dataset.packed_width.is_some(),
        };
        let data::NewRows {
            mut x,
            sparse,
            filled_rows,
            truth,
            ignored,
        } = data::read_new_rows(data_path, &trained)?;
        match (&sparse, r.dataset.packed_width) {
            // As wide as the training rows, so that a training row packs to the same bits.
            (Some(block), Some(width)) => x = block.pack_all(&rec.scaler, width),
            _ => rec.scaler.apply(&mut x),
        }
        // Hashing is only worth it when there is something to score.
        let trained_rows = match &truth {
            Some(_) if data::sha256_file(data_path)? == r.dataset.sha256 => {
                let mut rows = r.split.train.clone();
                rows.sort_unstable();
                Some(rows)
            }
            Some(_) => x_train.map(|xt| rows_seen_in_training(&x, &xt)),
            None => None,
        };
        Ok(Prediction {
            session_dir: session_dir.to_path_buf(),
            data_path: data_path.to_path_buf(),
            record: r,
            rec,
            model,
            x,
            filled_rows,
            truth,
            trained_rows,
            ignored,
            work_per_row,
            gram_given: false,
        })
    }

    /// Whether the model's kernel is precomputed: it predicts from the kernel between the new
    /// rows and the training rows (`with_gram`), not from the rows' features.
    pub fn needs_gram(&self) -> bool {
        self.record.kernel.resolved == Kernel::Precomputed
    }

    /// A precomputed model's inputs from new-rows Gram files, each n_new × n_train (new rows
    /// in the file's order, training rows in the session's `split.train` order): one file, or
    /// one per view named as in training.
    pub fn with_gram(mut self, given: &[GramFile]) -> Result<Self> {
        if !self.needs_gram() {
            return Err(OvkError::input(format!(
                "--gram: the session's kernel is {}, not precomputed; leave --gram out",
                self.record.kernel.resolved
            )));
        }
        let n_train = self.record.split.train.len();
        let width = 1 + n_train + self.record.split.test.len();
        let mut grams = Vec::new();
        for trained in &self.record.kernel.spec.gram {
            let file = given
                .iter()
                .find(|g| g.view == trained.view)
                .ok_or_else(|| gram_advice(&self.record, trained.view.as_deref()))?;
            let k = super::gram::read_gram(&file.path, "new-rows Gram matrix")?;
            let (r, c) = k.dim();
            if (r, c) != (self.x.nrows(), n_train) {
                return Err(OvkError::input(format!(
                    "Gram matrix {} is {r} × {c}, but predicting needs the kernel between the {} \
                     rows of {} and the session's {n_train} training rows ({} × {n_train}, \
                     columns in the order of the session's split.train)",
                    file.path.display(),
                    self.x.nrows(),
                    self.data_path.display(),
                    self.x.nrows()
                )));
            }
            if let Some(((i, j), v)) = k.indexed_iter().find(|(_, v)| !v.is_finite()) {
                return Err(OvkError::input(format!(
                    "Gram matrix {} holds {v} at [{i}, {j}]; a Gram matrix must be finite",
                    file.path.display()
                )));
            }
            grams.push((file.clone(), k));
        }
        if let Some(odd) = given.iter().find(|g| {
            !self
                .record
                .kernel
                .spec
                .gram
                .iter()
                .any(|t| t.view == g.view)
        }) {
            return Err(OvkError::input(format!(
                "Gram matrix {} is for {}, which the session's model does not have",
                odd.path.display(),
                odd.view
                    .as_ref()
                    .map_or("a single kernel".to_string(), |v| format!("view '{v}'"))
            )));
        }
        self.x = super::gram::new_inputs(&grams, width)?;
        self.gram_given = true;
        Ok(self)
    }

    /// Number of rows read from the file.
    pub fn n_rows(&self) -> usize {
        self.x.nrows()
    }

    /// The model's output names, in prediction column order.
    pub fn output_names(&self) -> &[String] {
        &self.record.output_names
    }

    /// Whether the file holds the model's outputs (a whole prediction is then scored).
    pub fn holds_outputs(&self) -> bool {
        self.truth.is_some()
    }

    /// Rows with a missing feature cell filled in as in training (`--missing impute`).
    pub fn filled_rows(&self) -> usize {
        self.filled_rows
    }

    /// Bytes a block of predicted rows needs per row: the model's work, the scores and their
    /// copies on the way out, and the decoded labels.
    pub(crate) fn bytes_per_row(&self) -> u64 {
        let m = self.record.output_names.len() as u64;
        let numbers = (self.work_per_row as u64)
            .saturating_add(self.x.ncols() as u64)
            .saturating_add(m.saturating_mul(RESULT_COPIES));
        let text = match self.record.task {
            Task::Multilabel => m.saturating_mul(TEXT_CELL_BYTES),
            Task::Multiclass => TEXT_CELL_BYTES,
            _ => 0,
        };
        numbers.saturating_mul(8).saturating_add(text)
    }

    fn bytes_for(&self, rows: usize) -> u64 {
        (rows as u64).saturating_mul(self.bytes_per_row())
    }

    fn what(&self, rows: usize) -> String {
        format!(
            "predicting {rows} row{} × {} outputs",
            if rows == 1 { "" } else { "s" },
            self.record.output_names.len()
        )
    }

    /// The block size: `asked` (`--batch-rows`), checked against the memory guard; else every
    /// row at once when that fits, else the most rows that fit (and what the whole needs).
    pub fn batching(&self, asked: Option<usize>) -> Result<Batching> {
        let n = self.n_rows().max(1);
        if let Some(b) = asked {
            if b == 0 {
                return Err(OvkError::input("--batch-rows must be at least 1"));
            }
            let rows = b.min(n);
            let fitting = self.rows_that_fit()?;
            check_fits_or(
                self.bytes_for(rows),
                &self.what(rows),
                &match fitting {
                    Some(0) | None => "even one row does not fit".to_string(),
                    Some(k) => format!("give a smaller --batch-rows (at most {k} rows fit)"),
                },
            )?;
            return Ok(Batching {
                rows,
                chosen_because: None,
            });
        }
        let whole = self.bytes_for(n);
        match self.rows_that_fit()? {
            Some(k) if k < n => {
                if k == 0 {
                    check_fits_or(
                        self.bytes_for(1),
                        &self.what(1),
                        "even one row of the result does not fit: predict on a machine with \
                         more memory",
                    )?;
                }
                Ok(Batching {
                    rows: k.max(1),
                    chosen_because: Some(whole),
                })
            }
            _ => Ok(Batching {
                rows: n,
                chosen_because: None,
            }),
        }
    }

    /// The most rows whose prediction fits the memory guard (`None`: no budget is known).
    fn rows_that_fit(&self) -> Result<Option<usize>> {
        Ok(usable_bytes()?.map(|b| {
            let k = b / self.bytes_per_row().max(1);
            usize::try_from(k).unwrap_or(usize::MAX)
        }))
    }

    /// Predictions for the rows `rows` (in file order), decoded.
    pub fn block(&self, rows: Range<usize>) -> Result<PredictionTable> {
        if self.needs_gram() && !self.gram_given {
            return Err(gram_advice(&self.record, None));
        }
        let scores = self.model.predict(self.x.slice(s![rows.clone(), ..]))?;
        if scores.ncols() != self.record.output_names.len() {
            return Err(crate::OvkError::input(format!(
                "{}: the model predicts {} outputs but the session names {}",
                self.session_dir.display(),
                scores.ncols(),
                self.record.output_names.len()
            )));
        }
        if let Some(i) = scores
            .rows()
            .into_iter()
            .position(|row| row.iter().any(|v| !v.is_finite()))
        {
            return Err(crate::error::input_at(
                &self.data_path,
                format!(
                    "the model's prediction for {} is not a finite number: its features lie so \
                     far outside the training data that the kernel overflows",
                    data::row_label(rows.start + i)
                ),
            ));
        }
        let names = &self.record.output_names;
        let decoded = decode(self.record.task, &self.rec, names, &scores);
        Ok(PredictionTable {
            output_names: names.clone(),
            scores,
            decoded,
            filled_rows: self.filled_rows,
            scored: None,
        })
    }

    /// Predictions for every row, scored against the outputs the file holds, if it holds them.
    pub fn whole(self) -> Result<PredictionTable> {
        let mut table = self.block(0..self.n_rows())?;
        let trained = self.trained_rows.as_deref().unwrap_or(&[]);
        table.scored = self
            .truth
            .map(|t| score_against(&self.record, &self.rec, &table.scores, t, trained));
        Ok(table)
    }

    /// Predict `batch` rows at a time and write each block as it is made, so only one block is
    /// ever in memory: CSV rows as they come, Parquet a row group per block.
    pub fn write_blocks(&self, batch: usize, out: &session::Output) -> Result<()> {
        let format = data::output_format(out.path())?;
        let n = self.n_rows();
        if batch >= n {
            return write_predictions(&self.block(0..n)?, out);
        }
        // A prediction that fails half-way stops the writing; its own error is the one reported.
        let mut failed = None;
        let written = out.write_with(|w| {
            let mut blocks = data::BlockWriter::new(w, format);
            for start in (0..n).step_by(batch.max(1)) {
                let table = match self.block(start..(start + batch).min(n)) {
                    Ok(t) => t,
                    Err(e) => {
                        failed = Some(e);
                        return Err(std::io::Error::other("the prediction failed"));
                    }
                };
                blocks.write(&table.columns())?;
            }
            blocks.finish()
        });
        match failed {
            Some(e) => Err(e),
            None => written,
        }
    }
}

/// Apply the model saved in `session_dir` to the rows of `data_path`, the whole result in
/// memory (the workbench shows it): refused, with the figure, when it would not fit — `ovk
/// predict` writes such a result in blocks.
pub fn predict_file(session_dir: &Path, data_path: &Path) -> Result<PredictionTable> {
    predict_file_noting(session_dir, data_path).map(|(table, _)| table)
}

/// `predict_file`, and the file's columns the model ignores (neither a feature nor an output):
/// a model applied to another data set's table may share a few of its columns.
pub fn predict_file_noting(
    session_dir: &Path,
    data_path: &Path,
) -> Result<(PredictionTable, Vec<String>)> {
    let p = Prediction::prepare(session_dir, data_path)?;
    let n = p.n_rows();
    check_fits_or(
        p.bytes_for(n),
        &p.what(n),
        &format!(
            "predict in blocks of rows with `ovk predict {} --data {} --out FILE` (it writes a \
             block at a time; --batch-rows N sets the block)",
            session_dir.display(),
            data_path.display()
        ),
    )?;
    let ignored = p.ignored.clone();
    p.whole().map(|t| (t, ignored))
}

/// The refusal of a precomputed model's prediction without the new-rows Gram it needs.
fn gram_advice(record: &session::SessionRecord, view: Option<&str>) -> OvkError {
    let n_train = record.split.train.len();
    let flags = match view {
        Some(v) => format!("--gram-view {v}=K_new.npy (one per view: {})", {
            let names: Vec<&str> = record
                .kernel
                .spec
                .gram
                .iter()
                .filter_map(|g| g.view.as_deref())
                .collect();
            names.join(", ")
        }),
        None if record.kernel.spec.gram.iter().any(|g| g.view.is_some()) => {
            "--gram-view NAME=K_new.npy per view".to_string()
        }
        None => "--gram K_new.npy".to_string(),
    };
    OvkError::input(format!(
        "session '{}' was fitted on a precomputed kernel: predicting needs the kernel between the \
         new rows and its {n_train} training rows (n_new × {n_train}, columns in the order of the \
         session's split.train); give {flags}",
        record.name
    ))
}

/// The rows of `x` (sorted) whose scaled features equal, bit for bit, a row the model was
/// fitted on: the training table in another file (a TSV copy of the CSV) is recognised too. A
/// held-out row identical to a training row is left out with them — it was seen in training.
fn rows_seen_in_training(x: &Array2<f64>, x_train: &Array2<f64>) -> Vec<usize> {
    use crate::kernels::packed;
    // Packed sparse rows are compared without their padding: new rows may pack wider.
    let packed = packed::is_packed(x.view()) && packed::is_packed(x_train.view());
    if x.ncols() != x_train.ncols() && !packed {
        return Vec::new();
    }
    let key = |row: ndarray::ArrayView1<f64>| match row.as_slice() {
        Some(r) => packed::content_bits(r),
        None => row.iter().map(|v| v.to_bits()).collect(),
    };
    let seen: std::collections::HashSet<Vec<u64>> = x_train.rows().into_iter().map(key).collect();
    x.rows()
        .into_iter()
        .enumerate()
        .filter(|(_, row)| seen.contains(&key(*row)))
        .map(|(i, _)| i)
        .collect()
}

/// The run's own test metrics, computed on the file's rows that hold every output, except the
/// `trained` rows (sorted; the model's training rows when the file is its training table).
fn score_against(
    r: &session::SessionRecord,
    rec: &ModelRecord,
    scores: &Array2<f64>,
    truth: data::Truth,
    trained: &[usize],
) -> Scored {
    // Positions in `truth` of the rows that did not train the model.
    let held: Vec<usize> = (0..truth.rows.len())
        .filter(|&k| trained.binary_search(&truth.rows[k]).is_err())
        .collect();
    let file_rows: Vec<usize> = held.iter().map(|&k| truth.rows[k]).collect();
    let yhat = select_rows(scores.view(), &file_rows);
    let y = select_rows(truth.y.view(), &held);
    let mut metrics = if held.is_empty() {
        crate::metrics::MetricMap::new()
    } else {
        crate::metrics::scores(r.task, rec.class_coding, y.view(), yhat.view())
    };
    // Structured outputs (kde) are also scored by their output kernel's RBF loss, in the units
    // the fit saw them (scaled under --target-scale), as the run scored them.
    if let (Some(sigma), false) = (
        r.details.get("output_sigma").and_then(|v| v.as_f64()),
        held.is_empty(),
    ) {
        let (mut y, mut p) = (y, yhat);
        if let Some(t) = &rec.target_scaler {
            t.apply(&mut y);
            t.apply(&mut p);
        }
        metrics.insert(
            "rbf_loss".into(),
            crate::metrics::rbf_loss(y.view(), p.view(), sigma),
        );
    }
    let decoded = decode(r.task, rec, &r.output_names, &truth.y);
    let shown = if decoded.is_empty() {
        r.output_names
            .iter()
            .zip(truth.y.axis_iter(Axis(1)))
            .map(|(n, c)| (n.clone(), c.iter().map(|v| v.to_string()).collect()))
            .collect()
    } else {
        decoded
    };
    Scored {
        metrics,
        trained_left_out: truth.rows.len() - held.len(),
        rows: truth.rows,
        truth: shown,
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
                    (n.clone(), v.collect())
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
