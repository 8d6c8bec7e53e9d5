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

    let mut objective = vec![Series {
        name: "this run".into(),
        points: series(trace, iter, |t| Some(t.objective)),
        style: s.theme.series[0],
    }];
    if let Some((name, prev)) = previous {
        objective.push(Series {
            name: format!("previous: {name}"),
            points: series(prev, iter, |t| Some(t.objective)),
            style: s.theme.series[1],
        });
    }
    frame.render_widget(
        LogChart {
            title: format!("Objective{suffix}"),
            x_label: "iteration".into(),
            y_label: "objective".into(),
            series: objective,
            theme: &s.theme,
        },
        obj,
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
    if let Some((_, prev)) = previous {
        conv.push(Series {
            name: "previous residual".into(),
            points: series(prev, iter, |t| t.residual),
            style: s.theme.series[1],
        });
    }
    frame.render_widget(
        LogChart {
            title: "Residual / step".into(),
            x_label: "iteration".into(),
            y_label: "residual".into(),
            series: conv,
            theme: &s.theme,
        },
        res,
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
    let mut vals = vec![Series {
        name: "validation".into(),
        points,
        style: s.theme.series[3],
    }];
    if let Some((_, prev)) = previous {
        let x = |t: &TraceRecord| {
            if by_lambda {
                t.lambda
            } else {
                Some(t.iter as f64)
            }
        };
        vals.push(Series {
            name: "previous".into(),
            points: series(prev, x, |t| t.val_metric),
            style: s.theme.series[1],
        });
    }
    frame.render_widget(
        LogChart {
            title: format!(
                "Validation metric per {}",
                if by_lambda { "λ" } else { "iteration" }
            ),
            x_label: x_label.into(),
            y_label: "metric".into(),
            series: vals,
            theme: &s.theme,
        },
        val,
    );
}
