//! Matrices pane: the learned matrices (output kernel, metric …) as heatmaps with a diverging
//! legend, names from the outputs, zoom and a cell cursor; the strongest off-diagonal
//! similarities; a scatter plot for a rank-2/3 `embedding`.

use ndarray::Array2;
use ratatui::layout::{Alignment, Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::symbols::Marker;
use ratatui::text::{Line, Span};
use ratatui::widgets::canvas::{Canvas, Points};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, Wrap};
use ratatui::Frame;

use super::super::axes;
use super::super::state::State;
use super::super::widgets::heatmap::{self, Heatmap, Legend};
use super::super::widgets::{clip, clip_middle, fmt_num};
use super::{block, draw_note, fit_title};

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let Some(f) = &s.result else {
        let note = "No matrices yet — they appear when a fit finishes or a session is opened.";
        return draw_note(frame, area, s, ("Matrices", true), note);
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
    let ax = axes::of(&f.outcome.record, name, m.dim());
    let (view, ax, how) = reading(s, sel, m, ax);
    let m = &view;
    let titled;
    let name = if how.is_empty() {
        name
    } else {
        titled = format!("{name} · {how}");
        titled.as_str()
    };
    let label = |i: usize, n: usize| -> String {
        // `n` tells rows (nrows) from columns; square matrices with one axis use it for both.
        if n == m.nrows() && i < ax.rows.labels.len() && (n != m.ncols() || ax.same) {
            ax.rows.labels[i].clone()
        } else if n == m.ncols() && i < ax.cols.labels.len() {
            ax.cols.labels[i].clone()
        } else {
            i.to_string()
        }
    };
    draw_strongest(frame, strong_area, s, m, &ax);
    if name.contains("embedding") && matches!(m.ncols(), 2 | 3) {
        draw_embedding(frame, right, s, name, m, &label);
        return;
    }
    draw_heatmap(frame, right, s, name, m, &ax);
}

/// An outputs × outputs matrix as the user asked to read it (`c` correlations, `o` clustered
/// order, by the engine's `inspect`): the matrix, its axes in that order, and words for the
/// title ("" when raw in file order).
fn reading(
    s: &State,
    sel: usize,
    m: &Array2<f64>,
    mut ax: axes::Axes,
) -> (Array2<f64>, axes::Axes, String) {
    let square = ax.same && m.nrows() == m.ncols();
    let mut words = Vec::new();
    let mut shown = if square && s.matrices.correlation {
        words.push("correlation");
        ovk_core::inspect::correlation(m.view())
    } else {
        m.clone()
    };
    let order = s
        .matrices
        .order
        .as_ref()
        .filter(|(i, o)| *i == sel && o.len() == m.nrows())
        .map(|(_, o)| o);
    if let Some(order) = order.filter(|_| square && s.matrices.clustered) {
        words.push("clustered");
        shown = ovk_core::inspect::permuted(shown.view(), order);
        let permute = |a: &mut axes::Axis| {
            if a.labels.len() == order.len() {
                a.labels = order.iter().map(|&i| a.labels[i].clone()).collect();
            }
            // blocks of consecutive outputs mean nothing once they are reordered
            a.blocks.clear();
        };
        permute(&mut ax.rows);
        permute(&mut ax.cols);
    }
    (shown, ax, words.join(", "))
}

