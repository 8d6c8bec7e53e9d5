//! The per-output diagnostics of the shown result, for one part (train or test): the ones the
//! run saved, else — for a session saved before they existed — the test part recomputed from
//! its saved predictions and targets.

use ovk_core::metrics::{self, PartDiagnostics};
use ovk_core::session::SavedDiagnostics;
use ovk_core::train::RunOutcome;

/// The diagnostics of `part` ("train" or "test"), or why there are none.
pub fn of(outcome: &RunOutcome, part: &str) -> Result<PartDiagnostics, String> {
    let r = &outcome.record;
    match r.read_details().diagnostics(part) {
        SavedDiagnostics::Saved(d) => return Ok(*d),
        SavedDiagnostics::Unreadable(e) => {
            return Err(format!("the saved {part} diagnostics do not read: {e}"))
        }
        SavedDiagnostics::PartAbsent => return Err(format!("the {part} part has no labeled rows")),
        SavedDiagnostics::NotSaved => {}
    }
    if part == "test" {
        if let (Some(p), Some(y)) = (
            outcome.matrix("predictions_test"),
            outcome.matrix("targets_test"),
        ) {
            if p.nrows() > 0 {
                let mid = metrics::coding_midpoint(r.config.data.class_coding);
                return Ok(metrics::diagnostics(r.task, y.view(), p.view(), mid));
            }
        }
        return Err("no test rows".into());
    }
    Err("this session was saved without train diagnostics (refit to see them)".into())
}

/// How many rows the diagnostics list (classes, labels or outputs): the range of j / k.
pub fn rows(d: &PartDiagnostics) -> usize {
    d.confusion
        .as_ref()
        .map(Vec::len)
        .or(d.labels.as_ref().map(Vec::len))
        .or(d.outputs.as_ref().map(Vec::len))
        .unwrap_or(0)
}

/// A class name from its output name (`digit=3` → `3`).
pub fn class_name(output: &str) -> &str {
    output.split_once('=').map_or(output, |(_, v)| v)
}

/// The diagnostics as CSV (every class, label or output, and every plotted pair): (what, text).
pub fn csv(d: &PartDiagnostics, names: &[String]) -> (&'static str, String) {
    let name = |j: usize| {
        let n = names.get(j).cloned().unwrap_or_else(|| j.to_string());
        if n.contains([',', '"', '\n']) {
            format!("\"{}\"", n.replace('"', "\"\""))
        } else {
            n
        }
    };
    let opt = |v: Option<f64>| v.map(|v| v.to_string()).unwrap_or_default();
    if let Some(c) = &d.confusion {
        let mut out = String::from("true\\predicted");
        for j in 0..c.len() {
            out.push(',');
            out.push_str(&name(j));
        }
        out.push('\n');
        for (i, row) in c.iter().enumerate() {
            out.push_str(&name(i));
            for v in row {
                out.push_str(&format!(",{v}"));
            }
            out.push('\n');
        }
        return ("confusion", out);
    }
    if let Some(l) = &d.labels {
        let mut out = String::from("label,precision,recall,auc,positives,rows\n");
        for (j, x) in l.iter().enumerate() {
            out.push_str(&format!(
                "{},{},{},{},{},{}\n",
                name(j),
                opt(x.precision),
                opt(x.recall),
                opt(x.auc),
                x.support,
                x.rows
            ));
        }
        return ("per-label", out);
    }
    let mut out = String::from("output,r2,mse,true,predicted\n");
    for (j, o) in d.outputs.iter().flatten().enumerate() {
        for (t, p) in &o.pairs {
            out.push_str(&format!(
                "{},{},{},{t},{p}\n",
                name(j),
                opt(o.r2),
                opt(o.mse)
            ));
        }
    }
    ("scatter", out)
}
