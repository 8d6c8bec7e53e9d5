//! The feature matrix of a file: numeric columns as they are, low-cardinality text columns
//! one-hot encoded (`city=Lyon`, `city=Paris` …), and — on request — missing cells imputed
//! (numeric: the column mean; text: its most frequent value). The levels of each encoded
//! column are kept (`Categorical`) and stored in the session, so a replay encodes the same
//! columns the same way whatever rows it reads.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use ndarray::Array2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::raw::{is_missing_text, Cells, RawTable, Scan};
use crate::error::input_at;
use crate::Result;

/// More distinct values than this and a text column is not encoded (an ID, free text).
pub const MAX_LEVELS: usize = 30;

/// How a text column was encoded: one 0/1 feature per level, in this order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Categorical {
    /// The text column's name.
    pub column: String,
    /// Its levels: one 0/1 feature each, in this order.
    pub levels: Vec<String>,
}

/// The features, column by column, and how they were made. The matrix of every file row is
/// never built: the split's parts are gathered from the columns (`rows`).
#[derive(Debug, Clone)]
pub(crate) struct Features<'a> {
    /// One per feature, over the file rows; NaN = missing (a text column's missing cell: NaN in
    /// each of its features). `data::impute` fills them from the training rows after the split.
    pub columns: Vec<Column<'a>>,
    /// For each feature, what its reader saw of it (`raw::Scan`), when known.
    pub scans: Vec<Option<Scan>>,
    pub names: Vec<String>,
    /// For each feature, the index (into the requested feature columns) it came from.
    pub source: Vec<usize>,
    pub categories: Vec<Categorical>,
    /// One per requested feature column, indexed like `source`.
    pub groups: Vec<Group>,
}

/// A requested feature column: numeric (one feature) or text (one 0/1 feature per level).
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub column: String,
    pub one_hot: bool,
}

/// Whether a raw column holds categories: text cells, at most half of them numbers. A
/// numeric column with a few stray words stays numeric, so the stray cell is reported as such.
pub(crate) fn is_text(raw: &RawTable, c: usize) -> bool {
    match &raw.columns[c].cells {
        Cells::Numeric(_) => false,
        Cells::Text(v) => mostly_text(v.iter().flatten().map(String::as_str)),
    }
}

/// More than half of the present (non-missing) values are not numbers.
pub(crate) fn mostly_text<'a>(values: impl Iterator<Item = &'a str>) -> bool {
    let (mut words, mut numbers) = (0usize, 0usize);
    for s in values.filter(|s| !is_missing_text(s)) {
        if s.trim().parse::<f64>().is_ok_and(f64::is_finite) {
            numbers += 1;
        } else {
            words += 1;
        }
    }
    words > numbers
}

/// One feature's values over the file rows: a numeric column borrowed from the table, or a
/// one-hot indicator built here.
type Column<'a> = Cow<'a, [f64]>;

