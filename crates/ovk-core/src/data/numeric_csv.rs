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

use super::csv_shape::count_byte;
use super::raw::{Cells, Numbers, RawColumn, Scan};

/// Columns parsed from `bytes` (header first, blank lines skipped), or `None` to use polars.
/// Rows of unequal length, repeated names or bytes that are not UTF-8 also give `None`: the
/// slower path's `check_csv_shape` then names them.
pub(crate) fn read_numeric(bytes: &[u8], separator: u8) -> Option<(usize, Vec<RawColumn>)> {
    // The header is the first line that is not blank; the body is everything after it.
    let mut at = 0;
    let header_line = loop {
        let end = next_line_end(bytes, at);
        let line = &bytes[at..end];
        at = (end + 1).min(bytes.len());
        if !is_blank(line) {
            break std::str::from_utf8(line).ok()?;
        }
        if end == bytes.len() {
            return None;
        }
    };
    if header_line.contains('"') {
        return None;
    }
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
    // each parsed straight into its own stretch of the final columns: the columns are
    // allocated once, sized by the line count, and never copied.
    // Each piece is checked for UTF-8 and its lines counted on its own thread: sequential
    // passes over the whole file did that before, and looked for quotes (about 60 ms of a
    // 190 MB file's 0.75 s). A piece starts after a line end, so it holds whole characters. A
    // quote needs no pass of its own: a cell holding one is not a number, so the parse below
    // gives the file to polars.
    let (pieces, lines): (Vec<&str>, Vec<usize>) = line_blocks(&bytes[at..])
        .into_par_iter()
        .map(|p| {
            let text = std::str::from_utf8(p).ok()?;
            Some((text, count_byte(p, b'\n') + 1))
        })
        .collect::<Option<Vec<_>>>()?
        .into_iter()
        .unzip();
    let capacity: usize = lines.iter().sum();
    let mut columns: Vec<Vec<f64>> = (0..width).map(|_| vec![0.0; capacity]).collect();
    let mut stretches: Vec<Vec<&mut [f64]>> = pieces.iter().map(|_| Vec::new()).collect();
    for column in columns.iter_mut() {
        let mut rest: &mut [f64] = column;
        for (stretch, &n) in stretches.iter_mut().zip(&lines) {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
            stretch.push(head);
            rest = tail;
        }
    }
    let blocks: Option<Vec<Block>> = pieces
        .into_par_iter()
        .zip(stretches)
        .map(|(piece, mut stretch)| {
            let lines = piece.split('\n').filter(|l| !is_blank(l.as_bytes()));
            Block::parse(lines, &mut stretch, separator)
        })
        .collect();
    let blocks = blocks?;
    let n_rows: usize = blocks.iter().map(|b| b.rows).sum();
    if n_rows < capacity {
        // Blank lines left gaps at the ends of the blocks' stretches: close them up.
        columns.par_iter_mut().for_each(|column| {
            let (mut from, mut to) = (0, 0);
            for (b, &n) in blocks.iter().zip(&lines) {
                column.copy_within(from..from + b.rows, to);
                from += n;
                to += b.rows;
            }
            column.truncate(n_rows);
        });
    }
    let columns: Option<Vec<RawColumn>> = header
        .into_par_iter()
        .zip(columns)
        .enumerate()
        .map(|(j, (name, values))| {
            if blocks.iter().all(|b| b.empty[j]) {
                return None;
            }
            // An empty cell is the only null; its value is already NaN.
            let null = blocks
                .iter()
                .any(|b| b.null[j])
                .then(|| values.iter().map(|v| v.is_nan()).collect());
            let integral = blocks.iter().all(|b| b.integral[j]);
            // A plain number is finite; only an empty cell is NaN.
            let scan = Scan {
                nan: null.is_some(),
                infinite: blocks.iter().any(|b| b.infinite[j]),
                max_abs: blocks.iter().map(|b| b.max_abs[j]).fold(0.0, f64::max),
            };
            Some(RawColumn {
                name,
                dtype: if integral { "i64" } else { "f64" }.to_string(),
                cells: Cells::Numeric(Numbers {
                    values,
                    null,
                    scan: Some(scan),
                }),
            })
        })
        .collect();
    Some((n_rows, columns?))
}

/// Bytes of text per parallel task (about 4 000 rows of 20 numbers).
const BYTES_PER_BLOCK: usize = 1 << 18;

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// The end of the line that starts at `at`: the next `\n`, or the end of `bytes`.
fn next_line_end(bytes: &[u8], at: usize) -> usize {
    bytes[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |e| at + e)
}

