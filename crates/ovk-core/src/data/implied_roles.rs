//! The roles an ARFF or LIBSVM file implies when no `.toml` sidecar names them, in the
//! conventions the multi-output community publishes its data with: Mulan's label XML beside
//! the file (`scene.xml` for `scene.arff`, `scene-train.arff` or `scene-test.arff`), MEKA's
//! `-C n` in the relation name, Weka's class as the last attribute, and a LIBSVM file's
//! label column(s).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use super::arff::{parse_header, AttrKind, Header};
use super::libsvm::{LABEL, LABEL_PREFIX};
use super::research_formats::{research_format_of, ResearchFormat};
use super::sidecar::Sidecar;
use super::Task;
use crate::error::input_at;
use crate::Result;

/// An ARFF header is a few lines per attribute; beyond this the file is not one.
const HEADER_CAP: u64 = 64 << 20;
/// A Mulan label file names a few thousand labels at most.
const XML_CAP: u64 = 16 << 20;

/// The roles `data_path`'s own conventions give it, if its format has any.
pub(crate) fn implied_roles(data_path: &Path) -> Result<Option<Sidecar>> {
    match research_format_of(data_path) {
        Some(ResearchFormat::Arff) => arff_roles(data_path).map(Some),
        Some(ResearchFormat::Libsvm) => libsvm_roles(data_path).map(Some),
        None => Ok(None),
    }
}

/// The implied roles of an ARFF or LIBSVM file as sidecar TOML (the workbench shows them as
/// it shows a sidecar); `None` for other files, or when they cannot be read.
pub fn implied_roles_toml(data_path: &Path) -> Option<String> {
    let side = implied_roles(data_path).ok()??;
    toml::to_string(&side).ok()
}

fn sidecar(
    source: String,
    task: Option<Task>,
    class: Option<String>,
    targets: Option<Vec<String>>,
) -> Sidecar {
    Sidecar {
        description: String::new(),
        source,
        task,
        class,
        targets,
        features: None,
        views: Default::default(),
    }
}

/// A multi-label file's 0/1 columns, else its one label column as the class (a regression
/// file says `--targets label`).
fn libsvm_roles(data_path: &Path) -> Result<Sidecar> {
    Ok(if is_multi_label(data_path)? {
        sidecar(
            "LIBSVM multi-label file".into(),
            Some(Task::Multilabel),
            None,
            Some(vec![format!("{LABEL_PREFIX}*")]),
        )
    } else {
        sidecar(
            "LIBSVM single-label file".into(),
            None,
            Some(LABEL.to_string()),
            None,
        )
    })
}

/// Whether some line of a LIBSVM file holds a label set (`1,5 …`) or none (`3:0.5 …`), read
/// line by line up to the first that does.
fn is_multi_label(path: &Path) -> Result<bool> {
    let (f, _) = super::files::open_regular(path, "LIBSVM data")?;
    for line in BufReader::new(f).split(b'\n') {
        let line = line.map_err(|e| crate::OvkError::io_path(path, e))?;
        let line = line.split(|&b| b == b'#').next().unwrap_or_default();
        let first = line
            .split(u8::is_ascii_whitespace)
            .find(|t| !t.is_empty())
            .unwrap_or_default();
        if first.contains(&b',') || first.contains(&b':') {
            return Ok(true);
        }
    }
    Ok(false)
}

fn arff_roles(data_path: &Path) -> Result<Sidecar> {
    let header = read_header(data_path)?;
    if let Some(xml) = mulan_xml(data_path) {
        let labels = mulan_labels(&xml)?;
        if let Some(missing) = labels
            .iter()
            .find(|l| !header.attributes.iter().any(|a| &a.name == *l))
        {
            return Err(input_at(
                &xml,
                format!(
                    "names the label `{missing}`, which {} has no attribute for",
                    data_path.display()
                ),
            ));
        }
        let source = format!("Mulan labels in {}", xml.display());
        return Ok(sidecar(source, Some(Task::Multilabel), None, Some(labels)));
    }
    if let Some(labels) = header.meka_labels() {
        if labels.is_empty() {
            return Err(input_at(
                data_path,
                "MEKA's `-C 0` names no label attributes",
            ));
        }
        return Ok(sidecar(
            "MEKA's -C in the relation name".into(),
            Some(Task::Multilabel),
            None,
            Some(labels),
        ));
    }
    let last = header.attributes.last().expect("a header has attributes");
    Ok(match last.kind {
        AttrKind::Nominal(_) => sidecar(
            "Weka's class: the last attribute".into(),
            Some(Task::Multiclass),
            Some(last.name.clone()),
            None,
        ),
        _ => sidecar(
            "Weka's target: the last attribute".into(),
            None,
            None,
            Some(vec![last.name.clone()]),
        ),
    })
}

