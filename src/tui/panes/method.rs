//! Method pane: the registry's methods with their one-line summaries; the highlighted one's
//! paper and hyperparameters. Enter chooses it (its fields appear in the Kernel pane).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{List, ListItem, ListState, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::super::state::{readiness, State};
use super::super::widgets::clip_phrase;
use super::block;
use ovk_core::methods;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let list = methods::registry();
    // The list as tall as the registry, the rest for the highlighted method.
    let [left, right] = Layout::vertical([
        Constraint::Length(list.len() as u16 + 2),
        Constraint::Fill(1),
    ])
    .areas(area);
    // Names padded to the longest, so methods added later line up without layout changes.
    let width = list
        .iter()
        .map(|m| m.name().chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    // borders, the highlight symbol, the chosen and fit marks, the name
    let summary_w = usize::from(left.width).saturating_sub(2 + 2 + 2 + 2 + width);
    let items: Vec<ListItem> = list
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let mark = if i == s.method.chosen { "● " } else { "  " };
            // ✗: it would not run on the data as chosen (the About box says why)
            let misfit = readiness::misfit(*m, &s.data).is_some();
            let (fit, fit_style) = match misfit {
                true => ("✗ ", s.theme.warn),
                false => ("  ", s.theme.dim),
            };
            let name_style = if misfit { s.theme.dim } else { s.theme.key };
            ListItem::new(Line::from(vec![
                Span::styled(mark, s.theme.ok),
                Span::styled(fit, fit_style),
                Span::styled(format!("{:<width$}", m.name()), name_style),
                // cut after a whole clause, with a mark: the About box below has it whole
                Span::raw(clip_phrase(m.summary(), summary_w)),
            ]))
        })
        .collect();
    let mut st = ListState::default().with_selected((!list.is_empty()).then_some(s.method.cursor));
    frame.render_stateful_widget(
        List::new(items)
            .block(block(
                "Methods — Enter chooses (● chosen · ✗ does not fit the data)",
                &s.theme,
                true,
            ))
            .highlight_style(s.theme.selected)
            .highlight_symbol("> "),
        left,
        &mut st,
    );
    let Some(m) = list.get(s.method.cursor) else {
        return;
    };
    // As tall as the wrapped summary, tasks line and citation need (and no taller than 8).
    let inner = right.width.saturating_sub(2).max(1) as usize;
    let wrapped = |text: &str| text.chars().count().div_ceil(inner).max(1);
    let fit = match readiness::misfit(*m, &s.data) {
        Some(why) => Line::styled(format!("✗ {why}"), s.theme.warn),
        None if s.data.table.is_some() => {
            Line::styled("✓ fits the data as chosen in Data", s.theme.ok)
        }
        None => Line::styled(
            "open a table in Data (1) to see whether it fits",
            s.theme.dim,
        ),
    };
    let about_lines = wrapped(&format!("{} — {}", m.name(), m.summary()))
        + wrapped(m.citation())
        + wrapped(&fit.to_string())
        + 1;
    let [about, params] = Layout::vertical([
        Constraint::Length((about_lines as u16 + 2).min(9)),
        Constraint::Fill(1),
    ])
    .areas(right);
    frame.render_widget(
        Paragraph::new(vec![
            Line::from(vec![
                Span::styled(m.name(), s.theme.title),
                Span::raw(" — "),
                Span::raw(m.summary()),
            ]),
            Line::from(vec![
                Span::styled("tasks: ", s.theme.dim),
                Span::raw(m.supported_tasks()),
            ]),
            fit,
            Line::styled(m.citation(), s.theme.dim),
        ])
        .wrap(Wrap { trim: true })
        .block(block("About", &s.theme, false)),
        about,
    );
    let rows = m.params().iter().map(|p| {
        Row::new(vec![
            Span::styled(p.key, s.theme.key),
            Span::raw(p.label),
            Span::raw(p.unit),
            Span::raw(
                p.default_value()
                    .map(|v| v.to_string())
                    .unwrap_or_else(|| "—".into()),
            ),
            Span::styled(p.help, s.theme.dim),
        ])
    });
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(14),
                Constraint::Length(18),
                Constraint::Length(10),
                Constraint::Length(10),
                Constraint::Fill(1),
            ],
        )
        .header(Row::new(["key", "label", "unit", "default", "what it does"]).style(s.theme.title))
        .block(block("Hyperparameters", &s.theme, false)),
        params,
    );
}
