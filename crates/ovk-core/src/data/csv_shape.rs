//! One pass over a CSV/TSV file's bytes before polars parses it, so that the mistakes polars
//! reports vaguely (or silently repairs) get a row and a column: bytes that are not UTF-8, rows
//! with fewer or more cells than the header, a header naming a column twice (polars would
//! rename the second `a` to `a_duplicated_0`), an unclosed quote, and a table too large for the memory available.

use rayon::prelude::*;
use std::collections::HashMap;
use std::path::Path;

use crate::error::input_at;
use crate::Result;

/// Bytes a table costs per column beyond its cells: ovk's own column, or, when polars reads
/// it, polars' builders and schema (measured about 2 KB); and per cell (`Option<f64>`). The
/// matrices built later are counted by each method's own estimate.
pub(crate) const BYTES_PER_COLUMN: u64 = 128;
pub(crate) const BYTES_PER_COLUMN_POLARS: u64 = 2048;
const BYTES_PER_CELL: u64 = 16;

/// Refuse, from the header and a count of lines, a table that would not fit in memory (a
/// transposed file, a data row used as header): before any parser spends gigabytes on it.
pub(crate) fn check_table_fits(
    path: &Path,
    bytes: &[u8],
    separator: u8,
    per_column: u64,
) -> Result<()> {
    let Some(header) = bytes
        .split(|&b| b == b'\n')
        .find(|l| !l.iter().all(u8::is_ascii_whitespace))
    else {
        return Ok(());
    };
    let columns = header.iter().filter(|&&b| b == separator).count() as u64 + 1;
    // An upper bound on the rows (blank lines counted too), in one vectorised pass per core.
    let rows = bytes
        .par_chunks(1 << 20)
        .map(|c| count_byte(c, b'\n'))
        .sum::<usize>() as u64;
    let need = (bytes.len() as u64)
        .saturating_add(columns.saturating_mul(per_column))
        .saturating_add(columns.saturating_mul(rows).saturating_mul(BYTES_PER_CELL));
    crate::kernels::check_fits_or(
        need,
        &format!(
            "{}: reading {columns} columns × {rows} rows",
            path.display()
        ),
        "is the file transposed? otherwise subsample its rows or columns",
    )
}

/// How many bytes of `bytes` equal `b`, eight at a time: a byte-by-byte count ran at about
/// 2 GB/s, a sizeable share of reading a numeric table.
pub(crate) fn count_byte(bytes: &[u8], b: u8) -> usize {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let pattern = u64::from_ne_bytes([b; 8]);
    let words = bytes.chunks_exact(8);
    let tail = words.remainder().iter().filter(|&&c| c == b).count();
    let whole: usize = words
        .map(|w| {
            // A zero byte of x (a match) is the only one whose high bit ends clear here.
            let x = u64::from_ne_bytes(w.try_into().unwrap_or_default()) ^ pattern;
            (!(((x & LOW7) + LOW7) | x | LOW7)).count_ones() as usize
        })
        .sum();
    whole + tail
}

/// Check the shape of delimited text; `bytes` is the whole file. Returns the names of the
/// columns holding a whole number beyond i64 (polars infers i64 for any run of digits, then
/// fails on such a cell; the loader reads these columns as f64).
pub(crate) fn check_csv_shape(path: &Path, bytes: &[u8], separator: u8) -> Result<Vec<String>> {
    check_table_fits(path, bytes, separator, BYTES_PER_COLUMN_POLARS)?;
    let bad_utf8 = std::str::from_utf8(bytes).err().map(|e| e.valid_up_to());
    let mut scan = Scan {
        path,
        header: Vec::new(),
        positions: HashMap::new(),
        name: Vec::new(),
        record: 0,
        cells: 1,
        blank: true,
        line: 1,
        record_line: 1,
        wide: Vec::new(),
    };
    let mut in_quotes = false;
    let mut cell_start = 0;
    let mut quote_line = 0;
    for (pos, &b) in bytes.iter().enumerate() {
        if Some(pos) == bad_utf8 {
            return Err(scan.not_utf8(b));
        }
        if b == b'"' {
            // A doubled quote inside a quoted field toggles twice: the escape needs no case.
            in_quotes = !in_quotes;
            quote_line = scan.line;
            scan.blank = false;
            scan.push(b);
            continue;
        }
        if b == b'\n' {
            scan.line += 1;
        }
        if in_quotes {
            scan.blank = false;
            scan.push(b);
        } else if b == separator {
            scan.blank = false;
            scan.note_cell(&bytes[cell_start..pos]);
            scan.end_cell()?;
            cell_start = pos + 1;
        } else if b == b'\n' {
            scan.note_cell(&bytes[cell_start..pos]);
            scan.end_record()?;
            cell_start = pos + 1;
        } else {
            if !b.is_ascii_whitespace() {
                scan.blank = false;
            }
            scan.push(b);
        }
    }
    if in_quotes {
        return Err(input_at(
            path,
            format!("a quote opened on line {quote_line} is never closed"),
        ));
    }
    scan.note_cell(&bytes[cell_start.min(bytes.len())..]);
    scan.end_record()?;
    let mut wide = scan.wide;
    wide.sort_unstable();
    wide.dedup();
    Ok(wide
        .into_iter()
        .filter_map(|c| scan.header.get(c).cloned())
        .collect())
}

