//! Column selectors: exact names, globs with `*` (`p_0_*`), inclusive ranges in file order
//! (`p_0_0..p_3_7`), regular expressions between slashes (`/^(Cr|Ni)$/`, no commas; matched anywhere in
//! the name unless anchored), and comma lists inside one string (`a,b,c*`).

use std::collections::HashMap;
use std::path::Path;

use crate::error::input_at;
use crate::util::text::nearest;
use crate::{ErrorKind, OvkError, Result};

/// Indices (into `columns`) picked by `selectors`, in the order given, each at most once.
pub fn resolve(path: &Path, columns: &[&str], selectors: &[String]) -> Result<Vec<usize>> {
    let mut picked: Vec<usize> = Vec::new();
    // A mask, not `picked.contains`: selecting 10⁵ columns must not cost 10¹⁰ comparisons.
    let mut taken = vec![false; columns.len()];
    // Names looked up in a map: the workbench names a 47 236-column sparse block one by one,
    // and a search per name took 5 s.
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(columns.len());
    for (i, c) in columns.iter().enumerate() {
        index.entry(c).or_insert(i);
    }
    let mut any = false;
    for token in selectors.iter().flat_map(|s| s.split(',')).map(str::trim) {
        if token.is_empty() {
            continue;
        }
        any = true;
        for i in resolve_one(path, columns, &index, token)? {
            if !taken[i] {
                taken[i] = true;
                picked.push(i);
            }
        }
    }
    if !any {
        return Err(input_at(path, "an empty column list selects nothing"));
    }
    Ok(picked)
}

fn resolve_one(
    path: &Path,
    columns: &[&str],
    index: &HashMap<&str, usize>,
    token: &str,
) -> Result<Vec<usize>> {
    let exact = |name: &str| match index.get(name) {
        Some(&i) => Ok(i),
        None => exact(path, columns, name),
    };
    if let Some(pattern) = regex_of(token) {
        return by_regex(path, columns, token, pattern);
    }
    if let Some((a, b)) = token.split_once("..") {
        let (ia, ib) = (exact(a.trim())?, exact(b.trim())?);
        if ia > ib {
            return Err(input_at(
                path,
                format!(
                    "the range `{token}` runs backwards: `{}` is column {ia} and `{}` is column {ib} (0-based, file order)",
                    a.trim(),
                    b.trim()
                ),
            ));
        }
        return Ok((ia..=ib).collect());
    }
    if token.contains('*') {
        let hits: Vec<usize> = (0..columns.len())
            .filter(|&i| glob_match(token, columns[i]))
            .collect();
        if hits.is_empty() {
            return Err(OvkError::input_as(
                ErrorKind::MissingColumn,
                format!(
                    "{}: the pattern `{token}` matches no column{}",
                    path.display(),
                    column_hint(columns)
                ),
            ));
        }
        return Ok(hits);
    }
    Ok(vec![exact(token)?])
}

/// The pattern of a `/…/` token (at least one character between the slashes).
fn regex_of(token: &str) -> Option<&str> {
    token
        .strip_prefix('/')
        .and_then(|t| t.strip_suffix('/'))
        .filter(|p| !p.is_empty())
}

fn by_regex(path: &Path, columns: &[&str], token: &str, pattern: &str) -> Result<Vec<usize>> {
    let re = regex::Regex::new(pattern).map_err(|e| {
        input_at(
            path,
            format!(
                "`{token}` is not a regular expression: {}",
                first_line(&e.to_string())
            ),
        )
    })?;
    let hits: Vec<usize> = (0..columns.len())
        .filter(|&i| re.is_match(columns[i]))
        .collect();
    if hits.is_empty() {
        return Err(OvkError::input_as(
            ErrorKind::MissingColumn,
            format!(
                "{}: the regular expression `{token}` matches no column{}",
                path.display(),
                column_hint(columns)
            ),
        ));
    }
    Ok(hits)
}

/// The regex crate's messages draw the pattern over several lines; the last one says what is wrong.
fn first_line(msg: &str) -> &str {
    msg.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(msg)
        .trim()
        .trim_start_matches("error: ")
}

