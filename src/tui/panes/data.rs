//! Data pane: the folder's tables, a preview of the open one (dtypes, missing counts,
//! min/max/mean per column, first rows), column roles, and the split.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, List, ListItem, ListState, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use super::super::state::{DataFocus, Median, Role, State};
use super::super::widgets::{clip, clip_middle, file_name, fmt_num, heatmap};
use super::{block, draw_note, error_or_hint, fit_title};
use ovk_core::data::{Missing, Table as DataTable, TargetScale};

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    if s.replay.is_some() {
        return replay_summary(frame, area, s);
    }
    // The file list stays in view whatever has the focus: it is where another file is picked.
    let files_w = (area.width / 4).clamp(18, 30);
    let beside_files =
        |a: Rect| Layout::horizontal([Constraint::Length(files_w), Constraint::Fill(1)]).areas(a);
    let open = s.data.table.as_ref().filter(|_| s.data.loading.is_none());
    match open {
        // Narrow: the list shares the columns' band, so the lines of text around it span the
        // whole width and wrap as little as they can.
        Some(t) if area.width < WIDE => draw_table(frame, area, s, t, Some(files_w)),
        Some(t) => {
            let [files, table] = beside_files(area);
            draw_files(frame, files, s);
            draw_table(frame, table, s, t, None);
        }
        None => {
            let [files, note] = beside_files(area);
            draw_files(frame, files, s);
            draw_no_table(frame, note, s);
        }
    }
}

/// From this width on, the file list runs down the whole left side.
const WIDE: u16 = 110;

fn draw_files(frame: &mut Frame, area: Rect, s: &State) {
    let d = &s.data;
    let items: Vec<ListItem> = d
        .entries
        .iter()
        .map(|e| {
            let style = if e.is_dir { s.theme.key } else { s.theme.base };
            ListItem::new(Span::styled(e.name.clone(), style))
        })
        .collect();
    // The folder's own name matters most: its parents give way first.
    let last = file_name(&d.dir);
    let title = fit_title(
        area,
        &[
            format!("Files — {}", d.dir.display()),
            format!("Files — …/{last}"),
            format!("Files — {last}"),
            last,
        ],
    );
    let list = List::new(items)
        .block(block(title, &s.theme, d.focus == DataFocus::Files))
        .highlight_style(s.theme.selected)
        .highlight_symbol("> ");
    let mut st =
        ListState::default().with_selected((!d.entries.is_empty()).then_some(d.file_cursor));
    frame.render_stateful_widget(list, area, &mut st);
}

fn role_style(s: &State, r: Role) -> ratatui::style::Style {
    match r {
        Role::Feature => s.theme.base,
        Role::Target => s.theme.warn,
        Role::Class => s.theme.key,
        Role::View => s.theme.series[2],
        Role::Ignore => s.theme.dim,
        Role::TestMarker => s.theme.series[1],
    }
}

/// In place of a table: the one being read, or what to do (or why the last one failed).
fn draw_no_table(frame: &mut Frame, area: Rect, s: &State) {
    let d = &s.data;
    if let Some(p) = &d.loading {
        let name = p.file_name().unwrap_or(p.as_os_str()).to_string_lossy();
        return draw_note(
            frame,
            area,
            s,
            ("Preview", false),
            &format!("reading {name}…"),
        );
    }
    let hint = "Select a CSV or Parquet file and press Enter to preview it.";
    let msg = error_or_hint(s, d.load_error.as_deref(), hint);
    frame.render_widget(
        Paragraph::new(msg)
            .wrap(Wrap { trim: true })
            .block(block("Preview", &s.theme, false)),
        area,
    );
}

