//! Results pane, diagnostics view (`d`): per output of one part (`p`: train or test) — the
//! confusion matrix of a multi-class fit, precision / recall / AUC per label of a multi-label
//! fit, R² and MSE per output of a regression beside the chosen output's predicted-versus-true
//! scatter (braille). Every list scrolls with j k, so each fits 80×24.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Line as CLine, Points};
use ratatui::widgets::{Block, Cell, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use super::super::diag;
use super::super::state::{Finished, State};
use super::super::widgets::{clip, clip_middle, fmt_num};
use super::{block, draw_note};
use ovk_core::metrics::{LabelScores, OutputFit, PartDiagnostics, MAX_CLASSES, SCATTER_OUTPUTS};

pub fn draw(frame: &mut Frame, area: Rect, s: &State, f: &Finished) {
    let part = s.diag.part();
    let names = &f.outcome.record.output_names;
    let d = match diag::of(&f.outcome, part) {
        Ok(d) => d,
        Err(why) => {
            frame.render_widget(
                Paragraph::new(vec![
                    Line::styled(format!("No {part} diagnostics: {why}."), s.theme.warn),
                    Line::styled("p: the other part · d: back to the summary", s.theme.dim),
                ])
                .wrap(Wrap { trim: true })
                .block(block(format!("Diagnostics — {part}"), &s.theme, true)),
                area,
            );
            return;
        }
    };
    let row = s.diag.row.min(diag::rows(&d).saturating_sub(1));
    match (&d.confusion, &d.labels, &d.outputs) {
        (Some(c), _, _) => confusion(frame, area, s, names, c, row),
        (_, Some(l), _) => labels(frame, area, s, names, l, (row, d.omitted)),
        (_, _, Some(o)) => regression(frame, area, s, names, o, (row, d.omitted)),
        _ => empty(frame, area, s, &d),
    }
}

/// The keys of the view, and `extra`, on the block's bottom border.
fn with_hint<'a>(b: Block<'a>, s: &State, extra: &str) -> Block<'a> {
    let other = if s.diag.train { "test" } else { "train" };
    b.title_bottom(Line::styled(
        format!(" j k move · p {other} · d summary{extra} "),
        s.theme.dim,
    ))
}

fn empty(frame: &mut Frame, area: Rect, s: &State, d: &PartDiagnostics) {
    let why = if d.omitted > 0 {
        format!(
            "{} classes: a session keeps a confusion matrix for at most {MAX_CLASSES}",
            d.omitted
        )
    } else {
        "nothing to show".into()
    };
    draw_note(frame, area, s, ("Diagnostics", true), &why);
}

/// What the session left out, for a title: the diagnostics keep the first [`MAX_OUTPUTS`].
fn not_kept(omitted: usize, what: &str) -> String {
    if omitted == 0 {
        String::new()
    } else {
        format!(" · {omitted} more {what} not kept")
    }
}

