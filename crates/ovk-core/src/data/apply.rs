//! New rows for a trained model: the trained feature columns by name, checked against what the
//! model was trained on (present, same kind of values, no missing cells), and the class column
//! checked for classes the model never saw.

use std::path::Path;

use ndarray::Array2;

use super::features::Categorical;
use super::raw::{row_label, RawTable};
use super::sparse::SparseFeatures;
use super::{ClassCoding, Task};
use crate::error::input_at;
use crate::Result;

/// The kind of values a polars dtype holds: what must agree between training and prediction
/// (an `i64` column read as `f64` elsewhere is the same numbers; text is not).
pub(crate) fn dtype_family(dtype: &str) -> &'static str {
    match dtype {
        "bool" => "bool",
        "str" | "string" => "text",
        d if d.starts_with('i') || d.starts_with('u') || d.starts_with('f') => "numeric",
        _ => "other",
    }
}

/// What the model was trained on, to check a new file against.
pub(crate) struct TrainedColumns<'a> {
    pub features: &'a [String],
    /// polars dtypes of the feature columns in the training file (empty: not recorded).
    pub feature_dtypes: &'a [String],
    /// The class column, its dtype in training, and the classes the model knows.
    pub class: Option<(&'a str, &'a str, &'a [String])>,
    /// Text columns one-hot encoded in training (features named `column=level`).
    pub categories: &'a [Categorical],
    /// A model trained with `--missing impute`: per feature, the value a missing cell takes.
    pub fill: Option<&'a [f64]>,
    /// The outputs the model predicts, to score it when the file holds them too.
    pub outputs: TrainedOutputs<'a>,
    /// The features were kept as a sparse block (`DatasetInfo::packed_width`).
    pub sparse: bool,
}

/// The model's outputs as the file would hold them: target columns named as the outputs
/// (regression, multi-label), or the class column of `TrainedColumns::class` (multi-class).
pub(crate) struct TrainedOutputs<'a> {
    pub task: Task,
    pub names: &'a [String],
    pub coding: ClassCoding,
}

/// The true outputs of the rows that have them, coded as in training.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Truth {
    /// rows × outputs, in the model's output order.
    pub y: Array2<f64>,
    /// Which rows of the file (0-based) they are.
    pub rows: Vec<usize>,
}

/// New rows as the model reads them.
pub(crate) struct NewRows {
    /// The feature columns, unscaled, in the trained order (no columns when `sparse` holds
    /// them).
    pub x: Array2<f64>,
    /// A sparse model's features: the file's sparse block, its columns renumbered to the
    /// trained order.
    pub sparse: Option<SparseFeatures>,
    /// Rows with a missing cell filled in as in training.
    pub filled_rows: usize,
    /// The outputs the file holds for its rows (every output column present), to score the
    /// predictions against; `None` when it does not hold them all.
    pub truth: Option<Truth>,
    /// The file's columns the model reads neither as a feature nor as an output, in file order.
    pub ignored: Vec<String>,
}

/// The feature columns of `path`, each missing cell filled as in training or refused.
pub(crate) fn read_new_rows(path: &Path, trained: &TrainedColumns) -> Result<NewRows> {
    if trained.sparse {
        return read_new_sparse_rows(path, trained);
    }
    let mut raw = super::load::read_raw_keeping_sparse(path)?;
    keep_trained_columns_of_block(&mut raw, trained.features);
    let names = raw.names();
    // The feature count is the session's: bounded before it sizes the matrix.
    crate::kernels::check_fits_or(
        crate::kernels::dense_bytes(raw.n_rows, trained.features.len()),
        &format!(
            "the {} rows × {} feature columns to predict",
            raw.n_rows,
            trained.features.len()
        ),
        "predict the rows of a smaller file (split it)",
    )?;
    let mut x = Array2::zeros((raw.n_rows, trained.features.len()));
    let mut filled = vec![false; raw.n_rows];
    // The training fill of feature j, when there is one.
    let fill_of = |j: usize| {
        trained
            .fill
            .and_then(|f| f.get(j).copied())
            .filter(|v| !v.is_nan())
    };
    for (j, name) in trained.features.iter().enumerate() {
        if let Some((cat, level)) = one_hot_source(trained.categories, name) {
            let c = column(&raw, &names, &cat.column, "text feature")?;
            if let Some(want) = trained.feature_dtypes.get(j) {
                same_family(path, &raw, c, want)?;
            }
            for (i, label) in raw.labels(c).iter().enumerate() {
                let Some(text) = label.as_ref().map(|l| l.text()) else {
                    x[[i, j]] = fill_of(j).ok_or_else(|| missing(path, &cat.column, i))?;
                    filled[i] = true;
                    continue;
                };
                if !cat.levels.contains(&text) {
                    return Err(input_at(
                        path,
                        format!(
                            "column `{}` holds `{text}` in {}, a value the model was not trained \
                             on (it knows {})",
                            cat.column,
                            row_label(i),
                            cat.levels.join(", ")
                        ),
                    ));
                }
                x[[i, j]] = if text == level { 1.0 } else { 0.0 };
            }
            continue;
        }
        let c = column(&raw, &names, name, "feature")?;
        if let Some(want) = trained.feature_dtypes.get(j) {
            same_family(path, &raw, c, want)?;
        }
        for (i, v) in raw.numeric(c)?.into_iter().enumerate() {
            if v.is_nan() {
                x[[i, j]] = fill_of(j).ok_or_else(|| missing(path, name, i))?;
                filled[i] = true;
            } else {
                x[[i, j]] = v;
            }
        }
    }
    let every_row: Vec<usize> = (0..x.nrows()).collect();
    super::prepare::check_magnitude(path, &x, trained.features, &every_row)?;
    if let Some((class, dtype, known)) = trained.class {
        if let Some(c) = names.iter().position(|n| *n == class) {
            same_family(path, &raw, c, dtype)?;
            for (i, label) in raw.labels(c).iter().enumerate() {
                let Some(label) = label else { continue };
                let text = label.text();
                if !known.contains(&text) {
                    return Err(input_at(
                        path,
                        format!(
                            "column `{class}` holds the class `{text}` in {}, which the model \
                             never saw (it knows {})",
                            row_label(i),
                            known.join(", ")
                        ),
                    ));
                }
            }
        }
    }
    let truth = read_truth(&raw, &names, trained)?;
    let read = |n: &str| {
        trained.features.iter().any(|f| f == n)
            || trained.categories.iter().any(|c| c.column == n)
            || trained.class.is_some_and(|c| c.0 == n)
            || trained.outputs.names.iter().any(|o| o == n)
    };
    let ignored = names
        .iter()
        .filter(|n| !read(n))
        .map(|n| n.to_string())
        .collect();
    Ok(NewRows {
        x,
        sparse: None,
        filled_rows: filled.iter().filter(|&&f| f).count(),
        truth,
        ignored,
    })
}

