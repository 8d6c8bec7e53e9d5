//! Charts of several runs: the convergence curves of the runs marked in Sessions (one chart per
//! method and dataset — objectives of different problems share no scale), and a sweep's
//! validation curve filling in as its configurations are scored.

use std::collections::BTreeMap;

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::super::super::state::{State, SweepState};
use super::super::super::theme::{ColorMode, Theme};
use super::super::super::widgets::log_chart::Series;
use super::super::super::widgets::{clip, fmt_num};
use super::super::{block, draw_note, fit_title};
use super::{chart, draw_chart};

/// The i-th run's colour: the theme's series first, then the 16-colour palette (no colour
/// under NO_COLOR: the legend's numbers name the curves).
pub fn run_style(theme: &Theme, i: usize) -> Style {
    const MORE: [Color; 6] = [
        Color::LightBlue,
        Color::LightRed,
        Color::LightGreen,
        Color::LightMagenta,
        Color::White,
        Color::Blue,
    ];
    if matches!(theme.mode, ColorMode::None) {
        return Style::default();
    }
    match i {
        0 => theme.series[0],
        1 => theme.series[3],
        2 => theme.series[2],
        i => Style::default().fg(MORE[(i - 3) % MORE.len()]),
    }
}

/// Marked runs: their objective per iteration, one chart per (method, dataset), and a legend.
pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let runs = &s.sessions.runs;
    let legend_w = (area.width / 3).clamp(20, 36);
    let [charts, legend] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(legend_w)]).areas(area);
    // Groups in marking order; each run keeps its colour across groups.
    let mut groups: BTreeMap<(String, String), Vec<usize>> = BTreeMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    let mut lines = Vec::new();
    for (i, path) in runs.marked.iter().enumerate() {
        let style = run_style(&s.theme, i);
        let tag = Span::styled(format!("━{}━ ", i + 1), style);
        match runs.curves.get(path) {
            None => lines.push(Line::from(vec![tag, Span::styled("reading…", s.theme.dim)])),
            Some(Err(e)) => lines.push(Line::from(vec![
                tag,
                Span::styled(clip(e, 60), s.theme.error),
            ])),
            Some(Ok(r)) => {
                let key = (r.method.clone(), r.dataset.clone());
                if !groups.contains_key(&key) {
                    order.push(key.clone());
                }
                groups.entry(key).or_default().push(i);
                let last = r.trace.last().map(|t| fmt_num(t.objective));
                lines.push(Line::from(vec![tag, Span::raw(r.name.clone())]));
                lines.push(Line::styled(
                    format!(
                        "    {} it{} · {}",
                        r.trace.len(),
                        last.map(|v| format!(" · Q {v}")).unwrap_or_default(),
                        r.method,
                    ),
                    s.theme.dim,
                ));
            }
        }
    }
    // A chart needs ~8 lines to be read; the groups that do not fit are named.
    let fit = (charts.height / 8).max(1) as usize;
    if order.len() > fit {
        lines.push(Line::styled(
            format!(
                "{} more problem{} not drawn (unmark some runs)",
                order.len() - fit,
                if order.len() - fit == 1 { "" } else { "s" }
            ),
            s.theme.warn,
        ));
    }
    frame.render_widget(
        Paragraph::new(lines).block(block(
            format!("Marked runs ({})", runs.marked.len()),
            &s.theme,
            false,
        )),
        legend,
    );
    if order.is_empty() {
        return draw_note(
            frame,
            charts,
            s,
            ("Objective", true),
            "reading the marked runs…",
        );
    }
    let shown = &order[..order.len().min(fit)];
    let areas = Layout::vertical(vec![Constraint::Fill(1); shown.len()]).split(charts);
    for (key, area) in shown.iter().zip(areas.iter()) {
        let series = groups[key]
            .iter()
            .filter_map(|&i| {
                let Some(Ok(r)) = runs.curves.get(&runs.marked[i]) else {
                    return None;
                };
                Some(Series {
                    name: String::new(),
                    points: r
                        .trace
                        .iter()
                        .map(|t| (t.iter as f64, t.objective))
                        .collect(),
                    style: run_style(&s.theme, i),
                })
            })
            .collect();
        let ids: Vec<String> = groups[key].iter().map(|i| (i + 1).to_string()).collect();
        let what = format!("Objective — {} on {}", key.0, key.1);
        let runs = format!(
            "({} {})",
            if ids.len() == 1 { "run" } else { "runs" },
            ids.join(", ")
        );
        let title = fit_title(
            *area,
            &[
                format!("{what} {runs} · m: this run"),
                format!("{what} {runs} · m"),
                format!("{what} {runs}"),
                what,
            ],
        );
        let objective = chart(s, title, ("iteration", "objective"), series);
        draw_chart(frame, *area, s, objective, None);
    }
}

/// A sweep's validation curve: the mean CV score per value, the best so far marked.
pub fn sweep_curve(frame: &mut Frame, area: Rect, s: &State, sw: &SweepState) {
    let pts = sw.curve();
    let metric = sw.metric();
    // One curve: no legend; the best is named in the title.
    let series = vec![Series {
        name: String::new(),
        points: pts,
        style: s.theme.series[3],
    }];
    let best = sw
        .best()
        .and_then(|b| Some((sw.plan.values.get(b.index)?, b.mean)))
        .map(|(v, m)| {
            format!(
                " · best {} = {} ({})",
                sw.plan.label,
                fmt_num(*v),
                fmt_num(m)
            )
        })
        .unwrap_or_default();
    let title = format!(
        "Sweep: {} per {} ({}/{} scored){best}",
        sw.scored_by(),
        sw.plan.label,
        sw.rows.len(),
        sw.plan.values.len()
    );
    let curve = chart(s, title, (&sw.plan.label, &metric), series);
    draw_chart(frame, area, s, curve, None);
}
