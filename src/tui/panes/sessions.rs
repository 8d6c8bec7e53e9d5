//! Sessions pane: the runs table — every saved session with its metrics and hyperparameters as
//! columns, sorted and filtered — open, rename, delete with confirmation, runs marked for the
//! Charts overlay, and two of them compared side by side.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::super::state::{mixed_tasks, Column, State};
use super::super::widgets::{clip, file_name, fmt_num};
use super::{block, error_or_hint, fit_title};
use ovk_core::session::{Listing, SessionRecord};

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let ss = &s.sessions;
    let comparing = ss.compare.is_some() || ss.comparison.is_some();
    let (list_area, cmp_area) = if comparing || ss.predictions.is_some() {
        let [a, b] =
            Layout::vertical([Constraint::Percentage(40), Constraint::Fill(1)]).areas(area);
        (a, Some(b))
    } else {
        (area, None)
    };
    let rows = ss.runs.rows(&ss.list);
    let ok = ss
        .list
        .iter()
        .filter(|l| matches!(l, Listing::Ok(_)))
        .count();
    // Where the runs are, the fullest first: the store's parents give way before the rest.
    let places = match (&ss.root, &ss.error) {
        (_, Some(e)) => vec![format!("Runs — {}", clip(e, 60))],
        (Some(r), None) => vec![
            format!("Runs in {}", r.display()),
            format!("Runs in …/{}", file_name(r)),
            "Runs".into(),
        ],
        _ => vec!["Runs".into()],
    };
    let mut tail = String::new();
    if !ss.runs.filter.is_empty() {
        tail.push_str(&format!(
            " · {}/{ok} match '{}'",
            rows.iter()
                .filter(|&&i| matches!(ss.list[i], Listing::Ok(_)))
                .count(),
            clip(&ss.runs.filter, 16)
        ));
    }
    if !ss.runs.marked.is_empty() {
        tail.push_str(&format!(" · {} marked", ss.runs.marked.len()));
    }
    if ss.runs.grouped {
        tail.push_str(&format!(" · {} row groups", ss.runs.groups(&ss.list)));
    }
    if mixed_tasks(&ss.list) {
        if let Some(f) = ss.selected().and_then(|s| s.key_metric.as_ref()) {
            tail.push_str(&format!(" · {} runs' columns", f.0));
        }
    }
    let titles: Vec<String> = places.iter().map(|p| format!("{p}{tail}")).collect();
    if ss.list.is_empty() {
        let hint = "No runs yet — every fit is recorded here the moment it ends (s keeps it).";
        let msg = error_or_hint(s, ss.error.as_deref(), hint);
        frame.render_widget(
            Paragraph::new(msg).block(block(fit_title(list_area, &titles), &s.theme, true)),
            list_area,
        );
        draw_below(frame, cmp_area, s);
        return;
    }
    let [table_area, keys_area] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(list_area);
    // The longest that fits whole; ? lists the rest.
    let hint = [
        "○ not kept ✕ cancelled · Space mark · c compare · [ ] column · o sort · = group by rows · / filter · Enter open · p predict · n rename · d delete · P prune",
        "○ unkept ✕ cancelled · Space mark · c compare · o sort · / filter · Enter open · p predict · n rename · P prune · ? more",
        "○ unkept ✕ cancelled · Space mark · c compare · o sort · Enter open · p predict",
    ]
    .into_iter()
    .find(|h| h.chars().count() <= area.width as usize)
    .unwrap_or("○ unkept ✕ cancelled · Space mark · c compare · Enter open · p predict");
    let key_line = match rows.get(ss.cursor).map(|&i| &ss.list[i]) {
        Some(Listing::Corrupt { path, reason }) => Line::styled(
            clip(
                &format!("{}: unreadable: {reason}", path.display()),
                area.width as usize,
            ),
            s.theme.error,
        ),
        // Why its test metrics carry a dagger, when the cursor is on such a run.
        Some(Listing::Ok(sum)) if sum.optimistic.is_some() => Line::styled(
            clip(
                &format!(
                    "† optimistic test metrics: {}",
                    sum.optimistic.as_deref().unwrap_or_default()
                ),
                area.width as usize,
            ),
            s.theme.warn,
        ),
        _ => Line::styled(clip(hint, area.width as usize), s.theme.dim),
    };
    frame.render_widget(Paragraph::new(key_line), keys_area);
    draw_table(frame, table_area, s, &rows, &titles);
    draw_below(frame, cmp_area, s);
}

