//! `ovk export SESSION`: predictions, a matrix, or the trace as CSV (written atomically).

use std::fmt::Write as _;
use std::path::Path;

use crate::session::{self, Store};
use crate::{OvkError, Result};

pub struct ExportArgs<'a> {
    pub session: &'a str,
    pub predictions: Option<&'a Path>,
    pub matrix: Option<(&'a str, &'a Path)>,
    pub trace: Option<&'a Path>,
    pub sessions: Option<&'a Path>,
}

pub fn export(a: ExportArgs) -> Result<i32> {
    let dir = if Path::new(a.session).is_dir() {
        Path::new(a.session).to_path_buf()
    } else {
        Store::open(a.sessions)?.resolve(a.session)?
    };
    let s = session::load(&dir)?;
    let r = &s.record;
    if a.predictions.is_none() && a.matrix.is_none() && a.trace.is_none() {
        return Err(OvkError::input(
            "say what to export: --predictions FILE, --matrix NAME FILE or --trace FILE",
        ));
    }
    if let Some(out) = a.predictions {
        let pred = s.matrix("predictions_test")?;
        let truth = s.matrix("targets_test").ok();
        let mut csv = String::from("row");
        for n in &r.output_names {
            if truth.is_some() {
                write!(csv, ",{}", field(&format!("true_{n}"))).ok();
            }
        }
        for n in &r.output_names {
            write!(csv, ",{}", field(&format!("pred_{n}"))).ok();
        }
        csv.push('\n');
        for (i, row) in r.split.test.iter().enumerate() {
            write!(csv, "{row}").ok();
            if let Some(t) = &truth {
                for v in t.row(i) {
                    write!(csv, ",{v}").ok();
                }
            }
            for v in pred.row(i) {
                write!(csv, ",{v}").ok();
            }
            csv.push('\n');
        }
        write_atomic(out, &csv)?;
    }
    if let Some((name, out)) = a.matrix {
        let m = s.matrix(name)?;
        let names: Vec<String> = if m.ncols() == r.output_names.len() {
            r.output_names.clone()
        } else {
            (0..m.ncols()).map(|j| format!("c{j}")).collect()
        };
        let mut csv = names.iter().map(|n| field(n)).collect::<Vec<_>>().join(",");
        csv.push('\n');
        for row in m.rows() {
            csv.push_str(
                &row.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            );
            csv.push('\n');
        }
        write_atomic(out, &csv)?;
    }
    if let Some(out) = a.trace {
        let extras: std::collections::BTreeSet<&String> =
            r.trace.iter().flat_map(|t| t.extra.keys()).collect();
        let mut csv = String::from("iter,objective,residual,step,lambda,val_metric,elapsed_ms");
        for e in &extras {
            write!(csv, ",{}", field(e)).ok();
        }
        csv.push('\n');
        let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
        for t in &r.trace {
            write!(
                csv,
                "{},{},{},{},{},{},{}",
                t.iter,
                t.objective,
                opt(t.residual),
                opt(t.step),
                opt(t.lambda),
                opt(t.val_metric),
                t.elapsed_ms
            )
            .ok();
            for e in &extras {
                write!(csv, ",{}", opt(t.extra.get(*e).copied())).ok();
            }
            csv.push('\n');
        }
        write_atomic(out, &csv)?;
    }
    Ok(0)
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Write `text` to a temporary file beside `path`, then rename it into place; `-` is standard
/// output.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    if crate::data::is_stdout(path) {
        use std::io::Write;
        return std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(|e| OvkError::io("writing to standard output", e));
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| OvkError::io_path(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| OvkError::io_path(path, e))
}