/// Rows = true class, columns = predicted class; the diagonal is right, the rest are
/// confusions. Each row ends with its count and recall; the last row holds each column's
/// precision.
fn confusion(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    names: &[String],
    counts: &[Vec<usize>],
    row: usize,
) {
    let k = counts.len();
    let class = |j: usize| {
        names
            .get(j)
            .map_or_else(|| j.to_string(), |n| diag::class_name(n).to_string())
    };
    let total: usize = counts.iter().flatten().sum();
    let right: usize = (0..k).map(|i| counts[i][i]).sum();
    let label_w = (0..k)
        .map(|j| class(j).chars().count())
        .chain([9])
        .max()
        .unwrap_or(9)
        .min(16);
    let biggest = counts.iter().flatten().max().copied().unwrap_or(0);
    let cell_w = (0..k)
        .map(|j| class(j).chars().count().min(8))
        .chain([biggest.to_string().len(), 4])
        .max()
        .unwrap_or(3);
    // As many class columns as fit beside the label, n and recall columns.
    let inner = area.width.saturating_sub(2) as usize;
    let n_w = counts
        .iter()
        .map(|r| r.iter().sum::<usize>().to_string().len())
        .max()
        .unwrap_or(1)
        .max(1);
    let fixed = label_w + 1 + n_w + 1 + 6;
    let shown = ((inner.saturating_sub(fixed)) / (cell_w + 1)).min(k);
    // The predicted-class columns follow the cursor, so its row's diagonal is always on screen.
    let first = (row + 1).saturating_sub(shown).min(k - shown);
    let cols = first..first + shown;
    let header = {
        let mut h = vec![Cell::from(clip("true\\pred", label_w))];
        h.extend(
            cols.clone()
                .map(|j| Cell::from(format!("{:>cell_w$}", clip(&class(j), cell_w)))),
        );
        h.push(Cell::from("n"));
        h.push(Cell::from("recall"));
        Row::new(h).style(s.theme.title)
    };
    let mut rows: Vec<Row> = (0..k)
        .map(|i| {
            let n: usize = counts[i].iter().sum();
            let mut cells = vec![Cell::from(Span::styled(
                clip_middle(&class(i), label_w),
                s.theme.key,
            ))];
            cells.extend(cols.clone().map(|j| {
                let c = counts[i][j];
                let style = if i == j {
                    s.theme.ok
                } else if c > 0 {
                    s.theme.warn
                } else {
                    s.theme.dim
                };
                Cell::from(Span::styled(format!("{c:>cell_w$}"), style))
            }));
            cells.push(Cell::from(n.to_string()));
            cells.push(Cell::from(ratio(counts[i][i], n)));
            Row::new(cells)
        })
        .collect();
    let mut prec = vec![Cell::from(Span::styled("precision", s.theme.dim))];
    prec.extend(cols.clone().map(|j| {
        let col: usize = (0..k).map(|i| counts[i][j]).sum();
        // Two decimals: ten digit classes fit 80 columns.
        let p = if col == 0 {
            "—".to_string()
        } else {
            format!("{:.2}", counts[j][j] as f64 / col as f64)
        };
        Cell::from(format!("{p:>cell_w$}"))
    }));
    rows.push(Row::new(prec));
    let mut widths = vec![Constraint::Length(label_w as u16)];
    widths.extend((0..shown).map(|_| Constraint::Length(cell_w as u16)));
    widths.push(Constraint::Length(n_w as u16));
    widths.push(Constraint::Length(6));
    let hidden = k - shown;
    let more = if hidden > 0 {
        format!(" · columns {}–{} of {k}", first + 1, first + shown)
    } else {
        String::new()
    };
    let title = format!(
        "Confusion matrix — {} · {right}/{total} right · row {}/{k}",
        s.diag.part(),
        row + 1,
    );
    let table = Table::new(rows, widths)
        .header(header)
        .block(with_hint(block(title, &s.theme, true), s, &more))
        .row_highlight_style(s.theme.selected)
        .highlight_spacing(HighlightSpacing::Never);
    let mut state = TableState::default().with_selected(Some(row));
    frame.render_stateful_widget(table, area, &mut state);
}

fn ratio(a: usize, b: usize) -> String {
    if b == 0 {
        "—".into()
    } else {
        format!("{:.3}", a as f64 / b as f64)
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "—".into(), |x| format!("{x:.4}"))
}

/// One row per label: precision, recall, AUC and its positives, with their means on top.
fn labels(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    names: &[String],
    l: &[LabelScores],
    (row, omitted): (usize, usize),
) {
    let mean = |get: fn(&LabelScores) -> Option<f64>| {
        let v: Vec<f64> = l.iter().filter_map(get).collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let inner = area.width.saturating_sub(2) as usize;
    let name_w = names
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, inner.saturating_sub(4 * 11).max(8));
    let header =
        Row::new(["label", "precision", "recall", "AUC", "positives"]).style(s.theme.title);
    let mut rows: Vec<Row> = l
        .iter()
        .enumerate()
        .map(|(j, x)| {
            let name = names.get(j).cloned().unwrap_or_else(|| j.to_string());
            let auc_style = match x.auc {
                Some(a) if a < 0.6 => s.theme.warn,
                _ => Style::default(),
            };
            Row::new(vec![
                Cell::from(Span::styled(clip_middle(&name, name_w), s.theme.key)),
                Cell::from(opt(x.precision)),
                Cell::from(opt(x.recall)),
                Cell::from(Span::styled(opt(x.auc), auc_style)),
                Cell::from(format!("{}/{}", x.support, x.rows)),
            ])
        })
        .collect();
    rows.insert(
        0,
        Row::new(vec![
            Cell::from(Span::styled("mean", s.theme.dim)),
            Cell::from(opt(mean(|x| x.precision))),
            Cell::from(opt(mean(|x| x.recall))),
            Cell::from(opt(mean(|x| x.auc))),
            Cell::from(""),
        ])
        .style(s.theme.dim),
    );
    let title = format!(
        "Per label — {} · label {}/{}{}",
        s.diag.part(),
        row + 1,
        l.len(),
        not_kept(omitted, "labels (means are of these)")
    );
    let table = Table::new(
        rows,
        [
            Constraint::Length(name_w as u16),
            Constraint::Length(10),
            Constraint::Length(10),
            Constraint::Length(10),
            Constraint::Length(11),
        ],
    )
    .header(header)
    .block(with_hint(block(title, &s.theme, true), s, ""))
    .row_highlight_style(s.theme.selected)
    .highlight_spacing(HighlightSpacing::Never);
    let mut state = TableState::default().with_selected(Some(row + 1));
    frame.render_stateful_widget(table, area, &mut state);
}

