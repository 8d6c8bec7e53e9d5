//! A table read in row batches, never whole: the streamed route (`train::pipeline::stream`)
//! reads CSV and Parquet files larger than memory through polars' streaming engine, one batch
//! of rows at a time, as f64 matrices of the columns it asks for.
//!
//! Unlike `load` (which reads the file's bytes into memory first, so that a file truncated
//! while it is read cannot kill the process), polars reads the file itself here: the point is
//! not to hold it.

use std::path::Path;
use std::sync::mpsc::sync_channel;

use ndarray::Array2;
use polars::prelude::*;

use super::load::{check_file, Format};
use crate::error::input_at;
use crate::util::choice::choice_enum;
use crate::{OvkError, Result};

choice_enum! {
    /// Whether a run reads its table in row batches and never stores the factor Z (`--stream`).
    #[derive(Default)]
    pub enum StreamChoice: "stream" {
        /// Streamed when the in-memory route would not fit (krr and okl on a factor).
        #[default]
        Auto = "auto",
        /// Always streamed (refused, saying why, where the run cannot be).
        Yes = "yes",
        /// Never streamed.
        No = "no",
    }
}

impl StreamChoice {
    /// Whether the choice is the default (left out of saved configs).
    pub fn is_auto(&self) -> bool {
        *self == StreamChoice::Auto
    }
}

/// Rows per batch: about 64 MiB of f64 at a hundred columns, few enough calls per file.
pub(crate) const BATCH_ROWS: usize = 65_536;

/// The file's column names, from its header or footer alone.
pub(crate) fn column_names(path: &Path) -> Result<Vec<String>> {
    let format = check_file(path)?;
    let mut lazy = scan(path, format, &[])?;
    let schema = super::guard::guarded(|| lazy.collect_schema())
        .map_err(|panic| unreadable(path, format, &panic))?
        .map_err(|e| unreadable(path, format, &e.to_string()))?;
    Ok(schema.iter_names().map(|n| n.to_string()).collect())
}

/// A Parquet file's row count, from its footer.
pub(crate) fn parquet_rows(path: &Path) -> Result<usize> {
    let format = check_file(path)?;
    let lazy = scan(path, format, &[])?.select([len().alias("rows")]);
    let df = super::guard::guarded(|| lazy.collect())
        .map_err(|panic| unreadable(path, format, &panic))?
        .map_err(|e| unreadable(path, format, &e.to_string()))?;
    let rows = df
        .column("rows")
        .and_then(|c| c.cast(&DataType::Float64))
        .ok()
        .and_then(|c| c.f64().ok().and_then(|v| v.get(0)))
        .ok_or_else(|| unreadable(path, format, "no row count"))?;
    Ok(rows as usize)
}

/// Call `each(first_row, block)` for consecutive batches of the file's rows, `block` holding
/// `columns` (in that order) as f64, until the file ends or `each` returns false; returns the
/// rows read. A missing, non-numeric or non-finite cell is an input error naming its column.
pub(crate) fn for_each_batch(
    path: &Path,
    columns: &[String],
    rows_per_batch: usize,
    mut each: impl FnMut(usize, Array2<f64>) -> Result<bool>,
) -> Result<usize> {
    let format = check_file(path)?;
    let selection: Vec<Expr> = columns.iter().map(|c| col(c.as_str())).collect();
    if format == Format::Parquet {
        return parquet_slices(path, columns, &selection, &mut each);
    }
    let lazy = scan(path, format, columns)?.select(selection);
    // polars calls the sink from its own threads; a bounded channel holds them back while a
    // batch is processed, so at most two batches wait in memory.
    let (send, recv) = sync_channel::<DataFrame>(1);
    let sink = PlanCallback::new(move |df: DataFrame| Ok(send.send(df).is_err()));
    let lazy = lazy
        .sink_batches(
            sink,
            true,
            std::num::NonZeroUsize::new(rows_per_batch.max(1)),
        )
        .map_err(|e| unreadable(path, format, &e.to_string()))?;
    let reader = std::thread::Builder::new()
        .name("ovk-batches".into())
        .spawn(move || {
            super::guard::guarded(|| {
                lazy.collect_with_engine(Engine::Streaming)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            })
        })
        .map_err(|e| OvkError::io("starting the batch reader", e))?;
    let mut first = 0usize;
    let mut outcome = Ok(());
    for df in recv.iter() {
        let rows = df.height();
        if rows == 0 {
            continue;
        }
        let step = to_matrix(path, &df, columns, first).and_then(|block| each(first, block));
        first += rows;
        match step {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                outcome = Err(e);
                break;
            }
        }
    }
    // Dropping the receiver makes the sink answer "stop" to polars.
    drop(recv);
    let read = reader
        .join()
        .map_err(|_| OvkError::internal("the batch reader panicked"))?;
    outcome?;
    match read {
        Ok(Ok(())) => Ok(first),
        Ok(Err(e)) | Err(e) => Err(unreadable(path, format, &e)),
    }
}

