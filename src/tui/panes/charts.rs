//! Charts pane: convergence of the current (or replayed) fit — objective, residual and step,
//! validation metric per iteration or per λ — with the previous run's curve overlaid.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::Frame;

use super::super::state::State;

mod marked;
use super::super::widgets::log_chart::{LogChart, Series};
use crate::methods::TraceRecord;

fn series(
    trace: &[TraceRecord],
    x: impl Fn(&TraceRecord) -> Option<f64>,
    y: impl Fn(&TraceRecord) -> Option<f64>,
) -> Vec<(f64, f64)> {
    trace.iter().filter_map(|t| Some((x(t)?, y(t)?))).collect()
}

/// A log chart of `series` in `area`, its axes named `(x, y)`, and last the earlier run's
/// curve `(name, points)` in the overlay colour.
fn draw_chart(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    title: String,
    (x, y): (&str, &str),
    mut series: Vec<Series>,
    previous: Option<(String, Vec<(f64, f64)>)>,
) {
    series.extend(previous.map(|(name, points)| Series {
        name,
        points,
        style: s.theme.series[1],
    }));
    frame.render_widget(
        LogChart {
            title,
            x_label: x.into(),
            y_label: y.into(),
            series,
            theme: &s.theme,
        },
        area,
    );
}

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let runs = &s.sessions.runs;
    if runs.chart_marked && !runs.marked.is_empty() {
        return marked::draw(frame, area, s);
    }
    let trace = s.chart_trace();
    let sweep = s.run.sweep.as_ref().filter(|_| s.replay.is_none());
    let [obj, res, val] = Layout::vertical(if sweep.is_some() {
        [
            Constraint::Percentage(30),
            Constraint::Percentage(25),
            Constraint::Fill(1),
        ]
    } else {
        [
            Constraint::Percentage(40),
            Constraint::Percentage(30),
            Constraint::Fill(1),
        ]
    })
    .areas(area);
    if let Some(sw) = sweep {
        draw_convergence(frame, obj, res, s, trace);
        return marked::sweep_curve(frame, val, s, sw);
    }
    draw_convergence(frame, obj, res, s, trace);
    draw_validation(frame, val, s, trace);
}

/// The earlier run to overlay, if asked for and comparable, and the title note saying so.
fn overlay(s: &State) -> (Option<(&str, &[TraceRecord])>, String) {
    match (s.overlay, s.overlay_trace()) {
        (true, Ok((name, t))) => (Some((name, t)), String::new()),
        (true, Err(why)) => (None, format!(" — overlay: {why}")),
        (false, Ok(_)) => (None, " — o overlays the earlier run".to_string()),
        (false, Err(_)) => (None, String::new()),
    }
}

fn draw_convergence(frame: &mut Frame, obj: Rect, res: Rect, s: &State, trace: &[TraceRecord]) {
    let iter = |t: &TraceRecord| Some(t.iter as f64);
    // Only a run of the same method on the same file shares this run's scale.
    let (previous, mut overlay_note) = overlay(s);
    if !s.sessions.runs.marked.is_empty() {
        overlay_note.push_str(" — m: marked runs");
    }
    let suffix = match &s.replay {
        Some(_) => {
            let total = s
                .result
                .as_ref()
                .map_or(0, |f| f.outcome.record.trace.len());
            format!(
                " — replay {}/{} (← → step · Space play)",
                trace.len(),
                total
            )
        }
        None => overlay_note,
    };

    let objective = vec![Series {
        name: "this run".into(),
        points: series(trace, iter, |t| Some(t.objective)),
        style: s.theme.series[0],
    }];
    let previous_objective = previous.map(|(name, prev)| {
        let points = series(prev, iter, |t| Some(t.objective));
        (format!("previous: {name}"), points)
    });
    draw_chart(
        frame,
        obj,
        s,
        format!("Objective{suffix}"),
        ("iteration", "objective"),
        objective,
        previous_objective,
    );

    let mut conv = vec![Series {
        name: "residual".into(),
        points: series(trace, iter, |t| t.residual),
        style: s.theme.series[0],
    }];
    let steps = series(trace, iter, |t| t.step);
    if !steps.is_empty() {
        conv.push(Series {
            name: "step".into(),
            points: steps,
            style: s.theme.series[2],
        });
    }
    let previous_residual = previous.map(|(_, prev)| {
        let points = series(prev, iter, |t| t.residual);
        ("previous residual".to_string(), points)
    });
    draw_chart(
        frame,
        res,
        s,
        "Residual / step".to_string(),
        ("iteration", "residual"),
        conv,
        previous_residual,
    );
}

fn draw_validation(frame: &mut Frame, val: Rect, s: &State, trace: &[TraceRecord]) {
    let iter = |t: &TraceRecord| Some(t.iter as f64);
    let (previous, _) = overlay(s);
    // On a λ path the validation metric is drawn against λ.
    let by_lambda = trace
        .iter()
        .any(|t| t.lambda.is_some() && t.val_metric.is_some());
    let (x_label, points) = if by_lambda {
        ("λ", series(trace, |t| t.lambda, |t| t.val_metric))
    } else {
        ("iteration", series(trace, iter, |t| t.val_metric))
    };
    let vals = vec![Series {
        name: "validation".into(),
        points,
        style: s.theme.series[3],
    }];
    let x = |t: &TraceRecord| {
        if by_lambda {
            t.lambda
        } else {
            Some(t.iter as f64)
        }
    };
    let previous_vals =
        previous.map(|(_, prev)| ("previous".to_string(), series(prev, x, |t| t.val_metric)));
    draw_chart(
        frame,
        val,
        s,
        format!(
            "Validation metric per {}",
            if by_lambda { "λ" } else { "iteration" }
        ),
        (x_label, "metric"),
        vals,
        previous_vals,
    );
}
