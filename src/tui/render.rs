//! One frame from the state: tab bar, the current pane, status bar, and overlays (prompt,
//! help). Pure drawing — it reads the state and never changes it.

use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{Block, Clear, Paragraph, Row, Table, Wrap};
use ratatui::Frame;

use super::keys::{tab_label, tab_spans, HELP};
use super::panes;
use super::state::{DataFocus, Pane, PromptKind, RunStatus, State};
use super::widgets::{clip, fmt_secs};
use super::wording::in_workbench_terms;

/// Below this the full layout does not fit and the workbench says so instead.
pub const MIN_WIDTH: u16 = 70;
pub const MIN_HEIGHT: u16 = 20;

pub fn draw(frame: &mut Frame, s: &State) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(frame, area, s);
        // A question still needs its answer seen (q with a fit running asks first).
        if let Some(p) = &s.prompt {
            prompt(frame, area, s, &p.kind, &p.text);
        }
        return;
    }
    let [tabs, body, status] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    tab_bar(frame, tabs, s);
    panes::draw(frame, body, s);
    status_bar(frame, status, s);
    if let Some(p) = &s.prompt {
        prompt(frame, area, s, &p.kind, &p.text);
    }
    if s.help {
        help(frame, area, s);
    }
    if s.full_text {
        in_full(frame, area, s);
    }
}

/// The texts the screen cuts to fit, whole: the status line, and the name under the cursor.
pub fn full_texts(s: &State) -> Vec<String> {
    let mut out = vec![in_workbench_terms(&s.status)];
    match s.pane {
        Pane::Data => {
            let d = &s.data;
            if let (Some(t), DataFocus::Columns) = (&d.table, d.focus) {
                if let Some(c) = t.columns.get(d.col_cursor) {
                    let view = d
                        .view_name(d.col_cursor)
                        .map(|v| format!(" · view {v}"))
                        .unwrap_or_default();
                    out.push(format!("column {}{view}", c.name));
                }
            } else if let Some(e) = d.entries.get(d.file_cursor) {
                out.push(e.path.display().to_string());
            }
        }
        Pane::Method => {
            if let Some(m) = ovk_core::methods::registry().get(s.method.cursor) {
                out.push(format!("{} — {}", m.name(), m.summary()));
            }
        }
        Pane::Results if s.diag.shown => {
            if let Some(n) = s.output_names().get(s.diag.row) {
                out.push(format!("output {n}"));
            }
        }
        _ => {}
    }
    out
}

fn in_full(frame: &mut Frame, area: Rect, s: &State) {
    let texts = full_texts(s);
    let w = area.width.min(90);
    let inner = usize::from(w.saturating_sub(2)).max(1);
    let lines: Vec<Line> = texts
        .iter()
        .flat_map(|t| word_wrap(t, inner))
        .map(Line::raw)
        .collect();
    let r = centered(area, w, lines.len() as u16 + 2);
    frame.render_widget(Clear, r);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::bordered()
                .title(Span::styled(" In full — any key closes ", s.theme.title))
                .border_style(s.theme.border_focus),
        ),
        r,
    );
}

fn too_small(frame: &mut Frame, area: Rect, s: &State) {
    let msg = format!(
        "ovk needs a terminal of at least {MIN_WIDTH}×{MIN_HEIGHT} (this one is {}×{}). \
         Enlarge it, or press q to quit.",
        area.width, area.height
    );
    frame.render_widget(
        Paragraph::new(msg)
            .style(s.theme.warn)
            .wrap(Wrap { trim: true }),
        area,
    );
}

fn tab_bar(frame: &mut Frame, area: Rect, s: &State) {
    let mut spans = Vec::new();
    for (i, (p, _, _)) in tab_spans().into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled("│", s.theme.border));
        }
        let style = if p == s.pane {
            s.theme.tab_active
        } else {
            s.theme.tab
        };
        spans.push(Span::styled(tab_label(i, p), style));
    }
    frame.render_widget(Line::from(spans), area);
    let tag = if s.replay.is_some() {
        " REPLAY · ovk "
    } else {
        " ovk "
    };
    let w = tag.chars().count() as u16;
    let used = tab_spans().last().map_or(0, |t| t.2);
    if area.width > used + w {
        let r = Rect {
            x: area.x + area.width - w,
            width: w,
            ..area
        };
        frame.render_widget(Span::styled(tag, s.theme.title), r);
    }
}

