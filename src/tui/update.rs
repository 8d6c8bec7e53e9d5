//! The pure heart of the workbench: (state, action) → new state + effects as data. Nothing here
//! blocks, reads a file or starts a thread, so every transition is testable without a terminal.

use std::path::PathBuf;
use std::time::Duration;

use crate::data::Scale;
use crate::methods;
use crate::train::{RunMessage, RunOutcome};

use super::action::Action;
use super::effect::Effect;
use super::keys::tab_spans;
use super::roles;
use super::state::{
    DataFocus, Finished, KernelState, Median, Pane, Prompt, PromptKind, Role, RunState, RunStatus,
    State,
};

/// How often replay playback advances.
const PLAY_STEP: Duration = Duration::from_millis(80);

pub fn update(s: &mut State, action: Action) -> Vec<Effect> {
    match action {
        Action::Quit => {
            s.quit = true;
            if s.is_running() {
                return vec![Effect::CancelRun];
            }
            vec![]
        }
        Action::NextPane => goto(s, s.pane.next()),
        Action::PrevPane => goto(s, s.pane.prev()),
        Action::Goto(p) => goto(s, p),
        Action::ToggleHelp => {
            s.help = !s.help;
            vec![]
        }
        Action::Click { col, row } => {
            s.help = false;
            if row == 0 {
                if let Some((p, _, _)) = tab_spans()
                    .into_iter()
                    .find(|(_, a, b)| (*a..*b).contains(&col))
                {
                    return goto(s, p);
                }
            }
            vec![]
        }
        Action::Back => back(s),
        Action::Up => move_selection(s, -1),
        Action::Down => move_selection(s, 1),
        Action::Top => move_selection(s, i64::MIN / 2),
        Action::Bottom => move_selection(s, i64::MAX / 2),
        Action::Enter => enter(s),
        Action::Space => space(s),
        Action::Char(c) => {
            edit_text(s, |t| t.push(c));
            vec![]
        }
        Action::Backspace => {
            edit_text(s, |t| {
                t.pop();
            });
            vec![]
        }
        Action::ClearText => {
            edit_text(s, |t| t.clear());
            vec![]
        }
        Action::SetRole(role) => set_role(s, role),
        Action::TestFraction(d) => {
            let f = (s.data.test_fraction + 0.05 * d as f64).clamp(0.0, 0.9);
            s.data.test_fraction = (f * 100.0).round() / 100.0;
            s.status = format!("test fraction {:.2}", s.data.test_fraction);
            data_changed(s)
        }
        Action::Seed(d) => {
            s.data.seed = s.data.seed.saturating_add_signed(d);
            s.status = format!("split seed {}", s.data.seed);
            data_changed(s)
        }
        Action::ToggleScale => {
            s.data.scale = match s.data.scale {
                Scale::Standard => Scale::None,
                Scale::None => Scale::Standard,
            };
            data_changed(s)
        }
        Action::ParentDir => {
            if s.data.focus == DataFocus::Columns {
                s.data.focus = DataFocus::Files;
                return vec![];
            }
            match s.data.dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => vec![Effect::ListDir {
                    dir: p.to_path_buf(),
                    select: None,
                }],
                _ => match std::path::absolute(&s.data.dir)
                    .ok()
                    .and_then(|d| d.parent().map(PathBuf::from))
                {
                    Some(p) => vec![Effect::ListDir {
                        dir: p,
                        select: None,
                    }],
                    None => vec![],
                },
            }
        }
        Action::StartRun => start_run(s),
        Action::CancelRun => {
            if s.is_running() {
                s.run.cancelling = true;
                s.status = "cancelling…".into();
                vec![Effect::CancelRun]
            } else {
                s.status = "no fit is running".into();
                vec![]
            }
        }
        Action::Save => {
            match &s.result {
                None => s.status = "nothing to save yet — run a fit first (r)".into(),
                Some(_) if s.replay.is_some() => {
                    s.status = "replay is read-only: this session is already saved".into()
                }
                Some(f) => {
                    let name = f.outcome.record.name.clone();
                    s.prompt = Some(Prompt {
                        kind: PromptKind::SaveName,
                        text: name,
                    });
                }
            }
            vec![]
        }
        Action::ToggleOverlay => {
            s.overlay = !s.overlay;
            s.status = format!(
                "previous-run overlay {}",
                if s.overlay { "on" } else { "off" }
            );
            vec![]
        }
        Action::NextMatrix | Action::PrevMatrix => {
            let n = s.result.as_ref().map_or(0, |f| f.outcome.matrices.len());
            if n > 0 {
                let d = if matches!(action, Action::NextMatrix) {
                    1
                } else {
                    n - 1
                };
                s.matrices.selected = (s.matrices.selected + d) % n;
                s.matrices.cursor = (0, 0);
            }
            vec![]
        }
        Action::Zoom(d) => {
            s.matrices.zoom = (s.matrices.zoom as i32 + d).clamp(1, 8) as u16;
            vec![]
        }
        Action::MoveCursor(dx, dy) => {
            if s.pane == Pane::Matrices {
                move_cell(s, dx as i64, dy as i64);
                vec![]
            } else {
                move_selection(s, dy as i64)
            }
        }
        Action::Rename => {
            if let Some(sum) = selected_summary(s) {
                s.prompt = Some(Prompt {
                    kind: PromptKind::Rename { id: sum.id.clone() },
                    text: sum.name.clone(),
                });
            }
            vec![]
        }
        Action::Delete => {
            if let Some(sum) = selected_summary(s) {
                s.prompt = Some(Prompt {
                    kind: PromptKind::ConfirmDelete {
                        id: sum.id.clone(),
                        name: sum.name.clone(),
                    },
                    text: String::new(),
                });
            }
            vec![]
        }
        Action::Refresh => vec![Effect::ListSessions],
        Action::Step(d) => {
            step_replay(s, d);
            vec![]
        }
        Action::Tick(now) => {
            s.now = now;
            let len = s
                .result
                .as_ref()
                .map_or(0, |f| f.outcome.record.trace.len());
            if let Some(r) = &mut s.replay {
                if r.playing && now.duration_since(r.last_step) >= PLAY_STEP {
                    r.last_step = now;
                    r.cursor = (r.cursor + (len / 60).max(1)).min(len.saturating_sub(1));
                    if r.cursor + 1 >= len {
                        r.playing = false;
                    }
                }
            }
            vec![]
        }
        Action::Run(msg) => run_message(s, msg),
        Action::DirListed {
            dir,
            entries,
            select,
        } => match entries {
            Ok(entries) => {
                s.data.dir = dir;
                s.data.entries = entries;
                s.data.file_cursor = 0;
                s.data.focus = DataFocus::Files;
                if let Some(want) = select {
                    if let Some(i) = s.data.entries.iter().position(|e| e.path == want) {
                        s.data.file_cursor = i;
                        s.data.loading = Some(want.clone());
                        return vec![Effect::LoadTable(want)];
                    }
                }
                vec![]
            }
            Err(e) => {
                s.status = e;
                vec![]
            }
        },
        Action::TableLoaded { path, .. } if s.data.loading.as_ref() != Some(&path) => vec![],
        Action::TableLoaded {
            path,
            table,
            sidecar,
        } => {
            s.data.loading = None;
            match table {
                Ok(t) => {
                    let names: Vec<String> = t.columns.iter().map(|c| c.name.clone()).collect();
                    let (roles, source) = roles::prefill(&names, sidecar.as_deref());
                    s.data.roles = roles;
                    s.data.roles_source = source;
                    s.status = format!(
                        "{}: {} rows × {} columns — set roles with f t c v x",
                        path.display(),
                        t.n_rows,
                        t.columns.len()
                    );
                    s.data.table = Some(t);
                    s.data.load_error = None;
                    s.data.focus = DataFocus::Columns;
                    s.data.col_cursor = 0;
                    data_changed(s)
                }
                Err(e) => {
                    s.data.table = None;
                    s.data.roles.clear();
                    s.data.load_error = Some(e.clone());
                    s.status = e;
                    data_changed(s)
                }
            }
        }
        Action::MedianComputed { generation, result } => {
            if generation == s.data.generation {
                s.data.median = match result {
                    Ok(v) => Median::Value(v),
                    Err(e) => Median::Failed(e),
                };
            }
            vec![]
        }
        Action::Saved(r) => match r {
            Ok(path) => {
                s.status = format!("saved to {}", path.display());
                if let Some(f) = &mut s.result {
                    f.saved = Some(path);
                }
                vec![Effect::ListSessions]
            }
            Err(e) => {
                s.status = format!("save failed: {e}");
                vec![]
            }
        },
        Action::SessionsListed { root, list } => {
            match root {
                Ok(r) => {
                    s.sessions.root = Some(r);
                    s.sessions.error = None;
                }
                Err(e) => s.sessions.error = Some(e),
            }
            s.sessions.list = list;
            s.sessions.marked.retain(|&i| i < s.sessions.list.len());
            s.sessions.cursor = s
                .sessions
                .cursor
                .min(s.sessions.list.len().saturating_sub(1));
            vec![]
        }
        Action::SessionOpened(r) => {
            match r {
                Ok(b) => {
                    let (path, outcome) = *b;
                    s.status = format!(
                        "opened session '{}' ({})",
                        outcome.record.name,
                        path.display()
                    );
                    install_result(s, outcome, Some(path));
                    s.pane = Pane::Results;
                }
                Err(e) => s.status = format!("cannot open the session: {e}"),
            }
            vec![]
        }
        Action::CompareLoaded(r) => {
            match r {
                Ok(pair) => {
                    s.sessions.compare = Some(pair);
                    s.status = "comparing two sessions (Esc to close)".into();
                }
                Err(e) => s.status = format!("cannot compare: {e}"),
            }
            vec![]
        }
        Action::SessionChanged(r) => {
            s.status = match r {
                Ok(m) => m,
                Err(e) => e,
            };
            s.sessions.marked.clear();
            s.sessions.compare = None;
            vec![Effect::ListSessions]
        }
    }
}

