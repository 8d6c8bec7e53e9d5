//! Weka / Mulan / MEKA ARFF files, dense (`1.5,red,?`) and sparse (`{0 1.5, 3 red}`), read
//! into the same columns as a CSV file. Numeric attributes are numbers; a nominal attribute
//! whose values are all 0/1 (Mulan's and MEKA's labels) is a 0/1 number column; any other
//! nominal, string or date attribute is text (a feature one-hot encoded, or a class column);
//! `?` is missing. In a sparse row an omitted value is 0 — for a nominal attribute its first
//! declared value, as Weka reads it. A file of sparse rows keeps its numeric attributes as a
//! sparse block (`RawTable::sparse`), which a fit keeps sparse or writes out as columns in
//! the file's order (`--sparse`).

use std::path::Path;

use super::raw::{Cells, RawColumn, RawTable};
use super::sparse::SparseFeatures;
use crate::error::input_at;
use crate::Result;

/// What an attribute holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum AttrKind {
    Numeric,
    /// Declared values, in order.
    Nominal(Vec<String>),
    /// String and date attributes: kept as text.
    Text,
}

/// One `@attribute` line.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Attribute {
    pub name: String,
    pub kind: AttrKind,
}

impl Attribute {
    /// A nominal attribute whose declared values are all 0/1 reads as a number column.
    fn is_binary_nominal(&self) -> bool {
        matches!(&self.kind, AttrKind::Nominal(v) if !v.is_empty() && v.iter().all(|s| s == "0" || s == "1"))
    }

    fn is_numeric_column(&self) -> bool {
        self.kind == AttrKind::Numeric || self.is_binary_nominal()
    }
}

/// The header: everything before `@data`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Header {
    pub relation: String,
    pub attributes: Vec<Attribute>,
    /// The 0-based index of the first line after `@data`.
    pub(crate) data_line: usize,
}

impl Header {
    /// MEKA's `-C n` in the relation name: the first `n` attributes are the labels (the last
    /// `|n|` when negative).
    pub(crate) fn meka_labels(&self) -> Option<Vec<String>> {
        let mut words = self.relation.split_whitespace();
        while let Some(w) = words.next() {
            let n = if w == "-C" {
                words.next().and_then(|v| v.parse::<i64>().ok())
            } else {
                w.strip_prefix("-C").and_then(|v| v.parse::<i64>().ok())
            };
            if let Some(n) = n {
                let m = self.attributes.len();
                let k = usize::try_from(n.unsigned_abs()).ok()?.min(m);
                let range = if n >= 0 { 0..k } else { m - k..m };
                return Some(
                    self.attributes[range]
                        .iter()
                        .map(|a| a.name.clone())
                        .collect(),
                );
            }
        }
        None
    }
}

/// A file's line `i` (0-based) as messages name it.
fn line_no(i: usize) -> String {
    format!("line {}", i + 1)
}

/// The header of ARFF text, up to and including the `@data` line.
pub(crate) fn parse_header(path: &Path, text: &str) -> Result<Header> {
    let mut relation = None;
    let mut attributes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('%') {
            continue;
        }
        let (keyword, rest) = split_word(t);
        match keyword.to_ascii_lowercase().as_str() {
            "@relation" => relation = Some(unquote(rest.trim())),
            "@attribute" => attributes.push(parse_attribute(path, i, rest)?),
            "@data" => {
                if attributes.is_empty() {
                    return Err(input_at(
                        path,
                        "ARFF file declares no @attribute before @data",
                    ));
                }
                check_distinct(path, &attributes)?;
                return Ok(Header {
                    relation: relation.unwrap_or_default(),
                    attributes,
                    data_line: i + 1,
                });
            }
            "@end" => {}
            _ => {
                return Err(input_at(
                    path,
                    format!(
                        "{}: expected @relation, @attribute or @data in an ARFF header, found `{}`",
                        line_no(i),
                        clip(t)
                    ),
                ))
            }
        }
    }
    Err(input_at(
        path,
        "not an ARFF file: no @data line (an ARFF file is a header of @attribute lines, then @data)",
    ))
}

