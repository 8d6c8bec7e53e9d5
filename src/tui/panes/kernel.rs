//! Kernel & hyperparameters pane: one editable field per kernel setting and per `ParamSpec`
//! of the chosen method, validated on every keystroke; a refused value is red with its
//! reason, and Run is refused until it is fixed.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use super::super::state::sweepable;
use super::super::state::{FieldKind, Median, State};
use super::super::widgets::fmt_num;
use super::block;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let k = &s.kernel;
    let visible = k.visible();
    let [table_area, help_area] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(5)]).areas(area);
    let rows = visible.iter().enumerate().map(|(row, &i)| {
        let f = &k.fields[i];
        let editing = k.editing && row == k.cursor;
        let mut value = f.text.clone();
        if editing {
            value.push('▏');
        }
        if matches!(f.kind, FieldKind::Sigma) && f.text.trim().eq_ignore_ascii_case("median") {
            value.push_str(&match &s.data.median {
                Median::Value(v) => format!("  (= {})", fmt_num(*v)),
                Median::Computing => "  (computing…)".into(),
                Median::Unknown => "  (load data to see its value)".into(),
                Median::Failed(_) => "  (unavailable)".into(),
            });
        }
        let value_style = if f.error.is_some() {
            s.theme.error
        } else if editing {
            s.theme.key
        } else {
            s.theme.base
        };
        let check = match &f.error {
            Some(e) => Span::styled(format!("✗ {e}"), s.theme.error),
            None => Span::styled("✓", s.theme.ok),
        };
        let default = f.default_text();
        Row::new(vec![
            Cell::from(Span::styled(f.key(), s.theme.key)),
            Cell::from(f.label()),
            Cell::from(Span::styled(value, value_style)),
            Cell::from(f.unit()),
            Cell::from(Span::styled(
                if default.is_empty() {
                    "—".into()
                } else {
                    default
                },
                s.theme.dim,
            )),
            Cell::from(check),
        ])
    });
    let method = s.method().map_or("—", |m| m.name());
    let title = if s.replay.is_some() {
        format!("Kernel & hyperparameters of {method} (read-only)")
    } else {
        format!("Kernel & hyperparameters of {method} — Enter edits · Space cycles · w sweeps")
    };
    let table = Table::new(
        rows,
        [
            Constraint::Length(12),
            Constraint::Length(18),
            Constraint::Length(36),
            Constraint::Length(10),
            Constraint::Length(10),
            Constraint::Fill(1),
        ],
    )
    .header(Row::new(["key", "label", "value", "unit", "default", "check"]).style(s.theme.title))
    .block(block(title, &s.theme, true))
    .row_highlight_style(s.theme.selected)
    .highlight_symbol("> ");
    let mut st = TableState::default().with_selected((!visible.is_empty()).then_some(k.cursor));
    frame.render_stateful_widget(table, table_area, &mut st);

    let mut lines = Vec::new();
    if let Some(i) = k.current() {
        let f = &k.fields[i];
        lines.push(Line::from(vec![
            Span::styled(format!("{}: ", f.key()), s.theme.key),
            Span::raw(f.help()),
        ]));
        if let Some(e) = &f.error {
            lines.push(Line::styled(format!("refused: {e}"), s.theme.error));
        }
    }
    match k.first_error() {
        Some((key, _)) => lines.push(Line::styled(
            format!("Run is refused until {key} is fixed."),
            s.theme.error,
        )),
        None => lines.push(Line::styled(
            "All values valid. Empty = the method's default.",
            s.theme.ok,
        )),
    }
    // Last: the box is short, and the field's own problems come first.
    if let Some(f) = k.current().map(|i| &k.fields[i]) {
        if sweepable(f) && f.error.is_none() && s.replay.is_none() {
            lines.push(Line::styled(
                format!(
                    "w sweeps {} over a range by cross-validation and keeps the best",
                    f.key()
                ),
                s.theme.dim,
            ));
        }
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: true })
            .block(block("Field", &s.theme, false)),
        help_area,
    );
}
