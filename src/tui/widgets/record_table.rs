//! A method's per-step records (a low-rank OKL λ path, a sweep's configurations) as rows of a
//! table, built from the session's typed `details` so that a saved session shows them as a live
//! fit does.

use ovk_core::session::details::{key, Details};
use ovk_core::session::sweep_table::SweepResult;
use serde_json::{Map, Value as Json};

use super::fmt_num;

/// Rows ready to draw: one string per cell, the chosen row marked.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordTable {
    /// The `details` key the rows came from (the details list skips it).
    pub key: String,
    pub title: String,
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
    /// Index into `rows` of the configuration the session kept.
    pub chosen: Option<usize>,
}

/// Columns shown first, in this order, when a record has them; the rest follow by name.
const LEADING: [&str; 12] = [
    "rank",
    "p",
    "lambda",
    "mean",
    "sd",
    "validation_mse",
    "train_mse",
    "objective",
    "iterations",
    "converged",
    "certified",
    "seconds",
];

/// The records of a sweep (`details.sweep.rows`, ranked best first) or of a path
/// (`details.path`, in path order), if the session has either.
pub fn from_details(details: &Map<String, Json>) -> Option<RecordTable> {
    let d = Details::of(details);
    if let Some(t) = d.sweep().and_then(|s| sweep_table(&s)) {
        return Some(t);
    }
    let path = d.path()?;
    let flat: Vec<Vec<(String, String)>> = path.rows.iter().map(flatten).collect();
    let (headers, cells) = columns(&flat);
    Some(RecordTable {
        key: key::PATH.into(),
        title: format!("λ path — {} fits, ★ kept", path.rows.len()),
        headers,
        rows: cells,
        chosen: path.kept,
    })
}

fn sweep_table(sweep: &SweepResult) -> Option<RecordTable> {
    let first = sweep.rows.first()?;
    let (higher, metric) = (first.higher_is_better, first.metric.clone());
    // Best first (a halving's later rungs first); failed configurations last.
    let order = sweep.ranked();
    let chosen = sweep
        .best
        .and_then(|b| order.iter().position(|r| r.index == b));
    let number = |x: f64| if x.is_nan() { "—".into() } else { fmt_num(x) };
    let flat: Vec<Vec<(String, String)>> = order
        .iter()
        .map(|r| {
            let mut cells: Vec<(String, String)> = r
                .values
                .iter()
                .map(|(k, v)| (k.clone(), scalar(&Json::String(v.clone()))))
                .collect();
            cells.push(("mean".into(), number(r.mean)));
            cells.push(("sd".into(), number(r.sd)));
            cells.push(("seconds".into(), number(r.seconds)));
            if let Some(e) = &r.error {
                cells.push(("error".into(), e.clone()));
            }
            cells
        })
        .collect();
    let (headers, cells) = columns(&flat);
    let folds = sweep
        .folds
        .map_or(String::new(), |k| format!(", {k}-fold CV"));
    let interrupted = if sweep.interrupted {
        " (interrupted)"
    } else {
        ""
    };
    Some(RecordTable {
        key: key::SWEEP.into(),
        title: format!(
            "Sweep — {} configurations by {metric} ({}){folds}{interrupted}, ★ kept",
            sweep.rows.len(),
            if higher {
                "higher is better"
            } else {
                "lower is better"
            },
        ),
        headers,
        rows: cells,
        chosen,
    })
}

/// A record's scalar fields, one level of nesting flattened (a certificate's `certified`
/// becomes a column); arrays are left out.
fn flatten(obj: &Map<String, Json>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (k, v) in obj {
        match v {
            Json::Object(inner) => {
                for (ik, iv) in inner {
                    if !matches!(iv, Json::Object(_) | Json::Array(_)) {
                        let name = if obj.contains_key(ik) {
                            format!("{k}.{ik}")
                        } else {
                            ik.clone()
                        };
                        out.push((name, scalar(iv)));
                    }
                }
            }
            Json::Array(_) => {}
            v => out.push((k.clone(), scalar(v))),
        }
    }
    out
}