/// R² and MSE per output (j k chooses one) beside the chosen output's scatter.
fn regression(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    names: &[String],
    o: &[OutputFit],
    (row, omitted): (usize, usize),
) {
    let narrow = area.width < 70;
    let (list, plot) = if narrow {
        let list_h = (o.len() as u16 + 3).min(area.height / 3).max(4);
        let [a, b] =
            Layout::vertical([Constraint::Length(list_h), Constraint::Fill(1)]).areas(area);
        (a, b)
    } else {
        let list_w = (area.width * 2 / 5).clamp(28, 44);
        let [a, b] =
            Layout::horizontal([Constraint::Length(list_w), Constraint::Fill(1)]).areas(area);
        (a, b)
    };
    let name_w = (list.width as usize).saturating_sub(2 + 2 * 9).max(4);
    let rows = o.iter().enumerate().map(|(j, x)| {
        let name = names.get(j).cloned().unwrap_or_else(|| j.to_string());
        Row::new(vec![
            Cell::from(Span::styled(clip_middle(&name, name_w), s.theme.key)),
            Cell::from(x.r2.map_or("—".into(), fmt_num)),
            Cell::from(x.mse.map_or("—".into(), fmt_num)),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(name_w as u16),
            Constraint::Length(8),
            Constraint::Length(8),
        ],
    )
    .header(Row::new(["output", "R²", "MSE"]).style(s.theme.title))
    .block(block(
        format!("Outputs — {} · {}/{}", s.diag.part(), row + 1, o.len()),
        &s.theme,
        true,
    ))
    .row_highlight_style(s.theme.selected)
    .highlight_spacing(HighlightSpacing::Never);
    let mut state = TableState::default().with_selected(Some(row));
    let hint_h = if omitted > 0 { 3 } else { 2 };
    let [list, hint] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(hint_h)]).areas(list);
    frame.render_stateful_widget(table, list, &mut state);

    let Some(x) = o.get(row) else { return };
    let other = if s.diag.train { "test" } else { "train" };
    let plotted = if x.pairs.is_empty() && x.rows > 0 {
        format!(
            "{} rows, not plotted (first {SCATTER_OUTPUTS} outputs only)",
            x.rows
        )
    } else if x.pairs.len() < x.rows {
        format!("{} rows, {} plotted", x.rows, x.pairs.len())
    } else {
        format!("{} rows", x.rows)
    };
    let mut lines = vec![
        Line::styled(format!(" j k output · p {other} · d back"), s.theme.dim),
        Line::styled(format!(" {plotted}"), s.theme.dim),
    ];
    if omitted > 0 {
        lines.push(Line::styled(
            format!(" {omitted} more outputs not kept"),
            s.theme.warn,
        ));
    }
    frame.render_widget(Paragraph::new(lines), hint);
    let name = names.get(row).cloned().unwrap_or_else(|| row.to_string());
    scatter(frame, plot, s, &name, x);
}

/// Predicted (vertical) against true (horizontal) on one square range, with the diagonal
/// ŷ = y where a perfect fit would lie.
fn scatter(frame: &mut Frame, area: Rect, s: &State, name: &str, x: &OutputFit) {
    let (mut lo, mut hi) = x
        .pairs
        .iter()
        .flat_map(|p| [p.0, p.1])
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() || !hi.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if hi - lo < 1e-12 {
        (lo, hi) = (lo - 0.5, hi + 0.5);
    }
    let pad = 0.03 * (hi - lo);
    let (lo, hi) = (lo - pad, hi + pad);
    let title = format!("{} · predicted ↑ vs true →", clip_middle(name, 24));
    let bottom = format!(" both axes {} … {} · ╱ ŷ = y ", fmt_num(lo), fmt_num(hi));
    let points: Vec<(f64, f64)> = x.pairs.clone();
    let canvas = Canvas::default()
        .block(block(title, &s.theme, false).title_bottom(Line::styled(bottom, s.theme.dim)))
        .marker(Marker::Braille)
        .x_bounds([lo, hi])
        .y_bounds([lo, hi])
        .paint(move |ctx| {
            ctx.draw(&CLine {
                x1: lo,
                y1: lo,
                x2: hi,
                y2: hi,
                color: s.theme.dim.fg.unwrap_or(ratatui::style::Color::Reset),
            });
            ctx.layer();
            ctx.draw(&Points {
                coords: &points,
                color: s.theme.series[0].fg.unwrap_or(ratatui::style::Color::Reset),
            });
        });
    frame.render_widget(canvas, area);
}
