//! Kernel & hyperparameters pane: one editable field per kernel setting and per `ParamSpec`
//! of the chosen method, validated on every keystroke; a refused value is red with its
//! reason, and Run is refused until it is fixed.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use ovk_core::kernels::Kernel;

use super::super::state::sweepable;
use super::super::state::{Field, FieldKind, Median, State};
use super::super::widgets::fmt_num;
use super::{block, fit_title};

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let k = &s.kernel;
    let visible = k.visible();
    let [table_area, help_area] =
        Layout::vertical([Constraint::Fill(1), Constraint::Length(5)]).areas(area);
    let widths = ColumnWidths::of(visible.iter().map(|&i| &k.fields[i]), table_area.width);
    let rows = visible.iter().enumerate().map(|(row, &i)| {
        let f = &k.fields[i];
        let error = k.field_error(i);
        let editing = k.editing && row == k.cursor;
        let mut value = f.text.clone();
        if editing {
            value.push('▏');
        }
        if matches!(f.kind, FieldKind::Sigma) && f.text.trim().eq_ignore_ascii_case("median") {
            // a multi-view method takes each view's median (view_sigma), not the table's
            let per_view = k.fields.iter().any(|f| f.key() == "view_sigma");
            // a replay has no table to take a median of, but its session kept the σ it used
            let replayed = s
                .result
                .as_ref()
                .filter(|_| s.replay.is_some())
                .and_then(|f| match f.outcome.record.kernel.resolved {
                    Kernel::Gaussian { sigma } | Kernel::Laplacian { sigma } => Some(sigma),
                    _ => None,
                });
            value.push_str(&match (&s.data.median, replayed) {
                _ if per_view => "  (each view's own)".into(),
                (_, Some(v)) => format!("  (= {})", fmt_num(v)),
                (Median::Value(v), _) => format!("  (= {})", fmt_num(*v)),
                (Median::Computing, _) => "  (computing…)".into(),
                (Median::Unknown, _) => "  (load data to see its value)".into(),
                (Median::Failed(_), _) => "  (unavailable)".into(),
            });
        }
        if let Some(m) = s.search.get(f.key()).filter(|_| !editing) {
            // searched over this range by `w` in Run; a fit with r still takes the value
            value = format!("{value} ≈ {}", m.text);
        }
        let value_style = if error.is_some() {
            s.theme.error
        } else if editing {
            s.theme.key
        } else {
            s.theme.base
        };
        let check = match &error {
            Some(e) => Span::styled(format!("✗ {e}"), s.theme.error),
            None => Span::styled("✓", s.theme.ok),
        };
        let default = f.default_text();
        let mut cells = vec![Cell::from(Span::styled(f.key(), s.theme.key))];
        if widths.label > 0 {
            cells.push(Cell::from(f.label()));
        }
        cells.extend([
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
        ]);
        Row::new(cells)
    });
    let method = s.method().map_or("—", |m| m.name());
    let what = format!("Kernel & hyperparameters of {method}");
    let title = if s.replay.is_some() {
        fit_title(
            table_area,
            &[
                format!("{what} (read-only)"),
                format!("{method} (read-only)"),
            ],
        )
    } else {
        fit_title(
            table_area,
            &[
                format!("{what} — Enter edits · Space cycles · w marks"),
                format!("{method} — Enter edits · Space cycles · w marks"),
                what,
            ],
        )
    };
    let mut header = vec!["key", "label", "value", "unit", "default", "check"];
    if widths.label == 0 {
        header.remove(1);
    }
    let table = Table::new(rows, widths.constraints())
        .header(Row::new(header).style(s.theme.title))
        .block(block(title, &s.theme, true))
        .row_highlight_style(s.theme.selected)
        .highlight_symbol("> ");
    let mut st = TableState::default().with_selected((!visible.is_empty()).then_some(k.cursor));
    frame.render_stateful_widget(table, table_area, &mut st);

    let mut lines = Vec::new();
    if let Some(i) = k.current() {
        let f = &k.fields[i];
        // the reason first: at 80 columns a long help fills the short box
        if let Some(e) = k.field_error(i) {
            lines.push(Line::styled(
                format!("{} refused: {e}", f.key()),
                s.theme.error,
            ));
        }
        lines.push(Line::from(vec![
            Span::styled(format!("{}: ", f.key()), s.theme.key),
            Span::raw(f.help()),
        ]));
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
    if let Some(i) = k.current() {
        let f = &k.fields[i];
        if sweepable(f) && k.field_error(i).is_none() && s.replay.is_none() {
            let marked = if s.search.marks.is_empty() {
                String::new()
            } else {
                format!(" (marked: {})", s.search.labels())
            };
            lines.push(Line::styled(
                format!(
                    "w marks {} for search over a range{marked}; w in Run searches by CV and \
                     keeps the best",
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

/// Column widths from the fields shown, so that no key is cut; where the pane is too narrow for
/// every column the label goes (the Field box below repeats it with the help).
struct ColumnWidths {
    key: u16,
    label: u16,
    unit: u16,
    default: u16,
}

/// The value column's least width (two thirds of the space left): `median  (= 3.8059)` fits.
const MIN_VALUE: u16 = 18;

impl ColumnWidths {
    fn of<'a>(fields: impl Iterator<Item = &'a Field>, pane_width: u16) -> Self {
        let width = |s: &str, least: usize| s.chars().count().max(least) as u16;
        let mut w = ColumnWidths {
            key: 3,
            label: 5,
            unit: 4,
            default: 7,
        };
        for f in fields {
            w.key = w.key.max(width(f.key(), 3));
            w.label = w.label.max(width(f.label(), 5));
            w.unit = w.unit.max(width(f.unit(), 4));
            w.default = w.default.max(width(&f.default_text(), 7));
        }
        // Borders, the highlight symbol, five column gaps and the check mark.
        let fixed = 2 + 2 + 5;
        if w.key + w.label + MIN_VALUE * 3 / 2 + w.unit + w.default + fixed > pane_width {
            w.label = 0;
        }
        w
    }

    fn constraints(&self) -> Vec<Constraint> {
        let mut c = vec![Constraint::Length(self.key)];
        if self.label > 0 {
            c.push(Constraint::Length(self.label));
        }
        // The value takes two thirds of what is left, the check mark (or refusal) a third.
        c.extend([
            Constraint::Fill(2),
            Constraint::Length(self.unit),
            Constraint::Length(self.default),
            Constraint::Fill(1),
        ]);
        c
    }
}