/// What the lower part shows, when open: a comparison of runs or a model's predictions.
fn draw_below(frame: &mut Frame, area: Option<Rect>, s: &State) {
    let (Some(area), ss) = (area, &s.sessions) else {
        return;
    };
    if let Some(c) = &ss.comparison {
        draw_comparison(frame, area, s, c);
    } else if let Some(pair) = &ss.compare {
        draw_compare(frame, area, s, &pair.0, &pair.1);
    }
    if let Some(p) = &ss.predictions {
        super::predictions::draw(frame, area, s, p);
    }
}

/// The runs table: the name pinned on the left, the other columns scrolled so the column
/// under the header cursor is always in view.
/// `titles` are the table's title choices before the column it is at.
fn draw_table(frame: &mut Frame, area: Rect, s: &State, rows: &[usize], titles: &[String]) {
    let ss = &s.sessions;
    let cols = ss.columns();
    let sel = ss.runs.column.min(cols.len().saturating_sub(1));
    // Borders, highlight symbol, marks, and the spacing after each column.
    let room = area.width.saturating_sub(2 + 2 + 3) as i32;
    let name_w = cols[0].width().min((room / 3).max(8) as u16);
    let mut left = room - name_w as i32 - 1;
    let widths: Vec<i32> = cols.iter().map(|c| c.width() as i32 + 1).collect();
    let mut first = 1usize;
    if sel > 0 {
        // The widest window that ends at `sel`, then as many to its right as fit.
        let mut used = 0;
        let mut i = sel;
        while i >= 1 && used + widths[i] <= left {
            used += widths[i];
            first = i;
            i -= 1;
        }
    }
    let mut shown = vec![0usize];
    for (i, w) in widths.iter().enumerate().skip(first) {
        if *w > left {
            break;
        }
        left -= w;
        shown.push(i);
    }
    let arrow = |c: &Column| match &ss.runs.sort {
        Some((k, desc)) if k == c => {
            if *desc {
                "▼"
            } else {
                "▲"
            }
        }
        _ => "",
    };
    let mut header = vec![Cell::from("")];
    for &i in &shown {
        let text = format!("{}{}", cols[i].title(), arrow(&cols[i]));
        let style = if i == sel {
            s.theme.selected
        } else {
            s.theme.title
        };
        header.push(Cell::from(Span::styled(text, style)));
    }
    let more = |n: usize| {
        if n > 0 {
            format!(" +{n}→")
        } else {
            String::new()
        }
    };
    let hidden_right = cols.len() - 1 - shown.last().copied().unwrap_or(0);
    let at = format!("column {}/{}{}", sel + 1, cols.len(), more(hidden_right));
    let titles: Vec<String> = titles.iter().map(|t| format!("{t} — {at}")).collect();
    let title = fit_title(area, &titles);
    let body = rows.iter().map(|&i| match &ss.list[i] {
        Listing::Ok(sum) => {
            let mark = if ss.runs.is_marked(sum) { "*" } else { " " };
            let (state, style) = match (sum.status.is_finished(), sum.kept) {
                (false, _) => ("✕", s.theme.warn),
                (true, false) => ("○", s.theme.dim),
                (true, true) => (" ", s.theme.base),
            };
            let mut cells = vec![Cell::from(Line::from(vec![
                Span::styled(mark, s.theme.key),
                Span::styled(state, style),
            ]))];
            cells.extend(shown.iter().map(|&c| Cell::from(cols[c].cell(sum))));
            let row = Row::new(cells);
            if sum.status.is_finished() {
                row
            } else {
                row.style(s.theme.dim)
            }
        }
        // The reason is on the key line when the cursor is on it (a cell is too narrow).
        Listing::Corrupt { path, .. } => Row::new(vec![
            Cell::from(" "),
            Cell::from(Span::styled(
                path.file_name().map_or_else(
                    || path.display().to_string(),
                    |f| f.to_string_lossy().into(),
                ),
                s.theme.error,
            )),
            Cell::from(Span::styled("unreadable", s.theme.error)),
        ]),
    });
    let mut constraints = vec![Constraint::Length(2), Constraint::Length(name_w)];
    constraints.extend(
        shown
            .iter()
            .skip(1)
            .map(|&i| Constraint::Length(cols[i].width())),
    );
    let table = Table::new(body, constraints)
        .header(Row::new(header))
        .block(block(title, &s.theme, true))
        .row_highlight_style(s.theme.selected)
        .highlight_symbol("> ");
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                format!(
                    "no run matches '{}' — Esc clears the filter",
                    ss.runs.filter
                ),
                s.theme.warn,
            ))
            .block(block("Runs", &s.theme, true)),
            area,
        );
        return;
    }
    let mut st = TableState::default().with_selected(Some(ss.cursor.min(rows.len() - 1)));
    frame.render_stateful_widget(table, area, &mut st);
}

