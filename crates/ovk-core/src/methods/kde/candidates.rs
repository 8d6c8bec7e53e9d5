//! The pre-image candidate set from a file (CSV or Parquet) with the training output columns.

use std::path::Path;

use ndarray::Array2;
use polars::prelude::*;

use crate::{OvkError, Result};

/// Read the columns `names` of `path` as a c×m matrix; a missing column or a missing /
/// non-numeric value is an input error naming the file and the column.
pub fn read_candidates(path: &Path, names: &[String]) -> Result<Array2<f64>> {
    if !path.exists() {
        return Err(OvkError::input(format!(
            "candidates file {} does not exist",
            path.display()
        )));
    }
    let bad = |e: PolarsError| {
        OvkError::input(format!(
            "cannot read candidates file {}: {}",
            path.display(),
            crate::data::polars_reason(&e)
        ))
    };
    let is_parquet = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("parquet") || e.eq_ignore_ascii_case("pq"));
    let df = if is_parquet {
        let f = std::fs::File::open(path).map_err(|e| OvkError::io_path(path, e))?;
        ParquetReader::new(f).finish().map_err(bad)?
    } else {
        CsvReadOptions::default()
            .with_has_header(true)
            .try_into_reader_with_file_path(Some(path.to_path_buf()))
            .map_err(bad)?
            .finish()
            .map_err(bad)?
    };
    let present: Vec<String> = df
        .get_column_names()
        .iter()
        .map(|s| s.to_string())
        .collect();
    let mut out = Array2::<f64>::zeros((df.height(), names.len()));
    for (j, name) in names.iter().enumerate() {
        let col = df.column(name).map_err(|_| {
            OvkError::input(format!(
                "candidates file {} has no column '{name}' (it must have the output columns {}; \
                 it has {})",
                path.display(),
                names.join(", "),
                present.join(", ")
            ))
        })?;
        let cast = col.cast(&DataType::Float64).map_err(bad)?;
        let ca = cast.f64().map_err(bad)?;
        for i in 0..ca.len() {
            match ca.get(i) {
                Some(v) if v.is_finite() => out[[i, j]] = v,
                _ => {
                    return Err(OvkError::input(format!(
                        "candidates file {}: column '{name}' row {} is missing or not a finite \
                         number",
                        path.display(),
                        i + 1
                    )))
                }
            }
        }
    }
    if out.nrows() == 0 {
        return Err(OvkError::input(format!(
            "candidates file {} has no rows",
            path.display()
        )));
    }
    Ok(out)
}