fn goto(s: &mut State, p: Pane) -> Vec<Effect> {
    s.pane = p;
    s.help = false;
    if p == Pane::Sessions {
        return vec![Effect::ListSessions];
    }
    vec![]
}

fn back(s: &mut State) -> Vec<Effect> {
    if s.help {
        s.help = false;
    } else if let Some(p) = s.prompt.take() {
        s.status = match p.kind {
            PromptKind::ConfirmDelete { .. } => "not deleted".into(),
            _ => "cancelled".into(),
        };
    } else if s.kernel.editing {
        if let Some(i) = s.kernel.current() {
            s.kernel.fields[i].text = std::mem::take(&mut s.kernel.backup);
            s.kernel.fields[i].validate();
        }
        s.kernel.editing = false;
    } else {
        match s.pane {
            Pane::Run => return update(s, Action::CancelRun),
            Pane::Data => s.data.focus = DataFocus::Files,
            Pane::Sessions => {
                s.sessions.compare = None;
                s.sessions.marked.clear();
            }
            _ => {}
        }
    }
    vec![]
}

/// Move the current list's selection by `d` (clamped; huge values jump to the ends).
fn move_selection(s: &mut State, d: i64) -> Vec<Effect> {
    let clamp = |cur: usize, len: usize| -> usize {
        if len == 0 {
            0
        } else {
            (cur as i64).saturating_add(d).clamp(0, len as i64 - 1) as usize
        }
    };
    match s.pane {
        Pane::Data => match s.data.focus {
            DataFocus::Files => {
                s.data.file_cursor = clamp(s.data.file_cursor, s.data.entries.len())
            }
            DataFocus::Columns => s.data.col_cursor = clamp(s.data.col_cursor, s.data.roles.len()),
        },
        Pane::Method => s.method.cursor = clamp(s.method.cursor, methods::registry().len()),
        Pane::Kernel => s.kernel.cursor = clamp(s.kernel.cursor, s.kernel.visible().len()),
        Pane::Matrices => move_cell(s, 0, d),
        Pane::Sessions => s.sessions.cursor = clamp(s.sessions.cursor, s.sessions.list.len()),
        Pane::Charts | Pane::Results | Pane::Run if s.replay.is_some() && d.abs() > 1_000_000 => {
            step_replay(s, d)
        }
        _ => {}
    }
    vec![]
}

