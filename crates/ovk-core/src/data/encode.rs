//! Outputs as numbers: one-hot class coding, 0/1 label coding (±1 by default), raw regression
//! targets, and the inference of the task from the output values.

use std::path::Path;

use ndarray::Array2;
use rayon::prelude::*;

use super::raw::{row_label, Label, RawTable};
use super::roles::OutputColumns;
use super::{ClassCoding, Task};
use crate::error::input_at;
use crate::Result;

/// The output cells of every file row, before coding.
#[derive(Debug, Clone)]
pub(crate) enum RawOutputs {
    Class {
        name: String,
        labels: Vec<Option<Label>>,
    },
    /// One Vec per target column, NaN = missing.
    Targets {
        names: Vec<String>,
        columns: Vec<Vec<f64>>,
    },
}

impl RawOutputs {
    pub fn read(raw: &RawTable, outputs: &OutputColumns) -> Result<RawOutputs> {
        Ok(match outputs {
            OutputColumns::Class(c) => RawOutputs::Class {
                name: raw.columns[*c].name.clone(),
                labels: raw.labels(*c),
            },
            OutputColumns::Targets(t) => RawOutputs::Targets {
                names: t.iter().map(|&c| raw.columns[c].name.clone()).collect(),
                columns: t.iter().map(|&c| raw.numeric(c)).collect::<Result<_>>()?,
            },
        })
    }

    /// Number of output cells per row in the file (1 for a class column).
    pub fn width(&self) -> usize {
        match self {
            RawOutputs::Class { .. } => 1,
            RawOutputs::Targets { columns, .. } => columns.len(),
        }
    }

    /// Whether no output cell is missing.
    pub(crate) fn complete(&self) -> bool {
        match self {
            RawOutputs::Class { labels, .. } => labels.iter().all(Option::is_some),
            RawOutputs::Targets { columns, .. } => columns
                .iter()
                .all(|c| !super::features::any_value(c, f64::is_nan)),
        }
    }

    /// The number of rows (of the file).
    pub(crate) fn rows(&self) -> usize {
        match self {
            RawOutputs::Class { labels, .. } => labels.len(),
            RawOutputs::Targets { columns, .. } => columns.first().map_or(0, Vec::len),
        }
    }

    /// For every row: how many of its output cells are missing, and the first such column.
    /// Read column by column (a table of 10⁵ target columns read row by row misses the cache
    /// on every cell).
    pub(crate) fn missing_by_row(&self) -> Vec<(usize, Option<&str>)> {
        match self {
            RawOutputs::Class { name, labels } => labels
                .iter()
                .map(|l| match l {
                    None => (1, Some(name.as_str())),
                    Some(_) => (0, None),
                })
                .collect(),
            RawOutputs::Targets { names, columns } => {
                let n = columns.first().map_or(0, Vec::len);
                let mut out = vec![(0, None); n];
                for (j, col) in columns.iter().enumerate() {
                    for (o, v) in out.iter_mut().zip(col) {
                        if v.is_nan() {
                            o.0 += 1;
                            o.1 = o.1.or(Some(names[j].as_str()));
                        }
                    }
                }
                out
            }
        }
    }
}

/// Coded outputs for every file row (NaN rows where there is no label).
#[derive(Debug, Clone)]
pub(crate) struct Encoded {
    pub task: Task,
    pub output_names: Vec<String>,
    pub class_values: Option<Vec<String>>,
    pub y: Array2<f64>,
}

/// Code the outputs. Class values and the task are read from `labeled_rows` only.
pub(crate) fn encode(
    path: &Path,
    outputs: &RawOutputs,
    labeled_rows: &[usize],
    task: Option<Task>,
    coding: ClassCoding,
) -> Result<Encoded> {
    let (on, off) = match coding {
        ClassCoding::Pm1 => (1.0, -1.0),
        ClassCoding::ZeroOne => (1.0, 0.0),
    };
    match outputs {
        RawOutputs::Class { name, labels } => {
            let mut values: Vec<Label> = Vec::new();
            for &i in labeled_rows {
                if let Some(l) = &labels[i] {
                    if !values.contains(l) {
                        values.push(l.clone());
                    }
                }
            }
            values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
            if values.len() < 2 {
                let only = values.first().map(Label::text).unwrap_or_default();
                return Err(input_at(
                    path,
                    format!(
                        "the class column `{name}` has a single class (`{only}`) in the usable \
                         rows; a classifier needs at least 2"
                    ),
                ));
            }
            let mut y = Array2::from_elem((labels.len(), values.len()), f64::NAN);
            for &i in labeled_rows {
                if let Some(l) = &labels[i] {
                    for (k, v) in values.iter().enumerate() {
                        y[[i, k]] = if v == l { on } else { off };
                    }
                }
            }
            let texts: Vec<String> = values.iter().map(Label::text).collect();
            Ok(Encoded {
                task: Task::Multiclass,
                output_names: texts.iter().map(|v| format!("{name}={v}")).collect(),
                class_values: Some(texts),
                y,
            })
        }
        RawOutputs::Targets { names, columns } => {
            let not_binary = first_non_binary(columns, labeled_rows);
            let task = match (task, not_binary) {
                (Some(Task::Multilabel), Some((j, row, v))) => {
                    return Err(input_at(
                        path,
                        format!(
                            "task multilabel needs 0/1 label columns, but `{}` holds `{v}` in {}",
                            names[j],
                            row_label(row)
                        ),
                    ))
                }
                (Some(t), _) => t,
                (None, None) if columns.len() >= 2 => Task::Multilabel,
                (None, _) => Task::Regression,
            };
            let y = from_columns(columns, |v| match task {
                Task::Multilabel if v == 0.0 => off,
                Task::Multilabel if v == 1.0 => on,
                _ => v,
            });
            Ok(Encoded {
                task,
                output_names: names.clone(),
                class_values: None,
                y,
            })
        }
    }
}

/// Columns (all of one length) as a row-major matrix of `code(v)`: transposed in tiles of
/// columns, so a table of 10⁵ columns is read and written in cache-sized pieces.
pub(crate) fn from_columns(columns: &[Vec<f64>], code: impl Fn(f64) -> f64 + Sync) -> Array2<f64> {
    const TILE: usize = 64;
    let (n, m) = (columns.first().map_or(0, Vec::len), columns.len());
    let mut y = Array2::<f64>::zeros((n, m));
    if n == 0 || m == 0 {
        return y;
    }
    let dst = y.as_slice_mut().expect("a new array is contiguous");
    dst.par_chunks_mut(TILE * m)
        .enumerate()
        .for_each(|(b, rows)| {
            let i0 = b * TILE;
            let n_rows = rows.len() / m;
            for (j, col) in columns.iter().enumerate() {
                for (di, &v) in col[i0..i0 + n_rows].iter().enumerate() {
                    rows[di * m + j] = code(v);
                }
            }
        });
    y
}

/// The first labeled cell (column, row, value) that is neither 0 nor 1, if any.
fn first_non_binary(columns: &[Vec<f64>], labeled_rows: &[usize]) -> Option<(usize, usize, f64)> {
    labeled_rows.iter().find_map(|&i| {
        (0..columns.len()).find_map(|j| {
            let v = columns[j][i];
            (!v.is_nan() && v != 0.0 && v != 1.0).then_some((j, i, v))
        })
    })
}
