//! Sessions pane: saved sessions (name, date, dataset, method, key metric); open, rename,
//! delete with confirmation, and two marked sessions compared side by side.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};
use ratatui::Frame;

use super::super::state::State;
use super::super::widgets::{clip, fmt_num};
use super::block;
use crate::session::{Listing, SessionRecord};

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let ss = &s.sessions;
    let (list_area, cmp_area) = if ss.compare.is_some() {
        let [a, b] =
            Layout::vertical([Constraint::Percentage(40), Constraint::Fill(1)]).areas(area);
        (a, Some(b))
    } else {
        (area, None)
    };
    let root = match (&ss.root, &ss.error) {
        (_, Some(e)) => format!("Sessions — {}", clip(e, 60)),
        (Some(r), None) => format!("Sessions in {}", clip(&r.display().to_string(), 50)),
        _ => "Sessions".into(),
    };
    let title = format!("{root} — Enter open · n rename · d delete · Space mark 2 to compare");
    if ss.list.is_empty() {
        let msg = match &ss.error {
            Some(e) => Line::styled(e.clone(), s.theme.error),
            None => Line::styled(
                "No saved sessions yet — finish a fit and press s.",
                s.theme.dim,
            ),
        };
        frame.render_widget(
            Paragraph::new(msg).block(block(title, &s.theme, true)),
            list_area,
        );
        return;
    }
    let rows = ss.list.iter().enumerate().map(|(i, l)| {
        let mark = if ss.marked.contains(&i) { "*" } else { " " };
        match l {
            Listing::Ok(sum) => Row::new(vec![
                Cell::from(Span::styled(mark, s.theme.key)),
                Cell::from(sum.name.clone()),
                Cell::from(clip(&sum.created, 19)),
                Cell::from(sum.dataset.clone()),
                Cell::from(sum.method.clone()),
                Cell::from(
                    sum.key_metric
                        .as_ref()
                        .map(|(k, v)| format!("{k} {}", fmt_num(*v)))
                        .unwrap_or_else(|| "—".into()),
                ),
            ]),
            Listing::Corrupt { path, reason } => Row::new(vec![
                Cell::from(" "),
                Cell::from(Span::styled(path.display().to_string(), s.theme.error)),
                Cell::from(Span::styled(format!("unreadable: {reason}"), s.theme.error)),
            ]),
        }
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(1),
            Constraint::Fill(2),
            Constraint::Length(20),
            Constraint::Fill(1),
            Constraint::Length(10),
            Constraint::Length(20),
        ],
    )
    .header(
        Row::new(["", "name", "created", "dataset", "method", "key metric"]).style(s.theme.title),
    )
    .block(block(title, &s.theme, true))
    .row_highlight_style(s.theme.selected)
    .highlight_symbol("> ");
    let mut st = TableState::default().with_selected(Some(ss.cursor));
    frame.render_stateful_widget(table, list_area, &mut st);
    if let (Some(area), Some(pair)) = (cmp_area, &ss.compare) {
        draw_compare(frame, area, s, &pair.0, &pair.1);
    }
}

fn draw_compare(frame: &mut Frame, area: Rect, s: &State, a: &SessionRecord, b: &SessionRecord) {
    let params = |r: &SessionRecord| {
        r.params
            .0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut rows = vec![
        ("name", a.name.clone(), b.name.clone()),
        ("created", a.created.clone(), b.created.clone()),
        (
            "dataset",
            a.dataset.path.display().to_string(),
            b.dataset.path.display().to_string(),
        ),
        ("method", a.method.clone(), b.method.clone()),
        (
            "kernel",
            a.kernel.resolved.to_string(),
            b.kernel.resolved.to_string(),
        ),
        ("params", params(a), params(b)),
        (
            "iterations",
            a.iterations.to_string(),
            b.iterations.to_string(),
        ),
        (
            "objective",
            a.objective.map_or_else(|| "—".into(), fmt_num),
            b.objective.map_or_else(|| "—".into(), fmt_num),
        ),
        (
            "fit time",
            format!("{:.2} s", a.timings.fit_s),
            format!("{:.2} s", b.timings.fit_s),
        ),
    ];
    let mut keys: Vec<&String> = a.metrics.test.keys().chain(b.metrics.test.keys()).collect();
    keys.sort();
    keys.dedup();
    let get = |r: &SessionRecord, k: &str| {
        r.metrics
            .test
            .get(k)
            .map(|v| fmt_num(*v))
            .unwrap_or_else(|| "—".into())
    };
    for k in keys {
        rows.push(("", get(a, k), get(b, k)));
        let last = rows.len() - 1;
        rows[last].0 = "test";
        rows[last].1 = format!("{k} {}", rows[last].1);
        rows[last].2 = format!("{k} {}", rows[last].2);
    }
    let table_rows = rows.into_iter().map(|(k, x, y)| {
        let style = if x != y { s.theme.warn } else { s.theme.base };
        Row::new(vec![
            Cell::from(Span::styled(k, s.theme.dim)),
            Cell::from(Span::styled(x, style)),
            Cell::from(Span::styled(y, style)),
        ])
    });
    frame.render_widget(
        Table::new(
            table_rows,
            [
                Constraint::Length(11),
                Constraint::Fill(1),
                Constraint::Fill(1),
            ],
        )
        .block(block(
            "Compare (Esc closes; differences highlighted)",
            &s.theme,
            false,
        )),
        area,
    );
}