fn move_cell(s: &mut State, dx: i64, dy: i64) {
    let Some(m) = s
        .result
        .as_ref()
        .and_then(|f| f.outcome.matrices.get(s.matrices.selected))
        .map(|(_, m)| m.dim())
    else {
        return;
    };
    let mv = |cur: usize, d: i64, len: usize| -> usize {
        if len == 0 {
            0
        } else {
            (cur as i64).saturating_add(d).clamp(0, len as i64 - 1) as usize
        }
    };
    let (r, c) = s.matrices.cursor;
    s.matrices.cursor = (mv(r, dy, m.0), mv(c, dx, m.1));
}

fn enter(s: &mut State) -> Vec<Effect> {
    if let Some(p) = s.prompt.take() {
        return submit_prompt(s, p);
    }
    if s.help {
        s.help = false;
        return vec![];
    }
    if s.kernel.editing && s.pane == Pane::Kernel {
        s.kernel.editing = false;
        if let Some(i) = s.kernel.current() {
            let f = &s.kernel.fields[i];
            s.status = match &f.error {
                Some(e) => format!("{} refused: {e}", f.key()),
                None => format!("{} = {}", f.key(), f.text),
            };
        }
        return vec![];
    }
    match s.pane {
        Pane::Data => match s.data.focus {
            DataFocus::Files => match s.data.entries.get(s.data.file_cursor) {
                Some(e) if e.is_dir => vec![Effect::ListDir {
                    dir: e.path.clone(),
                    select: None,
                }],
                Some(e) => {
                    s.status = format!("loading {}…", e.name);
                    s.data.loading = Some(e.path.clone());
                    vec![Effect::LoadTable(e.path.clone())]
                }
                None => vec![],
            },
            DataFocus::Columns => vec![],
        },
        Pane::Method => {
            if s.replay.is_some() {
                s.status = "replay is read-only".into();
                return vec![];
            }
            let list = methods::registry();
            if let Some(m) = list.get(s.method.cursor) {
                s.method.chosen = s.method.cursor;
                s.kernel = KernelState::for_method(*m, Some(&s.kernel));
                s.status = format!(
                    "method {} — its hyperparameters are in Kernel (3)",
                    m.name()
                );
                s.pane = Pane::Kernel;
            }
            vec![]
        }
        Pane::Kernel => {
            if s.replay.is_some() {
                s.status = "replay is read-only".into();
            } else if let Some(i) = s.kernel.current() {
                s.kernel.backup = s.kernel.fields[i].text.clone();
                s.kernel.editing = true;
            }
            vec![]
        }
        Pane::Run => start_run(s),
        Pane::Sessions => match selected_summary(s) {
            Some(sum) => vec![Effect::OpenSession(sum.path.clone())],
            None => vec![],
        },
        _ => vec![],
    }
}

