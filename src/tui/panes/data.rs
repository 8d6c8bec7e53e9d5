//! Data pane: the folder's tables, a preview of the open one (dtypes, missing counts,
//! min/max/mean per column, first rows), column roles, and the split.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, List, ListItem, ListState, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::super::state::{DataFocus, Median, Role, State};
use super::super::widgets::{clip, fmt_num, heatmap};
use super::block;
use crate::data::Scale;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    if s.replay.is_some() {
        return replay_summary(frame, area, s);
    }
    let [files, preview] =
        Layout::horizontal([Constraint::Length(30), Constraint::Fill(1)]).areas(area);
    draw_files(frame, files, s);
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
    }
}

fn draw_preview(frame: &mut Frame, area: Rect, s: &State) {
    let d = &s.data;
    if let Some(p) = &d.loading {
        let name = p.file_name().unwrap_or(p.as_os_str()).to_string_lossy();
        frame.render_widget(
            Paragraph::new(Line::styled(format!("reading {name}…"), s.theme.dim))
                .block(block("Preview", &s.theme, false)),
            area,
        );
        return;
    }
    let Some(t) = &d.table else {
        let msg = match &d.load_error {
            Some(e) => Line::styled(e.clone(), s.theme.error),
            None => Line::styled(
                "Select a CSV or Parquet file and press Enter to preview it.",
                s.theme.dim,
            ),
        };
        frame.render_widget(
            Paragraph::new(msg).block(block("Preview", &s.theme, false)),
            area,
        );
        return;
    };
    let head_h = (t.head.len() as u16 + 3).min(10);
    let [info, cols, split, head] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(2),
        Constraint::Length(head_h),
    ])
    .areas(area);
    let n_feat = d.features().len();
    let mut line = vec![
        Span::styled(clip(&t.path.display().to_string(), 50), s.theme.title),
        Span::raw(format!(
            "  {} rows × {} columns · {} features, {} targets, class {}",
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
    frame.render_widget(Line::from(line), info);

    let header =
        Row::new(["column", "dtype", "role", "missing", "min", "max", "mean"]).style(s.theme.title);
    let opt = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "—".into());
    let rows = t.columns.iter().enumerate().map(|(i, c)| {
        let role = d.roles.get(i).copied().unwrap_or(Role::Feature);
        let missing_style = if c.missing > 0 {
            s.theme.warn
        } else {
            s.theme.base
        };
        Row::new(vec![
            Cell::from(c.name.clone()),
            Cell::from(c.dtype.clone()),
            Cell::from(Span::styled(role.label(), role_style(s, role))),
            Cell::from(Span::styled(c.missing.to_string(), missing_style)),
            Cell::from(opt(c.min)),
            Cell::from(opt(c.max)),
            Cell::from(opt(c.mean)),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Fill(2),
            Constraint::Length(6),
            Constraint::Length(8),
            Constraint::Length(8),
            Constraint::Length(10),
            Constraint::Length(10),
            Constraint::Length(10),
        ],
    )
    .header(header)
    .block(block(
        "Columns — f feature · t target · c class · v view · x ignore",
        &s.theme,
        d.focus == DataFocus::Columns,
    ))
    .row_highlight_style(s.theme.selected)
    .highlight_symbol("> ");
    let mut st =
        TableState::default().with_selected((!t.columns.is_empty()).then_some(d.col_cursor));
    frame.render_stateful_widget(table, cols, &mut st);

    let median = match &d.median {
        Median::Unknown => "median σ: choose features and a target first".to_string(),
        Median::Computing => "median σ: computing…".to_string(),
        Median::Value(v) => format!("median σ = {} on the training rows", fmt_num(*v)),
        Median::Failed(e) => format!("median σ unavailable: {e}"),
    };
    let scale = match d.scale {
        Scale::Standard => "standard",
        Scale::None => "none",
    };
    let lines = vec![
        Line::from(vec![Span::raw(format!(
            " test fraction {:.2}  [ ]   seed {}  {{ }}   scaling {scale}  =",
            d.test_fraction, d.seed
        ))]),
        Line::styled(format!(" {median}"), s.theme.dim),
    ];
    frame.render_widget(Paragraph::new(lines), split);

    // First rows: the columns around the selected one that fit.
    let inner_w = head.width.saturating_sub(2) as usize;
    let col_w = 9usize;
    let fit = (inner_w / (col_w + 1)).max(1);
    let start = heatmap::offset(d.col_cursor, fit, t.columns.len());
    let shown: Vec<usize> = (start..t.columns.len()).take(fit).collect();
    let header =
        Row::new(shown.iter().map(|&j| clip(&t.columns[j].name, col_w))).style(s.theme.title);
    let rows = t.head.iter().map(|r| {
        Row::new(
            shown
                .iter()
                .map(|&j| clip(r.get(j).map_or("", String::as_str), col_w)),
        )
    });
    let widths = vec![Constraint::Length(col_w as u16); shown.len()];
    frame.render_widget(
        Table::new(rows, widths).header(header).block(block(
            format!("First {} rows", t.head.len()),
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
                "test fraction {:.2}, seed {}, {} train / {} test rows",
                c.test_fraction,
                c.seed,
                r.split.train.len(),
                r.split.test.len()
            )),
        ]),
        Line::from(vec![
            Span::styled("scaling   ", s.theme.dim),
            Span::raw(format!("{:?}", r.scale).to_lowercase()),
        ]),
    ];
    frame.render_widget(
        Paragraph::new(lines).block(block("Data of the session (read-only)", &s.theme, true)),
        area,
    );
}