fn check_distinct(path: &Path, attributes: &[Attribute]) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for (i, a) in attributes.iter().enumerate() {
        if let Some(first) = seen.insert(a.name.as_str(), i + 1) {
            return Err(input_at(
                path,
                format!(
                    "two attributes are named `{}` (attributes {first} and {}); rename one of them",
                    a.name,
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}

fn parse_attribute(path: &Path, line: usize, rest: &str) -> Result<Attribute> {
    let rest = rest.trim();
    let (name, kind) = take_name(rest).ok_or_else(|| {
        input_at(
            path,
            format!("{}: an @attribute line without a name", line_no(line)),
        )
    })?;
    let kind = kind.trim();
    let lower = kind.to_ascii_lowercase();
    let kind = if kind.starts_with('{') {
        let inner = kind
            .strip_prefix('{')
            .and_then(|k| k.trim_end().strip_suffix('}'))
            .ok_or_else(|| {
                input_at(
                    path,
                    format!(
                        "{}: attribute `{name}`: a nominal list must end with `}}`",
                        line_no(line)
                    ),
                )
            })?;
        AttrKind::Nominal(
            split_cells(inner)
                .into_iter()
                .map(|v| unquote(v.trim()))
                .collect(),
        )
    } else if ["numeric", "real", "integer"].contains(&lower.as_str()) {
        AttrKind::Numeric
    } else if lower == "string" || lower.starts_with("date") {
        AttrKind::Text
    } else {
        let why = if lower.starts_with("relational") {
            "relational attributes are not read (flatten the bag into columns)".to_string()
        } else {
            format!("unknown type `{}`", clip(kind))
        };
        return Err(input_at(
            path,
            format!("{}: attribute `{name}`: {why}", line_no(line)),
        ));
    };
    Ok(Attribute { name, kind })
}

/// The first whitespace-separated word and the rest.
fn split_word(s: &str) -> (&str, &str) {
    match s.find(char::is_whitespace) {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    }
}

/// An attribute name (quoted or not) and the text after it.
fn take_name(s: &str) -> Option<(String, &str)> {
    let q = s.chars().next()?;
    if q == '\'' || q == '"' {
        let mut escaped = false;
        for (i, c) in s.char_indices().skip(1) {
            match c {
                '\\' if !escaped => escaped = true,
                c if c == q && !escaped => return Some((unquote(&s[..=i]), &s[i + 1..])),
                _ => escaped = false,
            }
        }
        None
    } else {
        let end = s.find(|c: char| c.is_whitespace() || c == '{')?;
        Some((s[..end].to_string(), &s[end..]))
    }
}

/// A value without its quotes and with `\'`-style escapes resolved.
fn unquote(s: &str) -> String {
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') && b[b.len() - 1] == b[0] {
        let mut out = String::new();
        let mut chars = s[1..s.len() - 1].chars();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(n) = chars.next() {
                    out.push(match n {
                        'n' => '\n',
                        't' => '\t',
                        other => other,
                    });
                }
            } else {
                out.push(c);
            }
        }
        out
    } else {
        s.to_string()
    }
}

/// Split on commas outside quotes (cells keep their quotes).
fn split_cells(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quote, mut escaped) = (0, None, false);
    for (i, c) in s.char_indices() {
        match (quote, c) {
            (_, '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (None, '\'' | '"') if !escaped => quote = Some(c),
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, ',') => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        escaped = false;
    }
    out.push(&s[start..]);
    out
}

