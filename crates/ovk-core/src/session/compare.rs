//! N saved runs side by side — what `ovk compare` prints and the Sessions pane shows: every
//! metric with the best run marked, each output's own metric, paired tests per metric for runs
//! cross-validated on the same folds, and the difference of two runs' output kernels.

use ndarray::{Array2, Axis};
use serde::{Deserialize, Serialize};

use super::{CvStat, Loaded, RunStatus, SessionRecord};
use crate::data::Task;
use crate::metrics::{self, paired_tests, PairedTest};
use crate::{OvkError, Result};

/// What folds do to the p-values, said beside every paired test.
pub(crate) const PAIRED_CAVEAT: &str = "the folds share training rows, so their scores are not \
    independent: both tests overstate significance (Nadeau & Bengio 2003); read a small p as \
    a hint, not a proof";

/// One run's column.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunColumn {
    /// The run's id.
    pub id: String,
    /// The run's name.
    pub name: String,
    /// The method's name.
    pub method: String,
    /// File name of the data it was fitted on.
    pub dataset: String,
    /// The task it solved.
    pub task: Task,
    /// The rows it was fitted and scored on (equal ids: same rows).
    pub split: String,
    /// Its `--cv` folds, when it was cross-validated.
    pub folds: Option<String>,
    /// Why its test metrics are optimistic, when they are.
    pub optimistic: Option<String>,
}

/// One metric across the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricRow {
    /// `test` (scored once on the test rows) or `cv` (mean over the folds).
    pub part: String,
    /// The metric's name.
    pub metric: String,
    /// True when a larger value is better.
    pub higher_is_better: bool,
    /// One per run, `None` where the run lacks it.
    pub values: Vec<Option<f64>>,
    /// `cv` rows: the sd over the folds.
    pub sd: Vec<Option<f64>>,
    /// The best run (ties: the first), when two or more have the metric.
    pub best: Option<usize>,
}

/// Each output's own metric on the test rows, per run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PerOutput {
    /// `auc` (multi-label), `r2` (regression) or `recall` (multi-class, per class).
    pub metric: String,
    /// Output names, in model order.
    pub outputs: Vec<String>,
    /// `values[output][run]`.
    pub values: Vec<Vec<Option<f64>>>,
    /// Per output, the best run (ties: the first), when two or more have a value.
    pub best: Vec<Option<usize>>,
}

/// The paired tests of two runs on one cross-validated metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedRow {
    /// The metric's name.
    pub metric: String,
    /// Column indices of the two runs; the difference is a − b.
    pub a: usize,
    /// Column index of the second run.
    pub b: usize,
    /// The t and Wilcoxon tests on the per-fold differences.
    pub test: PairedTest,
}

/// The comparison of N runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// One column per run, in the order given.
    pub runs: Vec<RunColumn>,
    /// One row per metric, each run's value in it.
    pub metrics: Vec<MetricRow>,
    /// Per-output scores side by side, when the runs share their outputs.
    pub per_output: Option<PerOutput>,
    /// Paired tests between runs cross-validated on the same folds.
    pub paired: Vec<PairedRow>,
    /// Said beside the paired tests, when there are any.
    pub caveat: Option<String>,
    /// Output kernel of run 0 minus run 1, when exactly two runs share their outputs and both
    /// saved one.
    #[serde(skip)]
    pub kernel_difference: Option<Array2<f64>>,
    /// What the reader should know: runs scored on different rows, runs without folds …
    pub notes: Vec<String>,
}

/// Whether a larger value of `metric` is better.
pub fn higher_is_better(metric: &str) -> bool {
    matches!(metric, "accuracy" | "mean_auc" | "r2" | "auc" | "recall")
}