/// The run state as a short tag for the status bar.
pub fn state_tag(s: &State) -> String {
    let elapsed = |end: Option<std::time::Instant>| {
        s.run
            .started
            .map(|t| {
                end.unwrap_or(s.now)
                    .saturating_duration_since(t)
                    .as_secs_f64()
            })
            .unwrap_or(0.0)
    };
    if let Some(r) = &s.replay {
        let n = s.chart_trace().len();
        let total = s
            .result
            .as_ref()
            .map_or(0, |f| f.outcome.record.trace.len());
        let _ = r;
        return format!("replay {n}/{total}");
    }
    match &s.run.status {
        RunStatus::Idle => "idle".into(),
        RunStatus::Running if s.run.cancelling => "cancelling".into(),
        RunStatus::Running => format!(
            "running {} {}",
            s.run.phase.map_or("", |p| p.label()),
            fmt_secs(elapsed(None))
        ),
        RunStatus::Finished => {
            let stopped = s
                .result
                .as_ref()
                .filter(|f| !f.outcome.record.converged)
                .map_or("", |_| " · not converged");
            format!("finished in {}{stopped}", fmt_secs(elapsed(s.run.ended)))
        }
        RunStatus::Failed(_) => "failed".into(),
        RunStatus::Cancelled => "cancelled".into(),
    }
}

fn status_bar(frame: &mut Frame, area: Rect, s: &State) {
    let tag = format!(" {} ", state_tag(s));
    let right = if s.is_running() && !s.run.cancelling {
        " Esc cancels · ? help · q quit "
    } else {
        " ? help · q quit "
    };
    let room =
        (area.width as usize).saturating_sub(tag.chars().count() + right.chars().count() + 1);
    let said = in_workbench_terms(&s.status);
    // A cut status says where to read the rest.
    let said = if said.chars().count() > room && room > 12 {
        format!("{} i", clip(&said, room - 2))
    } else {
        clip(&said, room)
    };
    let style = match s.run.status {
        RunStatus::Failed(_) => s.theme.error,
        _ => s.theme.status_bar,
    };
    let line = Line::from(vec![
        Span::styled(tag, style.add_modifier(Modifier::BOLD)),
        Span::styled(format!(" {said:<room$}"), s.theme.status_bar),
        Span::styled(right, s.theme.status_bar),
    ]);
    frame.render_widget(line, area);
}

