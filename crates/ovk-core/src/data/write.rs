//! Tables out: CSV by hand (numbers in Rust's shortest round-trip form, so a value read back is
//! the same f64; NaN, ovk's missing value, as an empty cell) or Parquet through polars, chosen by the file's extension; `-` is standard
//! output (CSV). Where the bytes go (and that a reader never sees half a table) is
//! `session::output`'s business.

use std::io::Write;
use std::path::Path;

use polars::prelude::*;
use rayon::prelude::*;

use super::load::format_of;
use super::load::Format;
use super::parquet_write::{write_plain_parquet, MAX_PAGE_BYTES};
use crate::error::input_at;
use crate::Result;

/// One output column.
#[derive(Debug, Clone, PartialEq)]
pub enum OutColumn {
    /// A numeric column, one value per row.
    Numbers(Vec<f64>),
    /// A text column (class labels), one value per row.
    Text(Vec<String>),
}

impl OutColumn {
    fn len(&self) -> usize {
        match self {
            OutColumn::Numbers(v) => v.len(),
            OutColumn::Text(v) => v.len(),
        }
    }
}

/// The format of a table written to `path`: by extension; `-` and devices (`/dev/stdout`, a
/// FIFO without an extension) get CSV.
pub fn output_format(path: &Path) -> Result<Format> {
    if path.as_os_str() == "-" || (path.starts_with("/dev") && path.extension().is_none()) {
        return Ok(Format::Csv { separator: b',' });
    }
    format_of(path).map_err(|_| {
        input_at(
            path,
            "cannot tell the format to write from the extension; name a .csv, .tsv or \
             .parquet file (or - for standard output)",
        )
    })
}

/// Write named columns (all the same length) in `format` to `out` (the caller decides where:
/// `session::output` plans the file, so nothing is clobbered or half-written).
pub fn write_table(
    out: &mut dyn Write,
    format: Format,
    columns: &[(String, OutColumn)],
) -> std::io::Result<()> {
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    if let Some((name, _)) = columns.iter().find(|(_, c)| c.len() != rows) {
        return Err(std::io::Error::other(format!(
            "write_table: column `{name}` differs in length"
        )));
    }
    match format {
        Format::Csv { separator } => write_csv(out, columns, rows, separator),
        Format::Parquet => {
            let numbers: Option<Vec<(&str, &[f64])>> = columns
                .iter()
                .map(|(n, c)| match c {
                    OutColumn::Numbers(v) => Some((n.as_str(), v.as_slice())),
                    OutColumn::Text(_) => None,
                })
                .collect();
            if let Some(numbers) = numbers.filter(|_| rows * 8 <= MAX_PAGE_BYTES) {
                return write_plain_parquet(out, &numbers);
            }
            let mut df = frame(columns).map_err(std::io::Error::other)?;
            // Statistics per column cost more than the data for 10⁵ narrow columns, and
            // random numbers do not compress.
            ParquetWriter::new(out)
                .with_statistics(StatisticsOptions::empty())
                .with_compression(ParquetCompression::Uncompressed)
                .finish(&mut df)
                .map_err(std::io::Error::other)?;
            Ok(())
        }
    }
}

fn write_csv(
    out: &mut dyn Write,
    columns: &[(String, OutColumn)],
    rows: usize,
    separator: u8,
) -> std::io::Result<()> {
    write_csv_header(out, columns, separator)?;
    write_csv_rows(out, columns, rows, separator)
}

fn write_csv_header(
    out: &mut dyn Write,
    columns: &[(String, OutColumn)],
    separator: u8,
) -> std::io::Result<()> {
    let sep = separator as char;
    let header: Vec<String> = columns.iter().map(|(n, _)| field(n, sep)).collect();
    writeln!(out, "{}", header.join(&sep.to_string()))
}