/// `bytes` cut into pieces of about `BYTES_PER_BLOCK`, each ending at a line end.
fn line_blocks(bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::with_capacity(bytes.len() / BYTES_PER_BLOCK + 1);
    let mut start = 0;
    while start < bytes.len() {
        let end = next_line_end(bytes, (start + BYTES_PER_BLOCK).min(bytes.len()));
        out.push(&bytes[start..end]);
        start = end + 1;
    }
    out
}

/// What parsing a block of rows found, column by column: whether a cell was empty, whether
/// every value is an integer, whether the column has no value at all, whether a value is
/// infinite (`1e999`), and the largest finite |value|.
struct Block {
    rows: usize,
    null: Vec<bool>,
    integral: Vec<bool>,
    empty: Vec<bool>,
    infinite: Vec<bool>,
    max_abs: Vec<f64>,
}

impl Block {
    /// Parse the rows `lines` into `columns` (one stretch per column, as long as the lines
    /// counted; an empty cell becomes NaN), or None when a row has another width or a cell that
    /// is not a number.
    fn parse<'a>(
        lines: impl Iterator<Item = &'a str>,
        columns: &mut [&mut [f64]],
        separator: u8,
    ) -> Option<Block> {
        let width = columns.len();
        let mut b = Block {
            rows: 0,
            null: vec![false; width],
            integral: vec![true; width],
            empty: vec![true; width],
            infinite: vec![false; width],
            max_abs: vec![0.0; width],
        };
        for line in lines {
            let (r, line) = (b.rows, line.as_bytes());
            b.rows += 1;
            let mut at = 0;
            for (j, column) in columns.iter_mut().enumerate() {
                if j > 0 {
                    if line.get(at) != Some(&separator) {
                        return None; // fewer cells than names
                    }
                    at += 1;
                }
                let (cell, end) = cell_at(line, at, separator)?;
                at = end;
                column[r] = match cell {
                    Some((v, int)) => {
                        b.integral[j] &= int;
                        b.empty[j] = false;
                        if v.is_finite() {
                            b.max_abs[j] = b.max_abs[j].max(v.abs());
                        } else {
                            b.infinite[j] = true;
                        }
                        v
                    }
                    None => {
                        b.null[j] = true;
                        f64::NAN
                    }
                };
            }
            if at != line.len() {
                return None; // more cells than names
            }
        }
        Some(b)
    }
}

/// The cell of `line` starting at `at`, and where it ends (its separator, or the line's end).
/// A plain number is read in the one pass that finds its end; anything else (spaces, `\r`,
/// long numbers, text) is cut at the separator and read by `number`.
#[allow(clippy::option_option)]
fn cell_at(line: &[u8], at: usize, separator: u8) -> Option<(Option<(f64, bool)>, usize)> {
    if let Some((v, int, end)) = plain_number(line, at) {
        if end == line.len() || line[end] == separator {
            return Some((Some((v, int)), end));
        }
    }
    let end = line[at..]
        .iter()
        .position(|&c| c == separator)
        .map_or(line.len(), |p| at + p);
    Some((number(&line[at..end])?, end))
}

