//! A table read in row batches, never whole: the streamed route (`train::pipeline::stream`)
//! reads CSV and Parquet files larger than memory through polars' streaming engine, one batch
//! of rows at a time, as f64 matrices of the columns it asks for.
//!
//! Unlike `load` (which reads the file's bytes into memory first, so that a file truncated
//! while it is read cannot kill the process), polars reads the file itself here: the point is
//! not to hold it.

use std::path::Path;

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
        /// Streamed when the in-memory route would not fit (krr, okl and lowrank-okl on a factor).
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

/// The file's column names, from its header or footer alone.
pub(crate) fn column_names(path: &Path) -> Result<Vec<String>> {
    let format = check_file(path)?;
    let mut lazy = match format {
        Format::Csv { separator } => {
            use std::io::BufRead;
            // The header line read into memory, never the file mapped (see `csv_chunks`).
            let (file, _) = super::files::open_regular(path, "data")?;
            let mut header = Vec::new();
            std::io::BufReader::new(file)
                .read_until(b'\n', &mut header)
                .map_err(|e| OvkError::io_path(path, e))?;
            csv_frame(path, separator, &[], super::load::in_memory(header))?
        }
        Format::Parquet => scan_parquet(path)?,
    };
    let schema = super::guard::guarded(|| lazy.collect_schema())
        .map_err(|panic| unreadable(path, format, &panic))?
        .map_err(|e| unreadable(path, format, &e.to_string()))?;
    Ok(schema.iter_names().map(|n| n.to_string()).collect())
}

/// A Parquet file's row count, from its footer.
pub(crate) fn parquet_rows(path: &Path) -> Result<usize> {
    let format = check_file(path)?;
    let lazy = scan_parquet(path)?.select([len().alias("rows")]);
    let df = collected(path, format, lazy)?;
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
    mut each: impl FnMut(usize, Array2<f64>) -> Result<bool>,
) -> Result<usize> {
    let format = check_file(path)?;
    let selection: Vec<Expr> = columns.iter().map(|c| col(c.as_str())).collect();
    if format == Format::Parquet {
        return parquet_slices(path, columns, &selection, &mut each);
    }
    let Format::Csv { separator } = format else {
        return Err(OvkError::internal("batches: not CSV"));
    };
    csv_chunks(
        path,
        separator,
        columns,
        &selection,
        CSV_CHUNK_BYTES,
        &mut each,
    )
}

/// Bytes of a CSV read per batch (cut back to the last line end).
pub(crate) const CSV_CHUNK_BYTES: usize = 64 << 20;

/// `for_each_batch` on a CSV file: its bytes read a chunk at a time, cut at a line end, and
/// parsed by polars from memory with the header in front. polars' own scan of a CSV maps the
/// file, and a file truncated while mapped kills the process with SIGBUS; reading it ends in a
/// short read and a message instead.
fn csv_chunks(
    path: &Path,
    separator: u8,
    columns: &[String],
    selection: &[Expr],
    chunk_bytes: usize,
    each: &mut dyn FnMut(usize, Array2<f64>) -> Result<bool>,
) -> Result<usize> {
    use std::io::{BufRead, BufReader, Read};
    let format = Format::Csv { separator };
    let (file, _) = super::files::open_regular(path, "data")?;
    let mut reader = BufReader::new(file);
    let io = |e: std::io::Error| OvkError::io_path(path, e);
    let mut header = Vec::new();
    reader.read_until(b'\n', &mut header).map_err(io)?;
    if header.last() != Some(&b'\n') {
        header.push(b'\n');
    }
    let mut carry: Vec<u8> = Vec::new();
    let mut first = 0usize;
    loop {
        let mut chunk = std::mem::take(&mut carry);
        let want = chunk_bytes.saturating_sub(chunk.len()) as u64;
        (&mut reader)
            .take(want)
            .read_to_end(&mut chunk)
            .map_err(io)?;
        let end_of_file = chunk.len() < chunk_bytes;
        if chunk.is_empty() {
            break;
        }
        if !end_of_file {
            // Keep the last partial line for the next chunk.
            match chunk.iter().rposition(|&b| b == b'\n') {
                Some(cut) => carry = chunk.split_off(cut + 1),
                None => continue_reading(&mut reader, &mut chunk).map_err(io)?,
            }
        }
        let mut bytes = Vec::with_capacity(header.len() + chunk.len());
        bytes.extend_from_slice(&header);
        bytes.extend_from_slice(&chunk);
        drop(chunk);
        let lazy =
            csv_frame(path, separator, columns, super::load::in_memory(bytes))?.select(selection);
        let df = collected(path, format, lazy)?;
        if !hand_over(path, df, columns, &mut first, each)? {
            return Ok(first);
        }
        if end_of_file && carry.is_empty() {
            break;
        }
    }
    Ok(first)
}