/// For a similarity (rows and columns index the same things): the strongest off-diagonal
/// pairs. For any other matrix: its largest entries, with their row and column names.
fn draw_strongest(frame: &mut Frame, area: Rect, s: &State, m: &Array2<f64>, ax: &axes::Axes) {
    let k = area.height.saturating_sub(2) as usize;
    let entries = if ax.same {
        heatmap::strongest(m, k)
    } else {
        heatmap::largest(m, k)
    };
    let w = area.width.saturating_sub(2) as usize;
    let mut lines: Vec<Line> = Vec::new();
    for (i, j, v) in entries {
        let style = if v < 0.0 {
            s.theme.series[0]
        } else {
            s.theme.warn
        };
        let sep = if ax.same { "~" } else { "·" };
        let (a, b) = (&ax.rows.labels[i], &ax.cols.labels[j]);
        let pair = format!("{a} {sep} {b}");
        // A pair too long for one line goes below the value, a name a line, each shortened to
        // the panel rather than broken mid-name.
        if pair.chars().count() + 10 <= w {
            lines.push(Line::from(vec![
                Span::styled(format!("{:>9} ", fmt_num(v)), style),
                Span::raw(pair),
            ]));
        } else if pair.chars().count() + 2 <= w {
            lines.push(Line::styled(format!("{:>9}", fmt_num(v)), style));
            lines.push(Line::raw(format!("  {pair}")));
        } else {
            lines.push(Line::styled(format!("{:>9}", fmt_num(v)), style));
            lines.push(Line::raw(format!(
                "  {}",
                clip_middle(a, w.saturating_sub(2))
            )));
            lines.push(Line::raw(format!(
                "  {sep} {}",
                clip_middle(b, w.saturating_sub(4))
            )));
        }
        if lines.len() >= k {
            break;
        }
    }
    let title = if ax.same {
        "Strongest off-diagonal"
    } else {
        "Largest |entries| (row · col)"
    };
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block(title, &s.theme, false)),
        area,
    );
}

