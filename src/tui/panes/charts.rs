//! Charts pane: convergence of the current (or replayed) fit — objective, residual and step,
//! validation metric per iteration or per λ — with the previous run's curve overlaid.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::Frame;

use super::super::state::{RunStatus, State, SweepState};

mod marked;
mod search;
use super::super::widgets::log_chart::{LogChart, Series};
use ovk_core::methods::TraceRecord;

fn series(
    trace: &[TraceRecord],
    x: impl Fn(&TraceRecord) -> Option<f64>,
    y: impl Fn(&TraceRecord) -> Option<f64>,
) -> Vec<(f64, f64)> {
    trace.iter().filter_map(|t| Some((x(t)?, y(t)?))).collect()
}

/// A log chart titled `title`, its axes named `(x, y)`, that says "no data yet" while empty.
fn chart<'a>(
    s: &'a State,
    title: String,
    (x, y): (&str, &str),
    series: Vec<Series>,
) -> LogChart<'a> {
    LogChart {
        title,
        x_label: x.into(),
        y_label: y.into(),
        series,
        empty: "no data yet",
        theme: &s.theme,
    }
}

/// `chart` in `area`, with last the earlier run's curve `(name, points)` in the overlay colour.
fn draw_chart(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    mut chart: LogChart,
    previous: Option<(String, Vec<(f64, f64)>)>,
) {
    chart.series.extend(previous.map(|(name, points)| Series {
        name,
        points,
        style: s.theme.series[1],
    }));
    frame.render_widget(chart, area);
}

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let runs = &s.sessions.runs;
    if runs.chart_marked && !runs.marked.is_empty() {
        return marked::draw(frame, area, s);
    }
    let trace = s.chart_trace();
    // The live sweep's, else the shown session's (a replay, an opened sweep).
    let saved;
    let sweep = match s.run.sweep.as_ref().filter(|_| s.replay.is_none()) {
        Some(sw) => Some(sw),
        None => {
            saved = s
                .result
                .as_ref()
                .filter(|_| !s.is_running())
                .and_then(|f| SweepState::from_record(&f.outcome.record, &s.kernel.fields));
            saved.as_ref()
        }
    };
    if let Some(sw) = sweep.filter(|sw| sw.plan.varying().len() >= 2) {
        // the scores over the searched fields need the room: the refit's trace is in Run
        return search::draw(frame, area, s, sw);
    }
    let shares = if sweep.is_some() { [30, 25] } else { [40, 30] };
    let [obj, res, val] = Layout::vertical(heights(area.height, shares)).areas(area);
    if let Some(sw) = sweep {
        draw_convergence(frame, obj, res, s, trace);
        return marked::sweep_curve(frame, val, s, sw);
    }
    draw_convergence(frame, obj, res, s, trace);
    draw_validation(frame, val, s, trace);
}

/// Lines a chart needs to be read: borders, the x axis and its labels, three plot rows.
const CHART_LINES: u16 = 7;

/// The three charts' heights out of `h`: the first two take `shares` percent, the last the
/// rest, none below `CHART_LINES` when there is room for that (a 24-line terminal left the
/// residual chart a single plot row).
fn heights(h: u16, shares: [u16; 2]) -> [Constraint; 3] {
    let min = CHART_LINES.min(h / 3);
    let share = |p: u16| (u32::from(h) * u32::from(p) / 100) as u16;
    let mut a = share(shares[0]).max(min);
    let mut b = share(shares[1]).max(min);
    let short = (min + a + b).saturating_sub(h);
    let from_a = short.min(a - min);
    a -= from_a;
    b -= (short - from_a).min(b - min);
    [
        Constraint::Length(a),
        Constraint::Length(b),
        Constraint::Fill(1),
    ]
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
    let objective = chart(
        s,
        format!("Objective{suffix}"),
        ("iteration", "objective"),
        objective,
    );
    draw_chart(frame, obj, s, objective, previous_objective);

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
    let mut conv = chart(
        s,
        "Residual / step".to_string(),
        ("iteration", "residual"),
        conv,
    );
    if never_records(s, |t| t.residual.is_some() || t.step.is_some()) {
        conv.empty = "this method records no residual or step per iteration";
    }
    draw_chart(frame, res, s, conv, previous_residual);
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
    let mut vals = chart(
        s,
        format!(
            "Validation metric per {}",
            if by_lambda { "λ" } else { "iteration" }
        ),
        (x_label, "metric"),
        vals,
    );
    if never_records(s, |t| t.val_metric.is_some()) {
        vals.empty = "this method records no validation metric per iteration";
    }
    draw_chart(frame, val, s, vals, previous_vals);
}

/// Whether a chart of `has` stays empty for good: no fit is running and the result's trace
/// has no record with it (a replay not yet at its first one aside). Many methods record no
/// residual or score only the final model, and "no data yet" would promise a curve that
/// never comes.
fn never_records(s: &State, has: impl Fn(&TraceRecord) -> bool) -> bool {
    s.run.status != RunStatus::Running
        && !s
            .result
            .as_ref()
            .is_some_and(|f| f.outcome.record.trace.iter().any(&has))
}