/// The two runs in two columns, one row per setting, parameter and test metric; rows that
/// differ are marked `≠` (and highlighted). Each parameter has its own row: joined on one line
/// per run, the two runs' parameters ran together and lost their ends.
fn draw_compare(frame: &mut Frame, area: Rect, s: &State, a: &SessionRecord, b: &SessionRecord) {
    let both = |f: &dyn Fn(&SessionRecord) -> String| (f(a), f(b));
    let mut rows: Vec<(String, Option<(String, String)>)> = vec![
        ("name".into(), Some(both(&|r| r.name.clone()))),
        ("created".into(), Some(both(&|r| r.created.clone()))),
        (
            "dataset".into(),
            Some(both(&|r| r.dataset.path.display().to_string())),
        ),
        ("method".into(), Some(both(&|r| r.method.clone()))),
        (
            "kernel".into(),
            Some(both(&|r| r.kernel.resolved.to_string())),
        ),
        ("params".into(), None),
    ];
    let mut keys: Vec<&String> = a.params.0.keys().chain(b.params.0.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let v = |r: &SessionRecord| {
            r.params
                .0
                .get(k)
                .map_or_else(|| "—".into(), |v| v.to_string())
        };
        rows.push((format!("  {k}"), Some(both(&v))));
    }
    rows.extend([
        (
            "iterations".into(),
            Some(both(&|r| r.iterations.to_string())),
        ),
        (
            "objective".into(),
            Some(both(&|r| r.objective.map_or_else(|| "—".into(), fmt_num))),
        ),
        (
            "fit time".into(),
            Some(both(&|r| format!("{:.2} s", r.timings.fit_s))),
        ),
        ("test".into(), None),
    ]);
    let mut keys: Vec<&String> = a.metrics.test.keys().chain(b.metrics.test.keys()).collect();
    keys.sort();
    keys.dedup();
    for k in keys {
        let v = |r: &SessionRecord| {
            r.metrics
                .test
                .get(k)
                .map_or_else(|| "—".into(), |v| fmt_num(*v))
        };
        rows.push((format!("  {k}"), Some(both(&v))));
    }
    let key_w = rows.iter().map(|r| r.0.chars().count()).max().unwrap_or(0) as u16;
    // Rows beyond the box scroll (PgUp PgDn); the title says which are shown.
    let visible = area.height.saturating_sub(2) as usize;
    let first = s.scroll.compare.min(rows.len().saturating_sub(visible));
    let mut title = "Compare (Esc closes; ≠ differs)".to_string();
    if rows.len() > visible {
        title.push_str(&format!(
            " · rows {}–{} of {} · PgUp PgDn",
            first + 1,
            (first + visible).min(rows.len()),
            rows.len()
        ));
    }
    let table_rows = rows.into_iter().skip(first).map(|(k, v)| {
        let Some((x, y)) = v else {
            return Row::new(vec![
                Cell::from(""),
                Cell::from(Span::styled(k, s.theme.dim)),
            ]);
        };
        let (mark, style) = if x != y {
            ("≠", s.theme.warn)
        } else {
            ("", s.theme.base)
        };
        Row::new(vec![
            Cell::from(Span::styled(mark, s.theme.warn)),
            Cell::from(Span::styled(k, s.theme.dim)),
            Cell::from(Span::styled(x, style)),
            Cell::from(Span::styled(y, style)),
        ])
    });
    frame.render_widget(
        Table::new(
            table_rows,
            [
                Constraint::Length(1),
                Constraint::Length(key_w),
                Constraint::Fill(1),
                Constraint::Fill(1),
            ],
        )
        .column_spacing(2)
        .block(block(title, &s.theme, false)),
        area,
    );
}