/// A long line cut for a message.
fn clip(s: &str) -> String {
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The cells of one column while rows are read.
enum Building {
    Numeric(Vec<Option<f64>>),
    Text(Vec<Option<String>>),
}

impl Building {
    /// Room for `rows` cells of attribute `a`: numbers for a numeric or 0/1 attribute.
    fn for_attribute(a: &Attribute, rows: usize) -> Building {
        if a.is_numeric_column() {
            Building::Numeric(Vec::with_capacity(rows))
        } else {
            Building::Text(Vec::with_capacity(rows))
        }
    }

    /// The finished column, named.
    fn into_column(self, name: String) -> RawColumn {
        let (dtype, cells) = match self {
            Building::Numeric(v) => ("f64", Cells::Numeric(v.into_iter().collect())),
            Building::Text(v) => ("str", Cells::Text(v)),
        };
        RawColumn {
            name,
            dtype: dtype.into(),
            cells,
        }
    }
}

/// Read ARFF text (the whole file) into columns.
pub(crate) fn read_arff(path: &Path, bytes: &[u8]) -> Result<RawTable> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| input_at(path, "an ARFF file must be UTF-8 text; save it as UTF-8"))?;
    let header = parse_header(path, text)?;
    let data: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .skip(header.data_line)
        .map(|(i, l)| (i, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('%'))
        .collect();
    if data.is_empty() {
        return Err(input_at(
            path,
            format!(
                "has a header ({} attributes) but no data rows",
                header.attributes.len()
            ),
        ));
    }
    if let Some(t) = read_with_sparse_block(path, &header, &data)? {
        return Ok(t);
    }
    let m = header.attributes.len();
    super::cells_fit::check_cells_fit(path, data.len() as u64, m as u64)?;
    let mut cols: Vec<Building> = header
        .attributes
        .iter()
        .map(|a| Building::for_attribute(a, data.len()))
        .collect();
    let mut row = vec![None::<String>; m];
    for &(line, l) in &data {
        row.iter_mut().for_each(|c| *c = None);
        let cells = if let Some(inner) = l.strip_prefix('{') {
            sparse_row(path, line, inner, &header.attributes, &mut row)?
        } else {
            dense_row(path, line, l, m, &mut row)?
        };
        debug_assert_eq!(cells, m);
        for (j, (a, cell)) in header.attributes.iter().zip(&row).enumerate() {
            let cell = cell.as_deref().unwrap_or("?");
            push_cell(path, line, a, cell, &mut cols[j])?;
        }
    }
    let columns = header
        .attributes
        .iter()
        .zip(cols)
        .map(|(a, c)| c.into_column(a.name.clone()))
        .collect();
    Ok(RawTable {
        path: path.to_path_buf(),
        n_rows: data.len(),
        columns,
        sha256: String::new(),
        size: 0,
        sparse: None,
    })
}

/// A file whose every row is sparse, read with its numeric attributes as one sparse block
/// (`RawTable::sparse`) and the others (nominal, string) as columns; `None` when it has
/// fewer than two numeric attributes or a missing (`?`) numeric value, which only columns
/// can hold.
fn read_with_sparse_block(
    path: &Path,
    header: &Header,
    data: &[(usize, &str)],
) -> Result<Option<RawTable>> {
    let attrs = &header.attributes;
    let numeric: Vec<usize> = (0..attrs.len())
        .filter(|&j| attrs[j].kind == AttrKind::Numeric)
        .collect();
    if numeric.len() < 2 || !data.iter().all(|(_, l)| l.starts_with('{')) {
        return Ok(None);
    }
    let mut block_of = vec![None::<u32>; attrs.len()];
    for (k, &j) in numeric.iter().enumerate() {
        block_of[j] = u32::try_from(k).ok();
    }
    let others: Vec<usize> = (0..attrs.len())
        .filter(|&j| block_of[j].is_none())
        .collect();
    super::cells_fit::check_cells_fit(path, data.len() as u64, others.len().max(1) as u64)?;
    let mut cols: Vec<Building> = others
        .iter()
        .map(|&j| Building::for_attribute(&attrs[j], data.len()))
        .collect();
    let mut rows: Vec<Vec<(u32, f64)>> = Vec::with_capacity(data.len());
    let mut cells = vec![None::<String>; attrs.len()];
    for &(line, l) in data {
        let mut entries = Vec::new();
        for &j in &others {
            cells[j] = None;
        }
        for (j, value) in sparse_pairs(path, line, &l[1..], attrs)? {
            let Some(k) = block_of[j] else {
                if cells[j].replace(value).is_some() {
                    return Err(twice(path, line, j, &attrs[j].name));
                }
                continue;
            };
            if value == "?" {
                return Ok(None);
            }
            entries.push((k, number(path, line, &attrs[j], &value)?));
        }
        entries.sort_unstable_by_key(|e| e.0);
        if let Some(w) = entries.windows(2).find(|w| w[0].0 == w[1].0) {
            let j = numeric[w[0].0 as usize];
            return Err(twice(path, line, j, &attrs[j].name));
        }
        for (c, &j) in others.iter().enumerate() {
            let default = || match &attrs[j].kind {
                AttrKind::Nominal(v) => v[0].clone(),
                _ => "0".to_string(),
            };
            let cell = cells[j].take().unwrap_or_else(default);
            push_cell(path, line, &attrs[j], &cell, &mut cols[c])?;
        }
        rows.push(entries);
    }
    let columns = others
        .iter()
        .zip(cols)
        .map(|(&j, c)| c.into_column(attrs[j].name.clone()))
        .collect();
    let names = numeric.iter().map(|&j| attrs[j].name.clone()).collect();
    let mut block = SparseFeatures::from_rows(names, rows.into_iter());
    block.positions = Some(numeric);
    Ok(Some(RawTable {
        path: path.to_path_buf(),
        n_rows: data.len(),
        columns,
        sha256: String::new(),
        size: 0,
        sparse: Some(block),
    }))
}

