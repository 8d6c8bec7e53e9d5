//! A search over several fields in Charts: with two varying fields the cross-validated score
//! as a heatmap (the first marked across, the second down, each on its own scale, the best
//! cell starred), with more the configurations ranked best first.

use ratatui::layout::{Constraint, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Row, Table};
use ratatui::Frame;

use super::super::super::state::{ScoreGrid, State, SweepState};
use super::super::super::theme::{ColorMode, Theme};
use super::super::super::widgets::fmt_num;
use super::super::{block, fit_title};

/// The search's scores: a heatmap over two varying fields, a ranked table over more.
pub fn draw(frame: &mut Frame, area: Rect, s: &State, sw: &SweepState) {
    let varying = sw.plan.varying();
    match varying.as_slice() {
        [ax, ay] => heatmap(frame, area, s, sw, *ax, *ay),
        _ => ranked(frame, area, s, sw, &varying),
    }
}

/// Width of a heatmap cell: a score of four decimals and the best's star.
const CELL_W: u16 = 7;

fn heatmap(frame: &mut Frame, area: Rect, s: &State, sw: &SweepState, ax: usize, ay: usize) {
    let (lx, ly) = (&sw.plan.axes[ax], &sw.plan.axes[ay]);
    let scored = format!("{}/{}", sw.rows.len(), sw.total());
    let title = fit_title(
        area,
        &[
            format!(
                "Search: {} per {} × {} ({scored} scored, * best) — e exports",
                sw.scored_by(),
                lx.label,
                ly.label
            ),
            format!("{} × {} ({scored}, * best) — e", lx.label, ly.label),
            format!("{} × {}", lx.label, ly.label),
        ],
    );
    let Some(g) = sw.score_grid(ax, ay) else {
        frame.render_widget(
            Paragraph::new("no configuration scored yet").block(block(title, &s.theme, true)),
            area,
        );
        return;
    };
    let mut lines = Vec::new();
    let label_w = 9usize;
    let scale = |log: bool| if log { "log" } else { "linear" };
    lines.push(Line::styled(
        format!(
            "{} down ({}), {} across ({}){}",
            ly.label,
            scale(ly.log),
            lx.label,
            scale(lx.log),
            if g.binned {
                " · drawn values in bins, each cell its best"
            } else {
                ""
            }
        ),
        s.theme.dim,
    ));
    let (lo, hi) = range(&g);
    // the larger values at the top, as a chart's y axis
    for (i, y) in g.ys.iter().enumerate().rev() {
        let mut spans = vec![Span::styled(
            format!("{:>w$} ", axis_value(*y), w = label_w),
            s.theme.key,
        )];
        for (j, cell) in g.cells[i].iter().enumerate() {
            let star = g.best == Some((i, j));
            spans.push(cell_span(
                &s.theme,
                *cell,
                (lo, hi),
                g.higher_is_better,
                star,
            ));
        }
        lines.push(Line::from(spans));
    }
    let mut axis = vec![Span::raw(" ".repeat(label_w + 1))];
    axis.extend(g.xs.iter().map(|x| {
        let t = axis_value(*x);
        Span::styled(format!("{:^w$}", t, w = CELL_W as usize), s.theme.key)
    }));
    lines.push(Line::from(axis));
    if let Some(b) = sw.best() {
        let words: Vec<String> = sw
            .plan
            .axes
            .iter()
            .zip(sw.plan.points.get(b.index).into_iter().flatten())
            .map(|(a, v)| format!("{} = {}", a.label, axis_value(*v)))
            .collect();
        lines.push(Line::styled(
            format!(
                "* best: {} → {} {}",
                words.join(", "),
                b.metric,
                fmt_num(b.mean)
            ),
            s.theme.ok,
        ));
    }
    frame.render_widget(
        Paragraph::new(lines).block(block(title, &s.theme, true)),
        area,
    );
}

/// A searched value as the form writes it (0.001, 10), to three significant digits (a bin's
/// centre, a random draw).
fn axis_value(v: f64) -> String {
    let r = format!("{v:.2e}").parse().unwrap_or(v);
    ovk_core::methods::Value::Float(r).to_string()
}

