//! A file's columns as plain Rust values, the one shape every later step reads; the cell-level
//! checks (missing, non-numeric, infinite) live here so every caller words them the same way.

use std::path::PathBuf;

use crate::error::input_at;
use crate::Result;

/// The cells of one column: numbers when the file stores numbers, text otherwise.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cells {
    Numeric(Numbers),
    Text(Vec<Option<String>>),
}

/// A numeric column as plain f64 (8 bytes a cell, where `Option<f64>` took 16) and a validity
/// mask. A null cell (no value in the file) holds NaN and is marked in `null`; a NaN the file
/// wrote is kept as NaN and not marked. Both count as missing.
#[derive(Debug, Clone, Default)]
pub(crate) struct Numbers {
    pub values: Vec<f64>,
    /// `null[i]` when cell `i` was null; `None` when no cell was (the usual case costs nothing).
    pub null: Option<Vec<bool>>,
    /// What the reader saw of every value as it parsed them, when it kept count (`None`:
    /// unknown). Values are never changed once read, so it stays true.
    pub scan: Option<Scan>,
}

/// A numeric column's values at a glance, so the checks after reading (missing cells,
/// infinities, magnitudes) skip a column that has nothing to report, without a pass over it:
/// those passes over 10⁶ × 20 numbers took 0.03 s of a 0.53 s load.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scan {
    /// Some value is NaN.
    pub nan: bool,
    /// Some value is ±∞.
    pub infinite: bool,
    /// The largest |value| of the finite values (0 when there is none).
    pub max_abs: f64,
}

impl Scan {
    /// The scan of `values`: one branch-free pass, which the compiler vectorises.
    pub fn of(values: &[f64]) -> Scan {
        let (nan, infinite, max_abs) =
            values
                .iter()
                .fold((false, false, 0.0f64), |(nan, inf, max), &v| {
                    (
                        nan | v.is_nan(),
                        inf | v.is_infinite(),
                        if v.is_finite() { max.max(v.abs()) } else { max },
                    )
                });
        Scan {
            nan,
            infinite,
            max_abs,
        }
    }
}

impl Numbers {
    /// Values without a null cell.
    pub fn dense(values: Vec<f64>) -> Numbers {
        Numbers {
            values,
            null: None,
            scan: None,
        }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Cell `i`: `None` when null.
    pub fn get(&self, i: usize) -> Option<f64> {
        match &self.null {
            Some(null) if null[i] => None,
            _ => Some(self.values[i]),
        }
    }
}

/// Two columns are equal cell by cell, a NaN equal to a NaN (a null holds one).
impl PartialEq for Numbers {
    fn eq(&self, other: &Numbers) -> bool {
        self.null == other.null
            && self.values.len() == other.values.len()
            && self
                .values
                .iter()
                .zip(&other.values)
                .all(|(a, b)| a == b || (a.is_nan() && b.is_nan()))
    }
}

impl FromIterator<Option<f64>> for Numbers {
    fn from_iter<I: IntoIterator<Item = Option<f64>>>(cells: I) -> Numbers {
        let mut n = Numbers::default();
        let mut null = Vec::new();
        for cell in cells {
            null.push(cell.is_none());
            n.values.push(cell.unwrap_or(f64::NAN));
        }
        n.null = null.contains(&true).then_some(null);
        n
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawColumn {
    pub name: String,
    /// polars dtype as text (`f64`, `i64`, `str` …).
    pub dtype: String,
    pub cells: Cells,
}

/// Every column of a file, in file order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawTable {
    pub path: PathBuf,
    pub n_rows: usize,
    pub columns: Vec<RawColumn>,
    /// The SHA-256 and size of the very bytes parsed (a file replaced meanwhile cannot be
    /// recorded under another file's hash).
    pub sha256: String,
    pub size: u64,
    /// Feature columns kept in compressed sparse rows, after `columns` (LIBSVM, sparse ARFF).
    pub sparse: Option<super::sparse::SparseFeatures>,
}

/// Text cells that mean "no value" rather than "not a number".
const MISSING_MARKERS: &[&str] = &["", "na", "n/a", "nan", "null", "none", "?"];

pub(crate) fn is_missing_text(s: &str) -> bool {
    let t = s.trim();
    MISSING_MARKERS.iter().any(|m| t.eq_ignore_ascii_case(m))
}

/// How a row is named in messages: users count data rows from 1, below the header.
pub(crate) fn row_label(row: usize) -> String {
    format!("data row {} (1-based, header not counted)", row + 1)
}

impl RawTable {
    /// The table with its sparse block, if any, written out as ordinary columns: in their
    /// places in the file when the block records them, else after the others.
    pub fn densified(mut self) -> Result<RawTable> {
        let Some(block) = self.sparse.take() else {
            return Ok(self);
        };
        let positions = block.positions.clone();
        let cols = block.into_columns(&self.path)?;
        match positions {
            None => self.columns.extend(cols),
            Some(at) => {
                let total = self.columns.len() + cols.len();
                let mut slots: Vec<Option<RawColumn>> = (0..total).map(|_| None).collect();
                for (p, c) in at.into_iter().zip(cols) {
                    slots[p] = Some(c);
                }
                let mut rest = std::mem::take(&mut self.columns).into_iter();
                self.columns = slots
                    .into_iter()
                    .map(|s| s.or_else(|| rest.next()))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| crate::OvkError::internal("a sparse block's positions"))?;
            }
        }
        Ok(self)
    }