/// The open table: the file line, the columns (with the file list `files_w` wide beside them,
/// when given), the split lines and the first rows.
fn draw_table(frame: &mut Frame, area: Rect, s: &State, t: &DataTable, files_w: Option<u16>) {
    let d = &s.data;
    let small = area.height < 30;
    let head_rows = if small { 3 } else { 7 }.min(t.head.len());
    let n_feat = d.features().len();
    let file = t.path.file_name().map_or_else(
        || t.path.display().to_string(),
        |f| f.to_string_lossy().into(),
    );
    let mut line = vec![
        Span::styled(file, s.theme.title),
        Span::raw(format!(
            "  {} rows × {} cols · {} features, {} targets, class {}",
            t.n_rows,
            t.columns.len(),
            n_feat,
            d.targets().len(),
            d.class().unwrap_or_else(|| "—".into())
        )),
    ];
    if t.sparse > 0 {
        line.push(Span::styled(
            format!(" · {} columns kept sparse", t.sparse),
            s.theme.dim,
        ));
    }
    if let Some(src) = &d.roles_source {
        line.push(Span::styled(format!(" · {src}"), s.theme.dim));
    }
    // The file line carries the notes on guessed roles (encoded, ignored columns), and the
    // split lines a reason the run is refused: both get every row they wrap to.
    let info_text = Paragraph::new(Line::from(line)).wrap(Wrap { trim: true });
    let split_text = Paragraph::new(split_lines(s)).wrap(Wrap { trim: true });
    let rows_of = |p: &Paragraph| p.line_count(area.width) as u16;
    let [info, middle, split, head] = Layout::vertical([
        Constraint::Length(rows_of(&info_text).clamp(1, 4)),
        Constraint::Fill(1),
        Constraint::Length(rows_of(&split_text)),
        Constraint::Length(head_rows as u16 + 3),
    ])
    .areas(area);
    frame.render_widget(info_text, info);
    frame.render_widget(split_text, split);
    let [files, cols] = Layout::horizontal([
        Constraint::Length(files_w.unwrap_or(0)),
        Constraint::Fill(1),
    ])
    .areas(middle);
    if files_w.is_some() {
        draw_files(frame, files, s);
    }
    draw_columns(frame, cols, s, t);

    // First rows: the columns around the selected one that fit.
    let inner_w = head.width.saturating_sub(2) as usize;
    let col_w = 9usize;
    let fit = (inner_w / (col_w + 1)).max(1);
    let start = heatmap::offset(d.col_cursor, fit, t.columns.len());
    let shown: Vec<usize> = (start..t.columns.len()).take(fit).collect();
    let header = Row::new(
        shown
            .iter()
            .map(|&j| clip_middle(&t.columns[j].name, col_w)),
    )
    .style(s.theme.title);
    let rows = t.head.iter().take(head_rows).map(|r| {
        Row::new(
            shown
                .iter()
                .map(|&j| clip(r.get(j).map_or("", String::as_str), col_w)),
        )
    });
    let widths = vec![Constraint::Length(col_w as u16); shown.len()];
    frame.render_widget(
        Table::new(rows, widths).header(header).block(block(
            format!("First {head_rows} rows"),
            &s.theme,
            false,
        )),
        head,
    );
}

fn replay_summary(frame: &mut Frame, area: Rect, s: &State) {
    let Some(f) = &s.result else { return };
    let r = &f.outcome.record;
    let c = &r.config.data;
    let lines = vec![
        Line::from(vec![
            Span::styled("dataset   ", s.theme.dim),
            Span::raw(r.dataset.path.display().to_string()),
        ]),
        Line::from(vec![
            Span::styled("sha256    ", s.theme.dim),
            Span::raw(r.dataset.sha256.clone()),
        ]),
        Line::from(vec![
            Span::styled("rows      ", s.theme.dim),
            Span::raw(r.dataset.rows.to_string()),
        ]),
        Line::from(vec![
            Span::styled("task      ", s.theme.dim),
            Span::raw(r.task.name()),
        ]),
        Line::from(vec![
            Span::styled("features  ", s.theme.dim),
            Span::raw(format!(
                "{} ({})",
                r.feature_names.len(),
                clip(&r.feature_names.join(", "), 80)
            )),
        ]),
        Line::from(vec![
            Span::styled("outputs   ", s.theme.dim),
            Span::raw(clip(&r.output_names.join(", "), 100)),
        ]),
        Line::from(vec![
            Span::styled("split     ", s.theme.dim),
            Span::raw(format!(
                "{}, seed {}, {} train / {} test rows",
                c.split_description(),
                c.seed,
                r.split.train.len(),
                r.split.test.len()
            )),
        ]),
        Line::from(vec![
            Span::styled("scaling   ", s.theme.dim),
            Span::raw(match c.target_scale {
                TargetScale::None => r.scale.name().to_string(),
                t => format!("{} features, {} targets", r.scale.name(), t.name()),
            }),
        ]),
        Line::from(vec![
            Span::styled("missing   ", s.theme.dim),
            Span::raw(match c.missing() {
                Missing::Drop => "rows dropped",
                Missing::Impute => "imputed (mean / most frequent)",
                Missing::Refuse => "refused",
            }),
        ]),
    ];
    let mut lines = lines;
    for k in c.categories.iter().flatten() {
        lines.push(Line::from(vec![
            Span::styled("one-hot   ", s.theme.dim),
            Span::raw(clip(
                &format!("{} → {}", k.column, k.levels.join(", ")),
                100,
            )),
        ]));
    }
    frame.render_widget(
        Paragraph::new(lines).block(block("Data of the session (read-only)", &s.theme, true)),
        area,
    );
}