/// The lowest and highest scores in the grid.
fn range(g: &ScoreGrid) -> (f64, f64) {
    g.cells
        .iter()
        .flatten()
        .flatten()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        })
}

/// One cell: its score on a colour from worst (blue) to best (red), `*` on the best.
fn cell_span(
    theme: &Theme,
    v: Option<f64>,
    (lo, hi): (f64, f64),
    higher_is_better: bool,
    star: bool,
) -> Span<'static> {
    let w = CELL_W as usize;
    let Some(v) = v else {
        return Span::styled(format!("{:^w$}", "·"), theme.dim);
    };
    let text = format!("{}{}", if star { "*" } else { "" }, short(v));
    let text = format!("{text:^w$}");
    // goodness in [−1, 1]: −1 the worst cell, 1 the best
    let t = if hi > lo {
        let u = (v - lo) / (hi - lo);
        let u = if higher_is_better { u } else { 1.0 - u };
        2.0 * u - 1.0
    } else {
        1.0
    };
    let mut style = match theme.diverging(t) {
        Some(bg) => Style::default().bg(bg).fg(Color::Black),
        None => Style::default(),
    };
    if theme.mode == ColorMode::None && t > 0.5 {
        style = style.add_modifier(Modifier::REVERSED);
    }
    if star {
        style = style.add_modifier(Modifier::BOLD);
    }
    Span::styled(text, style)
}

/// A score in at most six characters.
fn short(v: f64) -> String {
    if v.abs() >= 1e4 || (v != 0.0 && v.abs() < 1e-3) {
        format!("{v:.0e}")
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// The configurations best first: each varying field's value and the score.
fn ranked(frame: &mut Frame, area: Rect, s: &State, sw: &SweepState, varying: &[usize]) {
    let mut rows = sw.latest();
    let table = ovk_core::train::sweep::SweepResult {
        folds: sw.plan.folds,
        rows: rows.iter().map(|r| (*r).clone()).collect(),
        best: None,
        interrupted: false,
    };
    let order: Vec<usize> = table.ranked().iter().map(|r| r.index).collect();
    rows.sort_by_key(|r| order.iter().position(|i| *i == r.index));
    let halving = rows.iter().any(|r| r.rung.is_some());
    let mut header: Vec<String> = vec!["#".into()];
    header.extend(varying.iter().map(|a| sw.plan.axes[*a].label.clone()));
    if halving {
        header.push("rows".into());
    }
    let metric = rows.first().map_or("score", |r| r.metric.as_str());
    header.extend([metric.to_string(), "sd".into()]);
    let body = rows.iter().enumerate().map(|(rank, r)| {
        let mut cells = vec![format!("{}", rank + 1)];
        let p = sw.plan.points.get(r.index);
        cells.extend(varying.iter().map(|a| {
            p.and_then(|p| p.get(*a))
                .map_or_else(String::new, |v| fmt_num(*v))
        }));
        if halving {
            cells.push(r.train_rows.map_or_else(String::new, |n| n.to_string()));
        }
        match &r.error {
            Some(_) => {
                cells.push("failed".into());
                Row::new(cells).style(s.theme.error)
            }
            None => {
                cells.extend([fmt_num(r.mean), fmt_num(r.sd)]);
                let row = Row::new(cells);
                if rank == 0 {
                    row.style(s.theme.ok)
                } else {
                    row
                }
            }
        }
    });
    let mut widths = vec![Constraint::Length(4)];
    widths.extend(varying.iter().map(|_| Constraint::Length(9)));
    if halving {
        widths.push(Constraint::Length(5));
    }
    widths.extend([Constraint::Length(10), Constraint::Length(9)]);
    let title = fit_title(
        area,
        &[
            format!(
                "Search: {} — {} configurations ranked, best first ({}/{} scored) — e exports",
                sw.scored_by(),
                sw.plan.points.len(),
                sw.rows.len(),
                sw.total()
            ),
            format!(
                "Search ranked, best first ({}/{})",
                sw.rows.len(),
                sw.total()
            ),
        ],
    );
    frame.render_widget(
        Table::new(body, widths)
            .header(Row::new(header).style(s.theme.title))
            .block(block(title, &s.theme, true)),
        area,
    );
}
