//! The fast path for delimited text that holds only numbers (the wide matrices of the papers'
//! experiments: 200 rows × 10⁵ columns). polars builds per-column buffers for every chunk of
//! rows on every thread, and infers the schema by a first full pass: 10⁵ columns took it 8 s
//! of the 10 s a 380 MB file took to load. Here rows are parsed in parallel straight into
//! columns of f64 with the standard library's correctly rounded parser, so a value is the same
//! f64 polars would give.
//!
//! Anything this path is not sure to read exactly as polars would — a quote, a cell that is not
//! plainly a number (`NA`, `true`, text), a column with no value at all — returns `None` and the
//! file goes through polars, which keeps its messages for such files.

use rayon::prelude::*;

use super::raw::{Cells, RawColumn};

/// Columns parsed from `bytes` (header first, blank lines skipped), or `None` to use polars.
/// Rows of unequal length, repeated names or bytes that are not UTF-8 also give `None`: the
/// slower path's `check_csv_shape` then names them.
pub(crate) fn read_numeric(bytes: &[u8], separator: u8) -> Option<(usize, Vec<RawColumn>)> {
    if bytes.contains(&b'"') {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    // The header is the first line that is not blank; the body is everything after it.
    let mut at = 0;
    let header_line = loop {
        let end = text[at..].find('\n').map_or(text.len(), |e| at + e);
        let line = &text[at..end];
        at = (end + 1).min(text.len());
        if !is_blank(line) {
            break line;
        }
        if end == text.len() {
            return None;
        }
    };
    let header: Vec<String> = header_line
        .trim_start_matches('\u{feff}')
        .split(separator as char)
        .map(|s| s.trim().to_string())
        .collect();
    let mut seen = std::collections::HashSet::with_capacity(header.len());
    if !header.iter().all(|h| seen.insert(h.as_str())) {
        return None; // `check_csv_shape` names the duplicate
    }
    let width = header.len();
    // Blocks of lines in parallel — cut at line ends, so even finding the lines is shared —
    // each parsed straight into its own columns (no per-row allocation), then the blocks'
    // columns joined once.
    let blocks: Option<Vec<Block>> = line_blocks(&text[at..])
        .into_par_iter()
        .map(|block| {
            let rows = block.bytes().filter(|&b| b == b'\n').count() + 1;
            Block::parse(
                block.split('\n').filter(|l| !is_blank(l)),
                rows,
                width,
                separator,
            )
        })
        .collect();
    let blocks = blocks?;
    let n_rows: usize = blocks.iter().map(|b| b.rows).sum();
    let columns: Option<Vec<RawColumn>> = header
        .into_par_iter()
        .enumerate()
        .map(|(j, name)| {
            if blocks.iter().all(|b| b.empty[j]) {
                return None;
            }
            let mut cells: Vec<Option<f64>> = Vec::with_capacity(n_rows);
            for b in &blocks {
                cells.extend_from_slice(&b.columns[j]);
            }
            let integral = blocks.iter().all(|b| b.integral[j]);
            Some(RawColumn {
                name,
                dtype: if integral { "i64" } else { "f64" }.to_string(),
                cells: Cells::Numeric(cells),
            })
        })
        .collect();
    Some((n_rows, columns?))
}

/// Bytes of text per parallel task (about 4 000 rows of 20 numbers).
const BYTES_PER_BLOCK: usize = 1 << 18;

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b.is_ascii_whitespace())
}

/// `text` cut into pieces of about `BYTES_PER_BLOCK`, each ending at a line end.
fn line_blocks(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / BYTES_PER_BLOCK + 1);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + BYTES_PER_BLOCK).min(text.len());
        end = text[end..].find('\n').map_or(text.len(), |e| end + e);
        out.push(&text[start..end]);
        start = end + 1;
    }
    out
}

/// A block of rows as columns: each column's cells, whether every value in it is an integer,
/// and whether it has no value at all.
struct Block {
    rows: usize,
    columns: Vec<Vec<Option<f64>>>,
    integral: Vec<bool>,
    empty: Vec<bool>,
}

impl Block {
    /// The rows `lines`, or None when one has another width or a cell that is not a number.
    /// `rows` is the lines' count (blank ones included), to size the columns once.
    fn parse<'a>(
        lines: impl Iterator<Item = &'a str>,
        rows: usize,
        width: usize,
        separator: u8,
    ) -> Option<Block> {
        let mut b = Block {
            rows: 0,
            columns: (0..width).map(|_| Vec::with_capacity(rows)).collect(),
            integral: vec![true; width],
            empty: vec![true; width],
        };
        for line in lines {
            b.rows += 1;
            // Separators are ASCII, so cutting at them keeps every cell valid UTF-8.
            let mut cells = line.as_bytes().split(|&c| c == separator);
            for j in 0..width {
                let cell = number(std::str::from_utf8(cells.next()?).ok()?)?;
                if let Some((_, int)) = cell {
                    b.integral[j] &= int;
                    b.empty[j] = false;
                }
                b.columns[j].push(cell.map(|(v, _)| v));
            }
            if cells.next().is_some() {
                return None;
            }
        }
        Some(b)
    }
}

/// A cell: `Some(None)` when empty, `Some(Some((value, is_integer)))` for a plain number,
/// `None` for anything else. Integers beyond i64 are numbers (polars reads such columns as
/// f64, see `check_csv_shape`).
#[allow(clippy::option_option)]
fn number(cell: &str) -> Option<Option<(f64, bool)>> {
    let t = cell.trim_ascii();
    if t.is_empty() {
        return Some(None);
    }
    let (mut digit, mut fraction) = (false, false);
    for b in t.bytes() {
        match b {
            b'0'..=b'9' => digit = true,
            b'.' | b'e' | b'E' => fraction = true,
            b'+' | b'-' => {}
            _ => return None,
        }
    }
    if !digit {
        return None;
    }
    let v: f64 = t.parse().ok()?;
    let integer = !fraction && t.parse::<i64>().is_ok();
    Some(Some((v, integer)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(text: &str) -> Option<(usize, Vec<RawColumn>)> {
        read_numeric(text.as_bytes(), b',')
    }

    #[test]
    fn numbers_become_columns_with_their_dtype() {
        let (n, c) = cols("a, b ,c\n1,2.5,\n3,-1e3,4\n\n").unwrap();
        assert_eq!(n, 2);
        assert_eq!(c[0].name, "a");
        assert_eq!(c[1].name, "b");
        assert_eq!(c[0].dtype, "i64");
        assert_eq!(c[1].dtype, "f64");
        assert_eq!(c[1].cells, Cells::Numeric(vec![Some(2.5), Some(-1000.0)]));
        assert_eq!(c[2].cells, Cells::Numeric(vec![None, Some(4.0)]));
    }

    #[test]
    fn anything_unusual_goes_to_polars() {
        assert!(cols("a,b\n1,NA\n").is_none());
        assert!(cols("a,b\n1,true\n").is_none());
        assert!(cols("a,b\n1,\"2\"\n").is_none());
        assert!(cols("a,b\n1,\n2,\n").is_none(), "an empty column");
        assert!(cols("a,b\n1,inf\n").is_none());
        assert!(cols("a,b\n1,-\n").is_none());
        assert!(cols("a,b\n1,1e\n").is_none());
    }

    #[test]
    fn tabs_and_crlf() {
        let (_, c) = read_numeric(b"a\tb\r\n1\t2\r\n", b'\t').unwrap();
        assert_eq!(c[1].name, "b");
        assert_eq!(c[1].cells, Cells::Numeric(vec![Some(2.0)]));
    }
}
