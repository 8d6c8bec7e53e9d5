//! Run pane: what will run (or why it cannot), the phase gauge with elapsed time and ETA,
//! the latest trace records and the fit's notes.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::super::state::{RunStatus, State};
use super::super::widgets::gauge::PhaseGauge;
use super::super::widgets::{clip, fmt_num};
use super::block;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let [config, progress, records] = Layout::vertical([
        Constraint::Length(7),
        Constraint::Length(5),
        Constraint::Fill(1),
    ])
    .areas(area);
    draw_config(frame, config, s);
    draw_progress(frame, progress, s);
    draw_records(frame, records, s);
}

fn draw_config(frame: &mut Frame, area: Rect, s: &State) {
    let lines = if let Some(f) = s.result.as_ref().filter(|_| s.replay.is_some()) {
        let c = &f.outcome.record.config;
        summary(s, c)
    } else {
        match s.run_config() {
            Ok(c) => {
                let mut l = summary(s, &c);
                l.push(Line::styled(
                    "Enter or r starts the fit · Esc or c cancels it",
                    s.theme.ok,
                ));
                l
            }
            Err(why) => vec![
                Line::styled("Not ready to run:", s.theme.warn),
                Line::styled(why, s.theme.error),
            ],
        }
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block("Run", &s.theme, true)),
        area,
    );
}

fn summary<'a>(s: &State, c: &crate::train::RunConfig) -> Vec<Line<'a>> {
    let d = &c.data;
    let params: Vec<String> = c.params.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let kernel = match c.kernel.name {
        crate::kernels::KernelName::Polynomial => {
            format!("polynomial d={} c={}", c.kernel.degree, c.kernel.coef0)
        }
        n if n.uses_sigma() => format!("{} σ={}", n.as_str(), c.kernel.sigma),
        n => n.as_str().to_string(),
    };
    let target = match (&d.class, &d.targets) {
        (Some(cl), _) => format!("class {cl}"),
        (None, Some(t)) => format!("{} targets", t.len()),
        _ => "—".into(),
    };
    vec![
        Line::from(vec![
            Span::styled("data    ", s.theme.dim),
            Span::raw(format!(
                "{} · {} features · {target} · test {:.2} · seed {}",
                clip(&d.path.display().to_string(), 40),
                d.features.as_ref().map_or(0, Vec::len),
                d.test_fraction,
                d.seed
            )),
        ]),
        Line::from(vec![
            Span::styled("method  ", s.theme.dim),
            Span::styled(c.method.clone(), s.theme.key),
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
    ]
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
    let (msg, style) = match &r.status {
        RunStatus::Idle => ("no fit yet".to_string(), s.theme.dim),
        RunStatus::Running if r.cancelling => ("cancelling…".into(), s.theme.warn),
        RunStatus::Running => ("running".into(), s.theme.key),
        RunStatus::Finished => ("finished".into(), s.theme.ok),
        RunStatus::Failed(e) => (format!("failed: {e}"), s.theme.error),
        RunStatus::Cancelled => ("cancelled".into(), s.theme.warn),
    };
    let blk = block("Progress", &s.theme, false);
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let [status, gauge] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(2)]).areas(inner);
    frame.render_widget(Paragraph::new(Line::styled(msg, style)), status);
    frame.render_widget(
        PhaseGauge {
            phase: r.phase,
            done: r.phase_done,
            total: r.phase_total,
            elapsed: since(r.started),
            phase_elapsed: since(r.phase_started),
            finished: r.status == RunStatus::Finished,
            theme: &s.theme,
        },
        gauge,
    );
}

fn draw_records(frame: &mut Frame, area: Rect, s: &State) {
    let [recs, notes] =
        Layout::horizontal([Constraint::Percentage(60), Constraint::Fill(1)]).areas(area);
    let trace = if s.run.trace.is_empty() {
        s.chart_trace()
    } else {
        &s.run.trace[..]
    };
    let fit = area.height.saturating_sub(3) as usize;
    let start = trace.len().saturating_sub(fit);
    let opt = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "—".into());
    let rows = trace[start..].iter().map(|t| {
        Row::new(vec![
            t.iter.to_string(),
            fmt_num(t.objective),
            opt(t.residual),
            opt(t.step),
            opt(t.lambda),
            opt(t.val_metric),
            format!("{:.0}", t.elapsed_ms),
        ])
    });
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(6),
                Constraint::Length(11),
                Constraint::Length(10),
                Constraint::Length(10),
                Constraint::Length(10),
                Constraint::Length(10),
                Constraint::Length(8),
            ],
        )
        .header(
            Row::new(["iter", "objective", "residual", "step", "λ", "val", "ms"])
                .style(s.theme.title),
        )
        .block(block(
            format!("Trace ({} records)", trace.len()),
            &s.theme,
            false,
        )),
        recs,
    );
    let mut notes_src: Vec<&String> = s.run.notes.iter().collect();
    if notes_src.is_empty() {
        if let Some(f) = &s.result {
            notes_src = f.outcome.record.notes.iter().collect();
        }
    }
    let lines: Vec<Line> = notes_src
        .iter()
        .map(|n| Line::raw(format!("• {n}")))
        .collect();
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block("Notes", &s.theme, false)),
        notes,
    );
}