/// A cell: `Some(None)` when empty, `Some(Some((value, is_integer)))` for a number,
/// `None` for anything else. Integers beyond i64 are numbers (polars reads such columns as
/// f64, see `check_csv_shape`).
#[allow(clippy::option_option)]
fn number(cell: &[u8]) -> Option<Option<(f64, bool)>> {
    let t = cell.trim_ascii();
    if t.is_empty() {
        return Some(None);
    }
    if let Some((v, int, end)) = plain_number(t, 0) {
        if end == t.len() {
            return Some(Some((v, int)));
        }
    }
    // Beyond the fast path (more than 19 digits, an exponent past 22) or not a number at all:
    // the standard parser decides, on the characters a number can hold (not `inf`, `NaN`).
    if !t
        .iter()
        .all(|b| matches!(b, b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let s = std::str::from_utf8(t).ok()?;
    let v: f64 = s.parse().ok()?;
    let integer = !t.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) && s.parse::<i64>().is_ok();
    Some(Some((v, integer)))
}

/// The number `[+-]digits[.digits][(e|E)[+-]digits]` (at least one mantissa digit) starting at
/// `line[at]`: its value, whether it is written as an integer, and the index after it. `None`
/// when no such number starts there or it is beyond the fast path: more than 19 digits, a
/// significand w above 2⁵³ or a decimal exponent e beyond ±22. Within it both w and 10^|e| are
/// exact doubles, so one multiplication or division rounds correctly (Clinger 1990): the f64
/// the standard parser gives, at a few nanoseconds a cell (the standard parser and an i64
/// check took about 95 ns a cell, most of a numeric CSV's reading time).
fn plain_number(line: &[u8], at: usize) -> Option<(f64, bool, usize)> {
    const POW10: [f64; 23] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
        1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ];
    let mut i = at;
    let negative = line.get(i) == Some(&b'-');
    if negative || line.get(i) == Some(&b'+') {
        i += 1;
    }
    let mut w = 0u64;
    let digits = |i: &mut usize, w: &mut u64| {
        let start = *i;
        while let Some(d) = line
            .get(*i)
            .map(|c| c.wrapping_sub(b'0'))
            .filter(|&d| d <= 9)
        {
            *w = w.wrapping_mul(10).wrapping_add(u64::from(d));
            *i += 1;
        }
        *i - start
    };
    let whole = digits(&mut i, &mut w);
    let point = line.get(i) == Some(&b'.');
    let fraction = if point {
        i += 1;
        digits(&mut i, &mut w)
    } else {
        0
    };
    // 19 digits always fit a u64 (10¹⁹ − 1 < 2⁶⁴), so w did not wrap.
    if whole + fraction == 0 || whole + fraction > 19 {
        return None;
    }
    let mut e = -(fraction as i64);
    let exponent = matches!(line.get(i), Some(b'e' | b'E'));
    if exponent {
        i += 1;
        let minus = line.get(i) == Some(&b'-');
        if minus || line.get(i) == Some(&b'+') {
            i += 1;
        }
        let mut x = 0u64;
        let n = digits(&mut i, &mut x);
        if n == 0 || n > 4 {
            return None;
        }
        e += if minus { -(x as i64) } else { x as i64 };
    }
    if w > 1 << 53 || e.unsigned_abs() > 22 {
        return None;
    }
    let magnitude = if e >= 0 {
        w as f64 * POW10[e as usize]
    } else {
        w as f64 / POW10[e.unsigned_abs() as usize]
    };
    let value = if negative { -magnitude } else { magnitude };
    Some((value, !point && !exponent, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols(text: &str) -> Option<(usize, Vec<RawColumn>)> {
        read_numeric(text.as_bytes(), b',')
    }

    /// The reader's scans say what the checks after it would find.
    #[test]
    fn each_column_carries_what_its_values_hold() {
        let (_, c) = cols("a,b,c,d\n1,-2.5,1e999,0\n-300,,2,0\n").unwrap();
        let scan = |k: usize| match &c[k].cells {
            Cells::Numeric(n) => n.scan.unwrap(),
            Cells::Text(_) => panic!("numbers"),
        };
        let s = |nan, infinite, max_abs| Scan {
            nan,
            infinite,
            max_abs,
        };
        assert_eq!(scan(0), s(false, false, 300.0));
        assert_eq!(scan(1), s(true, false, 2.5));
        assert_eq!(scan(2), s(false, true, 2.0));
        assert_eq!(scan(3), s(false, false, 0.0));
    }

    #[test]
    fn numbers_become_columns_with_their_dtype() {
        let (n, c) = cols("a, b ,c\n1,2.5,\n3,-1e3,4\n\n").unwrap();
        assert_eq!(n, 2);
        assert_eq!(c[0].name, "a");
        assert_eq!(c[1].name, "b");
        assert_eq!(c[0].dtype, "i64");
        assert_eq!(c[1].dtype, "f64");
        assert_eq!(
            c[1].cells,
            Cells::Numeric(Numbers::dense(vec![2.5, -1000.0]))
        );
        assert_eq!(
            c[2].cells,
            Cells::Numeric([None, Some(4.0)].into_iter().collect())
        );
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
        assert!(cols("\"a\",b\n1,2\n").is_none(), "a quoted name");
        assert!(cols("a,b\n1,\"2\n3\"\n").is_none(), "a quoted line end");
        assert!(cols("a,b\n\"1,2\"\n").is_none(), "a quoted separator");
        assert!(read_numeric(b"a,b\n1,\xff2\n", b',').is_none(), "not UTF-8");
        // Past the first block: a quote or a byte that is not UTF-8 in a later block.
        let body = "1.5,2\n".repeat(2 * BYTES_PER_BLOCK / 6);
        assert!(cols(&format!("a,b\n{body}")).is_some());
        assert!(cols(&format!("a,b\n{body}1,\"2\"\n")).is_none());
        let mut bytes = format!("a,b\n{body}1,2\n").into_bytes();
        let n = bytes.len();
        bytes[n - 2] = 0xff;
        assert!(read_numeric(&bytes, b',').is_none());
    }

    /// Every cell the fast path reads as a number is the standard parser's f64, bit for bit,
    /// and every cell it refuses the standard parser refuses too.
    #[test]
    fn decimals_equal_the_standard_parser() {
        let mut rng = crate::util::rng::Rng::new(11);
        let mut pick = |k: usize| rng.below(k);
        let alphabet = b"0123456789.eE+-";
        let mut cells: Vec<String> = [
            "0",
            "-0",
            "+0.0",
            "1e22",
            "1e23",
            "9007199254740993",
            "9007199254740992",
            "123456789012345678901234",
            "0.1",
            "-.5",
            "5.",
            "1e-22",
            "1.5e-23",
            "4.9e-324",
            "1.7976931348623157e308",
            "1e309",
            "00000000000000000000000001.5",
            ".",
            "e5",
            "1e",
            "1e+",
            "1.2.3",
            "--1",
            "1-2",
            "+",
            "-",
            "0x10",
            "1_0",
            "1e5.0",
            "1.000000000000000000001",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..200_000 {
            let len = 1 + pick(24);
            cells.push(
                (0..len)
                    .map(|_| alphabet[pick(alphabet.len())] as char)
                    .collect(),
            );
            // Cells as tables hold them: %.6f of a normal draw, integers, exponents.
            let x = (pick(2_000_001) as f64 - 1e6) / 1e6 * 10f64.powi(pick(9) as i32 - 4);
            cells.push(format!("{x:.6}"));
            cells.push(format!("{x:e}"));
            cells.push(format!("{}", pick(1 << 62) as i64 - (1 << 61)));
        }
        for c in &cells {
            let want: Option<f64> = c.parse().ok();
            let read = number(c.as_bytes());
            if let Some(Some((_, int))) = read {
                let integer = !c.contains(['.', 'e', 'E']) && c.parse::<i64>().is_ok();
                assert_eq!(int, integer, "`{c}` as an integer");
            }
            let got = read.map(|v| v.map(|(v, _)| v));
            match (got, want) {
                (Some(Some(v)), Some(w)) => {
                    assert_eq!(v.to_bits(), w.to_bits(), "`{c}`: {v} against {w}")
                }
                (None, None) => {}
                (got, want) => panic!("`{c}`: {got:?} against the standard {want:?}"),
            }
            if let Some((v, _, end)) = plain_number(c.as_bytes(), 0) {
                if end == c.len() {
                    assert_eq!(Some(v.to_bits()), want.map(f64::to_bits), "`{c}`");
                }
            }
        }
    }

    /// Blank lines inside and between the parallel blocks leave no gap in the columns.
    #[test]
    fn blank_lines_across_blocks_are_skipped() {
        let mut text = String::from("i,half\n");
        for i in 0..60_000 {
            text.push_str(&format!("{i},{}\n", i as f64 / 2.0));
            if i % 997 == 0 {
                text.push_str("\n  \n");
            }
        }
        assert!(text.len() > 2 * BYTES_PER_BLOCK, "several blocks");
        let (n, c) = cols(&text).unwrap();
        assert_eq!(n, 60_000);
        let want: Vec<f64> = (0..60_000).map(|i| i as f64).collect();
        assert_eq!(c[0].cells, Cells::Numeric(Numbers::dense(want)));
        assert_eq!(c[0].dtype, "i64");
        let Cells::Numeric(half) = &c[1].cells else {
            panic!("numbers")
        };
        assert!(half
            .values
            .iter()
            .enumerate()
            .all(|(i, v)| *v == i as f64 / 2.0));
    }

    #[test]
    fn tabs_and_crlf() {
        let (_, c) = read_numeric(b"a\tb\r\n1\t2\r\n", b'\t').unwrap();
        assert_eq!(c[1].name, "b");
        assert_eq!(c[1].cells, Cells::Numeric(Numbers::dense(vec![2.0])));
    }
}