fn twice(path: &Path, line: usize, j: usize, name: &str) -> crate::OvkError {
    input_at(
        path,
        format!(
            "{}: attribute index {j} (`{name}`) appears twice",
            line_no(line)
        ),
    )
}

/// A dense row `v1,v2,…` (a trailing instance weight `,{w}` is ignored) into `row`.
fn dense_row(
    path: &Path,
    line: usize,
    l: &str,
    m: usize,
    row: &mut [Option<String>],
) -> Result<usize> {
    let mut cells = split_cells(l);
    if cells.len() == m + 1 && cells[m].trim().starts_with('{') {
        cells.pop();
    }
    if cells.len() != m {
        return Err(input_at(
            path,
            format!(
                "{}: {} values, but the header declares {m} attributes",
                line_no(line),
                cells.len()
            ),
        ));
    }
    for (slot, c) in row.iter_mut().zip(cells) {
        *slot = Some(unquote(c.trim()));
    }
    Ok(m)
}

/// The `(attribute index, value)` pairs of a sparse row `{i v, j v}` (its text after `{`).
fn sparse_pairs(
    path: &Path,
    line: usize,
    inner: &str,
    attributes: &[Attribute],
) -> Result<Vec<(usize, String)>> {
    let close = inner.rfind('}').ok_or_else(|| {
        input_at(
            path,
            format!("{}: a sparse row must end with `}}`", line_no(line)),
        )
    })?;
    let body = inner[..close].trim();
    if body.is_empty() {
        return Ok(Vec::new());
    }
    split_cells(body)
        .into_iter()
        .map(|pair| {
            let (index, value) = split_word(pair.trim());
            let j = index
                .parse::<usize>()
                .ok()
                .filter(|&j| j < attributes.len())
                .ok_or_else(|| {
                    input_at(
                        path,
                        format!(
                            "{}: `{}` is not an attribute index (0 to {})",
                            line_no(line),
                            clip(pair.trim()),
                            attributes.len() - 1
                        ),
                    )
                })?;
            Ok((j, unquote(value.trim())))
        })
        .collect()
}

/// A sparse row `{i v, j v}` (its text after `{`) into `row`; omitted values are 0 (a
/// nominal attribute's first value).
fn sparse_row(
    path: &Path,
    line: usize,
    inner: &str,
    attributes: &[Attribute],
    row: &mut [Option<String>],
) -> Result<usize> {
    for (j, value) in sparse_pairs(path, line, inner, attributes)? {
        if row[j].replace(value).is_some() {
            return Err(twice(path, line, j, &attributes[j].name));
        }
    }
    for (slot, a) in row.iter_mut().zip(attributes) {
        if slot.is_none() {
            *slot = Some(match &a.kind {
                AttrKind::Nominal(v) => v[0].clone(),
                _ => "0".to_string(),
            });
        }
    }
    Ok(attributes.len())
}

/// A numeric attribute's cell as a finite number, refused naming the line otherwise.
fn number(path: &Path, line: usize, a: &Attribute, cell: &str) -> Result<f64> {
    cell.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .ok_or_else(|| {
            input_at(
                path,
                format!(
                    "{}: numeric attribute `{}` holds `{}`, not a finite number",
                    line_no(line),
                    a.name,
                    clip(cell)
                ),
            )
        })
}

