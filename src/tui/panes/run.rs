//! Run pane: what will run (or why it cannot), the phase gauge with elapsed time and ETA,
//! the latest trace records and the fit's notes.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use ovk_core::data::TargetScale;
use ovk_core::kernels::format_bytes;
use ovk_core::methods::Phase;

use super::super::axes;
use super::super::state::{RunStatus, State, SweepPlan, SweepState};
use super::super::verdict::not_converged;
use super::super::widgets::gauge::PhaseGauge;
use super::super::widgets::{clip, count, file_name, fmt_num, fmt_secs};
use super::{block, draw_scrolled, fit_title};
use crate::tui::wording::in_workbench_terms;

/// The Progress box's height: borders, the status line and the two-line gauge.
const PROGRESS_H: u16 = 5;
/// The trace and notes keep at least this many rows: borders, a header and four records.
const MIN_RECORDS_H: u16 = 7;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let config_text = Paragraph::new(config_lines(s)).wrap(Wrap { trim: true });
    // Every row the lines wrap to inside the borders (the last says what Enter does: an opened
    // multi-view session's σ per view and parameters wrap at 80 columns), as long as the trace
    // keeps its rows.
    let config_h = (config_text.line_count(area.width.saturating_sub(2)) as u16 + 2)
        .min(area.height.saturating_sub(PROGRESS_H + MIN_RECORDS_H));
    let [config, progress, records] = Layout::vertical([
        Constraint::Length(config_h),
        Constraint::Length(PROGRESS_H),
        Constraint::Fill(1),
    ])
    .areas(area);
    frame.render_widget(config_text.block(block("Run", &s.theme, true)), config);
    draw_progress(frame, progress, s);
    draw_records(frame, records, s);
}

/// What runs (or ran, or was replayed) and, when the form has changed since, what the next
/// fit would use instead: the running fit never picks up an edit.
fn config_lines(s: &State) -> Vec<Line<'static>> {
    // A replay, or a result with no fit since (an opened session): what that result ran with,
    // never the form's or a fit's before it.
    let shown = s
        .result
        .as_ref()
        .filter(|_| s.replay.is_some() || s.run.status == RunStatus::Idle);
    if let Some(f) = shown {
        let r = &f.outcome.record;
        let mut l = summary(s, &r.config, Some(r));
        if s.replay.is_none() {
            l.push(next_fit(s, &r.config));
        }
        return l;
    }
    let form = s.run_config();
    // While a fit runs, what it runs with; otherwise what Enter would run now.
    let Some(ran) = s.run.config.as_ref().filter(|_| s.is_running()) else {
        return match form {
            Ok(c) => {
                let mut l = summary(s, &c, None);
                l.push(Line::styled(
                    "Enter or r starts the fit · Esc or c cancels it",
                    s.theme.ok,
                ));
                if let Some(line) = marked_line(s) {
                    l.push(line);
                }
                l
            }
            Err(why) => vec![
                Line::styled("Not ready to run:", s.theme.warn),
                Line::styled(why, s.theme.error),
            ],
        };
    };
    let mut l = summary(s, ran, None);
    if let Some(sw) = s.run.sweep.as_ref().filter(|sw| sw.plan.axes.len() > 1) {
        l.push(Line::styled(
            format!(
                "search  {}: {} configurations by {} · {} · best refitted",
                sw.plan.label,
                sw.plan.points.len(),
                sw.plan.strategy.as_str(),
                sw.plan.folds.map_or_else(
                    || "scored on the test part".into(),
                    |k| format!("{k}-fold CV")
                )
            ),
            s.theme.key,
        ));
        return l;
    }
    if let Some(sw) = &s.run.sweep {
        let v = &sw.plan.values;
        let ends = |x: Option<&f64>| x.map_or_else(String::new, |x| plan_value(&sw.plan, *x));
        l.push(Line::styled(
            format!(
                "sweep   {}: {} values {} … {} · {} · best refitted",
                sw.plan.label,
                v.len(),
                ends(v.first()),
                ends(v.last()),
                sw.plan.folds.map_or_else(
                    || "scored on the test part".into(),
                    |k| format!("{k}-fold CV")
                )
            ),
            s.theme.key,
        ));
        return l;
    }
    match form {
        Ok(next) if next != *ran => {
            let changed = changes(ran, &next);
            l.push(Line::styled(
                format!("edited since this fit began (used by the next one): {changed}"),
                s.theme.warn,
            ));
        }
        Ok(_) => {}
        Err(why) => l.push(Line::styled(format!("next fit: {why}"), s.theme.warn)),
    }
    l
}

