//! Results pane: train/test metrics beside the identity-output-kernel baseline, timings, and
//! the method's details (certificate …) and notes, and its per-step records (a λ path, a
//! sweep) as a table.

use ovk_core::session::details::{key, Memory};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row, Table, TableState, Wrap};
use ratatui::Frame;

use super::super::state::State;
use super::super::widgets::record_table::{self, RecordTable};
use super::super::widgets::{clip, file_name, fmt_num, fmt_secs};
use super::super::{axes, tally};
use super::{block, draw_note, draw_scrolled, fit_title};
use crate::tui::wording::in_workbench_terms;

pub fn draw(frame: &mut Frame, area: Rect, s: &State) {
    let Some(f) = &s.result else {
        let note = "No results yet — start a fit (r) or open a session (8 Sessions).";
        return draw_note(frame, area, s, ("Results", true), note);
    };
    if s.diag.shown {
        super::diagnostics::draw(frame, area, s, f);
        return;
    }
    let r = &f.outcome.record;
    let keys = r.metrics.names();
    let records = record_table::from_details(&r.details);
    let narrow = area.width < 100;
    let metrics_h = (keys.len() as u16 + 3).max(4);
    let (metrics, facts, details, records_area) = if narrow {
        // Stacked: every column of the metrics keeps its width at 80 columns.
        let (top, rest) = match records {
            Some(_) => {
                let [m, t, rest] = Layout::vertical([
                    Constraint::Max(metrics_h),
                    Constraint::Min(5),
                    Constraint::Length(11),
                ])
                .areas(area);
                (m, (rest, Some(t)))
            }
            None => {
                let [m, rest] =
                    Layout::vertical([Constraint::Max(metrics_h), Constraint::Fill(1)]).areas(area);
                (m, (rest, None))
            }
        };
        let [fa, de] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Fill(1)]).areas(rest.0);
        (top, fa, de, rest.1)
    } else {
        let top_h = metrics_h.max(13);
        let [top, bottom] =
            Layout::vertical([Constraint::Max(top_h), Constraint::Fill(1)]).areas(area);
        let [m, fa] =
            Layout::horizontal([Constraint::Percentage(55), Constraint::Fill(1)]).areas(top);
        match records {
            Some(_) => {
                let [d, t] =
                    Layout::vertical([Constraint::Length(8), Constraint::Fill(1)]).areas(bottom);
                (m, fa, d, Some(t))
            }
            None => (m, fa, bottom, None),
        }
    };

    draw_metrics(frame, metrics, s, r);

    let kv = |k: &str, v: String| {
        Line::from(vec![
            Span::styled(format!("{k:<11}"), s.theme.dim),
            Span::raw(v),
        ])
    };
    let params: Vec<String> = r.params.0.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let per_view = axes::view_sigmas(r);
    let stored = match (&f.saved, r.kept) {
        (None, _) => "not recorded yet (s saves it)".to_string(),
        (Some(p), false) => format!("recorded, not kept — s keeps it ({})", p.display()),
        (Some(p), true) => format!("kept ({})", p.display()),
    };
    let kernel = if per_view.is_empty() {
        r.kernel.resolved.to_string()
    } else {
        let v: Vec<String> = per_view
            .iter()
            .map(|(n, sg)| format!("{n} {}", fmt_num(*sg)))
            .collect();
        format!(
            "{}, σ per view: {}",
            r.kernel.spec.name.name(),
            v.join(" · ")
        )
    };
    let mut lines = vec![
        kv("session", r.name.clone()),
        kv("task", r.task.name().into()),
        kv("kernel", kernel),
        kv("params", params.join(" ")),
        kv(
            "iterations",
            format!(
                "{}{}{}",
                r.iterations,
                if r.converged {
                    " (converged)"
                } else {
                    " (NOT converged)"
                },
                tally::extra_records(r).map_or_else(String::new, |w| format!(" — {w}"))
            ),
        ),
        kv(
            "objective",
            format!(
                "{}{}",
                r.objective.map_or_else(|| "not computed".into(), fmt_num),
                tally::last_objective_differs(r).map_or_else(String::new, |w| format!(" — {w}"))
            ),
        ),
        kv(
            "timings",
            format!(
                "fit {} · predict {} · total {}",
                fmt_secs(r.timings.fit_s),
                fmt_secs(r.timings.predict_s),
                fmt_secs(r.timings.total_s)
            ),
        ),
        kv(
            "split",
            format!(
                "{} train / {} test rows, seed {}{}",
                r.split.train.len(),
                r.split.test.len(),
                r.split.seed,
                r.split
                    .unlabeled
                    .as_ref()
                    .map(|u| format!(", {} unlabeled", u.len()))
                    .unwrap_or_default()
            ),
        ),
        kv("stored", stored),
    ];
    if !r.status.is_finished() {
        lines.insert(
            1,
            Line::styled(
                format!(
                    "cancelled after {} — no model, no metrics; its trace so far is in Run",
                    fmt_secs(r.timings.total_s)
                ),
                s.theme.warn,
            ),
        );
    }
    if let Some(o) = &r.optimistic {
        lines.insert(
            1,
            Line::from(vec![
                Span::styled(format!("{:<11}", "optimistic"), s.theme.dim),
                Span::styled(
                    format!("† {} metrics: {}", o.parts.join(", "), o.reason),
                    s.theme.warn,
                ),
            ]),
        );
    }
    frame.render_widget(
        Paragraph::new(lines)
            .wrap(Wrap { trim: false })
            .block(block("Run", &s.theme, false)),
        facts,
    );

    // Details a reader can use; what other panes show (records, axes, σ per view) is skipped.
    let skip = |k: &str| {
        records.as_ref().is_some_and(|t| t.key == k)
            || [
                key::AXES,
                key::VIEW_SIGMAS,
                key::VIEW_KERNELS,
                key::DIAGNOSTICS,
                "per_label_auc",
            ]
            .contains(&k)
    };
    let mut lines: Vec<Line> = cv_lines(s, r);
    lines.extend(r.details.iter().filter(|(k, _)| !skip(k)).map(|(k, v)| {
        let text = match r.read_details().memory() {
            Some(m) if k == key::MEMORY => memory_text(&m).unwrap_or_else(|| readable(v)),
            _ => readable(v),
        };
        Line::from(vec![
            Span::styled(format!("{k}: "), s.theme.key),
            Span::raw(text),
        ])
    }));
    lines.extend(
        r.notes
            .iter()
            .map(|n| Line::styled(format!("• {}", in_workbench_terms(n)), s.theme.warn)),
    );
    if lines.is_empty() {
        lines.push(Line::styled("no details", s.theme.dim));
    }
    let title = |shown: Option<(usize, usize, usize)>| match shown {
        Some((first, last, total)) => format!("Details & notes {first}–{last} of {total} — J K"),
        None => "Details & notes · d per output".into(),
    };
    draw_scrolled(frame, details, s, lines, s.scroll.details, title);
    if let (Some(t), Some(area)) = (records, records_area) {
        draw_records(frame, area, s, &t);
    }
}