fn space(s: &mut State) -> Vec<Effect> {
    match s.pane {
        Pane::Kernel if s.replay.is_none() => {
            if let Some(i) = s.kernel.current() {
                if s.kernel.fields[i].cycles() {
                    s.kernel.fields[i].cycle();
                    let visible = s.kernel.visible().len();
                    s.kernel.cursor = s.kernel.cursor.min(visible.saturating_sub(1));
                }
            }
            vec![]
        }
        Pane::Sessions => {
            if s.sessions.list.is_empty() {
                return vec![];
            }
            let i = s.sessions.cursor;
            if let Some(k) = s.sessions.marked.iter().position(|&m| m == i) {
                s.sessions.marked.remove(k);
            } else {
                if s.sessions.marked.len() == 2 {
                    s.sessions.marked.remove(0);
                }
                s.sessions.marked.push(i);
            }
            s.sessions.compare = None;
            if let [a, b] = s.sessions.marked[..] {
                let path = |i: usize| match &s.sessions.list[i] {
                    crate::session::Listing::Ok(sum) => Some(sum.path.clone()),
                    _ => None,
                };
                if let (Some(a), Some(b)) = (path(a), path(b)) {
                    return vec![Effect::LoadCompare(a, b)];
                }
            }
            vec![]
        }
        _ => {
            if let Some(r) = &mut s.replay {
                let len = s
                    .result
                    .as_ref()
                    .map_or(0, |f| f.outcome.record.trace.len());
                if !r.playing && r.cursor + 1 >= len {
                    r.cursor = 0;
                }
                r.playing = !r.playing;
                r.last_step = s.now;
            }
            vec![]
        }
    }
}