/// The stats of the columns table, in the order they give way when it is narrow (last first).
const STATS: [&str; 4] = ["missing", "min", "max", "mean"];

/// The columns with their dtype, role and stats. Every column is as wide as its widest cell,
/// so the stats fit beside the file list at 80 columns; whole names (up to 40 characters) come
/// before stats, which give way from the right.
fn draw_columns(frame: &mut Frame, area: Rect, s: &State, t: &DataTable) {
    let d = &s.data;
    let opt = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "—".into());
    // The rows on screen (the selection kept in view, as the table itself scrolls), and the
    // rows the widths are measured on: all of them, unless there are so many (a sparse block
    // of 47 236 features) that formatting them took 0.2 s a frame.
    let visible = area.height.saturating_sub(3).max(1) as usize;
    let start = d.col_cursor.saturating_sub(visible - 1);
    let window = start..(start + visible).min(t.columns.len());
    let measured = if t.columns.len() <= MEASURE_ALL_UP_TO {
        0..t.columns.len()
    } else {
        window.clone()
    };
    let role_of = |i: usize| {
        let c = &t.columns[i];
        let role = d.roles.get(i).copied().unwrap_or(Role::Feature);
        let text = match (d.view_name(i), super::super::roles::one_hot(c)) {
            (Some(v), _) => format!("view {v}"),
            (None, Some(k)) if matches!(role, Role::Feature) => format!("one-hot {k}"),
            (None, _) => role.label().to_string(),
        };
        (role, text)
    };
    let stats_of = |i: usize| {
        let c = &t.columns[i];
        [c.missing.to_string(), opt(c.min), opt(c.max), opt(c.mean)]
    };
    let roles: Vec<(Role, String)> = measured.clone().map(role_of).collect();
    let stats: Vec<[String; 4]> = measured.clone().map(stats_of).collect();
    let at = |i: usize| i - measured.start;
    let columns = &t.columns[measured.clone()];
    let dtype_w = widest("dtype", columns.iter().map(|c| &c.dtype)).min(6);
    let role_w = widest("role", roles.iter().map(|r| &r.1)).min(13);
    let stat_w: Vec<usize> = (0..STATS.len())
        .map(|k| widest(STATS[k], stats.iter().map(|r| &r[k])))
        .collect();
    let name_need = widest("column", columns.iter().map(|c| &c.name));
    // borders and the highlight symbol; each column after the name has a gap before it
    let inner = area.width.saturating_sub(4) as usize;
    let others =
        |n: usize| 1 + dtype_w + 1 + role_w + stat_w[..n].iter().map(|w| w + 1).sum::<usize>();
    let mut shown = STATS.len();
    while shown > 0 && inner.saturating_sub(others(shown)) < name_need.min(40) {
        shown -= 1;
    }
    let name_w = inner.saturating_sub(others(shown)).min(name_need).max(6);
    let mut head_cells = vec!["column", "dtype", "role"];
    head_cells.extend(&STATS[..shown]);
    let header = Row::new(head_cells).style(s.theme.title);
    let rows = window.clone().map(|i| {
        let c = &t.columns[i];
        let (role, role_text) = &roles[at(i)];
        let missing_style = if c.missing > 0 {
            s.theme.warn
        } else {
            s.theme.base
        };
        let name = if d.marked.get(i).copied().unwrap_or(false) {
            Cell::from(Span::styled(
                clip_middle(&format!("▪{}", c.name), name_w),
                s.theme.key,
            ))
        } else {
            Cell::from(clip_middle(&c.name, name_w))
        };
        let mut cells = vec![
            name,
            Cell::from(clip(&c.dtype, dtype_w)),
            Cell::from(Span::styled(clip(role_text, role_w), role_style(s, *role))),
        ];
        cells.extend(
            stats[at(i)][..shown]
                .iter()
                .enumerate()
                .map(|(k, v)| match k {
                    0 => Cell::from(Span::styled(v.clone(), missing_style)),
                    _ => Cell::from(v.clone()),
                }),
        );
        Row::new(cells)
    });
    let mut widths = vec![name_w, dtype_w, role_w];
    widths.extend(&stat_w[..shown]);
    let title = match STATS.len() - shown {
        0 => fit_title(
            area,
            &[
                "Columns — f feature · t target · c class · v view · x ignore · T test marker"
                    .into(),
                "Columns — f t c v x T set the role".into(),
                "Columns".into(),
            ],
        ),
        hidden => fit_title(
            area,
            &[
                format!(
                    "Columns — f t c v x T set the role · {hidden} stat columns hidden (widen)"
                ),
                format!("Columns — f t c v x T set the role · {hidden} stats hidden"),
                format!("Columns — f t c v x T · {hidden} stats hidden"),
                "Columns".into(),
            ],
        ),
    };
    let table = Table::new(rows, widths.iter().map(|&w| Constraint::Length(w as u16)))
        .header(header)
        .block(block(title, &s.theme, d.focus == DataFocus::Columns))
        .row_highlight_style(s.theme.selected)
        .highlight_symbol("> ");
    let mut st = TableState::default()
        .with_selected((!t.columns.is_empty()).then_some(d.col_cursor - start));
    frame.render_stateful_widget(table, area, &mut st);
}