fn push_cell(
    path: &Path,
    line: usize,
    a: &Attribute,
    cell: &str,
    col: &mut Building,
) -> Result<()> {
    let missing = cell == "?";
    if let (AttrKind::Nominal(values), false) = (&a.kind, missing) {
        if !values.iter().any(|v| v == cell) {
            return Err(input_at(
                path,
                format!(
                    "{}: attribute `{}` holds `{}`, which is not one of its declared values {{{}}}",
                    line_no(line),
                    a.name,
                    clip(cell),
                    clip(&values.join(","))
                ),
            ));
        }
    }
    match col {
        Building::Numeric(v) if missing => v.push(None),
        Building::Numeric(v) => v.push(Some(number(path, line, a, cell)?)),
        Building::Text(v) => v.push((!missing).then(|| cell.to_string())),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<RawTable> {
        read_arff(Path::new("t.arff"), text.as_bytes())
    }

    #[test]
    fn dense_and_sparse_rows_read_alike() {
        let head = "% c\n@relation 'r: -C 2'\n@attribute L1 {0,1}\n@attribute 'L 2' {0,1}\n\
                    @attribute x numeric\n@attribute c {red,blue}\n@attribute s string\n@data\n";
        let dense = read(&format!("{head}1,0,2.5,blue,'a b'\n0,0,?,red,?\n")).unwrap();
        let sparse = read(&format!(
            "{head}{{0 1, 2 2.5, 3 blue, 4 'a b'}}\n{{2 ?, 4 ?}}\n"
        ))
        .unwrap();
        assert_eq!(dense.columns, sparse.columns);
        assert_eq!(dense.names(), ["L1", "L 2", "x", "c", "s"]);
        assert_eq!(
            dense.columns[0].cells,
            Cells::Numeric([Some(1.0), Some(0.0)].into_iter().collect())
        );
        assert_eq!(
            dense.columns[2].cells,
            Cells::Numeric([Some(2.5), None].into_iter().collect())
        );
        assert_eq!(
            dense.columns[3].cells,
            Cells::Text(vec![Some("blue".into()), Some("red".into())])
        );
        assert_eq!(
            dense.columns[4].cells,
            Cells::Text(vec![Some("a b".into()), None])
        );
        let h = parse_header(Path::new("t.arff"), head).unwrap();
        assert_eq!(h.meka_labels().unwrap(), ["L1", "L 2"]);
    }

    #[test]
    fn bad_rows_are_named_by_line() {
        let head = "@relation r\n@attribute x numeric\n@attribute c {a,b}\n@data\n";
        let cases = [
            ("1,a\n2\n", "line 6: 1 values"),
            ("1,a\nz,b\n", "line 6: numeric attribute `x` holds `z`"),
            ("1,c\n", "line 5: attribute `c` holds `c`"),
            ("{0 1, 9 a}\n", "line 5: `9 a` is not an attribute index"),
            ("{0 1, 0 2}\n", "appears twice"),
            ("{0 1\n", "must end with `}`"),
            ("1e999,a\n", "not a finite number"),
            ("", "no data rows"),
        ];
        for (data, want) in cases {
            let e = read(&format!("{head}{data}")).unwrap_err().to_string();
            assert!(e.contains(want) && e.contains("t.arff"), "{data:?}: {e}");
        }
        for bad in [
            "@relation r\n@data\n1\n",
            "@relation r\n@attribute x relational\n@data\n",
            "@relation r\n@attribute x numeric\n@attribute x numeric\n@data\n1,2\n",
            "x,y\n1,2\n",
            "@relation r\n@attribute\n@data\n",
            "@relation r\n@attribute c {a,b\n@data\n",
        ] {
            assert!(read(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn meka_counts_from_the_end_when_negative() {
        let h = parse_header(
            Path::new("t.arff"),
            "@relation 'x: -C -1 -split'\n@attribute a numeric\n@attribute b {0,1}\n@data\n",
        )
        .unwrap();
        assert_eq!(h.meka_labels().unwrap(), ["b"]);
    }
}