/// Below a shown session: what Enter would fit, which is the form, not the session.
fn next_fit(s: &State, shown: &ovk_core::train::RunConfig) -> Line<'static> {
    match s.run_config() {
        // another method or file: its every setting differs, the list would say nothing
        Ok(next) if next.method != shown.method || next.data.path != shown.data.path => {
            let file = file_name(&next.data.path);
            Line::styled(
                format!(
                    "Enter or r fits the form instead: {} on {}",
                    next.method,
                    clip(&file, 28)
                ),
                s.theme.dim,
            )
        }
        Ok(next) => match changes(shown, &next) {
            c if c.is_empty() => Line::styled("Enter or r fits it again", s.theme.ok),
            c => Line::styled(
                format!("Enter or r fits the form instead: {c}"),
                s.theme.dim,
            ),
        },
        Err(why) => Line::styled(format!("next fit: {why}"), s.theme.warn),
    }
}

/// "lambda 0.1 → 0.5, sigma median → 2" between two configurations.
fn changes(a: &ovk_core::train::RunConfig, b: &ovk_core::train::RunConfig) -> String {
    let mut out = Vec::new();
    if a.method != b.method {
        out.push(format!("method {} → {}", a.method, b.method));
    }
    if a.kernel != b.kernel {
        out.push(format!("kernel {} → {}", kernel_text(a), kernel_text(b)));
    }
    let keys: std::collections::BTreeSet<&String> =
        a.params.0.keys().chain(b.params.0.keys()).collect();
    for k in keys {
        let (x, y) = (a.params.0.get(k), b.params.0.get(k));
        if x != y {
            let t = |v: Option<&ovk_core::methods::Value>| {
                v.map_or_else(|| "default".to_string(), |v| v.to_string())
            };
            out.push(format!("{k} {} → {}", t(x), t(y)));
        }
    }
    if a.data != b.data {
        out.push("data or split".into());
    }
    out.join(", ")
}

fn kernel_text(c: &ovk_core::train::RunConfig) -> String {
    match c.kernel.name {
        ovk_core::kernels::KernelName::Polynomial => {
            format!("polynomial d={} c={}", c.kernel.degree, c.kernel.coef0)
        }
        n if n.uses_sigma() => format!("{} σ={}", n.name(), c.kernel.sigma),
        n => n.name().to_string(),
    }
}

