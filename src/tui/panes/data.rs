//! Data pane: the folder's tables, a preview of the open one (dtypes, missing counts,
//! min/max/mean per column, first rows), column roles, and the split.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, List, ListItem, ListState, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use super::super::state::{DataFocus, Median, Role, State};
use super::super::widgets::{clip, fmt_num, heatmap};
use super::{block, draw_note, error_or_hint};
use crate::data::Scale;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    if s.replay.is_some() {
        return replay_summary(frame, area, s);
    }
    // On a narrow screen the columns get the whole width while they are being edited
    // (Backspace or u brings the file list back).
    let files_w = if s.data.focus == DataFocus::Columns && area.width < 110 {
        0
    } else {
        (area.width / 4).clamp(18, 30)
    };
    let [files, preview] =
        Layout::horizontal([Constraint::Length(files_w), Constraint::Fill(1)]).areas(area);
    if files_w > 0 {
        draw_files(frame, files, s);
    }
    draw_preview(frame, preview, s);
}

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
    let title = format!("Files — {}", clip(&d.dir.display().to_string(), 20));
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

fn draw_preview(frame: &mut Frame, area: Rect, s: &State) {
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
    let Some(t) = &d.table else {
        let hint = "Select a CSV or Parquet file and press Enter to preview it.";
        let msg = error_or_hint(s, d.load_error.as_deref(), hint);
        frame.render_widget(
            Paragraph::new(msg)
                .wrap(Wrap { trim: true })
                .block(block("Preview", &s.theme, false)),
            area,
        );
        return;
    };
    let small = area.height < 30;
    let head_rows = if small { 3 } else { 7 }.min(t.head.len());
    // The file line carries the notes on guessed roles (encoded, ignored columns): all shown.
    let info_len =
        t.path.as_os_str().len() + 70 + d.roles_source.as_ref().map_or(0, |s| s.chars().count());
    let info_h = (info_len as u16)
        .div_ceil(area.width.saturating_sub(6).max(1))
        .clamp(1, 4);
    // The split lines wrap; a reason the run is refused is never cut.
    let split_h: u16 = split_lines(s)
        .iter()
        .map(|l| {
            (l.width() as u16)
                .div_ceil(area.width.saturating_sub(6).max(1))
                .max(1)
        })
        .sum();
    let [info, cols, split, head] = Layout::vertical([
        Constraint::Length(info_h),
        Constraint::Fill(1),
        Constraint::Length(split_h),
        Constraint::Length(head_rows as u16 + 3),
    ])
    .areas(area);
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
    if let Some(src) = &d.roles_source {
        line.push(Span::styled(format!(" · {src}"), s.theme.dim));
    }
    frame.render_widget(
        Paragraph::new(Line::from(line)).wrap(Wrap { trim: true }),
        info,
    );

    // Widths: the name gets what the numbers leave, numbers go first on a narrow screen.
    let inner = cols.width.saturating_sub(4) as usize;
    let role_w = 13usize;
    let mut stats: Vec<&str> = vec!["missing", "min", "max", "mean"];
    let name_need = t
        .columns
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let fixed = |stats: &[&str]| 7 + role_w + 1 + stats.len() * 10;
    // Whole names first (up to 40 characters): they are what the user reads to set roles.
    while !stats.is_empty() && inner.saturating_sub(fixed(&stats)) < name_need.min(40) {
        stats.pop();
    }
    let name_w = inner.saturating_sub(fixed(&stats)).min(name_need).max(6);
    let mut head_cells = vec!["column", "dtype", "role"];
    head_cells.extend(&stats);
    let header = Row::new(head_cells).style(s.theme.title);
    let opt = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "—".into());
    let rows = t.columns.iter().enumerate().map(|(i, c)| {
        let role = d.roles.get(i).copied().unwrap_or(Role::Feature);
        let role_text = match (d.view_name(i), super::super::roles::one_hot(c)) {
            (Some(v), _) => format!("view {v}"),
            (None, Some(k)) if matches!(role, Role::Feature) => format!("one-hot {k}"),
            (None, _) => role.label().to_string(),
        };
        let missing_style = if c.missing > 0 {
            s.theme.warn
        } else {
            s.theme.base
        };
        let mut cells = vec![
            Cell::from(clip(&c.name, name_w)),
            Cell::from(clip(&c.dtype, 6)),
            Cell::from(Span::styled(clip(&role_text, role_w), role_style(s, role))),
        ];
        for st in &stats {
            cells.push(match *st {
                "missing" => Cell::from(Span::styled(c.missing.to_string(), missing_style)),
                "min" => Cell::from(opt(c.min)),
                "max" => Cell::from(opt(c.max)),
                _ => Cell::from(opt(c.mean)),
            });
        }
        Row::new(cells)
    });
    let mut widths = vec![
        Constraint::Length(name_w as u16),
        Constraint::Length(6),
        Constraint::Length(role_w as u16),
    ];
    widths.extend(stats.iter().map(|_| Constraint::Length(9)));
    let hidden = 4 - stats.len();
    let title = if hidden > 0 {
        format!("Columns — f t c v x T set the role · {hidden} stat columns hidden (widen)")
    } else {
        "Columns — f feature · t target · c class · v view · x ignore · T test marker".into()
    };
    let table = Table::new(rows, widths)
        .header(header)
        .block(block(title, &s.theme, d.focus == DataFocus::Columns))
        .row_highlight_style(s.theme.selected)
        .highlight_symbol("> ");
    let mut st =
        TableState::default().with_selected((!t.columns.is_empty()).then_some(d.col_cursor));
    frame.render_stateful_widget(table, cols, &mut st);

    let lines = split_lines(s);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }), split);

    // First rows: the columns around the selected one that fit.
    let inner_w = head.width.saturating_sub(2) as usize;
    let col_w = 9usize;
    let fit = (inner_w / (col_w + 1)).max(1);
    let start = heatmap::offset(d.col_cursor, fit, t.columns.len());
    let shown: Vec<usize> = (start..t.columns.len()).take(fit).collect();
    let header =
        Row::new(shown.iter().map(|&j| clip(&t.columns[j].name, col_w))).style(s.theme.title);
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
            Span::raw(r.task.as_str()),
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
            Span::raw(format!("{:?}", r.scale).to_lowercase()),
        ]),
        Line::from(vec![
            Span::styled("missing   ", s.theme.dim),
            Span::raw(match (c.drop_missing, c.impute_missing) {
                (true, _) => "rows dropped",
                (_, true) => "imputed (mean / most frequent)",
                _ => "refused",
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

/// The split, missing-value and median lines under the columns.
fn split_lines(s: &State) -> Vec<Line<'static>> {
    let d = &s.data;
    let median = match &d.median {
        Median::Unknown => match d.config() {
            Err(why) if d.table.is_some() => format!("not ready: {why}"),
            _ => "median σ: choose features and a target first".to_string(),
        },
        Median::Computing => "median σ: computing…".to_string(),
        Median::Value(v) => format!("median σ = {} on the training rows", fmt_num(*v)),
        Median::Failed(e) => format!("median σ unavailable: {e}"),
    };
    let median_style = match (&d.median, d.config()) {
        (Median::Failed(_), _) | (Median::Unknown, Err(_)) => s.theme.warn,
        _ => s.theme.dim,
    };
    let scale = match d.split.scale {
        Scale::Standard => "standard",
        Scale::None => "none",
    };
    let missing = d.missing_summary();
    let semi = s.method().is_some_and(|m| m.name() == "vvmr");
    let labeled = match d.split.labeled {
        Some(f) => format!("labeled {f:.2} < >"),
        None if semi => "labeled all < > (vvmr needs unlabeled rows)".into(),
        None => "labeled all < >".into(),
    };
    let test = match d.test_column() {
        Some(c) => format!("test rows: `{c}` ≠ 0"),
        None => format!("test {:.2} [ ]", d.split.test_fraction),
    };
    vec![
        Line::raw(format!(
            " {test} · seed {} {{ }} · scaling {scale} =",
            d.split.seed
        )),
        Line::raw(format!(" {missing} · {labeled}")),
        Line::styled(format!(" {median}"), median_style),
    ]
}
