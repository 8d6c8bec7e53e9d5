//! What the current pane shows, as CSV text: the selected matrix with its row and column
//! names (Matrices), the trace or a sweep's table (Run, Charts), the marked runs' curves
//! (Charts), the records table or the metrics (Results), the runs table as filtered and sorted
//! (Sessions). The driver writes it to a new file through the engine's output rules.

use ovk_core::methods::TraceRecord;
use std::path::PathBuf;

use ovk_core::session::Listing;

use super::axes;
use super::state::{columns, Pane, State};
use super::widgets::record_table;

/// `text` as a file name's stem: letters, digits, `-`, `_` and `.` kept, anything else `_`.
pub fn file_stem(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// (file-name stem, CSV text) for the current pane, or why there is nothing to export.
pub fn current(s: &State) -> Result<(String, String), String> {
    let session = s
        .result
        .as_ref()
        .map(|f| f.outcome.record.name.clone())
        .unwrap_or_else(|| "run".into());
    match s.pane {
        Pane::Matrices => {
            let f = s.result.as_ref().ok_or("no matrices yet")?;
            let (name, m) = f
                .outcome
                .matrices
                .get(s.matrices.selected)
                .ok_or("this fit saved no matrices")?;
            let ax = axes::of(&f.outcome.record, name, m.dim());
            let mut out = String::from("\"\"");
            for c in &ax.cols.labels {
                out.push(',');
                out.push_str(&field(c));
            }
            out.push('\n');
            for (i, row) in m.rows().into_iter().enumerate() {
                out.push_str(&field(&ax.rows.labels[i]));
                for v in row {
                    out.push_str(&format!(",{v}"));
                }
                out.push('\n');
            }
            Ok((format!("{session}-{name}"), out))
        }
        Pane::Run if s.run.sweep.is_some() => sweep_csv(s),
        Pane::Charts if s.sessions.runs.chart_marked && !s.sessions.runs.marked.is_empty() => {
            marked_csv(s)
        }
        Pane::Charts if s.run.sweep.is_some() && s.replay.is_none() => sweep_csv(s),
        Pane::Run | Pane::Charts => {
            let t = if s.pane == Pane::Run {
                s.run_trace()
            } else {
                s.chart_trace()
            };
            if t.is_empty() {
                return Err("no trace to export yet".into());
            }
            Ok((format!("{session}-trace"), trace_csv(t)))
        }
        Pane::Results if s.diag.shown => {
            let f = s.result.as_ref().ok_or("no results to export yet")?;
            let part = s.diag.part();
            let d = super::diag::of(&f.outcome, part)?;
            let (what, text) = super::diag::csv(&d, &f.outcome.record.output_names);
            Ok((format!("{session}-{what}-{part}"), text))
        }
        Pane::Results => {
            let f = s.result.as_ref().ok_or("no results to export yet")?;
            let r = &f.outcome.record;
            if let Some(t) = record_table::from_details(&r.details) {
                let mut out = join(&t.headers);
                for row in &t.rows {
                    out.push_str(&join(row));
                }
                return Ok((format!("{session}-{}", t.key), out));
            }
            let mut out = String::from("metric,train,test,baseline\n");
            let keys = r.metrics.names();
            let num = |v: Option<&f64>| v.map(|v| v.to_string()).unwrap_or_default();
            for k in keys {
                out.push_str(&format!(
                    "{},{},{},{}\n",
                    field(k),
                    num(r.metrics.train.get(k)),
                    num(r.metrics.test.get(k)),
                    num(r.baseline.as_ref().and_then(|b| b.test.get(k)))
                ));
            }
            Ok((format!("{session}-metrics"), out))
        }
        Pane::Sessions => match &s.sessions.predictions {
            Some(p) => Ok((
                format!("predictions-{}", p.session),
                predictions_csv(&p.table),
            )),
            None => Ok(("runs".into(), runs_csv(s))),
        },
        _ => Err("e exports the matrix, table or chart of panes 4–8".into()),
    }
}

fn trace_csv(t: &[TraceRecord]) -> String {
    let mut extras: Vec<&String> = t.iter().flat_map(|r| r.extra.keys()).collect();
    extras.sort();
    extras.dedup();
    let mut out = String::from("iter,objective,residual,step,lambda,val_metric,elapsed_ms");
    for e in &extras {
        out.push(',');
        out.push_str(&field(e));
    }
    out.push('\n');
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    for r in t {
        out.push_str(&format!(
            "{},{},{},{},{},{},{}",
            r.iter,
            r.objective,
            opt(r.residual),
            opt(r.step),
            opt(r.lambda),
            opt(r.val_metric),
            r.elapsed_ms
        ));
        for e in &extras {
            out.push(',');
            out.push_str(&opt(r.extra.get(*e).copied()));
        }
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it holds a comma, quote or line break.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn join(cells: &[String]) -> String {
    let mut out = cells.iter().map(|c| field(c)).collect::<Vec<_>>().join(",");
    out.push('\n');
    out
}

/// The files the shown fit (or the running one) read, which an export must never replace.
pub fn inputs(s: &State) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = Vec::new();
    let data = [
        s.result
            .as_ref()
            .map(|f| &f.outcome.record.config.data.path),
        s.run.config.as_ref().map(|c| &c.data.path),
    ];
    for p in data.into_iter().flatten() {
        v.push(p.clone());
        v.push(p.with_extension("toml"));
    }
    v
}

/// The runs table as shown (filter and sort applied), every column of every task, whether
/// each run is kept, how it ended, why its test metrics are optimistic, and its folder.
fn runs_csv(s: &State) -> String {
    let ss = &s.sessions;
    let cols = columns(&ss.list, None);
    let mut head: Vec<String> = cols.iter().map(|c| c.title()).collect();
    head.extend(["kept", "status", "optimistic", "path"].map(String::from));
    let mut out = join(&head);
    for i in ss.runs.rows(&ss.list) {
        if let Listing::Ok(sum) = &ss.list[i] {
            // Full precision, not the screen's rounding; a missing value is an empty field.
            let mut row: Vec<String> = cols.iter().map(|c| c.raw(sum)).collect();
            row.push(sum.kept.to_string());
            row.push(
                if sum.status.is_finished() {
                    "finished"
                } else {
                    "cancelled"
                }
                .into(),
            );
            row.push(sum.optimistic.clone().unwrap_or_default());
            row.push(sum.path.display().to_string());
            out.push_str(&join(&row));
        }
    }
    out
}

/// The marked runs' curves, one line per (run, iteration).
fn marked_csv(s: &State) -> Result<(String, String), String> {
    let runs = &s.sessions.runs;
    let mut out = String::from("run,name,method,dataset,iter,objective,residual,val_metric\n");
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    let mut any = false;
    for (i, p) in runs.marked.iter().enumerate() {
        if let Some(Ok(r)) = runs.curves.get(p) {
            for t in &r.trace {
                any = true;
                out.push_str(&format!(
                    "{},{},{},{},{},{},{},{}\n",
                    i + 1,
                    field(&r.name),
                    field(&r.method),
                    field(&r.dataset),
                    t.iter,
                    t.objective,
                    opt(t.residual),
                    opt(t.val_metric)
                ));
            }
        }
    }
    if !any {
        return Err("the marked runs have no curves to export yet".into());
    }
    Ok(("marked-runs".into(), out))
}

/// A sweep's rows in grid order: the value, the mean and sd of the score, each fold's score.
fn sweep_csv(s: &State) -> Result<(String, String), String> {
    let sw = s.run.sweep.as_ref().ok_or("no sweep")?;
    if sw.rows.is_empty() {
        return Err("no configuration of the sweep is scored yet".into());
    }
    let metric = sw.rows[0].metric.clone();
    let folds = sw
        .rows
        .iter()
        .map(|r| r.fold_scores.len())
        .max()
        .unwrap_or(0);
    let halving = sw.rows.iter().any(|r| r.rung.is_some());
    let mut head: Vec<String> = sw.plan.axes.iter().map(|a| a.key.clone()).collect();
    if halving {
        head.extend(["rung".into(), "train_rows".into()]);
    }
    head.extend([
        format!("mean_{metric}"),
        "sd".into(),
        "seconds".into(),
        "error".into(),
    ]);
    head.extend((0..folds).map(|k| format!("fold_{k}")));
    let mut out = join(&head);
    let mut rows: Vec<_> = sw.rows.iter().collect();
    rows.sort_by_key(|r| r.index);
    rows.sort_by_key(|r| r.rung);
    for r in rows {
        let point = sw.plan.points.get(r.index);
        let mut row: Vec<String> = (0..sw.plan.axes.len())
            .map(|a| {
                point
                    .and_then(|p| p.get(a))
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            })
            .collect();
        if halving {
            let num = |v: Option<usize>| v.map(|v| v.to_string()).unwrap_or_default();
            row.extend([num(r.rung), num(r.train_rows)]);
        }
        row.extend([
            r.mean.to_string(),
            r.sd.to_string(),
            r.seconds.to_string(),
            r.error.clone().unwrap_or_default(),
        ]);
        row.extend(r.fold_scores.iter().map(|v| v.to_string()));
        out.push_str(&join(&row));
    }
    let keys: Vec<&str> = sw.plan.axes.iter().map(|a| a.key.as_str()).collect();
    Ok((format!("sweep-{}", keys.join("-")), out))
}

/// The predictions table as `ovk predict --out` writes it (`<output>`, `<output>_score`).
fn predictions_csv(t: &ovk_core::train::PredictionTable) -> String {
    let cols = t.columns();
    let mut out = cols
        .iter()
        .map(|(n, _)| field(n))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for i in 0..t.n_rows() {
        let cells: Vec<String> = cols
            .iter()
            .map(|(_, c)| match c {
                ovk_core::data::OutColumn::Numbers(v) => format!("{}", v[i]),
                ovk_core::data::OutColumn::Text(v) => field(&v[i]),
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}