fn draw_heatmap(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    name: &str,
    m: &Array2<f64>,
    ax: &axes::Axes,
) {
    let (nr, nc) = m.dim();
    if nr == 0 || nc == 0 {
        // No scale, header or cursor: there is no entry to give them a meaning.
        let note = format!(
            "empty ({nr}×{nc}): this matrix has no {}",
            if nr == 0 { "rows" } else { "columns" }
        );
        return draw_note(frame, area, s, (name, true), &note);
    }
    let (cr, cc) = (
        s.matrices.cursor.0.min(nr.saturating_sub(1)),
        s.matrices.cursor.1.min(nc.saturating_sub(1)),
    );
    // The grid's size decides the fitted zoom, so lay it out first.
    let inner = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    let grid_h = inner.height.saturating_sub(3);
    let steps = s.matrices.zoom;
    // The zoom level and block size of a grid beside row labels `label_w` wide.
    let view = |label_w: u16| {
        let cells_area = Rect::new(0, 0, inner.width.saturating_sub(label_w), grid_h);
        let (fitted, blocks) = heatmap::fit_zoom(cells_area, nr, nc);
        if steps == 0 {
            (fitted, blocks)
        } else {
            (fitted + steps, (1, 1))
        }
    };
    // How many rows a block of the overview holds depends on the grid's height alone: the
    // row labels of a first layout are those of the last, whose width they set.
    let (_, (kr, _)) = view(label_width(&ax.rows.labels));
    let label_w = if kr > 1 {
        let all: Vec<String> = (0..nr.div_ceil(kr))
            .map(|upper| overview_line_label(&ax.rows, kr, upper))
            .collect();
        label_width(&all)
    } else {
        label_width(&ax.rows.labels)
    };
    let (level, (kr, kc)) = view(label_w);
    let cell = heatmap::cell_size(level);
    let shown;
    let (mat, cur) = if kr > 1 || kc > 1 {
        shown = heatmap::overview(m, (kr, kc));
        (&shown, (cr / kr, cc / kc))
    } else {
        (m, (cr, cc))
    };
    // How the matrix is drawn, the fullest wording first.
    let hows: Vec<String> = if kr > 1 || kc > 1 {
        vec![
            format!("overview: 1 cell = {kr}×{kc} block, largest |value| · + zooms in"),
            format!("1 cell = {kr}×{kc} block · + zooms in"),
            format!("{kr}×{kc} blocks · + zooms in"),
            format!("{kr}×{kc} blocks"),
        ]
    } else if level == 0 {
        vec![
            "fitted, 2 rows per line · + zooms in".into(),
            "2 rows per line · + zooms in".into(),
            "2 rows per line".into(),
        ]
    } else if steps == 0 {
        vec![
            format!("fitted (zoom {level}) · + zooms in"),
            format!("fitted (zoom {level}) · +"),
            format!("fitted (zoom {level})"),
        ]
    } else {
        vec![
            format!("zoom {level} · + - (0 = fit)"),
            format!("zoom {level} · + - 0"),
            format!("zoom {level}"),
        ]
    };
    let head = format!("{name} {nr}×{nc}");
    let mut titles: Vec<String> = hows.iter().map(|h| format!("{head} — {h}")).collect();
    titles.push(head);
    let blk = block(fit_title(area, &titles), &s.theme, true);
    frame.render_widget(blk, area);
    let [legend_area, info_area, col_area, grid] = Layout::vertical([
        Constraint::Length(1),
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
    let info = cell_line(
        &format!("[{cr}, {cc}] = {}", fmt_num(m[[cr, cc]])),
        (&ax.rows.labels[cr], &ax.cols.labels[cc]),
        ax,
        info_area.width as usize,
    );
    frame.render_widget(Paragraph::new(Line::styled(info, s.theme.key)), info_area);
    let [labels, cells] =
        Layout::horizontal([Constraint::Length(label_w), Constraint::Fill(1)]).areas(grid);
    let (mr, mc) = mat.dim();
    let (fit_r, fit_c) = heatmap::capacity(cells, cell);
    let origin = (
        heatmap::offset(cur.0, fit_r, mr),
        heatmap::offset(cur.1, fit_c, mc),
    );
    frame.render_widget(
        Heatmap {
            matrix: mat,
            cell,
            cursor: Some(cur),
            origin,
            theme: &s.theme,
        },
        cells,
    );
    let (w, h) = (cell.w as usize, cell.h as usize);
    let (ordinal, marks) = column_marks(&ax.cols, kc, origin.1..(origin.1 + fit_c + 1).min(mc));
    let columns = Columns {
        marks,
        ordinal,
        first: origin.1,
        width: w,
        cursor: cur.1,
    };
    draw_column_names(frame, col_area, label_w, s, &columns);
    // Row names on the first line of their row. A dense line shows two rows: it names the
    // cursor's when the cursor is on it, else the upper one. A line of the overview shows two
    // blocks of rows: it names what they cover (a multi-view metric's views).
    let lines: Vec<Line> = (0..labels.height as usize)
        .map(|y| {
            let upper = origin.0 + (2 * y) / h;
            if upper >= mr || (2 * y) % h != 0 {
                return Line::raw("");
            }
            let (text, on_cursor) = if kr > 1 {
                let text = overview_line_label(&ax.rows, kr, upper);
                (text, cur.0 == upper || cur.0 == upper + 1)
            } else {
                let r = if cell.dense() && cur.0 == upper + 1 && upper + 1 < mr {
                    upper + 1
                } else {
                    upper
                };
                (ax.rows.labels[r].clone(), r == cur.0)
            };
            let style = if on_cursor { s.theme.key } else { s.theme.dim };
            Line::styled(clip_middle(&text, label_w as usize - 1), style)
        })
        .collect();
    frame.render_widget(Paragraph::new(lines), labels);
}

/// "[r, c] = value   row R · col C" in `width` columns. Where that is too long, the prefix
/// every name of an axis shares is left out (`target_heating_load` → `heating_load`), a cell
/// whose row and column have one name says it once, and long names are shortened, each to its
/// share of the room, so the column's name is never the part cut off.
fn cell_line(at: &str, (row, col): (&str, &str), axes: &axes::Axes, width: usize) -> String {
    let whole = format!("{at}   row {row} · col {col}");
    if whole.chars().count() <= width {
        return whole;
    }
    let (row, col) = (
        without_shared_prefix(row, &axes.rows.labels),
        without_shared_prefix(col, &axes.cols.labels),
    );
    if row == col {
        return clip(&format!("{at}   row = col {row}"), width);
    }
    let room = width.saturating_sub(at.chars().count() + "   row  · col ".chars().count());
    let (r, c) = (row.chars().count(), col.chars().count());
    // the shorter name whole when it fits in half the room, the longer one gets the rest
    let row_w = if r <= room / 2 {
        r
    } else if c <= room / 2 {
        room.saturating_sub(c)
    } else {
        room / 2
    };
    let col_w = room.saturating_sub(row_w);
    format!(
        "{at}   row {} · col {}",
        clip_middle(row, row_w),
        clip_middle(col, col_w)
    )
}

/// `name` without the prefix all of `labels` share (it is one of them), when some is left.
fn without_shared_prefix<'a>(name: &'a str, labels: &[String]) -> &'a str {
    match shared_prefix(labels.iter().map(String::as_str)) {
        Some(cut) if cut < name.len() && name.is_char_boundary(cut) => &name[cut..],
        _ => name,
    }
}