fn edit_text(s: &mut State, f: impl FnOnce(&mut String)) {
    if let Some(p) = &mut s.prompt {
        f(&mut p.text);
    } else if s.kernel.editing {
        if let Some(i) = s.kernel.current() {
            f(&mut s.kernel.fields[i].text);
            s.kernel.fields[i].validate();
        }
    }
}

fn submit_prompt(s: &mut State, p: Prompt) -> Vec<Effect> {
    match p.kind {
        PromptKind::SaveName => {
            let name = p.text.trim().to_string();
            let Some(f) = &s.result else { return vec![] };
            if name.is_empty() {
                s.status = "a session needs a name".into();
                s.prompt = Some(Prompt {
                    kind: PromptKind::SaveName,
                    text: String::new(),
                });
                return vec![];
            }
            s.status = format!("saving '{name}'…");
            vec![Effect::SaveSession {
                name,
                outcome: Box::new(f.outcome.clone()),
            }]
        }
        PromptKind::Rename { id } => {
            let name = p.text.trim().to_string();
            if name.is_empty() {
                s.status = "a session needs a name".into();
                return vec![];
            }
            vec![Effect::RenameSession { id, name }]
        }
        PromptKind::ConfirmDelete { id, name } => {
            if p.text.trim().eq_ignore_ascii_case("y") || p.text.trim().eq_ignore_ascii_case("yes")
            {
                s.status = format!("deleting '{name}'…");
                vec![Effect::DeleteSession { id }]
            } else {
                s.status = "not deleted (type y to confirm)".into();
                vec![]
            }
        }
    }
}

fn selected_summary(s: &State) -> Option<&crate::session::Summary> {
    match s.sessions.list.get(s.sessions.cursor)? {
        crate::session::Listing::Ok(sum) => Some(sum),
        crate::session::Listing::Corrupt { .. } => None,
    }
}

fn set_role(s: &mut State, role: Role) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only".into();
        return vec![];
    }
    if s.data.table.is_none() || s.data.focus != DataFocus::Columns {
        s.status = "open a file first (Enter), then pick a column".into();
        return vec![];
    }
    let i = s.data.col_cursor;
    if i >= s.data.roles.len() {
        return vec![];
    }
    if role == Role::Class {
        // One class column: the previous one becomes a feature.
        for r in s.data.roles.iter_mut() {
            if *r == Role::Class {
                *r = Role::Feature;
            }
        }
    }
    s.data.roles[i] = role;
    let name = s
        .data
        .table
        .as_ref()
        .map(|t| t.columns[i].name.clone())
        .unwrap_or_default();
    s.status = format!("{name} → {}", role.label());
    // Move on, so a run of columns is set with repeated presses.
    s.data.col_cursor = (i + 1).min(s.data.roles.len() - 1);
    data_changed(s)
}

