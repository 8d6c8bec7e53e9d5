//! `ovk export SESSION`: predictions, a matrix, or the trace as CSV, written by the rules of
//! `session::output` (never into the store or over the run's data; `--force` to replace).

use std::fmt::Write as _;
use std::path::Path;

use crate::session::{self, output, OutputRules, Store};
use crate::{OvkError, Result};

pub struct ExportArgs<'a> {
    pub session: &'a str,
    pub predictions: Option<&'a Path>,
    pub matrix: Option<(&'a str, &'a Path)>,
    pub trace: Option<&'a Path>,
    pub sessions: Option<&'a Path>,
    pub force: bool,
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
    let rules = protecting(OutputRules::new(a.force), &s, a.sessions)?;
    let paths: Vec<&Path> = [a.predictions, a.matrix.map(|(_, p)| p), a.trace]
        .into_iter()
        .flatten()
        .collect();
    // Every destination is checked before anything is written.
    let mut outs = output::plan_all(&paths, &rules)?.into_iter();
    if a.predictions.is_some() {
        let out = outs.next().expect("planned");
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
        out.write(csv.as_bytes())?;
    }
    if let Some((name, _)) = a.matrix {
        let out = outs.next().expect("planned");
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
        out.write(csv.as_bytes())?;
    }
    if a.trace.is_some() {
        let out = outs.next().expect("planned");
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
        out.write(csv.as_bytes())?;
    }
    Ok(0)
}

/// The rules of an export from session `s`: not into the store nor the session's directory,
/// not over its data file or the data's sidecar.
pub(crate) fn protecting(
    rules: OutputRules,
    s: &session::Loaded,
    sessions: Option<&Path>,
) -> Result<OutputRules> {
    let mut rules = rules
        .protect_dir(&Store::locate(sessions)?, "the session store")
        .protect_dir(&s.dir, "the session's directory");
    for data in [&s.record.dataset.path, &s.record.config.data.path] {
        rules = rules.protect_file(data, format!("the data file of session {}", s.record.id));
        if let Some(side) = crate::data::sidecar_path(data) {
            rules = rules.protect_file(&side, "the sidecar of the session's data file");
        }
    }
    Ok(rules)
}

/// Rules for a file written outside any session (`gen`, `bench data`, a benchmark ledger):
/// never into the session store, never over a saved session's data file or its sidecar.
pub(crate) fn outside_store(force: bool, sessions: Option<&Path>) -> Result<OutputRules> {
    let rules = OutputRules::new(force);
    Ok(match Store::existing(sessions)? {
        Some(store) => rules.protect_store(&store),
        None => rules,
    })
}

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