/// Headers in `LEADING` order then by first appearance; every row filled to all headers.
fn columns(records: &[Vec<(String, String)>]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut headers: Vec<String> = Vec::new();
    for r in records {
        for (k, _) in r {
            if !headers.contains(k) {
                headers.push(k.clone());
            }
        }
    }
    let lead = |h: &String| LEADING.iter().position(|l| l == h).unwrap_or(LEADING.len());
    headers.sort_by_key(|h| lead(h)); // stable: the rest keep their order of appearance
    let rows = records
        .iter()
        .map(|r| {
            headers
                .iter()
                .map(|h| {
                    r.iter()
                        .find(|(k, _)| k == h)
                        .map_or_else(|| "—".into(), |(_, v)| v.clone())
                })
                .collect()
        })
        .collect();
    (headers, rows)
}

fn scalar(v: &Json) -> String {
    match v {
        Json::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => n.as_f64().map_or_else(|| n.to_string(), fmt_num),
        },
        Json::Bool(b) => if *b { "yes" } else { "no" }.into(),
        // Sweep values are kept as typed; a long decimal (a log-range point) reads better short.
        Json::String(s) => match s.parse::<f64>() {
            Ok(x) if s.len() > 9 && s.parse::<i64>().is_err() => fmt_num(x),
            _ => s.clone(),
        },
        Json::Null => "—".into(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Json) -> Map<String, Json> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_path_becomes_rows_with_the_kept_lambda_marked() {
        let d = map(json!({
            "lambda": 0.5,
            "rank": 2,
            "path": [
                {"lambda": 1.0, "iterations": 3, "validation_mse": 2.0,
                 "certificate": {"certified": true, "residual": 0.0}},
                {"lambda": 0.5, "iterations": 7, "validation_mse": 1.5,
                 "certificate": {"certified": false, "residual": 1e-9}},
            ]
        }));
        let t = from_details(&d).unwrap();
        assert_eq!(t.key, "path");
        assert_eq!(t.chosen, Some(1));
        assert_eq!(
            t.headers,
            [
                "lambda",
                "validation_mse",
                "iterations",
                "certified",
                "residual"
            ]
        );
        assert_eq!(t.rows[1], ["0.5000", "1.5000", "7", "no", "1.00e-9"]);
    }

    #[test]
    fn a_sweep_is_ranked_best_first_and_failed_rows_last() {
        let d = map(
            json!({"sweep": {"folds": 3, "best": 2, "interrupted": false, "rows": [
                {"index": 0, "values": {"lambda": "1"}, "metric": "mse", "higher_is_better": false,
                 "mean": 3.0, "sd": 0.1, "fold_scores": [3.0], "seconds": 1.0},
                {"index": 1, "values": {"lambda": "0.1"}, "metric": "mse", "higher_is_better": false,
                 "mean": null, "sd": null, "fold_scores": [], "seconds": 0.5, "error": "diverged"},
                {"index": 2, "values": {"lambda": "0.010000000000000002"}, "metric": "mse", "higher_is_better": false,
                 "mean": 2.0, "sd": 0.2, "fold_scores": [2.0], "seconds": 2.0},
            ]}}),
        );
        let t = from_details(&d).unwrap();
        assert_eq!(t.key, "sweep");
        assert!(t
            .title
            .contains("3 configurations by mse (lower is better), 3-fold CV"));
        assert_eq!(t.headers, ["lambda", "mean", "sd", "seconds", "error"]);
        let lambdas: Vec<&str> = t.rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(lambdas, ["0.0100", "1", "0.1"]);
        assert_eq!(t.chosen, Some(0));
        assert_eq!(t.rows[2][4], "diverged");
    }

    #[test]
    fn details_without_records_give_no_table() {
        assert!(from_details(&map(json!({"alpha": 1.0}))).is_none());
    }
}
