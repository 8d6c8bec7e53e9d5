//! The plain-text report of one session (`ovk replay --print`): what ran, how it scored, how
//! the fit went, and the trace as a table.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::{MetricMap, SessionRecord};
use crate::kernels::Sigma;

/// Traces longer than this show only their head and tail.
const TRACE_FULL: usize = 40;
const TRACE_HEAD: usize = 20;
const TRACE_TAIL: usize = 20;

/// A readable report of `record`.
pub fn summary_text(record: &SessionRecord) -> String {
    let mut out = String::new();
    header(&mut out, record);
    metrics(&mut out, record);
    fit(&mut out, record);
    if !record.notes.is_empty() {
        out.push_str("\nNotes\n");
        for n in &record.notes {
            let _ = writeln!(out, "  - {n}");
        }
    }
    trace(&mut out, record);
    // Names, paths and notes come from files and users: no escape sequence reaches the terminal.
    crate::util::text::text_safe(&out)
}

fn header(out: &mut String, r: &SessionRecord) {
    let d = &r.dataset;
    let _ = writeln!(
        out,
        "Session   {}",
        crate::util::text::display_safe(&r.name)
    );
    let _ = writeln!(
        out,
        "  id        {}",
        crate::util::text::display_safe(&r.id)
    );
    let _ = writeln!(out, "  created   {} (ovk {})", r.created, r.ovk_version);
    let _ = writeln!(
        out,
        "  dataset   {} ({} rows, {} features, {} outputs)",
        crate::util::text::display_safe(&d.path.display().to_string()),
        d.rows,
        r.feature_names.len(),
        r.output_names.len()
    );
    let _ = writeln!(out, "  task      {}", r.task.name());
    let _ = writeln!(out, "  method    {}", r.method);
    let from_median = if r.kernel.spec.name.uses_sigma() && r.kernel.spec.sigma == Sigma::Median {
        " (σ by the median heuristic)"
    } else {
        ""
    };
    let _ = writeln!(out, "  kernel    {}{from_median}", r.kernel.resolved);
    let params: Vec<String> = r.params.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let params = if params.is_empty() {
        "(none)".to_string()
    } else {
        params.join(", ")
    };
    let _ = writeln!(out, "  params    {params}");
    let s = &r.split;
    let mut split = format!(
        "train {}, test {} ({}, seed {})",
        s.train.len(),
        s.test.len(),
        r.config.data.split_description(),
        s.seed
    );
    if let (Some(l), Some(u)) = (&s.labeled, &s.unlabeled) {
        let _ = write!(split, "; labeled {}, unlabeled {}", l.len(), u.len());
    }
    let _ = writeln!(out, "  split     {split}");
}

fn metrics(out: &mut String, r: &SessionRecord) {
    let mut columns: Vec<(&str, &MetricMap)> =
        vec![("train", &r.metrics.train), ("test", &r.metrics.test)];
    if let Some(u) = &r.metrics.unlabeled {
        columns.push(("unlabeled", u));
    }
    if let Some(b) = &r.baseline {
        columns.push(("baseline train", &b.train));
        columns.push(("baseline test", &b.test));
    }
    let names: BTreeSet<&String> = columns.iter().flat_map(|(_, m)| m.keys()).collect();
    if names.is_empty() {
        out.push_str("\nMetrics   (none recorded)\n");
        return;
    }
    out.push_str("\nMetrics\n");
    let mut head = vec!["metric".to_string()];
    head.extend(columns.iter().map(|(c, _)| c.to_string()));
    let rows: Vec<Vec<String>> = names
        .iter()
        .map(|name| {
            let mut row = vec![name.to_string()];
            row.extend(
                columns
                    .iter()
                    .map(|(_, m)| m.get(*name).map_or(String::new(), |v| num(*v))),
            );
            row
        })
        .collect();
    table(out, &head, &rows);
}

fn fit(out: &mut String, r: &SessionRecord) {
    let t = &r.timings;
    let _ = writeln!(
        out,
        "\nTimings   load {} s, fit {} s, predict {} s, total {} s",
        num(t.load_s),
        num(t.fit_s),
        num(t.predict_s),
        num(t.total_s)
    );
    let state = if r.converged {
        "converged"
    } else {
        "did NOT converge"
    };
    let _ = writeln!(
        out,
        "Fit       {state} after {} iteration{}, objective {}",
        r.iterations,
        if r.iterations == 1 { "" } else { "s" },
        r.objective.map_or_else(|| "not computed".to_string(), num)
    );
    if !r.details.is_empty() {
        let keys: Vec<&str> = r.details.keys().map(String::as_str).collect();
        let _ = writeln!(out, "Details   {}", keys.join(", "));
    }
    if !r.matrices.is_empty() {
        let files: Vec<&str> = r.matrices.values().map(String::as_str).collect();
        let _ = writeln!(out, "Matrices  {}", files.join(", "));
    }
}

fn trace(out: &mut String, r: &SessionRecord) {
    let n = r.trace.len();
    if n == 0 {
        out.push_str("\nTrace     (empty)\n");
        return;
    }
    let _ = writeln!(out, "\nTrace ({n} records)");
    let head: Vec<String> = [
        "iter",
        "objective",
        "residual",
        "λ",
        "val metric",
        "elapsed ms",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let opt = |v: Option<f64>| v.map_or(String::new(), num);
    let row = |i: usize| {
        let t = &r.trace[i];
        vec![
            t.iter.to_string(),
            num(t.objective),
            opt(t.residual),
            opt(t.lambda),
            opt(t.val_metric),
            format!("{:.1}", t.elapsed_ms),
        ]
    };
    let rows: Vec<Vec<String>> = if n > TRACE_FULL {
        let mut v: Vec<Vec<String>> = (0..TRACE_HEAD).map(row).collect();
        v.push(vec![format!("… {} more", n - TRACE_HEAD - TRACE_TAIL)]);
        v.extend((n - TRACE_TAIL..n).map(row));
        v
    } else {
        (0..n).map(row).collect()
    };
    table(out, &head, &rows);
}

/// Columns right-aligned to their widest cell, first column left-aligned. A row with a single
/// cell (an ellipsis line) is printed as is.
fn table(out: &mut String, head: &[String], rows: &[Vec<String>]) {
    let width = |i: usize| {
        std::iter::once(head)
            .chain(rows.iter().filter(|r| r.len() > 1).map(Vec::as_slice))
            .filter_map(|r| r.get(i))
            .map(|c| c.chars().count())
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |out: &mut String, cells: &[String]| {
        out.push_str("  ");
        for (i, w) in widths.iter().enumerate() {
            let c = cells.get(i).map_or("", String::as_str);
            if i == 0 {
                let _ = write!(out, "{c:<w$}");
            } else {
                let _ = write!(out, "  {c:>w$}");
            }
        }
        let trimmed = out.trim_end_matches(' ').len();
        out.truncate(trimmed);
        out.push('\n');
    };
    line(out, head);
    for r in rows {
        if r.len() == 1 {
            let _ = writeln!(out, "  {}", r[0]);
        } else {
            line(out, r);
        }
    }
}

/// A number in at most ~10 characters: fixed point for ordinary magnitudes, else scientific.
fn num(v: f64) -> String {
    if v.is_nan() {
        "nan".to_string()
    } else if v == 0.0 {
        "0".to_string()
    } else if !v.is_finite() {
        format!("{v}")
    } else if (1e-2..1e6).contains(&v.abs()) {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}
