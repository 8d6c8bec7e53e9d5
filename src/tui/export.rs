//! What the current pane shows, as CSV text: the selected matrix with its row and column
//! names (Matrices), the trace (Run, Charts), the records table or the metrics (Results), the
//! session list (Sessions). The driver writes it to a new file.

use crate::methods::TraceRecord;
use crate::session::Listing;

use super::axes;
use super::state::{Pane, State};
use super::widgets::record_table;

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
            for c in &ax.cols {
                out.push(',');
                out.push_str(&field(c));
            }
            out.push('\n');
            for (i, row) in m.rows().into_iter().enumerate() {
                out.push_str(&field(&ax.rows[i]));
                for v in row {
                    out.push_str(&format!(",{v}"));
                }
                out.push('\n');
            }
            Ok((format!("{session}-{name}"), out))
        }
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
            let mut keys: Vec<&String> = r
                .metrics
                .test
                .keys()
                .chain(r.metrics.train.keys())
                .collect();
            keys.sort();
            keys.dedup();
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
        Pane::Sessions => {
            let mut out = String::from("name,created,dataset,method,metric,value,path\n");
            for l in &s.sessions.list {
                if let Listing::Ok(sum) = l {
                    let (k, v) = sum
                        .key_metric
                        .as_ref()
                        .map(|(k, v)| (k.clone(), v.to_string()))
                        .unwrap_or_default();
                    out.push_str(&format!(
                        "{},{},{},{},{},{},{}\n",
                        field(&sum.name),
                        field(&sum.created),
                        field(&sum.dataset),
                        field(&sum.method),
                        field(&k),
                        v,
                        field(&sum.path.display().to_string())
                    ));
                }
            }
            Ok(("sessions".into(), out))
        }
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