fn summary(
    s: &State,
    c: &ovk_core::train::RunConfig,
    record: Option<&ovk_core::session::SessionRecord>,
) -> Vec<Line<'static>> {
    let d = &c.data;
    let params: Vec<String> = match record {
        Some(r) => r.params.0.iter().map(|(k, v)| format!("{k}={v}")).collect(),
        None => c.params.0.iter().map(|(k, v)| format!("{k}={v}")).collect(),
    };
    let mut kernel = kernel_text(c);
    if let Some(r) = record {
        kernel = r.kernel.resolved.to_string();
        let per_view = axes::view_sigmas(r);
        if !per_view.is_empty() {
            let v: Vec<String> = per_view
                .iter()
                .map(|(n, sg)| format!("{n} {}", fmt_num(*sg)))
                .collect();
            kernel = format!("{} · σ per view: {}", c.kernel.name.name(), v.join(" · "));
        }
    }
    if !c.kernel.input_rank.is_auto() {
        kernel = format!("{kernel} · input rank {}", c.kernel.input_rank);
    }
    // A session knows what the engine resolved (all columns, the sidecar's targets); the
    // configuration alone may leave features unnamed ("all").
    let features = match (record, &d.features) {
        (Some(r), _) => r.feature_names.len().to_string(),
        (None, Some(f)) => f.len().to_string(),
        (None, None) => "all".into(),
    };
    // The sidecar's class column is known from the session's model even when not typed.
    let class = d.class.clone().or_else(|| {
        let m = record?.model.as_ref()?;
        m.class.as_ref().map(|c| c.column.clone())
    });
    let mut target = match (&class, &d.targets, record) {
        (Some(cl), _, Some(r)) => format!("class {cl} ({} classes)", r.output_names.len()),
        (Some(cl), _, None) => format!("class {cl}"),
        (None, _, Some(r)) => format!("{} targets", r.output_names.len()),
        (None, Some(t), None) => format!("{} targets", t.len()),
        _ => "targets from the sidecar".into(),
    };
    match d.target_scale {
        TargetScale::None => {}
        TargetScale::Center => target.push_str(" centred"),
        TargetScale::Standard => target.push_str(" standardised"),
    }
    let labeled = match d.labeled {
        Some(f) => format!(" · labeled {f:.2}"),
        None => String::new(),
    };
    let file = file_name(&d.path);
    // What the fit estimates its figures on: a form's folds say how to change them.
    // An opened session without folds says nothing: its box is short of lines already.
    let folds = match (c.cv, record) {
        (Some(k), _) => Some(format!(
            "{k} folds of the training part: each metric's mean ± sd, then the final fit"
        )),
        (None, Some(_)) => None,
        (None, None) => Some("none: one fit, scored on the test rows (f: 3, 5 or 10 folds)".into()),
    };
    let mut lines = vec![
        Line::from(vec![
            Span::styled("data    ", s.theme.dim),
            Span::raw(format!(
                "{} · {features} features · {target} · {} · seed {}{labeled}",
                clip(&file, 28),
                match &d.test_column {
                    Some(col) => format!("test `{col}`"),
                    None => format!("test {:.2}", d.test_fraction),
                },
                d.seed
            )),
        ]),
        Line::from(vec![
            Span::styled("method  ", s.theme.dim),
            Span::styled(c.method.name(), s.theme.key),
        ]),
        Line::from(vec![
            Span::styled("kernel  ", s.theme.dim),
            Span::raw(kernel),
        ]),
        Line::from(vec![
            Span::styled("params  ", s.theme.dim),
            Span::raw(if params.is_empty() {
                "defaults".into()
            } else {
                params.join(" ")
            }),
        ]),
    ];
    if let Some(folds) = folds {
        lines.push(Line::from(vec![
            Span::styled("cv      ", s.theme.dim),
            Span::raw(folds),
        ]));
    }
    lines
}

