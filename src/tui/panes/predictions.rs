//! A saved model's predictions on a file (Sessions, `p`): the columns named as `ovk predict`
//! writes them (`<output>`, `<output>_score`), the true value beside each predicted one when the
//! file holds the outputs, rows scrolled by j k and columns by `[` `]`.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table};
use ratatui::Frame;

use super::super::state::{Predictions, State};
use super::super::widgets::{clip_middle, file_name, fmt_num};
use super::{block, fit_title};
use ovk_core::data::OutColumn;
use ovk_core::train::{PredictionTable, Scored};

/// One shown column: its header, its cell for a file row, and whether it holds true values.
struct Shown {
    name: String,
    cells: Vec<String>,
    truth: bool,
}

/// The table's columns in the file's order, each predicted `<output>` followed by its true
/// value (`<output> true`) when the file holds it.
fn shown_columns(t: &PredictionTable) -> Vec<Shown> {
    let n = t.n_rows();
    let mut out = Vec::new();
    for (name, col) in t.columns() {
        // A true value reads as its predicted column does: a number formatted, a class or a
        // label's 0/1 as the file's text.
        let (cells, numeric) = match col {
            OutColumn::Numbers(v) => (v.iter().map(|x| fmt_num(*x)).collect(), true),
            OutColumn::Text(v) => (v, false),
        };
        let truth = t
            .scored
            .as_ref()
            .and_then(|sc| truth_cells(sc, &name, n, numeric));
        out.push(Shown {
            name: name.clone(),
            cells,
            truth: false,
        });
        if let Some(cells) = truth {
            out.push(Shown {
                name: format!("{name} true"),
                cells,
                truth: true,
            });
        }
    }
    out
}

/// The true values of the output `name`, one cell per file row (blank where the row lacks it).
fn truth_cells(sc: &Scored, name: &str, n: usize, numeric: bool) -> Option<Vec<String>> {
    let (_, values) = sc.truth.iter().find(|(t, _)| t == name)?;
    let mut cells = vec![String::new(); n];
    for (k, &row) in sc.rows.iter().enumerate() {
        if let (Some(c), Some(v)) = (cells.get_mut(row), values.get(k)) {
            *c = match v.parse::<f64>() {
                Ok(x) if numeric => fmt_num(x),
                // 1.0 from the outputs' matrix reads as the predicted label's "1"
                Ok(x) if x.fract() == 0.0 && x.abs() < 1e15 => format!("{x:.0}"),
                _ => v.clone(),
            };
        }
    }
    Some(cells)
}

pub fn draw(frame: &mut Frame, area: Rect, s: &State, p: &Predictions) {
    let t = &p.table;
    let cols = shown_columns(t);
    // as wide as the longest header (`label_a_score`), within reason
    let width = cols
        .iter()
        .map(|c| c.name.chars().count())
        .max()
        .unwrap_or(8)
        .clamp(8, 20) as u16;
    let fit = (usize::from(area.width.saturating_sub(8)) / usize::from(width + 1)).max(1);
    // the last page of columns is as far as `]` goes
    let first_col = s.scroll.prediction_cols.min(cols.len().saturating_sub(fit));
    let shown = &cols[first_col..(first_col + fit).min(cols.len())];
    // borders, the header, and the metrics' line when the file held the outputs
    let visible = usize::from(
        area.height
            .saturating_sub(3 + u16::from(t.scored.is_some())),
    )
    .max(1);
    let first = p.scroll.min(t.n_rows().saturating_sub(1));
    let header = Row::new(
        std::iter::once(Cell::from("row"))
            .chain(shown.iter().map(|c| {
                let style = if c.truth { s.theme.dim } else { s.theme.title };
                Cell::from(Span::styled(clip_middle(&c.name, width as usize), style))
            }))
            .collect::<Vec<_>>(),
    );
    let rows: Vec<Row> = (first..t.n_rows().min(first + visible))
        .map(|i| {
            Row::new(
                std::iter::once(Cell::from((i + 1).to_string()))
                    .chain(shown.iter().map(|c| {
                        let text = c.cells.get(i).cloned().unwrap_or_default();
                        match c.truth {
                            true => Cell::from(Span::styled(text, s.theme.dim)),
                            false => Cell::from(text),
                        }
                    }))
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let cols_said = if cols.len() > shown.len() {
        format!(
            " · columns {}–{} of {} ([ ] scroll)",
            first_col + 1,
            first_col + shown.len(),
            cols.len()
        )
    } else {
        String::new()
    };
    let what = format!("Predictions of {} on {}", p.session, file_name(&p.data));
    let rows_shown = format!(
        "rows {}–{} of {}",
        first + 1,
        t.n_rows().min(first + visible),
        t.n_rows()
    );
    let title = fit_title(
        area,
        &[
            format!("{what} — {rows_shown}{cols_said} · Esc closes"),
            format!("{what} — {rows_shown}{cols_said}"),
            format!("Predictions — {rows_shown}{cols_said}"),
            format!("Predictions — {rows_shown}"),
        ],
    );
    let widths = std::iter::once(Constraint::Length(6))
        .chain((0..shown.len()).map(|_| Constraint::Length(width)));
    let blk = block(&title, &s.theme, true);
    let inner = blk.inner(area);
    frame.render_widget(blk, area);
    let table_area = match &t.scored {
        Some(sc) => {
            let [line, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Fill(1)]).areas(inner);
            frame.render_widget(Paragraph::new(scored_line(s, sc, t.n_rows())), line);
            rest
        }
        None => inner,
    };
    frame.render_widget(Table::new(rows, widths).header(header), table_area);
}

/// The metrics of predictions on a file that holds the model's outputs.
fn scored_line(s: &State, sc: &Scored, n: usize) -> Line<'static> {
    let cells: Vec<String> = sc
        .metrics
        .iter()
        .map(|(k, v)| format!("{k} {}", fmt_num(*v)))
        .collect();
    let scored = sc.rows.len() - sc.trained_left_out;
    let said = if sc.trained_left_out > 0 {
        format!(
            "scored on the {scored} of {n} rows that did not train the model (its {} training \
             rows left out): ",
            sc.trained_left_out
        )
    } else {
        format!("scored on {scored} of {n} rows (they hold the outputs): ")
    };
    Line::from(vec![
        Span::styled(said, s.theme.dim),
        Span::styled(cells.join(" · "), s.theme.title),
    ])
}