/// A line longer than a chunk: read on to its end.
fn continue_reading(
    reader: &mut impl std::io::BufRead,
    chunk: &mut Vec<u8>,
) -> std::io::Result<()> {
    reader.read_until(b'\n', chunk).map(|_| ())
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
        let lazy = scan_parquet(path)?
            .select(selection)
            .slice(first as i64, len as IdxSize);
        let df = collected(path, format, lazy)?;
        if df.height() == 0 || !hand_over(path, df, columns, &mut first, each)? {
            break;
        }
    }
    Ok(first)
}

/// Give `each` the batch `df` as a matrix of `columns` whose first row is file row `*first`,
/// and move `*first` past it; false when `each` asked to stop.
fn hand_over(
    path: &Path,
    df: DataFrame,
    columns: &[String],
    first: &mut usize,
    each: &mut dyn FnMut(usize, Array2<f64>) -> Result<bool>,
) -> Result<bool> {
    if df.height() == 0 {
        return Ok(true);
    }
    let block = to_matrix(path, &df, columns, *first)?;
    drop(df);
    let (at, n) = (*first, block.nrows());
    *first += n;
    each(at, block)
}

/// polars' lazy scan of a Parquet file on disk (its footer checked first).
fn scan_parquet(path: &Path) -> Result<LazyFrame> {
    let text = path
        .to_str()
        .ok_or_else(|| input_at(path, "the path is not valid UTF-8"))?;
    super::parquet_footer::check_parquet_footer(path)?;
    let args = ScanArgsParquet {
        glob: false,
        hive_options: HiveOptions::new_disabled(),
        ..Default::default()
    };
    LazyFrame::scan_parquet(PlRefPath::new(text), args)
        .map_err(|e| unreadable(path, Format::Parquet, &e.to_string()))
}

/// polars' lazy CSV reader over `source`, the `numeric` columns parsed as f64 (polars would
/// infer i64 from the first rows and fail on a decimal further down).
fn csv_frame(
    path: &Path,
    separator: u8,
    numeric: &[String],
    source: ScanSources,
) -> Result<LazyFrame> {
    let fail = |e: PolarsError| unreadable(path, Format::Csv { separator }, &e.to_string());
    let numeric: Vec<String> = numeric.to_vec();
    LazyCsvReader::new_with_sources(source)
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

/// `lazy` collected under the read guard: a polars panic or error becomes a message naming the
/// file.
fn collected(path: &Path, format: Format, lazy: LazyFrame) -> Result<DataFrame> {
    super::guard::guarded(|| lazy.collect())
        .map_err(|panic| unreadable(path, format, &panic))?
        .map_err(|e| unreadable(path, format, &e.to_string()))
}

fn unreadable(path: &Path, format: Format, why: &str) -> OvkError {
    let kind = match format {
        Format::Csv { .. } => "CSV",
        Format::Parquet => "Parquet",
    };
    input_at(path, format!("cannot be read as {kind} in batches: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Chunks far smaller than a line or a few lines: every row arrives once, in order, with its
    /// first row's number, whatever the cut (a last line without its end included).
    #[test]
    fn csv_chunks_cut_at_line_ends_keep_every_row_once() {
        let dir = std::env::temp_dir().join(format!("ovk-batches-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        let mut text = String::from("a,skip,b\n");
        for i in 0..500 {
            text.push_str(&format!("{i},x{i},{}.5\n", 2 * i));
        }
        text.push_str("500,x,1000.5");
        std::fs::write(&path, text).unwrap();
        let columns = vec!["b".to_string(), "a".to_string()];
        let selection: Vec<Expr> = columns.iter().map(|c| col(c.as_str())).collect();
        for chunk in [7, 64, 1000, 1 << 20] {
            let mut seen = Vec::new();
            let rows = csv_chunks(
                &path,
                b',',
                &columns,
                &selection,
                chunk,
                &mut |first, block| {
                    assert_eq!(first, seen.len(), "chunk {chunk}");
                    seen.extend(block.rows().into_iter().map(|r| (r[0], r[1])));
                    Ok(true)
                },
            )
            .unwrap();
            assert_eq!(rows, 501, "chunk {chunk}");
            for (i, &(b, a)) in seen.iter().enumerate() {
                assert_eq!(
                    (a, b),
                    (i as f64, 2.0 * i as f64 + 0.5),
                    "chunk {chunk} row {i}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