fn draw_progress(frame: &mut Frame, area: Rect, s: &State) {
    let r = &s.run;
    let since = |t: Option<std::time::Instant>| {
        t.map(|t| {
            r.ended
                .unwrap_or(s.now)
                .saturating_duration_since(t)
                .as_secs_f64()
        })
        .unwrap_or(0.0)
    };
    let blk = block("Progress", &s.theme, false);
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let [status, gauge] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(2)]).areas(inner);
    if let (Some(_), Some(f)) = (&s.replay, &s.result) {
        let rec = &f.outcome.record;
        let (verdict, style) = match not_converged(rec) {
            Some(w) => (format!(" — {w}"), s.theme.warn),
            None => (" (converged)".into(), s.theme.ok),
        };
        let msg = format!(
            "saved fit, replayed: {}{verdict} · fit {} · total {}",
            count(rec.iterations, "iteration"),
            fmt_secs(rec.timings.fit_s),
            fmt_secs(rec.timings.total_s)
        );
        frame.render_widget(Paragraph::new(Line::styled(msg, style)), status);
        return;
    }
    let (msg, style) = match &r.status {
        RunStatus::Idle => match &s.result {
            Some(f) => {
                let r = &f.outcome.record;
                let shown = format!("no fit running — the results shown are '{}'", r.name);
                match not_converged(r) {
                    Some(w) => (format!("{shown}, {w}"), s.theme.warn),
                    None => (shown, s.theme.dim),
                }
            }
            None => ("no fit yet".to_string(), s.theme.dim),
        },
        RunStatus::Running if r.cancelling => (
            "cancelling — the fit's process is stopped within a second".into(),
            s.theme.warn,
        ),
        RunStatus::Running => (
            match r.memory {
                Some((rss, peak)) => format!(
                    "running · memory {} (peak {})",
                    format_bytes(rss),
                    format_bytes(peak)
                ),
                None => "running".into(),
            },
            s.theme.key,
        ),
        RunStatus::Finished => {
            // A multi-view fit used one width per view: say which, not the one typed.
            let per_view = s
                .result
                .as_ref()
                .map(|f| axes::view_sigmas(&f.outcome.record))
                .unwrap_or_default();
            let mut msg = if per_view.is_empty() {
                "finished".to_string()
            } else {
                let v: Vec<String> = per_view
                    .iter()
                    .map(|(n, sg)| format!("{n} {}", fmt_num(*sg)))
                    .collect();
                format!("finished · σ per view: {}", v.join(" · "))
            };
            if s.result.as_ref().is_some_and(|f| f.unkept()) {
                msg.push_str(" · recorded, not kept (s keeps it)");
            }
            match s
                .result
                .as_ref()
                .and_then(|f| not_converged(&f.outcome.record))
            {
                Some(w) => {
                    msg.push_str(&format!(" — {w}; Notes say more"));
                    (msg, s.theme.warn)
                }
                None => (msg, s.theme.ok),
            }
        }
        RunStatus::Failed(e) => (format!("failed: {e}"), s.theme.error),
        RunStatus::Cancelled => (
            format!(
                "cancelled after {} — {}",
                fmt_secs(since(r.started)),
                if r.recorded.is_some() {
                    "recorded as cancelled, with its trace so far (8 Sessions)"
                } else {
                    "being recorded as cancelled…"
                }
            ),
            s.theme.warn,
        ),
    };
    frame.render_widget(
        Paragraph::new(Line::styled(msg, style)).wrap(Wrap { trim: true }),
        status,
    );
    // Steps done and the recent pace, from the iteration numbers and times of this phase's
    // records (a record for iteration 0 costs nothing and must not count as a step).
    let phase_recs = &r.trace[r.trace.len().saturating_sub(r.phase_done)..];
    let (done, pace) = match (phase_recs.first(), phase_recs.last()) {
        // a path counts fits, which its records' iteration numbers do not
        _ if r.phase == Some(Phase::Path) => (r.phase_done, None),
        (Some(a), Some(b)) if b.iter > a.iter => {
            let w = &phase_recs[phase_recs.len().saturating_sub(8)..];
            let (x, y) = (&w[0], &w[w.len() - 1]);
            let pace = (y.iter > x.iter)
                .then(|| (y.elapsed_ms - x.elapsed_ms) / 1000.0 / (y.iter - x.iter) as f64);
            (b.iter, pace)
        }
        _ => (r.phase_done, None),
    };
    frame.render_widget(
        PhaseGauge {
            idle_label: if r.sweep.is_some() {
                "sweep: configurations scored"
            } else if s.result.is_some() {
                // an opened session: nothing is waiting to run (the line above says whose
                // results these are)
                "idle"
            } else {
                "waiting"
            },
            phase: r.phase,
            done,
            pace,
            total: r.phase_total,
            elapsed: since(r.started),
            phase_elapsed: since(r.phase_started),
            finished: r.status == RunStatus::Finished,
            stopped: matches!(r.status, RunStatus::Cancelled | RunStatus::Failed(_)),
            estimate: r.phase_estimate(),
            theme: &s.theme,
        },
        gauge,
    );
}

/// A trace column: header, width, and the cell of one record.
type TraceColumn<'a> = (
    &'a str,
    u16,
    Box<dyn Fn(&ovk_core::methods::TraceRecord) -> String + 'a>,
);