/// Build the features from the file columns `cols`. `fixed` are the encodings of an earlier
/// run (a value it did not see encodes as all zeros); a text column without one is encoded
/// with its sorted distinct values, refused beyond [`MAX_LEVELS`].
pub(crate) fn build<'a>(
    path: &Path,
    raw: &'a RawTable,
    cols: &[usize],
    fixed: Option<&[Categorical]>,
) -> Result<Features<'a>> {
    // A numeric column is borrowed from the table, not copied (10⁶ rows × 20 columns: 160 MB).
    let mut blocks: Vec<(Vec<String>, Vec<Column<'a>>, Option<Scan>)> = Vec::new();
    let mut categories = Vec::new();
    let mut groups = Vec::new();
    let given_for =
        |c: usize| fixed.and_then(|f| f.iter().find(|k| k.column == raw.columns[c].name));
    // The numeric columns parsed in parallel; their errors are raised in column order below.
    let mut numeric: Vec<Option<Result<Column<'a>>>> = cols
        .par_iter()
        .map(|&c| (given_for(c).is_none() && !is_text(raw, c)).then(|| raw.numeric_view(c)))
        .collect();
    for (i, &c) in cols.iter().enumerate() {
        let name = &raw.columns[c].name;
        let given = given_for(c);
        if let Some(column) = numeric[i].take() {
            let scan = match &raw.columns[c].cells {
                Cells::Numeric(n) => n.scan,
                Cells::Text(_) => None,
            };
            blocks.push((vec![name.clone()], vec![column?], scan));
            groups.push(Group {
                column: name.clone(),
                one_hot: false,
            });
            continue;
        }
        let cells: Vec<Option<String>> = text_cells(raw, c);
        groups.push(Group {
            column: name.clone(),
            one_hot: true,
        });
        let levels = match given {
            Some(k) => k.levels.clone(),
            None => {
                let mut l: Vec<String> = cells.iter().flatten().cloned().collect();
                l.sort();
                l.dedup();
                if l.len() > MAX_LEVELS {
                    return Err(input_at(
                        path,
                        format!(
                            "column `{name}` is text with {} distinct values — too many to \
                             one-hot encode (at most {MAX_LEVELS}); it looks like an ID or free \
                             text: leave it out of the features (--features, or x in the Data pane)",
                            l.len()
                        ),
                    ));
                }
                l
            }
        };
        let encoded: Vec<Column<'a>> = levels
            .iter()
            .map(|level| {
                cells
                    .iter()
                    .map(|v| match v {
                        None => f64::NAN,
                        Some(v) => f64::from(u8::from(v == level)),
                    })
                    .collect::<Vec<f64>>()
                    .into()
            })
            .collect();
        blocks.push((
            levels.iter().map(|l| format!("{name}={l}")).collect(),
            encoded,
            None,
        ));
        categories.push(Categorical {
            column: name.clone(),
            levels,
        });
    }
    let width: usize = blocks.iter().map(|b| b.1.len()).sum();
    let (mut names, mut source) = (Vec::with_capacity(width), Vec::with_capacity(width));
    let mut columns: Vec<Column<'a>> = Vec::with_capacity(width);
    let mut scans = Vec::with_capacity(width);
    for (k, (n, block, scan)) in blocks.into_iter().enumerate() {
        for (name, column) in n.into_iter().zip(block) {
            names.push(name);
            source.push(k);
            columns.push(column);
            scans.push(scan);
        }
    }
    Ok(Features {
        columns,
        scans,
        names,
        source,
        categories,
        groups,
    })
}

impl Features<'_> {
    /// The file rows `rows` (in that order) × the features, as a row-major matrix; blocks of
    /// rows in parallel.
    pub fn rows(&self, rows: &[usize]) -> Array2<f64> {
        const ROWS: usize = 4096;
        let width = self.columns.len();
        let mut x = Array2::<f64>::zeros((rows.len(), width));
        if let Some(all) = x.as_slice_mut().filter(|_| width > 0) {
            all.par_chunks_mut(ROWS * width)
                .zip(rows.par_chunks(ROWS))
                .for_each(|(block, idx)| {
                    for (row, &i) in block.chunks_mut(width).zip(idx) {
                        for (v, c) in row.iter_mut().zip(&self.columns) {
                            *v = c[i];
                        }
                    }
                });
        }
        x
    }

    /// For each file row with a missing feature, the first such feature (columns in parallel;
    /// empty for a complete table).
    pub fn first_missing(&self) -> BTreeMap<usize, usize> {
        let per_column: Vec<Vec<usize>> = self
            .columns
            .par_iter()
            .zip(&self.scans)
            .map(|(c, scan)| {
                if scan.is_some_and(|s| !s.nan) || !any_value(c, f64::is_nan) {
                    return Vec::new();
                }
                (0..c.len()).filter(|&i| c[i].is_nan()).collect()
            })
            .collect();
        let mut first = BTreeMap::new();
        // The last column first, so that a row's earliest missing feature is the one kept.
        for (j, rows) in per_column.iter().enumerate().rev() {
            for &i in rows {
                first.insert(i, j);
            }
        }
        first
    }

    /// The first of `rows` (in that order) holding a finite value beyond ±`limit`, with the
    /// feature and the value; columns searched in parallel.
    pub fn first_beyond(&self, rows: &[usize], limit: f64) -> Option<(usize, usize, f64)> {
        self.columns
            .par_iter()
            .zip(&self.scans)
            .enumerate()
            .filter_map(|(j, (c, scan))| {
                if scan.is_some_and(|s| s.max_abs <= limit)
                    || !any_value(c, |v| v.is_finite() & (v.abs() > limit))
                {
                    return None;
                }
                rows.iter()
                    .position(|&i| c[i].is_finite() && c[i].abs() > limit)
                    .map(|k| (k, j))
            })
            .min()
            .map(|(k, j)| (rows[k], j, self.columns[j][rows[k]]))
    }
}

/// Whether any value of `column` passes `test`: a branch-free pass per chunk, which the compiler
/// vectorises, stopping at the first chunk with a hit. A complete table's columns are read
/// this way before any row-by-row search: 10⁶ × 20 numbers took 27 ms to scan for missing
/// cells and 33 ms for magnitudes by row index, most of the checks between reading and split.
pub(super) fn any_value(column: &[f64], test: impl Fn(f64) -> bool) -> bool {
    column
        .chunks(1024)
        .any(|chunk| chunk.iter().fold(false, |hit, &v| hit | test(v)))
}