    pub fn names(&self) -> Vec<&str> {
        self.columns.iter().map(|c| c.name.as_str()).collect()
    }

    /// Column `col` as numbers, missing cells as NaN. A cell that is neither a number nor a
    /// missing marker, or an infinite number, is an error naming the column, row and value.
    pub fn numeric(&self, col: usize) -> Result<Vec<f64>> {
        Ok(self.numeric_view(col)?.into_owned())
    }

    /// `numeric`, borrowing a numeric column's own values instead of copying them.
    pub fn numeric_view(&self, col: usize) -> Result<std::borrow::Cow<'_, [f64]>> {
        let c = &self.columns[col];
        match &c.cells {
            Cells::Numeric(v) if v.scan.is_some_and(|s| !s.infinite) => {
                Ok(std::borrow::Cow::Borrowed(&v.values))
            }
            Cells::Numeric(v) => match v.values.iter().position(|x| x.is_infinite()) {
                Some(i) => Err(self.not_finite(col, i, &v.values[i].to_string())),
                None => Ok(std::borrow::Cow::Borrowed(&v.values)),
            },
            Cells::Text(v) => v
                .iter()
                .enumerate()
                .map(|(i, s)| match s {
                    None => Ok(f64::NAN),
                    Some(s) if is_missing_text(s) => Ok(f64::NAN),
                    Some(s) => match s.trim().parse::<f64>() {
                        Ok(x) if x.is_finite() => Ok(x),
                        Ok(_) => Err(self.not_finite(col, i, s)),
                        Err(_) => Err(input_at(
                            &self.path,
                            format!(
                                "column `{}` is not numeric: {} holds `{}`",
                                c.name,
                                row_label(i),
                                s
                            ),
                        )),
                    },
                })
                .collect::<Result<Vec<f64>>>()
                .map(std::borrow::Cow::Owned),
        }
    }

    /// Column `col` as labels (class values): numbers keep their numeric order, text sorts
    /// lexicographically. `None` marks a missing cell.
    pub fn labels(&self, col: usize) -> Vec<Option<Label>> {
        self.present_cells(col, Label::Number, |s| Label::Text(s.to_string()))
    }

    /// Column `col` cell by cell: a number through `number`, a text (trimmed) through `text`,
    /// `None` for a missing cell (NaN or a missing marker).
    pub(crate) fn present_cells<T>(
        &self,
        col: usize,
        number: impl Fn(f64) -> T,
        text: impl Fn(&str) -> T,
    ) -> Vec<Option<T>> {
        match &self.columns[col].cells {
            Cells::Numeric(v) => v
                .values
                .iter()
                .map(|x| (!x.is_nan()).then(|| number(*x)))
                .collect(),
            Cells::Text(v) => v
                .iter()
                .map(|s| {
                    s.as_deref()
                        .filter(|s| !is_missing_text(s))
                        .map(|s| text(s.trim()))
                })
                .collect(),
        }
    }

    fn not_finite(&self, col: usize, row: usize, value: &str) -> crate::OvkError {
        input_at(
            &self.path,
            format!(
                "column `{}` holds an infinite value `{value}` in {}",
                self.columns[col].name,
                row_label(row)
            ),
        )
    }
}

/// One class value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Label {
    Number(f64),
    Text(String),
}

impl Label {
    /// The value as shown in output names (`digit=3`); `3.0` prints as `3`.
    pub fn text(&self) -> String {
        match self {
            Label::Number(x) => x.to_string(),
            Label::Text(s) => s.clone(),
        }
    }
}

impl std::cmp::PartialOrd for Label {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        match (self, other) {
            (Label::Number(a), Label::Number(b)) => a.partial_cmp(b),
            (Label::Text(a), Label::Text(b)) => a.partial_cmp(b),
            (Label::Number(_), Label::Text(_)) => Some(std::cmp::Ordering::Less),
            (Label::Text(_), Label::Number(_)) => Some(std::cmp::Ordering::Greater),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The scan equals its definition, whatever chunk the special values fall in.
    #[test]
    fn scan_of_values_finds_nan_infinity_and_the_largest_finite() {
        let mut rng = crate::util::rng::Rng::new(2);
        let base: Vec<f64> = (0..3000).map(|_| rng.normal() * 10.0).collect();
        let truth = |v: &[f64]| Scan {
            nan: v.iter().any(|x| x.is_nan()),
            infinite: v.iter().any(|x| x.is_infinite()),
            max_abs: v
                .iter()
                .filter(|x| x.is_finite())
                .fold(0.0, |m: f64, x| m.max(x.abs())),
        };
        let mut cases = vec![Vec::new(), base.clone()];
        for (at, v) in [
            (0, f64::NAN),
            (2999, f64::NEG_INFINITY),
            (1500, -1e300),
            (1024, f64::INFINITY),
        ] {
            let mut c = base.clone();
            c[at] = v;
            cases.push(c);
        }
        for c in &cases {
            assert_eq!(Scan::of(c), truth(c));
        }
        assert_eq!(Scan::of(&cases[4]).max_abs, 1e300);
    }
}