/// The index of the column named exactly `name`, or an error naming the nearest valid name.
pub(crate) fn exact(path: &Path, columns: &[&str], name: &str) -> Result<usize> {
    if let Some(i) = columns.iter().position(|c| *c == name) {
        return Ok(i);
    }
    let msg = match nearest(name, columns) {
        Some(near) => format!("no column `{name}`; did you mean `{near}`?"),
        None => format!("no column `{name}`{}", column_hint(columns)),
    };
    Err(OvkError::input_as(
        ErrorKind::MissingColumn,
        format!("{}: {msg}", path.display()),
    ))
}

/// A short list of the file's columns for messages with no close match.
fn column_hint(columns: &[&str]) -> String {
    const SHOWN: usize = 8;
    let mut list = columns
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if columns.len() > SHOWN {
        list.push_str(&format!(", … ({} columns in all)", columns.len()));
    }
    format!("; the columns are {list}")
}

/// `*` matches any run of characters (possibly empty); everything else matches itself.
pub(crate) fn glob_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if parts.len() == 1 {
        return pattern == text;
    }
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(k) => rest = &rest[k + mid.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cols() -> Vec<&'static str> {
        vec!["p_0_0", "p_0_1", "p_1_0", "p_1_1", "digit"]
    }

    fn sel(s: &[&str]) -> Result<Vec<usize>> {
        let s: Vec<String> = s.iter().map(|x| x.to_string()).collect();
        resolve(Path::new("t.csv"), &cols(), &s)
    }

    #[test]
    fn names_globs_ranges_and_lists() {
        assert_eq!(sel(&["digit"]).unwrap(), vec![4]);
        assert_eq!(sel(&["p_0_*"]).unwrap(), vec![0, 1]);
        assert_eq!(sel(&["p_*_1"]).unwrap(), vec![1, 3]);
        assert_eq!(sel(&["p_0_1..p_1_1"]).unwrap(), vec![1, 2, 3]);
        assert_eq!(sel(&["digit, p_1_*", "p_1_0"]).unwrap(), vec![4, 2, 3]);
        assert_eq!(sel(&["*"]).unwrap(), vec![0, 1, 2, 3, 4]);
        assert_eq!(sel(&["/_1$/"]).unwrap(), vec![1, 3]);
        assert_eq!(sel(&["/^p_[01]_0$/, digit"]).unwrap(), vec![0, 2, 4]);
    }

    #[test]
    fn bad_regexes_are_named() {
        let e = sel(&["/q+/"]).unwrap_err().to_string();
        assert!(e.contains("`/q+/` matches no column"), "{e}");
        let e = sel(&["/p_(/"]).unwrap_err().to_string();
        assert!(e.contains("`/p_(/` is not a regular expression"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn bad_selectors_are_named() {
        let e = sel(&["digt"]).unwrap_err().to_string();
        assert!(
            e.contains("no column `digt`") && e.contains("did you mean `digit`"),
            "{e}"
        );
        let e = sel(&["q_*"]).unwrap_err().to_string();
        assert!(e.contains("`q_*` matches no column"), "{e}");
        let e = sel(&["p_1_1..p_0_0"]).unwrap_err().to_string();
        assert!(e.contains("runs backwards"), "{e}");
        let e = sel(&["p_0_0..zzzzzzzzzz"]).unwrap_err().to_string();
        assert!(
            e.contains("no column `zzzzzzzzzz`; the columns are p_0_0"),
            "{e}"
        );
        let e = sel(&[" , "]).unwrap_err().to_string();
        assert!(e.contains("empty column list"), "{e}");
    }

    #[test]
    fn glob_edges() {
        assert!(glob_match("a*", "a"));
        assert!(glob_match("*b", "ab"));
        assert!(!glob_match("ab*ba", "aba"));
        assert!(glob_match("a*b*c", "axxbyyc"));
        assert!(!glob_match("a*b*c", "axxcyyb"));
    }
}