/// Tables with at most this many columns measure every row for the widths (steady while
/// scrolling); wider ones measure the rows on screen.
const MEASURE_ALL_UP_TO: usize = 5000;

/// The width of a table column: its header's or its widest cell's, in characters.
fn widest<'a>(header: &str, cells: impl Iterator<Item = &'a String>) -> usize {
    cells
        .map(|c| c.chars().count())
        .fold(header.chars().count(), usize::max)
}

/// The split, missing-value and median lines under the columns.
fn split_lines(s: &State) -> Vec<Line<'static>> {
    let d = &s.data;
    // Checked only while the median is unknown: on a 47 236-column sparse block the check
    // costs a frame's time.
    let unready = matches!(d.median, Median::Unknown)
        .then(|| d.config().err())
        .flatten();
    let median = match &d.median {
        Median::Unknown => match &unready {
            Some(why) if d.table.is_some() => format!("not ready: {why}"),
            _ => "median σ: choose features and a target first".to_string(),
        },
        Median::Computing => "median σ: computing…".to_string(),
        Median::Value(v) => format!("median σ = {} on the training rows", fmt_num(*v)),
        Median::Failed(e) => format!("median σ unavailable: {e}"),
    };
    let median_style = match (&d.median, &unready) {
        (Median::Failed(_), _) | (Median::Unknown, Some(_)) => s.theme.warn,
        _ => s.theme.dim,
    };
    let scale = d.split.scale.name();
    let missing = d.missing_summary();
    let semi = s.method().is_some_and(|m| m.semi_supervised());
    let labeled = match d.split.labeled {
        Some(f) => format!("labeled {f:.2} < >"),
        None if semi => "labeled all < > (vvmr needs unlabeled rows)".into(),
        None => "labeled all < >".into(),
    };
    let test = match d.test_column() {
        Some(c) => format!("test rows: `{c}` ≠ 0"),
        None => format!("test {:.2} [ ]", d.split.test_fraction),
    };
    let mut lines = vec![
        Line::raw(format!(
            " {test} · seed {} {{ }} · scaling {scale} =",
            d.split.seed
        )),
        Line::raw(format!(
            " {missing} · {labeled} · targets {} y",
            d.split.target_scale.name()
        )),
        Line::styled(format!(" {median}"), median_style),
    ];
    lines.extend(views_line(s));
    lines
}

/// The views and their sizes, and the features outside every view (a multi-view method and
/// its baseline leave them out); with no view yet, how to make one — when it matters.
fn views_line(s: &State) -> Option<Line<'static>> {
    let d = &s.data;
    let sizes = d.view_sizes();
    let marked = d.marked.iter().filter(|m| **m).count();
    let multi = s.method().is_some_and(|m| m.multi_view());
    if sizes.is_empty() && marked == 0 && !multi {
        return None;
    }
    let mut text = if sizes.is_empty() {
        " views: none — Space marks columns, V puts them in a named view".to_string()
    } else {
        let list: Vec<String> = sizes.iter().map(|(v, k)| format!("{v} {k}")).collect();
        format!(" views: {}", list.join(" · "))
    };
    let outside = d.roles.iter().filter(|r| **r == Role::Feature).count();
    if !sizes.is_empty() && outside > 0 {
        let what = super::super::widgets::count(outside, "feature");
        text.push_str(&format!(
            " · {what} in no view (multi-view methods and their baseline leave them out)"
        ));
    }
    if marked > 0 {
        text.push_str(&format!(" · {marked} marked (V)"));
    }
    if !sizes.is_empty() {
        text.push_str(" · V n");
    }
    let style = if multi && sizes.is_empty() {
        s.theme.warn
    } else {
        s.theme.dim
    };
    Some(Line::styled(text, style))
}
