//! A loaded table and its per-column summary, for previews (TUI Data pane) and role choice.

use std::path::{Path, PathBuf};

use crate::{OvkError, Result};

/// Per-column facts shown in the preview.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnSummary {
    pub name: String,
    /// polars dtype as text (`f64`, `i64`, `str` …).
    pub dtype: String,
    pub missing: usize,
    /// For numeric columns.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
}

/// A table read through polars (lazy scan, then collected).
#[derive(Debug, Clone)]
pub struct Table {
    pub path: PathBuf,
    pub n_rows: usize,
    pub columns: Vec<ColumnSummary>,
    /// The first rows, formatted, one Vec per row in column order.
    pub head: Vec<Vec<String>>,
}

/// Read a CSV or Parquet file and summarise its columns; `head_rows` rows are kept formatted.
pub fn load_table(path: &Path, head_rows: usize) -> Result<Table> {
    let _ = head_rows;
    Err(OvkError::internal(format!(
        "{}: table loading is not implemented yet",
        path.display()
    )))
}

/// Read the named numeric columns of a file as a matrix (rows in file order).
pub fn read_numeric_columns(path: &Path, names: &[String]) -> Result<ndarray::Array2<f64>> {
    let _ = names;
    Err(OvkError::internal(format!(
        "{}: column reading is not implemented yet",
        path.display()
    )))
}
