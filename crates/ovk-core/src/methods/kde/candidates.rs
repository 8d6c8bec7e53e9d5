//! The pre-image candidate set from a file (CSV or Parquet) with the training output columns.

use std::path::Path;

use ndarray::Array2;

use crate::Result;

/// Read the columns `names` of `path` as a c×m matrix, through the one reader every table
/// ovk opens goes through (`data::read_numeric_columns`: regular files only, the Parquet
/// footer checked, sizes capped, a parser's panic caught); a missing column or a missing /
/// non-numeric value is an input error naming the file, the column and the row.
pub(crate) fn read_candidates(path: &Path, names: &[String]) -> Result<Array2<f64>> {
    crate::data::read_numeric_columns(path, names)
}
