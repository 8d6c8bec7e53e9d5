//! A loaded table and its per-column summary, for previews (TUI Data pane) and role choice.

use std::path::{Path, PathBuf};

use ndarray::Array2;

use super::features::{looks_like_date, mostly_text};
use super::load::read_raw;
use super::raw::{is_missing_text, row_label, Cells, RawColumn};
use super::select::resolve;
use crate::error::input_at;
use crate::Result;

/// Per-column facts shown in the preview.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnSummary {
    /// Column name as in the file's header.
    pub name: String,
    /// polars dtype as text (`f64`, `i64`, `str` …).
    pub dtype: String,
    /// Number of missing cells (as the engine reads them).
    pub missing: usize,
    /// For numeric columns.
    pub min: Option<f64>,
    /// For numeric columns: the largest value.
    pub max: Option<f64>,
    /// For numeric columns: the mean of the present values.
    pub mean: Option<f64>,
    /// For text columns: how many distinct values (one-hot features if it is a feature).
    pub levels: Option<usize>,
    /// Every present value looks like a date (`2024-03-01…`), or the dtype is a date.
    pub date_like: bool,
    /// The rows (0-based) whose cell is missing, as the engine reads them.
    pub missing_rows: Vec<usize>,
}

/// A table read through polars (lazy scan, then collected).
#[derive(Debug, Clone)]
pub struct Table {
    /// The file read.
    pub path: PathBuf,
    /// Number of data rows.
    pub n_rows: usize,
    /// One summary per column, in file order.
    pub columns: Vec<ColumnSummary>,
    /// The first rows, formatted, one Vec per row in column order.
    pub head: Vec<Vec<String>>,
    /// How many of the columns (the last ones) a fit under `--sparse auto` keeps as a sparse
    /// block (LIBSVM, sparse ARFF, Parquet lists); 0 for none.
    pub sparse: usize,
}

/// Read a CSV or Parquet file and summarise its columns; `head_rows` rows are kept formatted.
pub fn load_table(path: &Path, head_rows: usize) -> Result<Table> {
    let mut raw = super::load::read_raw_keeping_sparse(path)?;
    // A sparse block is summarised as it is: its dense form may not fit in memory.
    let block = raw.sparse.take();
    // What a fit under `--sparse auto` keeps sparse (the workbench's choice).
    let sparse = block
        .as_ref()
        .filter(|b| b.stays_sparse(super::SparseChoice::Auto))
        .map_or(0, |b| b.n_cols());
    let mut columns: Vec<ColumnSummary> = raw.columns.iter().map(summarise).collect();
    let mut head: Vec<Vec<String>> = (0..head_rows.min(raw.n_rows))
        .map(|i| raw.columns.iter().map(|c| format_cell(c, i)).collect())
        .collect();
    if let Some(b) = block {
        columns.extend(b.summaries());
        for (i, row) in head.iter_mut().enumerate() {
            let mut cells = vec!["0".to_string(); b.n_cols()];
            let (idx, val) = b.row(i);
            for (&j, &v) in idx.iter().zip(val) {
                cells[j as usize] = v.to_string();
            }
            row.extend(cells);
        }
    }
    Ok(Table {
        path: path.to_path_buf(),
        n_rows: raw.n_rows,
        columns,
        head,
        sparse,
    })
}

/// Read the named numeric columns of a file as a matrix (rows in file order). Names may be
/// column selectors (globs, ranges). A missing cell is an error naming its column and row.
pub fn read_numeric_columns(path: &Path, names: &[String]) -> Result<Array2<f64>> {
    Ok(read_selected(path, names)?.1)
}

/// The cells of column `name` as text (numbers in their shortest form), `None` where missing;
/// refused naming the file's columns when it has no such column.
pub fn column_text(path: &Path, name: &str) -> Result<Vec<Option<String>>> {
    let raw = read_raw(path)?;
    let Some(c) = raw.names().iter().position(|n| *n == name) else {
        return Err(input_at(
            path,
            format!(
                "has no column `{name}` (its columns: {})",
                raw.names().join(", ")
            ),
        ));
    };
    Ok(raw
        .labels(c)
        .into_iter()
        .map(|l| l.map(|l| l.text()))
        .collect())
}

