//! LIBSVM / svmlight files: one row a line, `LABELS index:value …` with `#` comments and an
//! ignored `qid:n`. A single label per row becomes one column `label`; label sets
//! (`1,5,7 3:0.5`, or an empty set: a line that starts with a feature) make the file
//! multi-label, one 0/1 column `label_<v>` per label value seen. Features are columns `f<i>`
//! for every index from 1 (from 0 when the file uses index 0) to the largest; an absent
//! feature is 0. They are read as a sparse block (`RawTable::sparse`), which a fit keeps sparse
//! or writes out as ordinary columns (`--sparse`).

use std::path::Path;

use super::raw::{Cells, RawColumn, RawTable};
use super::sparse::SparseFeatures;
use crate::error::input_at;
use crate::Result;

/// The name of the label column of a single-label file.
pub(crate) const LABEL: &str = "label";
/// The prefix of the 0/1 columns of a multi-label file.
pub(crate) const LABEL_PREFIX: &str = "label_";

/// One parsed line.
struct Row<'a> {
    labels: Vec<&'a str>,
    features: Vec<(usize, f64)>,
}

fn at(path: &Path, line: usize, msg: String) -> crate::OvkError {
    input_at(path, format!("line {}: {msg}", line + 1))
}

fn parse_line<'a>(path: &Path, line: usize, text: &'a str) -> Result<Option<(Row<'a>, bool)>> {
    let text = text.split('#').next().unwrap_or("").trim();
    if text.is_empty() {
        return Ok(None);
    }
    let mut tokens = text.split_whitespace().peekable();
    let first = *tokens.peek().expect("non-empty");
    // A line that starts with `index:value` has an empty label set (multi-label).
    let (labels, multi) = if first.contains(':') && !first.contains(',') {
        (Vec::new(), true)
    } else {
        tokens.next();
        let multi = first.contains(',');
        let labels: Vec<&str> = first.split(',').filter(|s| !s.is_empty()).collect();
        for l in &labels {
            if !l.parse::<f64>().is_ok_and(f64::is_finite) {
                return Err(at(
                    path,
                    line,
                    format!("the label `{l}` is not a finite number"),
                ));
            }
        }
        (labels, multi)
    };
    let mut features = Vec::new();
    for t in tokens {
        let (i, v) = t.split_once(':').ok_or_else(|| {
            at(
                path,
                line,
                format!("`{t}` is not index:value (labels come first, then index:value pairs)"),
            )
        })?;
        if i == "qid" {
            continue;
        }
        let i = i.parse::<usize>().map_err(|_| {
            at(
                path,
                line,
                format!("`{t}`: the index is not a whole number ≥ 0"),
            )
        })?;
        let v = v
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| {
                at(
                    path,
                    line,
                    format!("`{t}`: the value is not a finite number"),
                )
            })?;
        features.push((i, v));
    }
    features.sort_unstable_by_key(|f| f.0);
    if let Some(w) = features.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(at(
            path,
            line,
            format!("feature index {} appears twice", w[0].0),
        ));
    }
    Ok(Some((Row { labels, features }, multi)))
}