/// Compare `runs` (two or more finished sessions).
pub fn compare(runs: &[Loaded]) -> Result<Comparison> {
    if runs.len() < 2 {
        return Err(OvkError::input("compare needs two or more sessions"));
    }
    for l in runs {
        if l.record.status == RunStatus::Cancelled {
            return Err(OvkError::input(format!(
                "session {} was cancelled: it has no metrics to compare",
                l.record.id
            )));
        }
    }
    let records: Vec<&SessionRecord> = runs.iter().map(|l| &l.record).collect();
    let columns: Vec<RunColumn> = records.iter().map(|r| column(r)).collect();
    let mut notes = Vec::new();
    let splits: std::collections::BTreeSet<&String> = columns.iter().map(|c| &c.split).collect();
    if splits.len() > 1 {
        notes.push(format!(
            "the runs were scored on {} different sets of rows (see their split ids): their test \
             metrics do not compare like for like",
            splits.len()
        ));
    }
    let metrics = metric_rows(&records);
    let paired = paired_rows(&records, &columns, &mut notes);
    let per_output = per_output(runs, &records)?;
    let kernel_difference = kernel_difference(runs, &records)?;
    Ok(Comparison {
        caveat: (!paired.is_empty()).then(|| PAIRED_CAVEAT.to_string()),
        runs: columns,
        metrics,
        per_output,
        paired,
        kernel_difference,
        notes,
    })
}

fn column(r: &SessionRecord) -> RunColumn {
    RunColumn {
        id: r.id.clone(),
        name: r.name.clone(),
        method: r.method.clone(),
        dataset: r
            .dataset
            .path
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
        task: r.task,
        split: r.split.id_or_computed(&r.dataset.sha256),
        folds: r.split.folds.as_ref().map(|f| f.id.clone()),
        optimistic: r.optimistic.as_ref().map(|o| o.reason.clone()),
    }
}

/// Every test metric any run has, then every cross-validated one.
fn metric_rows(records: &[&SessionRecord]) -> Vec<MetricRow> {
    let mut names: Vec<&String> = records.iter().flat_map(|r| r.metrics.test.keys()).collect();
    names.sort();
    names.dedup();
    let mut rows: Vec<MetricRow> = names
        .into_iter()
        .map(|name| {
            let values: Vec<Option<f64>> = records
                .iter()
                .map(|r| r.metrics.test.get(name).copied().filter(|v| v.is_finite()))
                .collect();
            row("test", name, values, vec![None; records.len()])
        })
        .collect();
    let mut cv_names: Vec<&String> = records
        .iter()
        .filter_map(|r| r.cv.as_ref())
        .flat_map(|cv| cv.keys())
        .collect();
    cv_names.sort();
    cv_names.dedup();
    for name in cv_names {
        let stats: Vec<Option<&CvStat>> = records
            .iter()
            .map(|r| r.cv.as_ref().and_then(|cv| cv.get(name)))
            .collect();
        let values = stats.iter().map(|s| s.map(|s| s.mean)).collect();
        let sd = stats.iter().map(|s| s.map(|s| s.sd)).collect();
        rows.push(row("cv", name, values, sd));
    }
    rows
}

fn row(part: &str, metric: &str, values: Vec<Option<f64>>, sd: Vec<Option<f64>>) -> MetricRow {
    let higher = higher_is_better(metric);
    MetricRow {
        part: part.into(),
        metric: metric.into(),
        higher_is_better: higher,
        best: best_of(&values, higher),
        values,
        sd,
    }
}

/// The best of two or more present values (ties: the first).
fn best_of(values: &[Option<f64>], higher: bool) -> Option<usize> {
    let present: Vec<(usize, f64)> = values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|x| x.is_finite()).map(|x| (i, x)))
        .collect();
    if present.len() < 2 {
        return None;
    }
    present
        .into_iter()
        .reduce(|b, c| {
            let better = if higher { c.1 > b.1 } else { c.1 < b.1 };
            if better {
                c
            } else {
                b
            }
        })
        .map(|(i, _)| i)
}

/// The paired tests of every two runs cross-validated on the same folds, per shared metric.
fn paired_rows(
    records: &[&SessionRecord],
    columns: &[RunColumn],
    notes: &mut Vec<String>,
) -> Vec<PairedRow> {
    let mut out = Vec::new();
    let cv_runs = columns.iter().filter(|c| c.folds.is_some()).count();
    if cv_runs < records.len() && cv_runs > 0 {
        notes.push(
            "paired tests need each run's per-fold scores: run the others with --cv K and the \
             same seed"
                .into(),
        );
    }
    for a in 0..records.len() {
        for b in a + 1..records.len() {
            let (Some(fa), Some(fb)) = (&columns[a].folds, &columns[b].folds) else {
                continue;
            };
            if fa != fb {
                notes.push(format!(
                    "runs {} and {} were cross-validated on different folds: no paired test",
                    a + 1,
                    b + 1
                ));
                continue;
            }
            let (Some(ca), Some(cb)) = (&records[a].cv, &records[b].cv) else {
                continue;
            };
            for (metric, sa) in ca {
                if let Some(sb) = cb.get(metric) {
                    out.push(PairedRow {
                        metric: metric.clone(),
                        a,
                        b,
                        test: paired_tests(&sa.folds, &sb.folds),
                    });
                }
            }
        }
    }
    out
}