/// A sparse file (LIBSVM, sparse ARFF, Parquet lists) for a model that read its features as
/// columns: the block's trained columns written out, and zeros for a trained column the block
/// could hold but does not reach (a LIBSVM file whose largest index is smaller than training's
/// lacks `f<i>` past it, yet its rows are 0 there). The rest of the block is never densified.
fn keep_trained_columns_of_block(raw: &mut RawTable, features: &[String]) {
    let Some(mut block) = raw.sparse.take() else {
        return;
    };
    let stem = |n: &str| n.trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
    let stems: std::collections::HashSet<String> = block.names.iter().map(|n| stem(n)).collect();
    let at: std::collections::HashMap<&str, usize> = block
        .names
        .iter()
        .enumerate()
        .map(|(j, n)| (n.as_str(), j))
        .collect();
    let wanted: Vec<usize> = features
        .iter()
        .filter_map(|f| at.get(f.as_str()).copied())
        .collect();
    let dense: std::collections::HashSet<String> =
        raw.columns.iter().map(|c| c.name.clone()).collect();
    let beyond: Vec<&String> = features
        .iter()
        .filter(|f| !at.contains_key(f.as_str()) && !dense.contains(*f))
        .filter(|f| f.len() > stem(f).len() && stems.contains(&stem(f)))
        .collect();
    let taken = block.take_columns(&wanted);
    raw.columns.extend(taken);
    raw.columns
        .extend(beyond.into_iter().map(|f| super::raw::RawColumn {
            name: f.clone(),
            dtype: "f64".into(),
            cells: super::raw::Cells::Numeric(super::raw::Numbers::dense(vec![0.0; raw.n_rows])),
        }));
}

/// New rows for a model fitted on sparse features: the file's sparse block, each column
/// found by name among the trained features. A column the model never saw is ignored (its
/// weight would be 0); one it saw but the file lacks reads as zeros, as in the sparse file.
fn read_new_sparse_rows(path: &Path, trained: &TrainedColumns) -> Result<NewRows> {
    let mut raw = super::load::read_raw_keeping_sparse(path)?;
    let Some(block) = raw.sparse.take() else {
        return Err(input_at(
            path,
            "the model was fitted on sparse features (LIBSVM, sparse ARFF or Parquet \
             `indices`/`values` lists); give its new rows in such a file too",
        ));
    };
    let names = raw.names();
    let at: std::collections::HashMap<&str, u32> = trained
        .features
        .iter()
        .enumerate()
        .map(|(j, n)| (n.as_str(), j as u32))
        .collect();
    let to_trained: Vec<Option<u32>> = block
        .names
        .iter()
        .map(|n| at.get(n.as_str()).copied())
        .collect();
    let ignored_features: Vec<String> = block
        .names
        .iter()
        .zip(&to_trained)
        .filter(|(_, t)| t.is_none())
        .map(|(n, _)| n.clone())
        .collect();
    let renumbered = SparseFeatures::from_rows(
        trained.features.to_vec(),
        (0..block.n_rows()).map(|i| {
            let (idx, val) = block.row(i);
            let mut r: Vec<(u32, f64)> = idx
                .iter()
                .zip(val)
                .filter_map(|(&j, &v)| to_trained[j as usize].map(|t| (t, v)))
                .collect();
            r.sort_unstable_by_key(|e| e.0);
            r
        }),
    );
    let every_row: Vec<usize> = (0..renumbered.n_rows()).collect();
    super::prepare::check_sparse_magnitude(path, &renumbered, &every_row)?;
    let truth = read_truth(&raw, &names, trained)?;
    let read = |n: &str| {
        trained.class.is_some_and(|c| c.0 == n) || trained.outputs.names.iter().any(|o| o == n)
    };
    let mut ignored: Vec<String> = names
        .iter()
        .filter(|n| !read(n))
        .map(|n| n.to_string())
        .collect();
    ignored.extend(ignored_features);
    Ok(NewRows {
        x: Array2::zeros((renumbered.n_rows(), 0)),
        sparse: Some(renumbered),
        filled_rows: 0,
        truth,
        ignored,
    })
}

