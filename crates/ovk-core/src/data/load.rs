//! File → columns: where data tables meet polars (the one other polars reader is kde's
//! candidate file, `methods/kde/candidates.rs`). CSV/TSV through `LazyCsvReader`, Parquet
//! through `LazyFrame::scan_parquet`, both collected and turned into a `RawTable`.

use std::path::Path;

use polars::prelude::*;
use rayon::prelude::*;

use super::csv_shape::{check_csv_shape, check_table_fits, BYTES_PER_COLUMN};
use super::files;
use super::numeric_csv::read_numeric;
use super::raw::{Cells, Numbers, RawColumn, RawTable, Scan};
use crate::error::input_at;
use crate::Result;

/// The file formats ovk reads, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Delimited text with this field separator (`,` for .csv, tab for .tsv).
    Csv {
        /// The field separator byte.
        separator: u8,
    },
    /// Apache Parquet.
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
            format!("unknown file type `.{other}`; ovk reads .csv, .tsv, .parquet, .pq, .arff, .svm and .libsvm files"),
        )),
        None => Err(input_at(
            path,
            "no file extension; ovk reads .csv, .tsv, .parquet, .pq, .arff, .svm and .libsvm files",
        )),
    }
}

/// Check that `path` is a readable, non-empty regular file of a known format.
pub(crate) fn check_file(path: &Path) -> Result<Format> {
    let (_, meta) = open_file(path)?;
    let format = format_of(path)?;
    if meta.len() == 0 {
        return Err(input_at(path, "the file is empty"));
    }
    Ok(format)
}

fn open_file(path: &Path) -> Result<(std::fs::File, std::fs::Metadata)> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(input_at(path, "no such file"))
        }
        Ok(m) if m.is_dir() => return Err(input_at(path, "is a directory, not a data file")),
        _ => {}
    }
    files::open_regular(path, "data")
}

/// Reading holds the file's bytes and polars' columns at once (a numeric cell of two or more
/// characters becomes an 8-byte f64): refused up front when that would not fit. The matrices
/// built from them are counted by the run's own estimate.
const BYTES_PER_FILE_BYTE: u64 = 2;

/// Refuse a file of `len` bytes whose reading would not fit in memory, with `advice`.
pub(crate) fn check_read_fits(path: &Path, len: u64, advice: &str) -> Result<()> {
    crate::kernels::check_fits_or(
        len.saturating_mul(BYTES_PER_FILE_BYTE),
        &format!(
            "reading {} ({})",
            path.display(),
            crate::kernels::format_bytes(len)
        ),
        advice,
    )
}

/// The file's bytes, read once into memory (polars then parses the buffer: a memory-mapped
/// file truncated while it is read would kill the process with SIGBUS).
fn read_bytes(path: &Path, format: Format) -> Result<Vec<u8>> {
    let (_, meta) = open_file(path)?;
    check_read_fits(
        path,
        meta.len(),
        "use a smaller file (subsample its rows or keep only the columns you need)",
    )?;
    match format {
        Format::Csv { .. } => files::read_text_file(path, u64::MAX, format.name()),
        Format::Parquet => files::read_regular(path, u64::MAX, "Parquet data"),
    }
}

/// Read every column of a file, and hash the very bytes parsed; a sparse block (LIBSVM,
/// sparse ARFF) is written out as ordinary columns.
pub(crate) fn read_raw(path: &Path) -> Result<RawTable> {
    read_raw_keeping_sparse(path)?.densified()
}

/// `read_raw`, a sparse feature block left sparse (`RawTable::sparse`).
pub(crate) fn read_raw_keeping_sparse(path: &Path) -> Result<RawTable> {
    if let Some(research) = super::research_formats::research_format_of(path) {
        return super::research_formats::read_research(path, research);
    }
    let format = check_file(path)?;
    let bytes = read_bytes(path, format)?;
    let size = bytes.len() as u64;
    let hashed = |mut t: RawTable, sha256: String| {
        t.sha256 = sha256;
        t.size = size;
        t
    };
    // polars takes its own handle on the same buffer, so the bytes are hashed while it parses.
    let buffers = one_buffer(bytes);
    let sources = ScanSources::Buffers(buffers.clone());
    let bytes: &[u8] = &buffers[0];
    let (sha256, frame) = if let Format::Csv { separator } = format {
        // A text file holding only whitespace counts as empty.
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            return Err(input_at(path, "the file is empty"));
        }
        refuse_other_separator(path, separator, header_line(bytes))?;
        check_table_fits(path, bytes, separator, BYTES_PER_COLUMN)?;
        // A plain numeric table is read directly (hashed meanwhile); anything else is checked
        // cell by cell and read by polars.
        let (sha256, numeric) = rayon::join(
            || super::prepare::sha256_bytes(bytes),
            || read_numeric(bytes, separator),
        );
        if let Some((n_rows, columns)) = numeric {
            crate::util::drop_later::drop_later((buffers, sources));
            return Ok(hashed(table(path, n_rows, columns)?, sha256));
        }
        (sha256, read_frame(path, format, bytes, sources)?)
    } else {
        // A Parquet file's hash took 0.085 s of 0.5 s for 132 MB when it came first.
        let (sha256, frame) = rayon::join(
            || super::prepare::sha256_bytes(bytes),
            || read_frame(path, format, bytes, sources),
        );
        (sha256, frame?)
    };
    crate::util::drop_later::drop_later(buffers);
    let t = from_frame(path, format, frame)?;
    Ok(hashed(t, sha256))
}