/// The data choice changed: the median σ is stale; recompute it when the choice is complete.
fn data_changed(s: &mut State) -> Vec<Effect> {
    s.data.generation += 1;
    match s.data.config() {
        Ok(config) => {
            s.data.median = Median::Computing;
            vec![Effect::ComputeMedian {
                generation: s.data.generation,
                config,
            }]
        }
        Err(_) => {
            s.data.median = Median::Unknown;
            vec![]
        }
    }
}

fn start_run(s: &mut State) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only: open the workbench to run".into();
        return vec![];
    }
    if s.is_running() {
        s.status = "a fit is already running (Esc or c in Run cancels it)".into();
        return vec![];
    }
    match s.run_config() {
        Ok(cfg) => {
            s.run = RunState::new();
            s.run.status = RunStatus::Running;
            s.run.started = Some(s.now);
            s.status = format!("fitting {} on {}…", cfg.method, cfg.data.path.display());
            vec![Effect::StartRun(cfg)]
        }
        Err(why) => {
            s.status = format!("cannot run: {why}");
            vec![]
        }
    }
}

fn run_message(s: &mut State, msg: RunMessage) -> Vec<Effect> {
    match msg {
        RunMessage::Phase { phase, total } => {
            s.run.phase = Some(phase);
            s.run.phase_total = total;
            s.run.phase_started = Some(s.now);
            s.run.phase_done = 0;
        }
        RunMessage::Record(r) => {
            s.run.trace.push(r);
            s.run.phase_done += 1;
        }
        RunMessage::Step { done, total } => {
            s.run.phase_done = done;
            s.run.phase_total = Some(total);
        }
        RunMessage::Note(n) => {
            s.status = n.clone();
            s.run.notes.push(n);
        }
        RunMessage::Finished(outcome) => {
            s.run.status = RunStatus::Finished;
            s.run.ended = Some(s.now);
            s.run.cancelling = false;
            s.status = format!("finished: {} — s saves the session", headline(&outcome));
            install_result(s, *outcome, None);
        }
        RunMessage::Failed { message, .. } => {
            s.run.status = RunStatus::Failed(message.clone());
            s.run.ended = Some(s.now);
            s.run.cancelling = false;
            s.status = format!("failed: {message}");
        }
        RunMessage::Cancelled => {
            s.run.status = RunStatus::Cancelled;
            s.run.ended = Some(s.now);
            s.run.cancelling = false;
            s.status = "cancelled".into();
        }
    }
    vec![]
}

/// Make `outcome` the shown result; the one it replaces becomes the overlay curve.
fn install_result(s: &mut State, outcome: RunOutcome, saved: Option<PathBuf>) {
    if let Some(old) = s.result.take() {
        let label = old.outcome.record.name.clone();
        s.previous = Some((label, old.outcome.record.trace));
    }
    s.matrices.selected = 0;
    s.matrices.cursor = (0, 0);
    s.result = Some(Finished { outcome, saved });
}

/// "test accuracy 0.9712, 37 iterations".
pub fn headline(o: &RunOutcome) -> String {
    let r = &o.record;
    let key = match r.task {
        crate::data::Task::Regression => "mse",
        crate::data::Task::Multiclass => "accuracy",
        crate::data::Task::Multilabel => "mean_auc",
    };
    let metric = r
        .metrics
        .test
        .get_key_value(key)
        .or_else(|| r.metrics.test.iter().next())
        .map(|(k, v)| format!("test {k} {v:.4}, "))
        .unwrap_or_default();
    format!("{metric}{} iterations", r.iterations)
}

fn step_replay(s: &mut State, d: i64) {
    let len = s
        .result
        .as_ref()
        .map_or(0, |f| f.outcome.record.trace.len());
    if let Some(r) = &mut s.replay {
        r.playing = false;
        r.cursor = (r.cursor as i64)
            .saturating_add(d)
            .clamp(0, len.saturating_sub(1) as i64) as usize;
    }
}