/// The cells of column `c` as trimmed text, missing markers as `None`.
fn text_cells(raw: &RawTable, c: usize) -> Vec<Option<String>> {
    raw.present_cells(c, |x| x.to_string(), str::to_string)
}

/// Why a column left to the default feature set is not a feature: a date, a row ID (text unique
/// per row, or integers counting the rows), or text with too many values to encode. `None`: it
/// is one.
pub(crate) fn not_a_default_feature(raw: &RawTable, c: usize) -> Option<&'static str> {
    let col = &raw.columns[c];
    let dtype = col.dtype.to_ascii_lowercase();
    if dtype.contains("date") || dtype.contains("time") {
        return Some("a date");
    }
    match &col.cells {
        Cells::Numeric(v) => {
            let integer = dtype.starts_with('i') || dtype.starts_with('u');
            // A null cell is NaN, which counts nothing.
            let counts = |off: f64| {
                v.values
                    .iter()
                    .enumerate()
                    .all(|(i, x)| *x == i as f64 + off)
            };
            (integer && v.len() > 20 && (counts(0.0) || counts(1.0))).then_some("a row ID")
        }
        Cells::Text(_) if !is_text(raw, c) => None,
        Cells::Text(v) => {
            let present: Vec<&str> = v
                .iter()
                .flatten()
                .map(|s| s.trim())
                .filter(|s| !is_missing_text(s))
                .collect();
            if !present.is_empty() && present.iter().all(|s| looks_like_date(s)) {
                return Some("a date");
            }
            let mut distinct = present.clone();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() > MAX_LEVELS {
                Some("text with too many values to encode (an ID?)")
            } else {
                None
            }
        }
    }
}

/// `2024-03-01`, `2024/03/01`, optionally followed by a time.
pub(crate) fn looks_like_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && (b[4] == b'-' || b[4] == b'/')
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b[4]
        && b[8..10].iter().all(u8::is_ascii_digit)
}