fn write_csv_rows(
    out: &mut dyn Write,
    columns: &[(String, OutColumn)],
    rows: usize,
    separator: u8,
) -> std::io::Result<()> {
    let sep = separator as char;
    // Formatting numbers is the cost (10⁵ columns × 200 rows): a batch of rows is formatted
    // in parallel, then written in order.
    const BATCH: usize = 64;
    let format_row = |i: usize| {
        let mut line = String::new();
        let mut buf = ryu_like::Buffer::default();
        for (j, (_, c)) in columns.iter().enumerate() {
            if j > 0 {
                line.push(sep);
            }
            match c {
                // A missing value is an empty cell, as ovk reads one.
                OutColumn::Numbers(v) if v[i].is_nan() => {}
                OutColumn::Numbers(v) => line.push_str(buf.format(v[i])),
                OutColumn::Text(v) => line.push_str(&field(&v[i], sep)),
            }
        }
        line.push('\n');
        line
    };
    for start in (0..rows).step_by(BATCH) {
        let lines: Vec<String> = (start..(start + BATCH).min(rows))
            .into_par_iter()
            .map(format_row)
            .collect();
        for line in lines {
            out.write_all(line.as_bytes())?;
        }
    }
    Ok(())
}

/// A table written a block of rows at a time, so the whole never needs to be in memory: CSV
/// rows as they come (the header with the first block), Parquet one row group per block. Every
/// block has the same columns, in the same order.
pub(crate) struct BlockWriter<'a> {
    out: Option<&'a mut dyn Write>,
    format: Format,
    header_written: bool,
    parquet: Option<polars::io::parquet::write::BatchedWriter<&'a mut dyn Write>>,
}

impl<'a> BlockWriter<'a> {
    pub fn new(out: &'a mut dyn Write, format: Format) -> Self {
        BlockWriter {
            out: Some(out),
            format,
            header_written: false,
            parquet: None,
        }
    }

    /// Append the rows of `columns`.
    pub fn write(&mut self, columns: &[(String, OutColumn)]) -> std::io::Result<()> {
        let rows = columns.first().map_or(0, |(_, c)| c.len());
        if let Some((name, _)) = columns.iter().find(|(_, c)| c.len() != rows) {
            return Err(std::io::Error::other(format!(
                "write_table: column `{name}` differs in length"
            )));
        }
        match self.format {
            Format::Csv { separator } => {
                let Some(out) = self.out.as_deref_mut() else {
                    return Err(std::io::Error::other("BlockWriter: written after its end"));
                };
                if !self.header_written {
                    write_csv_header(out, columns, separator)?;
                    self.header_written = true;
                }
                write_csv_rows(out, columns, rows, separator)
            }
            Format::Parquet => {
                let df = frame(columns).map_err(std::io::Error::other)?;
                if self.parquet.is_none() {
                    let out = self
                        .out
                        .take()
                        .ok_or_else(|| std::io::Error::other("BlockWriter: no output"))?;
                    let w = ParquetWriter::new(out)
                        .with_statistics(StatisticsOptions::empty())
                        .with_compression(ParquetCompression::Uncompressed)
                        .batched(df.schema())
                        .map_err(std::io::Error::other)?;
                    self.parquet = Some(w);
                }
                match &mut self.parquet {
                    Some(w) => w.write_batch(&df).map_err(std::io::Error::other),
                    None => Ok(()),
                }
            }
        }
    }

    /// Close the table (Parquet's footer).
    pub fn finish(self) -> std::io::Result<()> {
        match self.parquet {
            Some(w) => w.finish().map(|_| ()).map_err(std::io::Error::other),
            None => Ok(()),
        }
    }
}

/// Shortest round-trip text of an f64 (Rust's `Display`), without a fresh String per cell.
mod ryu_like {
    use std::fmt::Write;

    #[derive(Default)]
    pub struct Buffer(String);

    impl Buffer {
        pub fn format(&mut self, v: f64) -> &str {
            self.0.clear();
            let _ = write!(self.0, "{v}");
            &self.0
        }
    }
}

fn field(s: &str, sep: char) -> String {
    if s.contains([sep, '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn frame(columns: &[(String, OutColumn)]) -> PolarsResult<DataFrame> {
    let cols: Vec<Column> = columns
        .iter()
        .map(|(name, c)| match c {
            OutColumn::Numbers(v) => Column::new(name.as_str().into(), v.as_slice()),
            OutColumn::Text(v) => Column::new(name.as_str().into(), v.as_slice()),
        })
        .collect();
    DataFrame::new_infer_height(cols)
}