/// Every column of a numeric table, with the header (`read_numeric_columns` of them all).
pub fn read_numeric_table(path: &Path) -> Result<(Vec<String>, Array2<f64>)> {
    read_selected(path, &["*".to_string()])
}

fn read_selected(path: &Path, names: &[String]) -> Result<(Vec<String>, Array2<f64>)> {
    let raw = read_raw(path)?;
    let idx = resolve(path, &raw.names(), names)?;
    let header = idx.iter().map(|&c| raw.columns[c].name.clone()).collect();
    let mut m = Array2::zeros((raw.n_rows, idx.len()));
    for (j, &c) in idx.iter().enumerate() {
        let v = raw.numeric(c)?;
        for (i, x) in v.into_iter().enumerate() {
            if x.is_nan() {
                return Err(input_at(
                    path,
                    format!(
                        "column `{}` has a missing value in {}",
                        raw.columns[c].name,
                        row_label(i)
                    ),
                ));
            }
            m[[i, j]] = x;
        }
    }
    Ok((header, m))
}

fn summarise(c: &RawColumn) -> ColumnSummary {
    let missing_rows: Vec<usize> = match &c.cells {
        Cells::Numeric(v) => (0..v.len()).filter(|&i| v.values[i].is_nan()).collect(),
        Cells::Text(v) => (0..v.len())
            .filter(|&i| v[i].as_deref().is_none_or(is_missing_text))
            .collect(),
    };
    let present_text: Vec<&str> = match &c.cells {
        Cells::Text(v) => v
            .iter()
            .flatten()
            .map(|s| s.trim())
            .filter(|s| !is_missing_text(s))
            .collect(),
        Cells::Numeric(_) => Vec::new(),
    };
    let dtype_l = c.dtype.to_ascii_lowercase();
    let date_like = dtype_l.contains("date")
        || (!present_text.is_empty() && present_text.iter().all(|s| looks_like_date(s)));
    let (missing, stats) = match &c.cells {
        Cells::Numeric(v) => {
            let present: Vec<f64> = v.values.iter().copied().filter(|x| !x.is_nan()).collect();
            (v.len() - present.len(), stats_of(&present))
        }
        Cells::Text(v) => match numbers_with_markers(v) {
            // Numbers with `NA`-like markers: numeric to the engine, so numeric here too.
            Some(present) => (v.len() - present.len(), stats_of(&present)),
            None => (
                v.iter()
                    .filter(|s| s.as_deref().is_none_or(is_missing_text))
                    .count(),
                None,
            ),
        },
    };
    let numeric_text = matches!(&c.cells, Cells::Text(_)) && stats.is_some();
    let levels = (!numeric_text && mostly_text(present_text.iter().copied())).then(|| {
        let mut d = present_text.clone();
        d.sort_unstable();
        d.dedup();
        d.len()
    });
    ColumnSummary {
        name: c.name.clone(),
        dtype: if numeric_text {
            "f64".into()
        } else {
            c.dtype.clone()
        },
        missing,
        min: stats.map(|s| s.0),
        max: stats.map(|s| s.1),
        mean: stats.map(|s| s.2),
        levels,
        date_like,
        missing_rows,
    }
}

fn stats_of(present: &[f64]) -> Option<(f64, f64, f64)> {
    (!present.is_empty()).then(|| {
        let min = present.iter().copied().fold(f64::INFINITY, f64::min);
        let max = present.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let mean = present.iter().sum::<f64>() / present.len() as f64;
        (min, max, mean)
    })
}

/// The present values of a text column whose every cell is a finite number or a missing
/// marker (`NA`, `?` …), as the engine reads it; `None` for real text.
fn numbers_with_markers(v: &[Option<String>]) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    for s in v.iter().flatten() {
        if is_missing_text(s) {
            continue;
        }
        match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => out.push(x),
            _ => return None,
        }
    }
    (!out.is_empty()).then_some(out)
}

fn format_cell(c: &RawColumn, i: usize) -> String {
    match &c.cells {
        Cells::Numeric(v) if c.dtype == "bool" => v
            .get(i)
            .map_or_else(|| "null".to_string(), |x| (x != 0.0).to_string()),
        Cells::Numeric(v) => v
            .get(i)
            .map_or_else(|| "null".to_string(), |x| x.to_string()),
        Cells::Text(v) => v[i].clone().unwrap_or_else(|| "null".to_string()),
    }
}