fn draw_records(frame: &mut Frame, area: Rect, s: &State) {
    let narrow = area.width < 100;
    let [recs, notes] = Layout::horizontal([
        Constraint::Percentage(if narrow { 62 } else { 60 }),
        Constraint::Fill(1),
    ])
    .areas(area);
    draw_notes(frame, notes, s);
    if let Some(sw) = &s.run.sweep {
        return draw_sweep(frame, recs, s, sw);
    }
    let trace = s.run_trace();
    let opt = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "—".into());
    let has = |f: &dyn Fn(&ovk_core::methods::TraceRecord) -> bool| trace.iter().any(f);
    // Columns a trace never fills are left out, so the rest fit at 80 columns.
    let mut cols: Vec<TraceColumn> = vec![
        ("iter", 5, Box::new(|t| t.iter.to_string())),
        ("objective", 10, Box::new(|t| fmt_num(t.objective))),
    ];
    if has(&|t| t.residual.is_some()) {
        cols.push(("residual", 9, Box::new(move |t| opt(t.residual))));
    }
    if has(&|t| t.step.is_some()) {
        cols.push(("step", 9, Box::new(move |t| opt(t.step))));
    }
    if has(&|t| t.lambda.is_some()) {
        cols.push(("λ", 9, Box::new(move |t| opt(t.lambda))));
    }
    if has(&|t| t.val_metric.is_some()) {
        cols.push(("val", 9, Box::new(move |t| opt(t.val_metric))));
    }
    cols.push(("ms", 7, Box::new(|t| format!("{:.0}", t.elapsed_ms))));
    let room = recs.width.saturating_sub(4);
    let mut used = 0;
    cols.retain(|(_, w, _)| {
        used += w + 1;
        used <= room + 1
    });
    let rows = trace
        .iter()
        .map(|t| Row::new(cols.iter().map(|(_, _, f)| f(t)).collect::<Vec<_>>()));
    let selected = match s.scroll.trace {
        Some(i) => Some(i.min(trace.len().saturating_sub(1))),
        None => trace.len().checked_sub(1),
    };
    // A result's trace with records that are no iteration counts both (Results says why).
    let iterations = s
        .result
        .as_ref()
        .map(|f| &f.outcome.record)
        .filter(|_| matches!(s.run.status, RunStatus::Idle | RunStatus::Finished))
        .filter(|r| r.trace.len() == trace.len() && r.trace.len() > r.iterations)
        .map_or_else(String::new, |r| {
            format!(" · {}", count(r.iterations, "iteration"))
        });
    let title = match (trace.len(), s.scroll.trace) {
        (1, _) => fit_title(
            recs,
            &[format!("Trace (1 record{iterations})"), "Trace".into()],
        ),
        (n, None) => fit_title(
            recs,
            &[
                format!("Trace ({n} records{iterations}, following) — j k g scroll"),
                format!("Trace ({n} records{iterations}) — j k g scroll"),
                format!("Trace ({n} records) — j k g scroll"),
                format!("Trace ({n} records)"),
            ],
        ),
        (n, Some(i)) => {
            let at = i.min(n.saturating_sub(1)) + 1;
            fit_title(
                recs,
                &[
                    format!("Trace ({at}/{n}{iterations}) — G follows"),
                    format!("Trace ({at}/{n}) — G follows"),
                    format!("Trace ({at}/{n})"),
                ],
            )
        }
    };
    let mut st = TableState::default().with_selected(selected);
    frame.render_stateful_widget(
        Table::new(rows, cols.iter().map(|(_, w, _)| Constraint::Length(*w)))
            .header(Row::new(cols.iter().map(|(h, _, _)| *h)).style(s.theme.title))
            .row_highlight_style(if s.scroll.trace.is_some() {
                s.theme.selected
            } else {
                s.theme.base
            })
            .block(block(title, &s.theme, false)),
        recs,
        &mut st,
    );
}

/// The fields marked for search with their ranges, and the key that searches them.
fn marked_line(s: &State) -> Option<Line<'static>> {
    let marks: Vec<String> = s
        .search
        .marks
        .iter()
        .filter(|m| s.kernel.fields.iter().any(|f| f.key() == m.plan.key))
        .map(|m| format!("{} {}", m.plan.label, m.text))
        .collect();
    (!marks.is_empty()).then(|| {
        Line::styled(
            format!(
                "marked  {} · w searches them (grid, random, halving)",
                marks.join(" · ")
            ),
            s.theme.key,
        )
    })
}

/// A value of a sweep's grid: whole numbers (ranks, iteration counts) without a decimal point.
fn plan_value(_plan: &SweepPlan, v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        fmt_num(v)
    }
}