/// The header of an ARFF file, read line by line up to `@data`.
fn read_header(path: &Path) -> Result<Header> {
    let (f, _) = super::files::open_regular(path, "ARFF data")?;
    let mut text = String::new();
    let mut reader = BufReader::new(std::io::Read::take(f, HEADER_CAP));
    loop {
        let start = text.len();
        let got = reader
            .read_line(&mut text)
            .map_err(|_| input_at(path, "an ARFF file must be UTF-8 text; save it as UTF-8"))?;
        let line = text[start..].trim();
        if got == 0 || line.to_ascii_lowercase().starts_with("@data") {
            break;
        }
    }
    parse_header(path, &text)
}

/// Mulan's label file for `data_path`: `<stem>.xml`, else without a `-train`/`-test` suffix.
fn mulan_xml(data_path: &Path) -> Option<PathBuf> {
    let stem = data_path.file_stem()?.to_str()?;
    let mut stems = vec![stem.to_string()];
    for suffix in ["-train", "-test", "_train", "_test"] {
        if let Some(base) = stem.strip_suffix(suffix) {
            stems.push(base.to_string());
        }
    }
    stems
        .into_iter()
        .map(|s| data_path.with_file_name(format!("{s}.xml")))
        .find(|p| p.is_file())
}

/// The `name` of every `<label>` element (hierarchies included), in file order.
fn mulan_labels(xml: &Path) -> Result<Vec<String>> {
    let bytes = super::files::read_text_file(xml, XML_CAP, "Mulan labels")?;
    let text = String::from_utf8(bytes)
        .map_err(|_| input_at(xml, "a Mulan label file must be UTF-8 text"))?;
    let mut labels = Vec::new();
    for tag in text.split('<').skip(1) {
        let Some(rest) = tag.strip_prefix("label") else {
            continue;
        };
        if !rest.starts_with(|c: char| c.is_whitespace()) {
            continue; // `<labels …>`
        }
        let name = attribute(rest, "name")
            .ok_or_else(|| input_at(xml, "a <label> element without a name=\"…\" attribute"))?;
        labels.push(unescape(&name));
    }
    if labels.is_empty() {
        return Err(input_at(
            xml,
            "names no labels (a Mulan label file lists <label name=\"…\"> elements)",
        ));
    }
    Ok(labels)
}

/// The value of `key="…"` (or `'…'`) in the text of a tag.
fn attribute(tag: &str, key: &str) -> Option<String> {
    let end = tag.find('>').unwrap_or(tag.len());
    let tag = &tag[..end];
    let mut rest = tag;
    while let Some(i) = rest.find(key) {
        let before_ok = rest[..i].ends_with(|c: char| c.is_whitespace());
        let after = rest[i + key.len()..].trim_start();
        if let (true, Some(after)) = (before_ok, after.strip_prefix('=')) {
            let after = after.trim_start();
            let q = after.chars().next()?;
            if q == '"' || q == '\'' {
                let body = &after[1..];
                return body.find(q).map(|e| body[..e].to_string());
            }
        }
        rest = &rest[i + key.len()..];
    }
    None
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_names_and_their_attributes() {
        assert_eq!(
            attribute(" name=\"Beach\"></label>", "name").as_deref(),
            Some("Beach")
        );
        assert_eq!(
            attribute(" xname='a' name = 'B &amp; C'/>", "name").as_deref(),
            Some("B &amp; C")
        );
        assert_eq!(unescape("B &amp; C"), "B & C");
        assert!(attribute(" id=\"x\">", "name").is_none());
    }
}