/// Each output's metric on the test rows, from the saved predictions and targets, when every
/// run has the same outputs.
fn per_output(runs: &[Loaded], records: &[&SessionRecord]) -> Result<Option<PerOutput>> {
    let first = records[0];
    if records
        .iter()
        .any(|r| r.output_names != first.output_names || r.task != first.task)
    {
        return Ok(None);
    }
    let m = first.output_names.len();
    let metric = match first.task {
        Task::Multilabel => "auc",
        Task::Regression => "r2",
        Task::Multiclass => "recall",
    };
    let mut values = vec![vec![None; runs.len()]; m];
    for (k, l) in runs.iter().enumerate() {
        let (Ok(y), Ok(p)) = (l.matrix("targets_test"), l.matrix("predictions_test")) else {
            continue;
        };
        if y.dim() != p.dim() || y.ncols() != m || y.nrows() == 0 {
            continue;
        }
        let coding = l.record.config.data.class_coding;
        let each = output_scores(first.task, &y, &p, metrics::coding_midpoint(coding));
        for (j, v) in each.into_iter().enumerate() {
            values[j][k] = v;
        }
    }
    let best = values.iter().map(|v| best_of(v, true)).collect();
    Ok(Some(PerOutput {
        metric: metric.into(),
        outputs: first.output_names.clone(),
        values,
        best,
    }))
}

/// One score per output column: AUC, R², or (multi-class) the recall of each class.
fn output_scores(task: Task, y: &Array2<f64>, p: &Array2<f64>, mid: f64) -> Vec<Option<f64>> {
    let finite = |v: f64| v.is_finite().then_some(v);
    match task {
        Task::Multilabel => metrics::per_label_auc(y.view(), p.view(), mid)
            .into_iter()
            .map(finite)
            .collect(),
        Task::Regression => y
            .axis_iter(Axis(1))
            .zip(p.axis_iter(Axis(1)))
            .map(|(yj, pj)| {
                let (a, b) = (yj.insert_axis(Axis(1)), pj.insert_axis(Axis(1)));
                finite(metrics::r2(a, b))
            })
            .collect(),
        Task::Multiclass => {
            let argmax = |row: ndarray::ArrayView1<f64>| {
                row.iter()
                    .enumerate()
                    .fold(
                        (0, f64::NEG_INFINITY),
                        |b, (k, &v)| if v > b.1 { (k, v) } else { b },
                    )
                    .0
            };
            let m = y.ncols();
            let (mut hit, mut n) = (vec![0usize; m], vec![0usize; m]);
            for (yr, pr) in y.rows().into_iter().zip(p.rows()) {
                let t = argmax(yr);
                n[t] += 1;
                hit[t] += usize::from(argmax(pr) == t);
            }
            (0..m)
                .map(|k| (n[k] > 0).then(|| hit[k] as f64 / n[k] as f64))
                .collect()
        }
    }
}

/// L of the first run minus L of the second, for two runs of the same outputs.
fn kernel_difference(runs: &[Loaded], records: &[&SessionRecord]) -> Result<Option<Array2<f64>>> {
    if runs.len() != 2 || records[0].output_names != records[1].output_names {
        return Ok(None);
    }
    let has = |r: &SessionRecord| r.matrices.contains_key("output_kernel");
    if !has(records[0]) || !has(records[1]) {
        return Ok(None);
    }
    let (a, b) = (
        runs[0].matrix("output_kernel")?,
        runs[1].matrix("output_kernel")?,
    );
    Ok((a.dim() == b.dim()).then(|| &a - &b))
}