/// The marked runs side by side as `ovk compare` prints them (every metric with the best
/// starred, per-output metrics, paired tests over shared folds), scrolled by PgUp PgDn; beside
/// it, for two runs of the same outputs, the difference of their output kernels as a heatmap.
fn draw_comparison(
    frame: &mut Frame,
    area: Rect,
    s: &State,
    c: &ovk_core::session::compare::Comparison,
) {
    let text = crate::cli::compare::render(c);
    let lines: Vec<&str> = text.lines().collect();
    let area = match &c.kernel_difference {
        Some(d) if area.width >= 100 => {
            let [table, heat] =
                Layout::horizontal([Constraint::Fill(1), Constraint::Length(36)]).areas(area);
            draw_difference(frame, heat, s, d);
            table
        }
        _ => area,
    };
    let visible = area.height.saturating_sub(2) as usize;
    let first = s.scroll.compare.min(lines.len().saturating_sub(visible));
    let mut title = format!("Compare {} runs (* best · Esc closes)", c.runs.len());
    if lines.len() > visible {
        title.push_str(&format!(
            " · lines {}–{} of {} · PgUp PgDn",
            first + 1,
            (first + visible).min(lines.len()),
            lines.len()
        ));
    }
    let title = fit_title(area, &[title, format!("Compare {} runs", c.runs.len())]);
    let body: Vec<Line> = lines
        .iter()
        .skip(first)
        .map(|l| {
            if l.contains('*') {
                Line::raw(l.to_string())
            } else {
                Line::styled(l.to_string(), s.theme.dim)
            }
        })
        .collect();
    frame.render_widget(
        Paragraph::new(body).block(block(title, &s.theme, false)),
        area,
    );
}

/// Run 1's output kernel minus run 2's, fitted to the area (blue: run 2 larger, red: run 1).
fn draw_difference(frame: &mut Frame, area: Rect, s: &State, d: &ndarray::Array2<f64>) {
    use super::super::widgets::heatmap::{cell_size, fit_zoom, overview, Heatmap};
    let max = d.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    let b = block(
        format!("L₁ − L₂ · max |Δ| {}", fmt_num(max)),
        &s.theme,
        false,
    );
    let inner = b.inner(area);
    frame.render_widget(b, area);
    let (level, blocks) = fit_zoom(inner, d.nrows(), d.ncols());
    let shown = if blocks == (1, 1) {
        d.clone()
    } else {
        overview(d, blocks)
    };
    frame.render_widget(
        Heatmap {
            matrix: &shown,
            cell: cell_size(level),
            cursor: None,
            origin: (0, 0),
            theme: &s.theme,
        },
        inner,
    );
}