/// Read LIBSVM text (the whole file) into columns: the label column(s), then the features.
pub(crate) fn read_libsvm(path: &Path, bytes: &[u8]) -> Result<RawTable> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| input_at(path, "a LIBSVM file must be UTF-8 text; save it as UTF-8"))?;
    let mut rows = Vec::new();
    let mut multi = false;
    for (line, l) in text.lines().enumerate() {
        if let Some((row, m)) = parse_line(path, line, l)? {
            multi |= m;
            if !m && row.labels.len() != 1 {
                return Err(at(path, line, "a row without a label".into()));
            }
            rows.push(row);
        }
    }
    if rows.is_empty() {
        return Err(input_at(path, "the file is empty (no data rows)"));
    }
    let indices = rows.iter().flat_map(|r| r.features.iter().map(|f| f.0));
    let (lo, hi) = indices.fold((usize::MAX, 0), |(lo, hi), i| (lo.min(i), hi.max(i)));
    if lo == usize::MAX {
        return Err(input_at(path, "no row has a feature (index:value)"));
    }
    let first = lo.min(1);
    let n_features = hi - first + 1;
    let n = rows.len();
    let label_values = label_values(&rows, multi);
    super::cells_fit::check_cells_fit(path, n as u64, label_values.len().max(1) as u64)?;
    // A name, a mean and a deviation per feature column: bounded before they are allocated.
    super::cells_fit::check_cells_fit(path, 4, n_features as u64)?;
    if u32::try_from(n_features).is_err() {
        return Err(input_at(
            path,
            format!(
                "feature index {hi} is beyond the {} columns ovk reads",
                u32::MAX
            ),
        ));
    }
    let mut columns = Vec::with_capacity(label_values.len().max(1));
    if multi {
        for v in &label_values {
            let cells = rows
                .iter()
                .map(|r| Some(f64::from(u8::from(r.labels.iter().any(|l| same(l, v))))))
                .collect();
            columns.push(number_column(format!("{LABEL_PREFIX}{v}"), cells));
        }
    } else {
        let cells = rows
            .iter()
            .map(|r| r.labels[0].parse::<f64>().ok())
            .collect();
        columns.push(number_column(LABEL.to_string(), cells));
    }
    let names = (0..n_features).map(|j| format!("f{}", j + first)).collect();
    // Indices fit in u32: n_features does, and every index is below it.
    let sparse = SparseFeatures::from_rows(
        names,
        rows.iter().map(|r| {
            r.features
                .iter()
                .map(|&(i, v)| ((i - first) as u32, v))
                .collect()
        }),
    );
    Ok(RawTable {
        path: path.to_path_buf(),
        n_rows: n,
        columns,
        sha256: String::new(),
        size: 0,
        sparse: Some(sparse),
    })
}

/// Whether a label written `l` is the value `v` (`1` and `1.0` are one label).
fn same(l: &str, v: &str) -> bool {
    l == v || l.parse::<f64>().ok() == v.parse::<f64>().ok()
}

/// The distinct label values of a multi-label file in numeric order, as their shortest text.
fn label_values(rows: &[Row], multi: bool) -> Vec<String> {
    if !multi {
        return Vec::new();
    }
    let mut values: Vec<f64> = rows
        .iter()
        .flat_map(|r| r.labels.iter().filter_map(|l| l.parse::<f64>().ok()))
        .collect();
    values.sort_unstable_by(f64::total_cmp);
    values.dedup();
    values.into_iter().map(|v| v.to_string()).collect()
}

fn number_column(name: String, cells: Vec<Option<f64>>) -> RawColumn {
    RawColumn {
        name,
        dtype: "f64".into(),
        cells: Cells::Numeric(cells.into_iter().collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<RawTable> {
        read_libsvm(Path::new("t.svm"), text.as_bytes())?.densified()
    }

    fn numbers(t: &RawTable, c: usize) -> Vec<f64> {
        match &t.columns[c].cells {
            Cells::Numeric(v) => {
                assert!(v.null.is_none(), "a null cell");
                v.values.clone()
            }
            Cells::Text(_) => panic!("text"),
        }
    }

    #[test]
    fn single_and_multi_label_files() {
        let t = read("# a comment\n1 1:0.5 3:2\n-1 qid:3 2:1 # trailing\n").unwrap();
        assert_eq!(t.names(), ["label", "f1", "f2", "f3"]);
        assert_eq!(numbers(&t, 0), [1.0, -1.0]);
        assert_eq!(numbers(&t, 3), [2.0, 0.0]);
        let t = read("1,5 3:0.5\n 0:1\n5 1:2\n").unwrap();
        assert_eq!(t.names(), ["label_1", "label_5", "f0", "f1", "f2", "f3"]);
        assert_eq!(numbers(&t, 0), [1.0, 0.0, 0.0]);
        assert_eq!(numbers(&t, 1), [1.0, 0.0, 1.0]);
        assert_eq!(numbers(&t, 2), [0.0, 1.0, 0.0]);
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, want) in [
            ("1 1:0.5\n1 x\n", "line 2: `x` is not index:value"),
            ("1 1:0.5\n1 a:1\n", "line 2: `a:1`: the index"),
            ("1 1:0.5\n1 2:inf\n", "line 2: `2:inf`: the value"),
            ("1 1:1 1:2\n", "line 1: feature index 1 appears twice"),
            ("a 1:1\n", "line 1: the label `a`"),
            ("\n# only\n", "no data rows"),
            ("1\n2\n", "no row has a feature"),
        ] {
            let e = read(text).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("t.svm"), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_huge_index_is_refused_before_allocating() {
        let e = read("1 18446744073709551614:1\n").unwrap_err().to_string();
        assert!(e.contains("columns"), "{e}");
    }
}