/// Rows per Parquet slice: a row group is read whole, so a slice spans about two of polars'
/// default groups (2¹⁸ rows) and decodes at most one more than it keeps.
pub(crate) const PARQUET_SLICE_ROWS: usize = 1 << 19;

/// `for_each_batch` on a Parquet file, one collected slice at a time. polars' streaming scan
/// of Parquet reads ahead by up to 16 row groups and keeps the file's pages mapped to the end:
/// a 1.5 GB file held 1.3 GB of pages and about 1 GB of decoded data while the consumer lagged
/// (measured, 10⁷ rows). A slice's collect reads only the row groups it overlaps, then lets
/// them go.
fn parquet_slices(
    path: &Path,
    columns: &[String],
    selection: &[Expr],
    each: &mut dyn FnMut(usize, Array2<f64>) -> Result<bool>,
) -> Result<usize> {
    let format = Format::Parquet;
    let rows = parquet_rows(path)?;
    let mut first = 0;
    while first < rows {
        let len = PARQUET_SLICE_ROWS.min(rows - first);
        let lazy = scan(path, format, columns)?
            .select(selection)
            .slice(first as i64, len as IdxSize);
        let df = super::guard::guarded(|| lazy.collect())
            .map_err(|panic| unreadable(path, format, &panic))?
            .map_err(|e| unreadable(path, format, &e.to_string()))?;
        if df.height() == 0 {
            break;
        }
        let block = to_matrix(path, &df, columns, first)?;
        drop(df);
        let n = block.nrows();
        if !each(first, block)? {
            return Ok(first + n);
        }
        first += n;
    }
    Ok(first)
}

/// polars' lazy scan of the file on disk; a CSV's `numeric` columns are parsed as f64 (polars
/// would infer i64 from the first rows and fail on a decimal further down).
fn scan(path: &Path, format: Format, numeric: &[String]) -> Result<LazyFrame> {
    let fail = |e: PolarsError| unreadable(path, format, &e.to_string());
    let text = path
        .to_str()
        .ok_or_else(|| input_at(path, "the path is not valid UTF-8"))?;
    let source = PlRefPath::new(text);
    match format {
        Format::Csv { separator } => {
            let numeric: Vec<String> = numeric.to_vec();
            LazyCsvReader::new(source)
                .with_separator(separator)
                .with_has_header(true)
                .with_glob(false)
                .with_schema_modify(move |mut schema: Schema| {
                    for (name, dtype) in schema.iter_mut() {
                        if numeric.iter().any(|n| n == name.as_str()) {
                            *dtype = DataType::Float64;
                        }
                    }
                    Ok(schema)
                })
                .map_err(fail)?
                .finish()
                .map_err(fail)
        }
        Format::Parquet => {
            super::parquet_footer::check_parquet_footer(path)?;
            let args = ScanArgsParquet {
                glob: false,
                hive_options: HiveOptions::new_disabled(),
                ..Default::default()
            };
            LazyFrame::scan_parquet(source, args).map_err(fail)
        }
    }
}

/// A batch's columns as a row-major f64 matrix; rows are numbered from `first` in messages.
fn to_matrix(path: &Path, df: &DataFrame, columns: &[String], first: usize) -> Result<Array2<f64>> {
    let rows = df.height();
    let mut out = Array2::<f64>::zeros((rows, columns.len()));
    for (j, name) in columns.iter().enumerate() {
        let column = df
            .column(name)
            .and_then(|c| c.cast(&DataType::Float64))
            .map_err(|e| {
                input_at(
                    path,
                    format!("column `{name}` is not numeric ({e}); the streamed route reads numeric columns only"),
                )
            })?;
        let values = column
            .f64()
            .map_err(|e| OvkError::internal(format!("`{name}` after a cast to f64: {e}")))?;
        for (i, v) in values.iter().enumerate() {
            match v {
                Some(v) if v.is_finite() => out[[i, j]] = v,
                other => {
                    let what = match other {
                        None => "a missing cell".to_string(),
                        Some(v) => format!("the value {v}"),
                    };
                    return Err(input_at(
                        path,
                        format!(
                            "`{name}` has {what} in data row {}: the streamed route needs \
                             complete, finite numeric columns — fill or drop such rows first",
                            first + i + 1
                        ),
                    ));
                }
            }
        }
    }
    Ok(out)
}

fn unreadable(path: &Path, format: Format, why: &str) -> OvkError {
    let kind = match format {
        Format::Csv { .. } => "CSV",
        Format::Parquet => "Parquet",
    };
    input_at(path, format!("cannot be read as {kind} in batches: {why}"))
}