/// A cell spelling a whole number that i64 cannot hold (`99999999999999999999`).
fn is_wide_integer(cell: &[u8]) -> bool {
    let t = cell.trim_ascii();
    let digits = t.strip_prefix(b"-").unwrap_or(t);
    digits.len() >= 19
        && digits.iter().all(u8::is_ascii_digit)
        && std::str::from_utf8(t).is_ok_and(|t| t.parse::<i64>().is_err())
}

struct Scan<'a> {
    path: &'a Path,
    header: Vec<String>,
    positions: HashMap<String, usize>,
    /// The header cell being read (only the header's cells are kept).
    name: Vec<u8>,
    /// 0 while reading the header, then the 1-based data row.
    record: usize,
    cells: usize,
    blank: bool,
    line: usize,
    record_line: usize,
    /// 0-based columns with a whole number beyond i64 in some data row.
    wide: Vec<usize>,
}

impl Scan<'_> {
    fn push(&mut self, b: u8) {
        if self.record == 0 {
            self.name.push(b);
        }
    }

    fn note_cell(&mut self, cell: &[u8]) {
        if self.record > 0 && is_wide_integer(cell) {
            self.wide.push(self.cells - 1);
        }
    }

    fn end_cell(&mut self) -> Result<()> {
        if self.record == 0 {
            self.end_name()?;
        }
        self.cells += 1;
        Ok(())
    }

    fn end_name(&mut self) -> Result<()> {
        let name = unquote(&String::from_utf8_lossy(&self.name));
        self.name.clear();
        let column = self.header.len() + 1;
        if let Some(first) = self.positions.insert(name.clone(), column) {
            return Err(input_at(
                self.path,
                format!(
                    "the header names column `{name}` twice (columns {first} and {column}); \
                     rename one of them"
                ),
            ));
        }
        self.header.push(name);
        Ok(())
    }

    fn end_record(&mut self) -> Result<()> {
        if self.blank {
            // Whitespace-only lines are skipped by the reader too.
            self.name.clear();
        } else if self.record == 0 {
            self.end_name()?;
            self.record = 1;
        } else {
            if self.cells != self.header.len() {
                return Err(input_at(
                    self.path,
                    format!(
                        "data row {} (line {}) has {} cells but the header names {} columns",
                        self.record,
                        self.record_line,
                        self.cells,
                        self.header.len()
                    ),
                ));
            }
            self.record += 1;
        }
        self.cells = 1;
        self.blank = true;
        self.record_line = self.line;
        Ok(())
    }

    fn not_utf8(&self, byte: u8) -> crate::OvkError {
        let place = if self.record == 0 {
            format!("the header, column {}", self.cells)
        } else {
            let name = self
                .header
                .get(self.cells - 1)
                .map(|n| format!(" `{n}`"))
                .unwrap_or_default();
            format!(
                "data row {} (line {}), column {}{name}",
                self.record, self.line, self.cells
            )
        };
        input_at(
            self.path,
            format!(
                "is not UTF-8 text: byte 0x{byte:02X} in {place} (Latin-1 or Windows-1252?); \
                 save the file as UTF-8"
            ),
        )
    }
}

/// A header cell as the reader names the column: trimmed, surrounding quotes removed.
fn unquote(cell: &str) -> String {
    let t = cell.trim();
    match t.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        Some(inner) => inner.replace("\"\"", "\"").trim().to_string(),
        None => t.to_string(),
    }
}

#[cfg(test)]
mod count_tests {
    #[test]
    fn counts_every_byte_at_every_offset() {
        let text: Vec<u8> = (0..1000u32)
            .map(|i| [b'\n', b'a', 0x8a, 0xff, b'\n'][(i * 7 % 5) as usize])
            .collect();
        for start in 0..9 {
            for b in [b'\n', b'a', 0x8a, 0xff, 0] {
                let want = text[start..].iter().filter(|&&c| c == b).count();
                assert_eq!(
                    super::count_byte(&text[start..], b),
                    want,
                    "{b} from {start}"
                );
            }
        }
    }
}