/// A centred rectangle of at most `w`×`h` inside `area`.
pub fn centered(area: Rect, w: u16, h: u16) -> Rect {
    let [v] = Layout::vertical([Constraint::Length(h.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [r] = Layout::horizontal([Constraint::Length(w.min(area.width))])
        .flex(Flex::Center)
        .areas(v);
    r
}

fn prompt(frame: &mut Frame, area: Rect, s: &State, kind: &PromptKind, text: &str) {
    if let PromptKind::ConfirmQuit { why } = kind {
        let r = centered(area, 64, 6);
        frame.render_widget(Clear, r);
        let body = Text::from(vec![
            Line::styled(why.clone(), s.theme.warn),
            Line::from("Quit anyway?"),
            Line::from(vec![
                Span::styled("y", s.theme.key),
                Span::raw(" quits · "),
                Span::styled("n", s.theme.key),
                Span::raw(" or Esc stays"),
            ]),
        ]);
        frame.render_widget(
            Paragraph::new(body).wrap(Wrap { trim: true }).block(
                Block::bordered()
                    .title(Span::styled(" Quit ovk? ", s.theme.title))
                    .border_style(s.theme.border_focus),
            ),
            r,
        );
        return;
    }
    let (title, question) = match kind {
        PromptKind::SaveName => (
            "Keep run",
            "Keep this run under the name (it stays in 8 Sessions):".to_string(),
        ),
        PromptKind::ConfirmPrune { count } => (
            "Delete runs not kept",
            match count {
                1 => "Delete the 1 run not kept (○ ✕) for good? y, Enter:".to_string(),
                n => format!("Delete the {n} runs not kept (○ ✕) for good? y, Enter:"),
            },
        ),
        PromptKind::Rename { .. } => ("Rename session", "New name:".to_string()),
        PromptKind::ConfirmDelete { name, .. } => (
            "Delete session",
            format!("Delete '{name}' for good? Type y and Enter:"),
        ),
        PromptKind::ConfirmQuit { .. } => ("Quit", String::new()),
        PromptKind::Sweep { key } => (
            "Mark for search",
            format!("{key} over LOW HIGH N [log|lin] (empty: unmark):"),
        ),
        PromptKind::Figure { .. } => (
            "Export figure",
            "File (.svg or .png; .csv for the data):".to_string(),
        ),
        PromptKind::ConfirmOverwrite { path, .. } => (
            "File exists",
            format!("{} exists: overwrite it? y, Enter:", path.display()),
        ),
        PromptKind::Search => (
            "Search the marked fields",
            "grid · random trials=N seed=S · halving factor=F; cv=K".to_string(),
        ),
        PromptKind::Predict { name, .. } => (
            "Predict",
            format!("File to apply '{name}' to (CSV or Parquet, same columns):"),
        ),
        PromptKind::AssignView { marked } => (
            "Make a view",
            match marked {
                0 => "NAME = a..b, glob*, /regex/ or a,b; NAME: this column".to_string(),
                k => format!("NAME = a..b, glob*, /regex/ or a,b; NAME: the {k} marked"),
            },
        ),
        PromptKind::RenameView { from } => (
            "Rename view",
            format!("New name of view {from} (an existing name merges):"),
        ),
        PromptKind::FindFile => (
            "Find",
            "Name of a file or folder (as you type):".to_string(),
        ),
        PromptKind::Filter => (
            "Filter runs",
            "Words, or method:okl dataset:iris lambda:0.1 (as you type):".to_string(),
        ),
    };
    let r = centered(area, 60, 5);
    frame.render_widget(Clear, r);
    let body = Text::from(vec![
        Line::from(question),
        Line::from(vec![Span::styled(format!("{text}▏"), s.theme.key)]),
        Line::styled("Enter confirms · Esc cancels", s.theme.dim),
    ]);
    frame.render_widget(
        Paragraph::new(body).block(
            Block::bordered()
                .title(Span::styled(format!(" {title} "), s.theme.title))
                .border_style(s.theme.border_focus),
        ),
        r,
    );
}

fn help(frame: &mut Frame, area: Rect, s: &State) {
    const KEY_W: u16 = 17;
    const WHERE_W: u16 = 13;
    let width = area.width.min(84);
    // borders 2, column gaps 2: what is left is the "what" column, wrapped to it
    let what_w = usize::from(width.saturating_sub(2 + KEY_W + WHERE_W + 2)).max(12);
    // (entry, key, where, one line of what): key and where on an entry's first line only
    let lines: Vec<(usize, &str, &str, String)> = HELP
        .iter()
        .enumerate()
        .flat_map(|(i, (k, w, what))| {
            word_wrap(what, what_w)
                .into_iter()
                .enumerate()
                .map(move |(j, part)| match j {
                    0 => (i, *k, *w, part),
                    _ => (i, "", "", part),
                })
        })
        .collect();
    let h = (lines.len() as u16 + 3).min(area.height);
    let r = centered(area, 84, h);
    frame.render_widget(Clear, r);
    let fit = r.height.saturating_sub(3) as usize;
    // scrolled by entries, so the top line is never the tail of a wrapped one
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&j| j == 0 || lines[j].0 != lines[j - 1].0)
        .collect();
    let last_top = starts
        .iter()
        .position(|&j| lines.len() - j <= fit)
        .unwrap_or(0);
    let top = starts[s.scroll.help.min(last_top)];
    let shown = &lines[top..(top + fit).min(lines.len())];
    let rows = shown.iter().map(|(_, k, w, what)| {
        Row::new(vec![
            Span::styled(*k, s.theme.key),
            Span::styled(*w, s.theme.dim),
            Span::raw(what.clone()),
        ])
    });
    let title = match (shown.first(), shown.last()) {
        (Some(a), Some(b)) if fit < lines.len() => format!(
            " Keys {}–{} of {} — j k scroll · any other key closes ",
            a.0 + 1,
            b.0 + 1,
            HELP.len()
        ),
        _ => " Keys — any key closes ".to_string(),
    };
    let t = Table::new(
        rows,
        [
            Constraint::Length(KEY_W),
            Constraint::Length(WHERE_W),
            Constraint::Fill(1),
        ],
    )
    .header(Row::new(["key", "where", "what"]).style(s.theme.title))
    .block(
        Block::bordered()
            .title(Span::styled(title, s.theme.title))
            .border_style(s.theme.border_focus),
    );
    frame.render_widget(t, r);
}

/// `text` in lines of at most `width` characters, broken between words (a longer word is cut).
fn word_wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut out: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let (lw, ww) = (line.chars().count(), word.chars().count());
        if lw > 0 && lw + 1 + ww > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
        while line.chars().count() > width {
            let cut: String = line.chars().take(width).collect();
            line = line.chars().skip(width).collect();
            out.push(cut);
        }
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}
