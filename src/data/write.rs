//! Tables out: CSV by hand (numbers in Rust's shortest round-trip form, so a value read back is
//! the same f64) or Parquet through polars, chosen by the file's extension; `-` is standard
//! output (CSV). Files are written beside the target and renamed into place, so a reader never
//! sees half a table and a failed write leaves the old file as it was.

use std::io::Write;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use rayon::prelude::*;

use super::load::{format_of, Format};
use crate::error::input_at;
use crate::{OvkError, Result};

/// One output column.
#[derive(Debug, Clone, PartialEq)]
pub enum OutColumn {
    Numbers(Vec<f64>),
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

/// Where a table goes: a file (format by extension) or standard output (CSV).
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Write named columns (all the same length) to `path`.
pub fn write_table(path: &Path, columns: &[(String, OutColumn)]) -> Result<()> {
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    if let Some((name, _)) = columns.iter().find(|(_, c)| c.len() != rows) {
        return Err(OvkError::internal(format!(
            "write_table: column `{name}` differs in length"
        )));
    }
    if is_stdout(path) {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        return write_csv(&mut out, columns, rows, b',')
            .and_then(|_| out.flush())
            .map_err(|e| OvkError::io("writing to standard output", e));
    }
    let format = format_of(path)?;
    write_atomically(path, |file| match format {
        Format::Csv { separator } => {
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            write_csv(&mut out, columns, rows, separator)?;
            out.flush()?;
            out.into_inner().map_err(|e| e.into_error())?.sync_all()
        }
        Format::Parquet => {
            let mut df = frame(columns).map_err(std::io::Error::other)?;
            let file = file.try_clone()?;
            // Statistics per column cost more than the data for 10⁵ narrow columns, and
            // random numbers do not compress.
            ParquetWriter::new(file)
                .with_statistics(StatisticsOptions::empty())
                .with_compression(ParquetCompression::Uncompressed)
                .finish(&mut df)
                .map_err(std::io::Error::other)?;
            Ok(())
        }
    })
}

fn write_csv(
    out: &mut impl Write,
    columns: &[(String, OutColumn)],
    rows: usize,
    separator: u8,
) -> std::io::Result<()> {
    let sep = separator as char;
    let header: Vec<String> = columns.iter().map(|(n, _)| field(n, sep)).collect();
    writeln!(out, "{}", header.join(&sep.to_string()))?;
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

/// Create a temporary file beside `path`, let `fill` write it, then rename it over `path`;
/// on failure the temporary is removed and `path` is untouched.
pub(crate) fn write_atomically(
    path: &Path,
    fill: impl FnOnce(&std::fs::File) -> std::io::Result<()>,
) -> Result<()> {
    let name = path
        .file_name()
        .ok_or_else(|| input_at(path, "not a file name"))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::File::create(&tmp).and_then(|f| fill(&f));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(OvkError::io_path(path, e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        OvkError::io_path(path, e)
    })
}
