//! A sweep's cross-validated scores: a curve (± sd) over one varying setting, a heatmap over
//! two (the best cell outlined; with more varying settings each cell shows the best score over
//! the others, which the title says).

use std::collections::BTreeMap;

use ndarray::Array2;
use ovk_core::session::SessionRecord;
use ovk_core::train::sweep::SweepResult;
use ovk_core::{OvkError, Result};

use super::curve::{spans_decades, Curve, Series};
use super::heatmap::Heatmap;

pub enum SweepFigure {
    Curve(Curve),
    Grid(Heatmap),
}

pub fn figure(r: &SessionRecord) -> Result<SweepFigure> {
    let sweep: SweepResult = r
        .details
        .get("sweep")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .ok_or_else(|| {
            OvkError::input(format!(
                "session {} holds no sweep (the best configuration of ovk sweep does)",
                r.id
            ))
        })?;
    let rows: Vec<_> = sweep
        .rows
        .iter()
        .filter(|row| row.error.is_none() && row.mean.is_finite())
        .collect();
    let first = rows
        .first()
        .ok_or_else(|| OvkError::input("the sweep has no scored configuration to draw"))?;
    let metric = first.metric.clone();
    let numeric: Vec<String> = first
        .values
        .keys()
        .filter(|k| rows.iter().all(|row| number(&row.values, k).is_some()))
        .cloned()
        .collect();
    let better = |a: f64, b: f64| {
        if first.higher_is_better {
            a > b
        } else {
            a < b
        }
    };
    let what = if sweep.folds.is_some() {
        "cross-validated"
    } else {
        "validation"
    };
    if numeric.len() >= 2 {
        let (kx, ky) = (&numeric[0], &numeric[1]);
        let axis = |k: &str| {
            let mut v: Vec<f64> = rows.iter().filter_map(|r| number(&r.values, k)).collect();
            v.sort_by(f64::total_cmp);
            v.dedup();
            v
        };
        let (xs, ys) = (axis(kx), axis(ky));
        let mut cells = Array2::from_elem((ys.len(), xs.len()), f64::NAN);
        let mut best: Option<((usize, usize), f64)> = None;
        for row in &rows {
            let (Some(x), Some(y)) = (number(&row.values, kx), number(&row.values, ky)) else {
                continue;
            };
            let j = xs.iter().position(|v| *v == x).unwrap_or(0);
            let i = ys.len() - 1 - ys.iter().position(|v| *v == y).unwrap_or(0);
            let cell = &mut cells[[i, j]];
            if cell.is_nan() || better(row.mean, *cell) {
                *cell = row.mean;
            }
            if best.is_none_or(|(_, b)| better(row.mean, b)) {
                best = Some(((i, j), row.mean));
            }
        }
        let label = |v: &f64| format!("{v:.3e}");
        let (lo, hi) = cells
            .iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        let more = if numeric.len() > 2 || first.values.len() > 2 {
            " (best over the other settings)"
        } else {
            ""
        };
        let mut h = Heatmap::new(
            format!("{what} {metric} of the sweep{more}"),
            cells,
            ys.iter().rev().map(label).collect(),
            xs.iter().map(label).collect(),
            false,
        );
        // the scores' own range: the best end red when higher is better, blue when lower
        h.range = if first.higher_is_better {
            (lo - (hi - lo).max(1e-12), hi)
        } else {
            (lo, hi + (hi - lo).max(1e-12))
        };
        h.mark = best.map(|(cell, _)| cell);
        h.axes = Some((kx.clone(), ky.clone()));
        return Ok(SweepFigure::Grid(h));
    }
    let (key, points): (String, Vec<(f64, f64, f64)>) = match numeric.first() {
        Some(k) => (
            k.clone(),
            rows.iter()
                .filter_map(|r| Some((number(&r.values, k)?, r.mean, r.sd)))
                .collect(),
        ),
        None => (
            "configuration".into(),
            rows.iter()
                .map(|r| (r.index as f64, r.mean, r.sd))
                .collect(),
        ),
    };
    let mut points = points;
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let log_x = points.iter().all(|p| p.0 > 0.0) && spans_decades(points.iter().map(|p| p.0));
    let mark_x = sweep
        .best
        .and_then(|b| sweep.rows.iter().find(|r| r.index == b))
        .and_then(|r| number(&r.values, &key).or(Some(r.index as f64)));
    Ok(SweepFigure::Curve(Curve {
        title: format!("{what} {metric} of the sweep (mean ± sd)"),
        x_desc: key,
        y_desc: metric.clone(),
        log_x,
        log_y: false,
        series: vec![Series {
            label: metric,
            points,
        }],
        mark_x,
    }))
}

fn number(values: &BTreeMap<String, String>, key: &str) -> Option<f64> {
    values
        .get(key)?
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
}
