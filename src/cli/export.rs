//! `ovk export SESSION`: predictions, a matrix, or the trace as a table — CSV, TSV or Parquet
//! by the file's extension, CSV on standard output — written by the rules of `session::output`
//! (never into the store or over the run's data; `--force` to replace).

use std::path::Path;

use ndarray::Array2;

use ovk_core::data::OutColumn;
use ovk_core::methods::TraceRecord;
use ovk_core::session::{self, output, OutputRules, SessionRecord, Store};
use ovk_core::{OvkError, Result};

pub struct ExportArgs<'a> {
    pub session: &'a str,
    pub predictions: Option<&'a Path>,
    pub matrix: Option<(&'a str, &'a Path)>,
    pub trace: Option<&'a Path>,
    pub figure: Option<(crate::figure::Figure, &'a Path)>,
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
    if a.predictions.is_none() && a.matrix.is_none() && a.trace.is_none() && a.figure.is_none() {
        return Err(OvkError::input(
            "say what to export: --predictions FILE, --matrix NAME FILE, --trace FILE or \
             --figure NAME FILE",
        ));
    }
    let rules = protecting(OutputRules::new(a.force), &s, a.sessions)?;
    let figure_path = a.figure.as_ref().map(|(_, p)| *p);
    let paths: Vec<&Path> = [
        a.predictions,
        a.matrix.map(|(_, p)| p),
        a.trace,
        figure_path,
    ]
    .into_iter()
    .flatten()
    .collect();
    // Every destination is checked, and the figure drawn, before anything is written.
    let outs = output::plan_all(&paths, &rules)?;
    let picture = match &a.figure {
        Some((figure, path)) => Some(crate::figure::render(
            &s,
            figure,
            crate::figure::Format::of(path)?,
        )?),
        None => None,
    };
    let tables = [
        a.predictions.map(|_| predictions(&s)).transpose()?,
        a.matrix.map(|(name, _)| matrix(&s, name)).transpose()?,
        a.trace.map(|_| trace(r)),
    ];
    for (out, columns) in outs.iter().zip(tables.into_iter().flatten()) {
        let format = ovk_core::data::output_format(out.path())?;
        out.write_with(|w| ovk_core::data::write_table(w, format, &columns))?;
    }
    if let (Some(bytes), Some(out)) = (picture, outs.last().filter(|_| a.figure.is_some())) {
        out.write_with(|w| w.write_all(&bytes))?;
    }
    Ok(0)
}

type Columns = Vec<(String, OutColumn)>;

/// The test rows' indices in the data file, their true values (when saved) and predictions.
fn predictions(s: &session::Loaded) -> Result<Columns> {
    let r = &s.record;
    let pred = s.matrix("predictions_test")?;
    let rows = r.split.test.iter().map(|&i| i as f64).collect();
    let mut columns = vec![("row".to_string(), OutColumn::Numbers(rows))];
    if let Ok(truth) = s.matrix("targets_test") {
        columns.extend(named_columns(&truth, "true_", &r.output_names));
    }
    columns.extend(named_columns(&pred, "pred_", &r.output_names));
    Ok(columns)
}

/// A learned matrix; its columns are named after the outputs when there is one per output.
fn matrix(s: &session::Loaded, name: &str) -> Result<Columns> {
    let m = s.matrix(name)?;
    let names: Vec<String> = if m.ncols() == s.record.output_names.len() {
        s.record.output_names.clone()
    } else {
        (0..m.ncols()).map(|j| format!("c{j}")).collect()
    };
    Ok(named_columns(&m, "", &names))
}

fn named_columns(m: &Array2<f64>, prefix: &str, names: &[String]) -> Columns {
    m.columns()
        .into_iter()
        .zip(names)
        .map(|(c, n)| (format!("{prefix}{n}"), OutColumn::Numbers(c.to_vec())))
        .collect()
}

/// One row per trace record; a value a record does not carry is a missing cell.
fn trace(r: &SessionRecord) -> Columns {
    let t = &r.trace;
    let missing = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let column = |name: &str, f: &dyn Fn(&TraceRecord) -> f64| {
        (
            name.to_string(),
            OutColumn::Numbers(t.iter().map(f).collect()),
        )
    };
    let mut columns = vec![
        column("iter", &|x| x.iter as f64),
        column("objective", &|x| x.objective),
        column("residual", &|x| missing(x.residual)),
        column("step", &|x| missing(x.step)),
        column("lambda", &|x| missing(x.lambda)),
        column("val_metric", &|x| missing(x.val_metric)),
        column("elapsed_ms", &|x| x.elapsed_ms),
    ];
    let extras: std::collections::BTreeSet<&String> =
        t.iter().flat_map(|x| x.extra.keys()).collect();
    for e in extras {
        columns.push(column(e, &|x| missing(x.extra.get(e).copied())));
    }
    columns
}

/// The rules of an export from session `s`: not into the store nor the session's directory,
/// not over any file the session depends on (its data, the data's sidecar, its candidates).
pub(crate) fn protecting(
    rules: OutputRules,
    s: &session::Loaded,
    sessions: Option<&Path>,
) -> Result<OutputRules> {
    Ok(rules.protect_session(s, &Store::locate(sessions)?))
}