/// The grid's columns as its header names them.
struct Columns {
    /// What begins where, as (column, name): see `column_marks`.
    marks: Vec<(usize, String)>,
    /// The ordinal of the first mark among all of the matrix's (`spaced` counts from 0).
    ordinal: usize,
    /// The first column in view.
    first: usize,
    /// How many screen columns each column takes.
    width: usize,
    /// The cursor's column.
    cursor: usize,
}

/// The column names on the header line `area`, over the grid that begins `gutter` columns in:
/// each where its column starts, every k-th when they do not all fit — as many as fit, never
/// none. Names too long for that are written shorter when it shows more of them: without the
/// prefix they share (`digit=0 1 2 …`, the prefix once, in the gutter), or cut to what a
/// column holds (`ama hap rel`) when that still tells them apart.
fn draw_column_names(frame: &mut Frame, area: Rect, gutter: u16, s: &State, cols: &Columns) {
    let [gutter_area, names_area] =
        Layout::horizontal([Constraint::Length(gutter), Constraint::Fill(1)]).areas(area);
    let room = names_area.width as usize;
    let in_view = cols.first..cols.first + room.div_ceil(cols.width.max(1));
    // (prefix given in the gutter, names), the fullest first
    let mut ways = vec![(String::new(), cols.marks.clone())];
    if let Some((p, rest)) = common_prefix(&cols.marks) {
        if p.chars().count() <= usize::from(gutter) {
            ways.push((p, rest));
        }
    }
    let (p, fullest) = ways.last().cloned().unwrap_or_default();
    if let Some(cut) = cut_apart(&fullest, cols.width.saturating_sub(1)) {
        ways.push((p, cut));
    }
    // the way that shows the most names; the fuller one when two show as many
    let (prefix, shown) = ways
        .into_iter()
        .map(|(p, marks)| (p, spaced(&marks, cols.ordinal, in_view.clone(), cols.width)))
        .reduce(|best, way| {
            if way.1.len() > best.1.len() {
                way
            } else {
                best
            }
        })
        .unwrap_or_default();
    let mut spans: Vec<Span> = Vec::new();
    let mut x = 0usize;
    for (c, name) in shown {
        let at = (c - cols.first) * cols.width;
        spans.push(Span::raw(" ".repeat(at.saturating_sub(x))));
        let style = if c == cols.cursor {
            s.theme.key
        } else {
            s.theme.dim
        };
        let text = clip(&name, room.saturating_sub(at));
        x = at + text.chars().count();
        spans.push(Span::styled(text, style));
    }
    frame.render_widget(
        Paragraph::new(Line::styled(prefix, s.theme.dim)).alignment(Alignment::Right),
        gutter_area,
    );
    frame.render_widget(Paragraph::new(Line::from(spans)), names_area);
}

/// The prefix every name of `marks` shares, up to its last separator (`digit=`, `p_`), and the
/// marks with what follows it; `None` when they share none.
fn common_prefix(marks: &[(usize, String)]) -> Option<(String, Vec<(usize, String)>)> {
    let first = &marks.first()?.1;
    let cut = shared_prefix(marks.iter().map(|(_, name)| name.as_str()))?;
    let rest = marks
        .iter()
        .map(|(c, name)| (*c, name[cut..].to_string()))
        .collect::<Vec<_>>();
    rest.iter()
        .all(|(_, r)| !r.is_empty())
        .then(|| (first[..cut].to_string(), rest))
}