/// The metrics table: train, test (a dagger when optimistic), the krr baseline and the
/// difference, and with `--cv K` each metric's mean ± sd over the folds. Columns that do not
/// fit go from the right, the cross-validation last.
fn draw_metrics(frame: &mut Frame, area: Rect, s: &State, r: &ovk_core::session::SessionRecord) {
    let keys = r.metrics.names();
    let get = |m: &ovk_core::session::MetricMap, k: &str| m.get(k).copied();
    let cell = |v: Option<f64>| v.map(fmt_num).unwrap_or_else(|| "—".into());
    let name_w = keys
        .iter()
        .chain(
            r.cv.iter()
                .flat_map(|c| c.keys())
                .collect::<Vec<_>>()
                .iter(),
        )
        .map(|k| k.chars().count())
        .max()
        .unwrap_or(6)
        .clamp(6, 18) as u16;
    let optimistic = r
        .optimistic
        .as_ref()
        .is_some_and(|o| o.parts.iter().any(|p| p == "test"));
    let dagger = if optimistic { "†" } else { "" };
    let cv_k =
        r.cv.as_ref()
            .and_then(|c| c.values().next())
            .map(|st| st.folds.len());
    // (header, width, cell of metric k)
    type Col<'a> = (String, u16, Box<dyn Fn(&str) -> Span<'static> + 'a>);
    let mut cols: Vec<Col> = vec![
        (
            "train".into(),
            10,
            Box::new(|k| Span::raw(cell(get(&r.metrics.train, k)))),
        ),
        (
            format!("test{dagger}"),
            10,
            Box::new(|k| {
                let v = get(&r.metrics.test, k);
                let text = match v {
                    Some(x) => format!("{}{dagger}", fmt_num(x)),
                    None => "—".into(),
                };
                Span::styled(
                    text,
                    if optimistic {
                        s.theme.warn
                    } else {
                        s.theme.title
                    },
                )
            }),
        ),
    ];
    if let Some(k) = cv_k {
        cols.push((
            format!("cv {k} folds"),
            19,
            Box::new(|key| {
                let st = r.cv.as_ref().and_then(|c| c.get(key));
                Span::raw(st.map_or_else(
                    || "—".into(),
                    |st| format!("{} ± {}", fmt_num(st.mean), fmt_num(st.sd)),
                ))
            }),
        ));
    }
    let base = |k: &str| r.baseline.as_ref().and_then(|b| get(&b.test, k));
    cols.push((
        "baseline".into(),
        10,
        Box::new(move |k| Span::raw(cell(base(k)))),
    ));
    cols.push((
        "Δ test".into(),
        10,
        Box::new(move |k| {
            Span::raw(match (get(&r.metrics.test, k), base(k)) {
                (Some(a), Some(b)) => format!("{:+.4}", a - b),
                _ => "—".into(),
            })
        }),
    ));
    // Δ, then the baseline, leave first when the box is narrow.
    let room = area.width.saturating_sub(2 + name_w);
    while cols.iter().map(|c| c.1 + 1).sum::<u16>() > room && cols.len() > 2 {
        let drop = cols
            .iter()
            .rposition(|c| c.0 == "Δ test" || c.0 == "baseline")
            .unwrap_or(cols.len() - 1);
        let _ = cols.remove(drop);
    }
    let mut cv_keys: Vec<&String> = r.cv.iter().flat_map(|c| c.keys()).collect();
    cv_keys.retain(|k| !keys.contains(k));
    let all_keys: Vec<&String> = keys.iter().copied().chain(cv_keys).collect();
    let rows = all_keys.iter().map(|k| {
        let mut cells = vec![Span::styled((*k).clone(), s.theme.key)];
        cells.extend(cols.iter().map(|c| (c.2)(k)));
        Row::new(cells)
    });
    let file = file_name(&r.dataset.path);
    let what = if r.status.is_finished() {
        format!("Metrics — {} on {file}", r.method)
    } else {
        format!("Metrics — {} on {file}: cancelled, none", r.method)
    };
    let lambda = if r.params.0.contains_key("lambda") {
        "same λ"
    } else {
        "its default λ"
    };
    let labeled = if r.split.labeled.is_some() {
        ", labeled rows"
    } else {
        ""
    };
    let opt = if optimistic { " · † optimistic" } else { "" };
    let titles = [
        format!("{what} (baseline: krr, same kernel, {lambda}{labeled}){opt}"),
        format!("{what} (baseline: krr){opt}"),
        format!("{what}{opt}"),
        what,
        "Metrics".into(),
    ];
    let mut widths = vec![Constraint::Length(name_w)];
    widths.extend(cols.iter().map(|c| Constraint::Length(c.1)));
    let mut header = vec!["metric".to_string()];
    header.extend(cols.iter().map(|c| c.0.clone()));
    frame.render_widget(
        Table::new(rows, widths)
            .header(Row::new(header).style(s.theme.title))
            .block(block(fit_title(area, &titles), &s.theme, true)),
        area,
    );
}