/// A sweep's configurations in grid order: each searched value, mean ± sd of the score, time
/// (a halving's: the rows of its last rung too); the best is starred; a failed one says so,
/// and why in the notes.
fn draw_sweep(frame: &mut Frame, area: Rect, s: &State, sw: &SweepState) {
    let best = sw.best().map(|b| b.index);
    let rows = sw.latest();
    let metric = rows.first().map_or("score", |r| r.metric.as_str());
    let halving = sw.plan.strategy == ovk_core::train::search::Strategy::Halving;
    let n_axes = sw.plan.axes.len();
    let body = sw.plan.points.iter().enumerate().map(|(i, p)| {
        let mut cells: Vec<String> = vec![if best == Some(i) { "*" } else { " " }.to_string()];
        cells.extend(p.iter().map(|v| plan_value(&sw.plan, *v)));
        let row = rows.iter().find(|r| r.index == i);
        if halving {
            cells.push(
                row.and_then(|r| r.train_rows)
                    .map_or_else(String::new, |n| n.to_string()),
            );
        }
        match row {
            None => {
                cells.push("…".into());
                Row::new(cells).style(s.theme.dim)
            }
            Some(r) => match &r.error {
                Some(_) => {
                    cells.extend(["failed".into(), "see Notes".into()]);
                    Row::new(cells).style(s.theme.error)
                }
                None => {
                    cells.extend([fmt_num(r.mean), fmt_num(r.sd), format!("{:.1}", r.seconds)]);
                    Row::new(cells)
                }
            },
        }
    });
    let n = sw.plan.points.len();
    let selected = match s.scroll.trace {
        Some(i) => Some(i.min(n.saturating_sub(1))),
        None => best.or(Some(0)),
    };
    let scored = if halving {
        format!("{}/{} evaluations", sw.rows.len(), sw.total())
    } else {
        format!("{}/{n} scored", sw.rows.len())
    };
    let what = match (n_axes, sw.plan.strategy.as_str()) {
        (1, "grid") => "Sweep".to_string(),
        (_, "halving") => "Halving".to_string(),
        _ => "Search".to_string(),
    };
    let starred = if best.is_some() { ", * best" } else { "" };
    let title = fit_title(
        area,
        &[
            format!(
                "{what} of {} — {scored}{starred} — j k scroll",
                sw.plan.label
            ),
            format!("{what} of {} — {scored}{starred}", sw.plan.label),
            format!("{what} {} {scored}", sw.plan.label),
            scored.clone(),
        ],
    );
    let value_w = if n_axes == 1 { 10 } else { 8 };
    let mut widths = vec![Constraint::Length(1)];
    widths.extend((0..n_axes).map(|_| Constraint::Length(value_w)));
    let mut header = vec![String::new()];
    header.extend(sw.plan.axes.iter().map(|a| a.label.clone()));
    if halving {
        widths.push(Constraint::Length(5));
        header.push("rows".into());
    }
    widths.extend([
        Constraint::Length(10),
        Constraint::Length(9),
        Constraint::Length(6),
    ]);
    header.extend([metric.to_string(), "sd".into(), "s".into()]);
    let mut st = TableState::default().with_selected(selected);
    frame.render_stateful_widget(
        Table::new(body, widths)
            .header(Row::new(header).style(s.theme.title))
            .row_highlight_style(s.theme.selected)
            .block(block(title, &s.theme, false)),
        area,
        &mut st,
    );
}

fn draw_notes(frame: &mut Frame, notes: Rect, s: &State) {
    // Once a fit has ended, its result's notes: those sent while it ran and the fit's own
    // (why it stopped short, how it compares with krr). A sweep's are about the sweep.
    let notes_src: &[String] = match (&s.run.status, &s.result) {
        (RunStatus::Idle | RunStatus::Finished, Some(f)) if s.run.sweep.is_none() => {
            &f.outcome.record.notes
        }
        _ => &s.run.notes,
    };
    let lines: Vec<Line> = notes_src
        .iter()
        .map(|n| match n.strip_prefix(ovk_core::train::WARNING) {
            // a width far from the data's distances (train::width): before the fit, tinted
            Some(w) => Line::styled(
                format!("• warning: {}", in_workbench_terms(w)),
                s.theme.warn,
            ),
            None => Line::raw(format!("• {}", in_workbench_terms(n))),
        })
        .collect();
    let title = |shown: Option<(usize, usize, usize)>| match shown {
        Some((first, last, total)) => format!("Notes {first}–{last} of {total} lines — J K"),
        None => "Notes".into(),
    };
    draw_scrolled(frame, notes, s, lines, s.scroll.notes, title);
}
