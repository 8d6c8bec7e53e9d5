//! The pure heart of the workbench: (state, action) → new state + effects as data. Nothing here
//! blocks, reads a file or starts a thread, so every transition is testable without a terminal.
//!
//! `update` handles what is the same everywhere (panes, help, prompts, quitting, the clock) and
//! hands the rest to one handler per pane; background answers go to the pane that asked.

mod data;
mod figure;
mod form;
mod matrices;
mod prompt;
mod replay;
mod results;
mod run;
mod sessions;
mod settings;
mod sweep;

use super::action::Action;
use super::effect::Effect;
use super::keys::tab_spans;
use super::state::{Pane, Prompt, PromptKind, State};

pub use super::verdict::headline;
pub use replay::show_replayed;

/// Whether applying `a` to `s` may change the screen. A tick changes it only while it moves
/// something: a running fit's clock, or a replay playing — the tick that ends playback moves
/// the cursor to the last record, and that frame must be drawn too.
pub fn redraws(s: &State, a: &Action) -> bool {
    !matches!(a, Action::Tick(_)) || s.is_running() || s.replay.as_ref().is_some_and(|r| r.playing)
}

pub fn update(s: &mut State, action: Action) -> Vec<Effect> {
    match action {
        Action::Quit => quit(s),
        Action::ForceQuit => force_quit(s),
        Action::NextPane => goto(s, s.pane.next()),
        Action::PrevPane => goto(s, s.pane.prev()),
        Action::Goto(p) => goto(s, p),
        Action::ShowFull => {
            s.full_text = !s.full_text;
            vec![]
        }
        Action::ToggleHelp => {
            s.help = !s.help;
            s.scroll.help = 0;
            vec![]
        }
        Action::Down | Action::Up | Action::Top | Action::Bottom if s.help => {
            // The overlay clamps the far end to its last page.
            let d: i64 = match action {
                Action::Down => 3,
                Action::Up => -3,
                Action::Top => i64::MIN / 2,
                _ => i64::MAX / 2,
            };
            s.scroll.help = (s.scroll.help as i64).saturating_add(d).max(0) as usize;
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
        Action::Enter if s.prompt.is_some() => match s.prompt.take() {
            Some(p) => prompt::submit(s, p),
            None => vec![],
        },
        Action::Enter if s.help => {
            s.help = false;
            vec![]
        }
        a @ (Action::Char(_) | Action::Backspace | Action::ClearText) => prompt::text(s, a),
        Action::StartRun => run::start(s),
        Action::CancelRun => run::cancel(s),
        Action::Run(msg) => run::message(s, msg),
        Action::Recorded(r) => run::recorded(s, r),
        Action::WorkerMemory { rss, peak } => {
            if s.is_running() {
                s.run.memory = Some((rss, peak));
            }
            vec![]
        }
        Action::CycleFolds => settings::cycle_folds(s),
        Action::UseSettings => settings::use_settings(s),
        Action::Save => sessions::save(s),
        Action::Export => match s.pane {
            Pane::Charts | Pane::Matrices => {
                figure::prompt(s).unwrap_or_else(|| results::export(s))
            }
            _ => results::export(s),
        },
        Action::FigureExists {
            session,
            figure,
            path,
        } => {
            figure::exists(s, session, figure, path);
            vec![]
        }
        Action::Step(d) => {
            replay::step(s, d);
            vec![]
        }
        Action::Tick(now) => {
            replay::tick(s, now);
            vec![]
        }
        a @ (Action::DirListed { .. }
        | Action::TableLoaded { .. }
        | Action::MedianComputed { .. }) => data::answer(s, a),
        a @ (Action::Saved(_)
        | Action::Kept(_)
        | Action::SessionsListed { .. }
        | Action::SessionOpened(_)
        | Action::CompareLoaded(_)
        | Action::ComparisonLoaded(_)
        | Action::Predicted(_)
        | Action::MarkedLoaded(..)
        | Action::SessionChanged(_)) => sessions::answer(s, a),
        Action::WidthWarnings(warnings) => {
            // Found in the background: they belong to the search still shown, if any.
            if s.run.sweep.is_none() {
                return vec![];
            }
            for w in warnings {
                s.status = format!("warning: {w}");
                s.run.notes.push(format!("warning: {w}"));
            }
            vec![]
        }
        Action::Exported(r) => {
            s.status = match r {
                Ok(m) => m,
                Err(e) => format!("export failed: {e}"),
            };
            vec![]
        }
        // Everything else means something only in the pane it was pressed in.
        a => match s.pane {
            Pane::Data => data::on_key(s, a),
            Pane::Kernel if matches!(a, Action::SweepPrompt) => sweep::prompt(s),
            Pane::Run if matches!(a, Action::SweepPrompt) => sweep::search_prompt(s),
            Pane::Method | Pane::Kernel => form::on_key(s, a),
            Pane::Run | Pane::Results => results::on_key(s, a),
            Pane::Charts => replay::on_key(s, a),
            Pane::Matrices => matrices::on_key(s, a),
            Pane::Sessions => sessions::on_key(s, a),
        },
    }
}

/// `q`: quit at once when nothing would be lost; otherwise ask first.
fn quit(s: &mut State) -> Vec<Effect> {
    if let Some(Prompt {
        kind: PromptKind::ConfirmQuit { .. },
        ..
    }) = &s.prompt
    {
        // A second Ctrl-C (or q) at the question means it.
        return force_quit(s);
    }
    match s.unsaved_work() {
        Some(why) => {
            s.help = false;
            s.prompt = Some(Prompt::new(PromptKind::ConfirmQuit { why }, ""));
            vec![]
        }
        None => force_quit(s),
    }
}

/// Quit now, cancelling a running fit (SIGTERM, or the answer y).
fn force_quit(s: &mut State) -> Vec<Effect> {
    s.quit = true;
    s.prompt = None;
    if s.is_running() {
        return vec![Effect::CancelRun];
    }
    vec![]
}

fn goto(s: &mut State, p: Pane) -> Vec<Effect> {
    // Out of sight the comparison would leave "comparing … (Esc to close)" in the status
    // with no Esc to close it; c compares again.
    if s.pane == Pane::Sessions && p != Pane::Sessions && s.sessions.compare.take().is_some() {
        s.status = "compare closed".into();
    }
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
        return vec![];
    }
    if let Some(p) = s.prompt.take() {
        s.status = match p.kind {
            PromptKind::ConfirmDelete { .. } => "not deleted".into(),
            PromptKind::ConfirmQuit { .. } => "still here".into(),
            PromptKind::ConfirmPrune { .. } => "nothing deleted".into(),
            PromptKind::SaveName => "not kept (the run stays recorded; s keeps it)".into(),
            PromptKind::Rename { .. } => "not renamed".into(),
            PromptKind::Sweep { .. } => "the field's mark is as it was".into(),
            PromptKind::Search => "no search".into(),
            PromptKind::Figure { .. } => "no figure".into(),
            PromptKind::ConfirmOverwrite { path, .. } => {
                format!("nothing written: {} kept as it was", path.display())
            }
            PromptKind::Predict { .. } => "no prediction".into(),
            PromptKind::AssignView { .. } => "no view made".into(),
            PromptKind::RenameView { .. } => "not renamed".into(),
            PromptKind::FindFile => String::new(),
            PromptKind::Filter => {
                sessions::filter_typed(s, "");
                "filter cleared".into()
            }
        };
        return vec![];
    }
    if s.pane == Pane::Kernel && s.kernel.editing {
        return form::on_key(s, Action::Back);
    }
    // A running fit is what Esc stops first, from any pane: the user need not find Run.
    if s.is_running() && !s.run.cancelling {
        return run::cancel(s);
    }
    match s.pane {
        Pane::Run => run::cancel(s),
        Pane::Data => data::on_key(s, Action::Back),
        Pane::Sessions => sessions::on_key(s, Action::Back),
        _ => vec![],
    }
}

/// `cur` moved by `d` within `0..len` (huge `d` jumps to an end).
pub(super) fn moved(cur: usize, d: i64, len: usize) -> usize {
    if len == 0 {
        0
    } else {
        (cur as i64).saturating_add(d).clamp(0, len as i64 - 1) as usize
    }
}

/// The step of a list-moving action: ±1, ±10 for a page, huge for the ends.
pub(super) fn delta(a: &Action) -> Option<i64> {
    match a {
        Action::Up => Some(-1),
        Action::Down => Some(1),
        Action::Top => Some(i64::MIN / 2),
        Action::Bottom => Some(i64::MAX / 2),
        Action::MoveCursor(0, dy) => Some(*dy as i64),
        _ => None,
    }
}
