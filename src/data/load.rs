//! File → columns: the only place that talks to polars. CSV/TSV through `LazyCsvReader`,
//! Parquet through `LazyFrame::scan_parquet`, both collected and turned into a `RawTable`.

use std::path::Path;

use polars::prelude::*;

use super::csv_shape::{check_csv_shape, check_table_fits, BYTES_PER_COLUMN};
use super::numeric_csv::read_numeric;
use super::raw::{Cells, RawColumn, RawTable};
use crate::error::input_at;
use crate::Result;

/// The file formats ovk reads, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Csv { separator: u8 },
    Parquet,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Csv { separator: b'\t' } => "TSV",
            Format::Csv { .. } => "CSV",
            Format::Parquet => "Parquet",
        }
    }
}

pub(crate) fn format_of(path: &Path) -> Result<Format> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("csv") => Ok(Format::Csv { separator: b',' }),
        Some("tsv") => Ok(Format::Csv { separator: b'\t' }),
        Some("parquet") | Some("pq") => Ok(Format::Parquet),
        Some(other) => Err(input_at(
            path,
            format!("unknown file type `.{other}`; ovk reads .csv, .tsv, .parquet and .pq files"),
        )),
        None => Err(input_at(
            path,
            "no file extension; ovk reads .csv, .tsv, .parquet and .pq files",
        )),
    }
}

/// Check that `path` is a readable, non-empty file of a known format.
pub(crate) fn check_file(path: &Path) -> Result<Format> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(input_at(path, "no such file"))
        }
        Err(e) => return Err(crate::OvkError::io_path(path, e)),
    };
    if meta.is_dir() {
        return Err(input_at(path, "is a directory, not a data file"));
    }
    let format = format_of(path)?;
    if meta.len() == 0 {
        return Err(input_at(path, "the file is empty"));
    }
    Ok(format)
}

/// Read every column of a CSV/TSV/Parquet file.
pub(crate) fn read_raw(path: &Path) -> Result<RawTable> {
    let format = check_file(path)?;
    if let Format::Csv { separator } = format {
        let bytes = read_text(path)?;
        check_table_fits(path, &bytes, separator, BYTES_PER_COLUMN)?;
        // A plain numeric table is read directly; anything else is checked cell by cell and
        // read by polars.
        if let Some((n_rows, columns)) = read_numeric(&bytes, separator) {
            return table(path, n_rows, columns);
        }
        let wide = check_csv_shape(path, &bytes, separator)?;
        drop(bytes);
        return from_frame(path, format, read_frame(path, format, Some(wide))?);
    }
    from_frame(path, format, read_frame(path, format, None)?)
}

fn from_frame(path: &Path, format: Format, df: DataFrame) -> Result<RawTable> {
    if df.width() == 0 {
        return Err(input_at(path, "the file is empty"));
    }
    if df.height() == 0 {
        return Err(input_at(
            path,
            format!("has a header ({} columns) but no data rows", df.width()),
        ));
    }
    let columns = df
        .columns()
        .iter()
        .map(|c| raw_column(c).map_err(|e| polars_failure(path, format, e)))
        .collect::<Result<Vec<_>>>()?;
    table(path, df.height(), columns)
}

/// The columns as a table, once their names are known to be distinct.
fn table(path: &Path, n_rows: usize, columns: Vec<RawColumn>) -> Result<RawTable> {
    // Names are trimmed, so ` a` and `a` would collide (a CSV header is checked earlier).
    let mut seen = std::collections::HashMap::new();
    for (i, c) in columns.iter().enumerate() {
        if let Some(first) = seen.insert(c.name.as_str(), i + 1) {
            return Err(input_at(
                path,
                format!(
                    "two columns are named `{}` (columns {first} and {}); rename one of them",
                    c.name,
                    i + 1
                ),
            ));
        }
    }
    Ok(RawTable {
        path: path.to_path_buf(),
        n_rows,
        columns,
    })
}

