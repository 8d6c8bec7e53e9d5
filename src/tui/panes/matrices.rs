//! Matrices pane: the learned matrices (output kernel, metric …) as heatmaps with a diverging
//! legend, names from the outputs, zoom and a cell cursor; the strongest off-diagonal
//! similarities; a scatter plot for a rank-2/3 `embedding`.

use ndarray::Array2;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Points};
use ratatui::widgets::{List, ListItem, ListState, Paragraph};
use ratatui::Frame;

use super::super::state::State;
use super::super::widgets::heatmap::{self, Heatmap, Legend};
use super::super::widgets::{clip, fmt_num};
use super::block;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let Some(f) = &s.result else {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "No matrices yet — they appear when a fit finishes or a session is opened.",
                s.theme.dim,
            ))
            .block(block("Matrices", &s.theme, true)),
            area,
        );
        return;
    };
    let mats = &f.outcome.matrices;
    let [left, right] =
        Layout::horizontal([Constraint::Length(34), Constraint::Fill(1)]).areas(area);
    let [list_area, strong_area] = Layout::vertical([
        Constraint::Length((mats.len() as u16 + 2).clamp(3, 10)),
        Constraint::Fill(1),
    ])
    .areas(left);
    let items: Vec<ListItem> = mats
        .iter()
        .map(|(n, m)| ListItem::new(format!("{n} ({}×{})", m.nrows(), m.ncols())))
        .collect();
    let sel = s.matrices.selected.min(mats.len().saturating_sub(1));
    let mut st = ListState::default().with_selected((!mats.is_empty()).then_some(sel));
    frame.render_stateful_widget(
        List::new(items)
            .block(block("Matrices — n N", &s.theme, false))
            .highlight_style(s.theme.selected)
            .highlight_symbol("> "),
        list_area,
        &mut st,
    );
    let Some((name, m)) = mats.get(sel) else {
        frame.render_widget(
            Paragraph::new("This fit saved no matrices.").block(block("Heatmap", &s.theme, true)),
            right,
        );
        return;
    };
    let names = s.output_names();
    let label = |i: usize, n: usize| -> String {
        if n == names.len() {
            names[i].clone()
        } else {
            i.to_string()
        }
    };
    draw_strongest(frame, strong_area, s, m, &label);
    if name.contains("embedding") && matches!(m.ncols(), 2 | 3) {
        draw_embedding(frame, right, s, name, m, &label);
        return;
    }
    draw_heatmap(frame, right, s, name, m, &label);
}

fn draw_strongest(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    m: &Array2<f64>,
    label: &dyn Fn(usize, usize) -> String,
) {
    let k = area.height.saturating_sub(2) as usize;
    let lines: Vec<Line> = heatmap::strongest(m, k)
        .into_iter()
        .map(|(i, j, v)| {
            let style = if v < 0.0 {
                s.theme.series[0]
            } else {
                s.theme.warn
            };
            Line::from(vec![
                Span::styled(format!("{:>9} ", fmt_num(v)), style),
                Span::raw(clip(
                    &format!("{} ~ {}", label(i, m.nrows()), label(j, m.ncols())),
                    22,
                )),
            ])
        })
        .collect();
    frame.render_widget(
        Paragraph::new(lines).block(block("Strongest off-diagonal", &s.theme, false)),
        area,
    );
}

fn draw_heatmap(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    name: &str,
    m: &Array2<f64>,
    label: &dyn Fn(usize, usize) -> String,
) {
    let blk = block(
        format!("{name} — zoom {} (+ -) · cursor j k H L", s.matrices.zoom),
        &s.theme,
        true,
    );
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let [legend_area, info_area, grid] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Fill(1),
    ])
    .areas(inner);
    let scale = heatmap::scale_of(m);
    frame.render_widget(
        Legend {
            scale,
            theme: &s.theme,
        },
        legend_area,
    );
    let (nr, nc) = m.dim();
    let (cr, cc) = (
        s.matrices.cursor.0.min(nr.saturating_sub(1)),
        s.matrices.cursor.1.min(nc.saturating_sub(1)),
    );
    if nr > 0 && nc > 0 {
        let info = format!(
            "[{}, {}] = {}   ({} ~ {})",
            cr,
            cc,
            fmt_num(m[[cr, cc]]),
            label(cr, nr),
            label(cc, nc)
        );
        frame.render_widget(Line::styled(info, s.theme.key), info_area);
    }
    let label_w = (0..nr)
        .map(|i| label(i, nr).chars().count())
        .max()
        .unwrap_or(1)
        .min(14) as u16
        + 1;
    let [labels, cells] =
        Layout::horizontal([Constraint::Length(label_w), Constraint::Fill(1)]).areas(grid);
    let (fit_r, fit_c) = heatmap::capacity(cells, s.matrices.zoom);
    let origin = (
        heatmap::offset(cr, fit_r, nr),
        heatmap::offset(cc, fit_c, nc),
    );
    frame.render_widget(
        Heatmap {
            matrix: m,
            zoom: s.matrices.zoom,
            cursor: Some((cr, cc)),
            origin,
            theme: &s.theme,
        },
        cells,
    );
    // Row names, one per screen line: the upper of the two rows a line shows at zoom 1.
    let z = s.matrices.zoom.max(1) as usize;
    let mut last = usize::MAX;
    let lines: Vec<Line> = (0..labels.height as usize)
        .map(|y| {
            let r = origin.0 + (2 * y) / z;
            if r >= nr || r == last {
                return Line::raw("");
            }
            last = r;
            let style = if r == cr { s.theme.key } else { s.theme.dim };
            Line::styled(clip(&label(r, nr), label_w as usize - 1), style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), labels);
}

fn draw_embedding(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    name: &str,
    m: &Array2<f64>,
    label: &dyn Fn(usize, usize) -> String,
) {
    let pts: Vec<(f64, f64)> = (0..m.nrows()).map(|i| (m[[i, 0]], m[[i, 1]])).collect();
    let bound = |k: usize| {
        let lo = pts
            .iter()
            .map(|p| if k == 0 { p.0 } else { p.1 })
            .fold(f64::INFINITY, f64::min);
        let hi = pts
            .iter()
            .map(|p| if k == 0 { p.0 } else { p.1 })
            .fold(f64::NEG_INFINITY, f64::max);
        if lo.is_finite() && hi.is_finite() && hi > lo {
            let pad = 0.1 * (hi - lo);
            [lo - pad, hi + pad]
        } else {
            [-1.0, 1.0]
        }
    };
    let (xb, yb) = (bound(0), bound(1));
    let labels: Vec<String> = (0..m.nrows()).map(|i| label(i, m.nrows())).collect();
    let color = s.theme.series[0].fg.unwrap_or(ratatui::style::Color::Reset);
    let canvas = Canvas::default()
        .block(block(
            format!("{name} — first two coordinates"),
            &s.theme,
            true,
        ))
        .marker(Marker::Braille)
        .x_bounds(xb)
        .y_bounds(yb)
        .paint(move |ctx| {
            ctx.draw(&Points {
                coords: &pts,
                color,
            });
            for (i, p) in pts.iter().enumerate() {
                ctx.print(p.0, p.1, Span::styled(labels[i].clone(), Style::default()));
            }
        });
    frame.render_widget(canvas, area);
}