/// Views index feature columns; after encoding, view `k`'s columns are every feature built
/// from the columns it listed.
pub(crate) fn remap_views(views: &mut [super::View], source: &[usize]) {
    for v in views.iter_mut() {
        v.columns = (0..source.len())
            .filter(|j| v.columns.contains(&source[*j]))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::raw::RawColumn;

    /// The checks between reading and the split skip clean columns by a vectorised pass; the
    /// rows they name must be those of the row-by-row search, past the first chunk too.
    #[test]
    fn missing_and_oversized_cells_are_found_past_the_clean_columns() {
        let n = 5000;
        let clean: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut gaps = clean.clone();
        gaps[3001] = f64::NAN;
        gaps[4500] = f64::NAN;
        let mut huge = clean.clone();
        huge[2048] = 1e200;
        huge[10] = f64::INFINITY; // not finite: no magnitude to refuse
        let mut early = clean.clone();
        early[4000] = -1e160;
        let f = Features {
            columns: vec![clean.into(), gaps.into(), huge.into(), early.into()],
            scans: vec![None; 4],
            names: (0..4).map(|j| format!("x{j}")).collect(),
            source: vec![0, 1, 2, 3],
            categories: Vec::new(),
            groups: Vec::new(),
        };
        let missing = f.first_missing();
        assert_eq!(
            missing.into_iter().collect::<Vec<_>>(),
            [(3001, 1), (4500, 1)]
        );
        let rows: Vec<usize> = (0..n).collect();
        assert_eq!(f.first_beyond(&rows, 1e150), Some((2048, 2, 1e200)));
        // In the order the rows are given: row 4000 comes first here.
        let reversed: Vec<usize> = (0..n).rev().collect();
        assert_eq!(f.first_beyond(&reversed, 1e150), Some((4000, 3, -1e160)));
        assert_eq!(f.first_beyond(&rows[..2048], 1e150), None);

        // With each column's scan known (as the readers give them; `Scan::of` is checked
        // against its definition in `raw`), the same rows.
        let scanned = Features {
            scans: f.columns.iter().map(|c| Some(Scan::of(c))).collect(),
            ..f.clone()
        };
        assert_eq!(scanned.first_missing(), f.first_missing());
        for limit in [1e150, 1e180, 1e250] {
            for r in [&rows[..], &reversed[..], &rows[..2048]] {
                assert_eq!(scanned.first_beyond(r, limit), f.first_beyond(r, limit));
            }
        }
        // The scan, not a pass over the values, decides: a column said clean is not read.
        let said_clean = Features {
            scans: vec![
                Some(Scan {
                    nan: false,
                    infinite: false,
                    max_abs: 0.0,
                });
                4
            ],
            ..f.clone()
        };
        assert!(said_clean.first_missing().is_empty());
        assert_eq!(said_clean.first_beyond(&rows, 1e150), None);
    }

    fn raw(cols: Vec<(&str, Cells)>) -> RawTable {
        let n = match &cols[0].1 {
            Cells::Numeric(v) => v.len(),
            Cells::Text(v) => v.len(),
        };
        RawTable {
            path: "t.csv".into(),
            n_rows: n,
            sha256: String::new(),
            size: 0,
            sparse: None,
            columns: cols
                .into_iter()
                .map(|(name, cells)| RawColumn {
                    name: name.into(),
                    dtype: match cells {
                        Cells::Numeric(_) => "f64".into(),
                        Cells::Text(_) => "str".into(),
                    },
                    cells,
                })
                .collect(),
        }
    }

    fn text(v: &[&str]) -> Cells {
        Cells::Text(v.iter().map(|s| Some(s.to_string())).collect())
    }

    #[test]
    fn text_is_one_hot_and_missing_cells_stay_missing() {
        let t = raw(vec![
            (
                "x",
                Cells::Numeric(
                    [Some(1.0), None, Some(3.0), Some(5.0)]
                        .into_iter()
                        .collect(),
                ),
            ),
            ("city", text(&["Paris", "Lyon", "NA", "Paris"])),
        ]);
        let f = build(Path::new("t.csv"), &t, &[0, 1], None).unwrap();
        assert_eq!(f.names, vec!["x", "city=Lyon", "city=Paris"]);
        assert_eq!(f.source, vec![0, 1, 1]);
        assert_eq!(
            f.groups.iter().map(|g| g.one_hot).collect::<Vec<_>>(),
            vec![false, true]
        );
        // A missing cell stays missing (NaN in each indicator) until data::impute.
        let x = f.rows(&[0, 1, 2, 3]);
        assert!(x[[1, 0]].is_nan());
        assert!(x[[2, 1]].is_nan() && x[[2, 2]].is_nan());
        assert_eq!(
            f.first_missing().into_iter().collect::<Vec<_>>(),
            [(1, 0), (2, 1)]
        );
        assert_eq!(f.rows(&[3, 0]).column(0).to_vec(), [5.0, 1.0]);
        assert_eq!(f.first_beyond(&[3, 2, 0], 2.0), Some((3, 0, 5.0)));
        assert_eq!(f.first_beyond(&[0], 2.0), None);
        // An earlier run's levels are kept: an unseen value is all zeros.
        let fixed = [Categorical {
            column: "city".into(),
            levels: vec!["Lyon".into(), "Nice".into()],
        }];
        let f = build(Path::new("t.csv"), &t, &[1], Some(&fixed)).unwrap();
        assert_eq!(f.names, vec!["city=Lyon", "city=Nice"]);
        assert_eq!(f.rows(&[0]).row(0).to_vec(), vec![0.0, 0.0]);
    }

    #[test]
    fn default_features_leave_out_dates_and_ids() {
        let ids: Vec<String> = (0..40).map(|i| format!("u{i}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let t = raw(vec![
            ("user", text(&ids)),
            ("when", text(&["2024-01-02"; 40])),
            (
                "n",
                Cells::Numeric((1..=40).map(|i| Some(i as f64)).collect()),
            ),
            (
                "x",
                Cells::Numeric((1..=40).map(|i| Some(i as f64)).collect()),
            ),
            ("city", text(&["a"; 40])),
        ]);
        let mut t = t;
        t.columns[2].dtype = "i64".into();
        assert_eq!(
            not_a_default_feature(&t, 0),
            Some("text with too many values to encode (an ID?)")
        );
        assert_eq!(not_a_default_feature(&t, 1), Some("a date"));
        assert_eq!(not_a_default_feature(&t, 2), Some("a row ID"));
        assert_eq!(
            not_a_default_feature(&t, 3),
            None,
            "a float column is a measurement"
        );
        assert_eq!(not_a_default_feature(&t, 4), None);
    }

    #[test]
    fn numbers_with_markers_stay_numeric_and_ids_are_refused() {
        let t = raw(vec![("a", text(&["1", "NA", "2.5"]))]);
        assert!(!is_text(&t, 0));
        let ids: Vec<String> = (0..40).map(|i| format!("u{i}")).collect();
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        let t = raw(vec![("user", text(&ids))]);
        let e = build(Path::new("t.csv"), &t, &[0], None).unwrap_err();
        assert!(e.to_string().contains("40 distinct values"), "{e}");
    }
}