/// `--cv K`: each metric's value on every fold, with their mean ± sd.
fn cv_lines(s: &State, r: &ovk_core::session::SessionRecord) -> Vec<Line<'static>> {
    let Some(cv) = &r.cv else { return Vec::new() };
    let k = cv.values().next().map_or(0, |st| st.folds.len());
    let mut lines = vec![Line::styled(
        format!(
            "{k}-fold cross-validation on the training rows (mean ± sd over the folds; test \
             metrics are the final fit's)"
        ),
        s.theme.dim,
    )];
    for (name, st) in cv {
        let folds: Vec<String> = st.folds.iter().map(|v| fmt_num(*v)).collect();
        lines.push(Line::from(vec![
            Span::styled(format!("cv {name}: "), s.theme.key),
            Span::raw(format!(
                "{} ± {} · folds {}",
                fmt_num(st.mean),
                fmt_num(st.sd),
                folds.join(" · ")
            )),
        ]));
    }
    lines
}

/// The memory detail: the admitted estimate beside the measured peak, saying whose peak it is
/// (a worker process ran only this fit; older sessions measured the whole process).
fn memory_text(m: &Memory) -> Option<String> {
    let fmt = ovk_core::kernels::format_bytes;
    let mut parts = Vec::new();
    if let Some(e) = m.estimated_peak_bytes {
        parts.push(format!("estimated peak {}", fmt(e)));
    }
    if let Some(p) = m.process_peak_rss_bytes {
        let whose = if m.measured_in_worker() {
            "the fit's own process"
        } else {
            "the whole process that ran it"
        };
        // The estimate counts what the run allocates, not the program itself: say how much of
        // the peak that is, or a small run's estimate looks half its peak.
        let base = m
            .process_base_rss_bytes
            .map(|b| format!("; {} of it the program, not estimated", fmt(b)))
            .unwrap_or_default();
        parts.push(format!("measured peak {} ({whose}{base})", fmt(p)));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

/// A details value as text a person reads: numbers short, short lists inline, objects as
/// `key value` pairs, anything deeper summarised.
fn readable(v: &serde_json::Value) -> String {
    use serde_json::Value as J;
    match v {
        J::Null => "—".into(),
        J::Bool(b) => if *b { "yes" } else { "no" }.into(),
        J::Number(n) => match n.as_f64() {
            Some(x) if n.is_f64() => fmt_num(x),
            _ => n.to_string(),
        },
        J::String(s) => s.clone(),
        J::Array(a) if a.len() <= 8 && a.iter().all(|x| !x.is_array() && !x.is_object()) => {
            a.iter().map(readable).collect::<Vec<_>>().join(", ")
        }
        J::Array(a) => format!("{} values (e exports)", a.len()),
        J::Object(o) if o.len() <= 6 && o.values().all(|x| !x.is_array() && !x.is_object()) => o
            .iter()
            .map(|(k, x)| format!("{k} {}", readable(x)))
            .collect::<Vec<_>>()
            .join(" · "),
        J::Object(o) => format!("{} entries", o.len()),
    }
}

/// The path's or sweep's rows, as many columns as fit, scrolled so the kept row shows.
fn draw_records(frame: &mut Frame, area: Rect, s: &State, t: &RecordTable) {
    const MAX_COL: usize = 16;
    let width = |j: usize| {
        t.rows
            .iter()
            .map(|r| r[j].chars().count())
            .chain([t.headers[j].chars().count()])
            .max()
            .unwrap_or(1)
            .min(MAX_COL)
    };
    // The first column (λ, or the rank of a sweep) stays; `[ ]` scroll the others.
    let n = t.headers.len();
    let skip = s.scroll.record_cols.min(n.saturating_sub(2));
    let mut columns = Vec::new();
    let mut used = 2; // the ★ marker column
    for j in (0..n.min(1)).chain(1 + skip..n) {
        let w = width(j);
        if used + w + 1 > area.width.saturating_sub(2) as usize {
            break;
        }
        used += w + 1;
        columns.push((j, w));
    }
    let rows = t.rows.iter().map(|r| {
        columns
            .iter()
            .map(|&(j, w)| Cell::from(clip(&r[j], w)))
            .collect::<Vec<_>>()
    });
    let hidden = n - columns.len();
    let title = if hidden > 0 {
        let last = columns.last().map_or(0, |&(j, _)| j);
        format!(
            "{} · columns {}–{} of {n} ([ ])",
            t.title,
            (1 + skip).min(n),
            last + 1
        )
    } else {
        t.title.clone()
    };
    // The cursor row (j k) is highlighted; the kept row carries the ★. With no cursor yet,
    // the kept row is the one scrolled into view.
    let cursor = s
        .scroll
        .records
        .map(|i| i.min(t.rows.len().saturating_sub(1)));
    let rows = rows.enumerate().map(|(i, row)| {
        let mark = if Some(i) == t.chosen { "★" } else { " " };
        let mut cells = vec![Cell::from(Span::styled(mark, s.theme.key))];
        cells.extend(row);
        Row::new(cells)
    });
    let header = {
        let mut h = vec![String::new()];
        h.extend(columns.iter().map(|&(j, w)| clip(&t.headers[j], w)));
        Row::new(h).style(s.theme.title)
    };
    let pos = match cursor {
        Some(i) => format!(" · row {}/{} (j k g G)", i + 1, t.rows.len()),
        None => format!(" · j k scroll {} rows", t.rows.len()),
    };
    let mut w = vec![Constraint::Length(1)];
    w.extend(columns.iter().map(|&(_, w)| Constraint::Length(w as u16)));
    let table = Table::new(rows, w)
        .header(header)
        .block(block(format!("{title}{pos}"), &s.theme, false))
        .row_highlight_style(if cursor.is_some() {
            s.theme.selected
        } else {
            s.theme.base
        })
        .highlight_spacing(HighlightSpacing::Never);
    let mut state = TableState::default().with_selected(cursor.or(t.chosen));
    frame.render_stateful_widget(table, area, &mut state);
}