fn from_frame(path: &Path, format: Format, mut df: DataFrame) -> Result<RawTable> {
    let sparse = match format {
        Format::Parquet => super::parquet_sparse::take_sparse_lists(path, &mut df)?,
        Format::Csv { .. } => None,
    };
    if df.width() == 0 && sparse.is_none() {
        return Err(input_at(path, "the file is empty"));
    }
    if df.height() == 0 {
        return Err(input_at(
            path,
            format!("has a header ({} columns) but no data rows", df.width()),
        ));
    }
    let height = df.height();
    // Each polars column is dropped once converted: the frame and the table are never both
    // whole in memory. Columns convert in parallel (20 columns of 10⁶ rows took 0.2 s on one
    // thread).
    let columns = df
        .into_columns()
        .into_par_iter()
        .map(|c| raw_column(&c).map_err(|e| polars_failure(path, format, e)))
        .collect::<Result<Vec<_>>>()?;
    let mut t = table(path, height, columns)?;
    t.sparse = sparse;
    Ok(t)
}

/// The first line of delimited text, without its line end.
fn header_line(bytes: &[u8]) -> &[u8] {
    let line = bytes.split(|&b| b == b'\n').next().unwrap_or_default();
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// A header without the expected separator but with another was written with that one
/// (European spreadsheets export `;`); the ragged-row or "no column `x`" message that would
/// follow hides it.
fn refuse_other_separator(path: &Path, separator: u8, header: &[u8]) -> Result<()> {
    if header.contains(&separator) || header.contains(&b'"') {
        return Ok(());
    }
    let others = [b';', b'\t', b'|', b',']
        .into_iter()
        .filter(|&b| b != separator);
    let Some(sep) = others.into_iter().find(|b| header.contains(b)) else {
        return Ok(());
    };
    let name = String::from_utf8_lossy(header);
    let fix = match sep {
        b'\t' => "tabs: name it .tsv".to_string(),
        b',' => "commas: name it .csv".to_string(),
        other => {
            let c = other as char;
            format!(
                "'{c}': convert it (e.g. `tr '{c}' ','`, when no cell holds a decimal comma or a \
                 quoted '{c}')"
            )
        }
    };
    let read_as = if separator == b'\t' { "tab" } else { "comma" };
    Err(input_at(
        path,
        format!(
            "reads as a single column named `{name}` ({read_as}-separated); the file seems \
             separated by {fix}"
        ),
    ))
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
        sha256: String::new(),
        size: 0,
        sparse: None,
    })
}

/// polars' reading of the file's `bytes` (already read, and checked by `read_raw`), which
/// `sources` hands to it.
fn read_frame(
    path: &Path,
    format: Format,
    bytes: &[u8],
    sources: ScanSources,
) -> Result<DataFrame> {
    let fail = |e: PolarsError| polars_failure(path, format, e);
    let lazy = match format {
        Format::Csv { separator } => {
            let wide = check_csv_shape(path, bytes, separator)?;
            let mut reader = LazyCsvReader::new_with_sources(sources)
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
                // Hive partitions come from directory paths; an in-memory buffer has none.
                hive_options: HiveOptions::new_disabled(),
                ..Default::default()
            };
            LazyFrame::scan_parquet_sources(sources, args).map_err(fail)?
        }
    };
    super::guard::guarded(|| lazy.collect())
        .map_err(|panic| {
            input_at(
                path,
                format!(
                    "cannot be read as {}: the reader failed ({panic}); the file is corrupt, or \
                     holds a column of a type ovk does not read (decimal, nested or binary \
                     columns: convert them to float64 or text)",
                    format.name()
                ),
            )
        })?
        .map_err(fail)
}

/// Bytes already in memory, as polars' scan source (it never maps the file itself).
pub(crate) fn in_memory(bytes: Vec<u8>) -> ScanSources {
    ScanSources::Buffers(one_buffer(bytes))
}

/// polars' buffer type is not re-exported; it is named here by inference alone.
fn one_buffer<B: From<Vec<u8>>>(bytes: Vec<u8>) -> std::sync::Arc<[B]> {
    std::sync::Arc::from(vec![B::from(bytes)])
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
        Cells::Numeric(numbers(f.f64()?))
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

/// A float column's values copied chunk by chunk (a memcpy when it has no null), nulls as NaN
/// marked in the mask, with their scan (`raw::Scan`): one pass here instead of the three checks
/// after reading.
fn numbers(ca: &Float64Chunked) -> Numbers {
    let mut values = Vec::with_capacity(ca.len());
    let mut null = (ca.null_count() > 0).then(|| Vec::with_capacity(ca.len()));
    for arr in ca.downcast_iter() {
        match (null.as_mut(), arr.validity()) {
            (Some(null), Some(valid)) => {
                for (v, ok) in arr.values().iter().zip(valid.iter()) {
                    values.push(if ok { *v } else { f64::NAN });
                    null.push(!ok);
                }
            }
            (Some(null), None) => {
                values.extend_from_slice(arr.values());
                null.extend(std::iter::repeat_n(false, arr.len()));
            }
            (None, _) => values.extend_from_slice(arr.values()),
        }
    }
    let scan = Some(Scan::of(&values));
    Numbers { values, null, scan }
}

/// Write a table as Parquet (tests and conversions; keeps polars inside `data`).
pub fn write_parquet(table_path: &Path, out: &Path) -> Result<()> {
    let format = check_file(table_path)?;
    let buffers = one_buffer(read_bytes(table_path, format)?);
    let sources = ScanSources::Buffers(buffers.clone());
    let mut df = read_frame(table_path, format, &buffers[0], sources)?;
    let file = std::fs::File::create(out).map_err(|e| crate::OvkError::io_path(out, e))?;
    ParquetWriter::new(file)
        .finish(&mut df)
        .map_err(|e| input_at(out, format!("cannot write Parquet: {e}")))?;
    Ok(())
}