/// The bytes of the prefix every name shares, up to its last separator (`digit=`, `target_`);
/// None when they share none.
fn shared_prefix<'a>(mut names: impl Iterator<Item = &'a str>) -> Option<usize> {
    let first = names.next()?;
    // in bytes of `first`
    let shared = names
        .map(|name| {
            first
                .char_indices()
                .zip(name.chars())
                .take_while(|((_, a), b)| a == b)
                .last()
                .map_or(0, |((i, a), _)| i + a.len_utf8())
        })
        .min()
        .unwrap_or(first.len());
    first[..shared]
        .char_indices()
        .rfind(|(_, ch)| !ch.is_alphanumeric())
        .map(|(i, ch)| i + ch.len_utf8())
}

/// The marks with their names cut to `n` characters, when that leaves at least three and still
/// tells them all apart (and cuts any).
fn cut_apart(marks: &[(usize, String)], n: usize) -> Option<Vec<(usize, String)>> {
    let cut: Vec<(usize, String)> = marks
        .iter()
        .map(|(c, name)| (*c, name.chars().take(n).collect()))
        .collect();
    let names: std::collections::HashSet<&String> = cut.iter().map(|(_, n)| n).collect();
    let cuts_any = marks.iter().any(|(_, name)| name.chars().count() > n);
    (n >= 3 && cuts_any && names.len() == marks.len()).then_some(cut)
}

/// What begins at the grid's columns `near` (blocks of `kc`), as (column, name), and the
/// ordinal of the first among all the grid's marks: each column's first entry, for the columns
/// near the view only (a coefficient matrix may have 10⁵ columns, drawn every frame); in an
/// overview of named blocks (a multi-view metric's views), each block where it begins.
fn column_marks(
    cols: &axes::Axis,
    kc: usize,
    near: std::ops::Range<usize>,
) -> (usize, Vec<(usize, String)>) {
    if kc == 1 || cols.blocks.is_empty() {
        let last = cols.labels.len().saturating_sub(1);
        let first = near.start;
        let marks = near
            .map(|c| (c, cols.labels[(c * kc).min(last)].clone()))
            .collect();
        return (first, marks);
    }
    let mut marks: Vec<(usize, String)> = Vec::new();
    for (start, (name, _)) in cols.block_starts().into_iter().zip(&cols.blocks) {
        match marks.last_mut() {
            // blocks narrower than a column begin in the same one
            Some((c, names)) if *c == start / kc => {
                names.push('/');
                names.push_str(name);
            }
            _ => marks.push((start / kc, name.clone())),
        }
    }
    (0, marks)
}

/// The marks in columns `in_view` (each `w` screen columns wide) that are drawn: every k-th,
/// for the smallest k with which each name ends a space before the next begins. k counts from
/// the grid's first mark (the first of `marks` is the `ordinal`-th), not the first in view, so
/// the names stay put as the view scrolls.
fn spaced(
    marks: &[(usize, String)],
    ordinal: usize,
    in_view: std::ops::Range<usize>,
    w: usize,
) -> Vec<(usize, String)> {
    let visible: Vec<(usize, &(usize, String))> = marks
        .iter()
        .enumerate()
        .map(|(i, m)| (ordinal + i, m))
        .filter(|(_, (c, _))| in_view.contains(c))
        .collect();
    let stand_apart =
        |a: &(usize, String), b: &(usize, String)| a.0 * w + a.1.chars().count() < b.0 * w;
    (1..=ordinal + marks.len())
        .map(|k| {
            visible
                .iter()
                .filter(|(i, _)| i % k == 0)
                .map(|(_, m)| *m)
                .collect::<Vec<_>>()
        })
        .find(|kept| !kept.is_empty() && kept.windows(2).all(|p| stand_apart(p[0], p[1])))
        .map(|kept| kept.into_iter().cloned().collect())
        .unwrap_or_default()
}

/// The width of the row labels' column: the longest label (at most 14 characters) and a space.
fn label_width(labels: &[String]) -> u16 {
    labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1)
        .min(14) as u16
        + 1
}

/// The label of the overview's line whose upper half is block row `upper` (of `kr` rows): the
/// name of the rows its two halves cover together.
fn overview_line_label(rows: &axes::Axis, kr: usize, upper: usize) -> String {
    rows.span(upper * kr..(upper + 2) * kr)
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
