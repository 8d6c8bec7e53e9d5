//! Results pane: train/test metrics beside the identity-output-kernel baseline, timings, and
//! the method's details (certificate …) and notes, and its per-step records (a λ path, a
//! sweep) as a table.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use super::super::state::State;
use super::super::widgets::record_table::{self, RecordTable};
use super::super::widgets::{clip, fmt_num, fmt_secs};
use super::block;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let Some(f) = &s.result else {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "No results yet — start a fit (r) or open a session (8 Sessions).",
                s.theme.dim,
            ))
            .block(block("Results", &s.theme, true)),
            area,
        );
        return;
    };
    let r = &f.outcome.record;
    let mut keys: Vec<&String> = r
        .metrics
        .test
        .keys()
        .chain(r.metrics.train.keys())
        .collect();
    keys.sort();
    keys.dedup();
    // Tall enough for the run facts (11 lines with borders) and every metric; the rest goes
    // to details and the per-step records.
    let top_h = (keys.len() as u16 + 3).max(13);
    let [top, bottom] = Layout::vertical([Constraint::Max(top_h), Constraint::Fill(1)]).areas(area);
    let [metrics, facts] =
        Layout::horizontal([Constraint::Percentage(55), Constraint::Fill(1)]).areas(top);

    let get = |m: &crate::session::MetricMap, k: &str| m.get(k).copied();
    let cell = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "—".into());
    let rows = keys.iter().map(|k| {
        let test = get(&r.metrics.test, k);
        let base = r.baseline.as_ref().and_then(|b| get(&b.test, k));
        let delta = match (test, base) {
            (Some(a), Some(b)) => format!("{:+.4}", a - b),
            _ => "—".into(),
        };
        Row::new(vec![
            Span::styled((*k).clone(), s.theme.key),
            Span::raw(cell(get(&r.metrics.train, k))),
            Span::styled(cell(test), s.theme.title),
            Span::raw(cell(base)),
            Span::raw(delta),
        ])
    });
    frame.render_widget(
        Table::new(
            rows,
            [
                Constraint::Length(16),
                Constraint::Length(11),
                Constraint::Length(11),
                Constraint::Length(11),
                Constraint::Fill(1),
            ],
        )
        .header(Row::new(["metric", "train", "test", "baseline", "Δ test"]).style(s.theme.title))
        .block(block(
            format!("Metrics — {} on {}", r.method, r.dataset.path.display()),
            &s.theme,
            true,
        )),
        metrics,
    );

    let kv = |k: &str, v: String| {
        Line::from(vec![
            Span::styled(format!("{k:<11}"), s.theme.dim),
            Span::raw(v),
        ])
    };
    let params: Vec<String> = r.params.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let lines = vec![
        kv("session", r.name.clone()),
        kv("task", r.task.as_str().into()),
        kv("kernel", r.kernel.resolved.to_string()),
        kv("params", params.join(" ")),
        kv(
            "iterations",
            format!(
                "{}{}",
                r.iterations,
                if r.converged {
                    " (converged)"
                } else {
                    " (NOT converged)"
                }
            ),
        ),
        kv(
            "objective",
            r.objective.map_or_else(|| "not computed".into(), fmt_num),
        ),
        kv(
            "timings",
            format!(
                "load {} · fit {} · predict {} · total {}",
                fmt_secs(r.timings.load_s),
                fmt_secs(r.timings.fit_s),
                fmt_secs(r.timings.predict_s),
                fmt_secs(r.timings.total_s)
            ),
        ),
        kv(
            "split",
            format!(
                "{} train / {} test rows, seed {}",
                r.split.train.len(),
                r.split.test.len(),
                r.split.seed
            ),
        ),
        kv(
            "saved",
            f.saved
                .as_ref()
                .map_or("not yet (s saves)".into(), |p| p.display().to_string()),
        ),
    ];
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block("Run", &s.theme, false)),
        facts,
    );

    let records = record_table::from_details(&r.details);
    let mut lines: Vec<Line> = r
        .details
        .iter()
        .filter(|(k, _)| records.as_ref().is_none_or(|t| &t.key != *k))
        .map(|(k, v)| {
            let text = match v {
                serde_json::Value::Array(a) if a.len() > 6 => format!("[{} values]", a.len()),
                serde_json::Value::Object(o) if o.len() > 6 => format!("{{{} entries}}", o.len()),
                v => clip(&v.to_string(), 120),
            };
            Line::from(vec![
                Span::styled(format!("{k}: "), s.theme.key),
                Span::raw(text),
            ])
        })
        .collect();
    lines.extend(
        r.notes
            .iter()
            .map(|n| Line::styled(format!("• {n}"), s.theme.warn)),
    );
    if lines.is_empty() {
        lines.push(Line::styled("no details", s.theme.dim));
    }
    let (details_area, records_area) = match &records {
        Some(_) => {
            let [d, t] = Layout::vertical([
                Constraint::Length((lines.len() as u16 + 2).min(8)),
                Constraint::Fill(1),
            ])
            .areas(bottom);
            (d, Some(t))
        }
        None => (bottom, None),
    };
    frame.render_widget(
        Paragraph::new(lines).wrap(Wrap { trim: true }).block(block(
            "Details & notes",
            &s.theme,
            false,
        )),
        details_area,
    );
    if let (Some(t), Some(area)) = (records, records_area) {
        draw_records(frame, area, s, &t);
    }
}

/// The path's or sweep's rows, as many columns as fit, scrolled so the kept row shows.
fn draw_records(frame: &mut Frame, area: Rect, s: &State, t: &RecordTable) {
    const MAX_COL: usize = 16;
    let mut widths = Vec::new();
    let mut used = 2; // the ★ marker column
    for (j, h) in t.headers.iter().enumerate() {
        let w = t
            .rows
            .iter()
            .map(|r| r[j].chars().count())
            .chain([h.chars().count()])
            .max()
            .unwrap_or(1)
            .min(MAX_COL);
        if used + w + 1 > area.width.saturating_sub(2) as usize {
            break;
        }
        used += w + 1;
        widths.push(w);
    }
    let shown = widths.len();
    let rows = t.rows.iter().map(|r| {
        Row::new(
            r.iter()
                .zip(&widths)
                .map(|(c, &w)| Span::raw(clip(c, w)))
                .collect::<Vec<_>>(),
        )
    });
    let header = Row::new(
        t.headers
            .iter()
            .zip(&widths)
            .map(|(h, &w)| clip(h, w))
            .collect::<Vec<_>>(),
    )
    .style(s.theme.title);
    let hidden = t.headers.len() - shown;
    let title = if hidden > 0 {
        format!("{} · {hidden} more columns (widen)", t.title)
    } else {
        t.title.clone()
    };
    let table = Table::new(rows, widths.iter().map(|&w| Constraint::Length(w as u16)))
        .header(header)
        .block(block(title, &s.theme, false))
        .row_highlight_style(s.theme.selected)
        .highlight_symbol("★ ")
        .highlight_spacing(HighlightSpacing::Always);
    let mut state = TableState::default().with_selected(t.chosen);
    frame.render_stateful_widget(table, area, &mut state);
}