/// The file's own outputs, coded as the model was trained on them: every row whose outputs are
/// all present. `None` when the file lacks an output column.
fn read_truth(raw: &RawTable, names: &[&str], trained: &TrainedColumns) -> Result<Option<Truth>> {
    let out = &trained.outputs;
    let (on, off) = match out.coding {
        ClassCoding::Pm1 => (1.0, -1.0),
        ClassCoding::ZeroOne => (1.0, 0.0),
    };
    if out.task == Task::Multiclass {
        let Some((class, _, known)) = trained.class else {
            return Ok(None);
        };
        let Some(c) = names.iter().position(|n| *n == class) else {
            return Ok(None);
        };
        let mut rows = Vec::new();
        let mut coded = Vec::new();
        for (i, label) in raw.labels(c).iter().enumerate() {
            let Some(label) = label else { continue };
            let text = label.text();
            rows.push(i);
            coded.extend(known.iter().map(|k| if *k == text { on } else { off }));
        }
        let y = Array2::from_shape_vec((rows.len(), known.len()), coded)
            .map_err(|e| crate::OvkError::internal(e.to_string()))?;
        return Ok(Some(Truth { y, rows }));
    }
    let Some(cols) = out
        .names
        .iter()
        .map(|n| names.iter().position(|h| h == n))
        .collect::<Option<Vec<usize>>>()
    else {
        return Ok(None);
    };
    let values: Vec<Vec<f64>> = cols
        .iter()
        .map(|&c| raw.numeric(c))
        .collect::<Result<_>>()?;
    let rows: Vec<usize> = (0..raw.n_rows)
        .filter(|&i| values.iter().all(|v| v[i].is_finite()))
        .collect();
    let mut y = Array2::zeros((rows.len(), cols.len()));
    for (j, v) in values.iter().enumerate() {
        for (k, &i) in rows.iter().enumerate() {
            y[[k, j]] = match (out.task, v[i]) {
                (Task::Multilabel, 1.0) => on,
                (Task::Multilabel, 0.0) => off,
                (Task::Multilabel, x) => {
                    return Err(input_at(
                        &raw.path,
                        format!(
                            "the label column `{}` holds `{x}` in {}; a label is 0 or 1",
                            out.names[j],
                            row_label(i)
                        ),
                    ))
                }
                (_, x) => x,
            };
        }
    }
    Ok(Some(Truth { y, rows }))
}

/// The encoded text column and level a feature named `column=level` stands for.
fn one_hot_source<'a>(
    categories: &'a [Categorical],
    name: &'a str,
) -> Option<(&'a Categorical, &'a str)> {
    let (column, level) = name.split_once('=')?;
    let cat = categories.iter().find(|c| c.column == column)?;
    cat.levels
        .iter()
        .any(|l| l == level)
        .then_some((cat, level))
}

fn missing(path: &Path, column: &str, row: usize) -> crate::OvkError {
    input_at(
        path,
        format!(
            "column `{column}` has a missing value in {}; the model needs every feature (a \
             model trained with --missing impute fills such cells)",
            row_label(row)
        ),
    )
}

fn column(raw: &RawTable, names: &[&str], name: &str, role: &str) -> Result<usize> {
    names.iter().position(|n| *n == name).ok_or_else(|| {
        input_at(
            &raw.path,
            format!(
                "lacks the column `{name}`, a {role} the model was trained on (a file to predict \
                 on needs every trained feature column, by name)"
            ),
        )
    })
}

fn same_family(path: &Path, raw: &RawTable, c: usize, trained: &str) -> Result<()> {
    let col = &raw.columns[c];
    let (now, then) = (dtype_family(&col.dtype), dtype_family(trained));
    // A column with no value at all reads as text whatever it was meant to hold; its cells
    // are missing ones, filled or refused as such.
    let all_missing = || raw.labels(c).iter().all(Option::is_none);
    if now != then && !all_missing() {
        return Err(input_at(
            path,
            format!(
                "column `{}` holds {now} values ({}) but the model was trained on {then} values \
                 ({trained})",
                col.name, col.dtype
            ),
        ));
    }
    Ok(())
}