/// polars' reading of the file; `wide` is `check_csv_shape`'s answer when it already ran.
fn read_frame(path: &Path, format: Format, wide: Option<Vec<String>>) -> Result<DataFrame> {
    let fail = |e: PolarsError| polars_failure(path, format, e);
    let pl_path = PlRefPath::try_from_path(path).map_err(fail)?;
    let lazy = match format {
        Format::Csv { separator } => {
            let wide = match wide {
                Some(w) => w,
                None => check_csv_shape(path, &read_text(path)?, separator)?,
            };
            let mut reader = LazyCsvReader::new(pl_path)
                .with_separator(separator)
                .with_has_header(true)
                // Scan every row for the schema, so a stray text cell deep in the file makes
                // its column text (reported with its row) instead of a parse failure.
                .with_infer_schema_length(None)
                .with_glob(false);
            if !wide.is_empty() {
                // polars infers i64 for any run of digits and then fails on one beyond i64;
                // a number is still a number, so such a column is read as f64.
                reader = reader
                    .with_schema_modify(|mut schema: Schema| {
                        for (name, dtype) in schema.iter_mut() {
                            if *dtype == DataType::Int64 && wide.iter().any(|w| w == name.trim()) {
                                *dtype = DataType::Float64;
                            }
                        }
                        Ok(schema)
                    })
                    .map_err(fail)?;
            }
            reader.finish().map_err(fail)?
        }
        Format::Parquet => {
            super::parquet_footer::check_parquet_footer(path)?;
            let args = ScanArgsParquet {
                glob: false,
                ..Default::default()
            };
            LazyFrame::scan_parquet(pl_path, args).map_err(fail)?
        }
    };
    super::guard::guarded(|| lazy.collect())
        .map_err(|panic| {
            input_at(
                path,
                format!(
                    "cannot be read as {}: the file is corrupt (the reader failed: {panic})",
                    format.name()
                ),
            )
        })?
        .map_err(fail)
}

/// A text table's bytes; one holding only whitespace counts as empty.
fn read_text(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(|e| crate::OvkError::io_path(path, e))?;
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(input_at(path, "the file is empty"));
    }
    Ok(bytes)
}

fn polars_failure(path: &Path, format: Format, e: PolarsError) -> crate::OvkError {
    input_at(
        path,
        format!("cannot be read as {}: {}", format.name(), polars_reason(&e)),
    )
}

/// The part of a polars error that speaks to an ovk user: its first paragraph and the original
/// cause, without the advice about Python keyword arguments that ovk does not have.
fn polars_reason(e: &PolarsError) -> String {
    let text = e.to_string();
    let first = text.split("\n\n").next().unwrap_or("").trim();
    let mut reason = first.replace('\n', " ");
    if let Some((_, rest)) = text.split_once("Original error: ```") {
        let original = rest.split("```").next().unwrap_or("");
        let original = original.split("\n\n").last().unwrap_or("").trim();
        if !original.is_empty() {
            reason = format!("{reason} ({})", original.replace('\n', " "));
        }
    }
    if text.contains("more fields than defined") {
        reason.push_str(" (a row has more cells than the header has names)");
    }
    reason
}

fn raw_column(c: &Column) -> PolarsResult<RawColumn> {
    let dtype = c.dtype().clone();
    let cells = if dtype.is_primitive_numeric() || dtype.is_bool() {
        let f = c.cast(&DataType::Float64)?;
        Cells::Numeric(f.f64()?.iter().collect())
    } else {
        let s = if dtype.is_string() {
            c.clone()
        } else {
            c.cast(&DataType::String)?
        };
        Cells::Text(s.str()?.iter().map(|v| v.map(|v| v.to_string())).collect())
    };
    Ok(RawColumn {
        name: c.name().trim().to_string(),
        dtype: dtype.to_string(),
        cells,
    })
}

/// Write a table as Parquet (tests and conversions; keeps polars inside `data`).
pub fn write_parquet(table_path: &Path, out: &Path) -> Result<()> {
    let format = check_file(table_path)?;
    let mut df = read_frame(table_path, format, None)?;
    let file = std::fs::File::create(out).map_err(|e| crate::OvkError::io_path(out, e))?;
    ParquetWriter::new(file)
        .finish(&mut df)
        .map_err(|e| input_at(out, format!("cannot write Parquet: {e}")))?;
    Ok(())
}
