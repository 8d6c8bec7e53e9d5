//! Typing into a prompt or a Kernel field, and what Enter on a prompt does.

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::state::{Pane, Prompt, PromptKind, State};
use super::{data, figure, force_quit, sessions, sweep};

/// A typed character, Backspace or Ctrl-U: into the prompt, else into the field being edited.
pub(super) fn text(s: &mut State, a: Action) -> Vec<Effect> {
    if let Some(Prompt {
        kind: PromptKind::ConfirmQuit { .. },
        ..
    }) = &s.prompt
    {
        // A question, not a text box: one key answers it.
        return match a {
            Action::Char('y' | 'Y') => force_quit(s),
            Action::Char('n' | 'N') => {
                s.prompt = None;
                s.status = "still here".into();
                vec![]
            }
            _ => vec![],
        };
    }
    let edit = |t: &mut String| match a {
        Action::Char(c) => t.push(c),
        Action::Backspace => {
            t.pop();
        }
        Action::ClearText => t.clear(),
        _ => {}
    };
    if let Some(p) = &mut s.prompt {
        edit(&mut p.text);
        if p.kind == PromptKind::Filter {
            let text = p.text.clone();
            sessions::filter_typed(s, &text);
        } else if p.kind == PromptKind::FindFile {
            let text = p.text.clone();
            data::find_typed(s, &text);
        }
    } else if s.kernel.editing && s.pane == Pane::Kernel {
        if let Some(i) = s.kernel.current() {
            edit(&mut s.kernel.fields[i].text);
            s.kernel.fields[i].validate();
        }
    }
    vec![]
}

pub(super) fn submit(s: &mut State, p: Prompt) -> Vec<Effect> {
    match p.kind {
        PromptKind::SaveName => {
            let name = p.text.trim().to_string();
            let Some(f) = &s.result else { return vec![] };
            if name.is_empty() {
                s.status = "a session needs a name".into();
                s.prompt = Some(Prompt::new(PromptKind::SaveName, ""));
                return vec![];
            }
            s.status = format!("keeping '{name}'…");
            match &f.saved {
                Some(dir) => vec![Effect::KeepSession {
                    dir: dir.clone(),
                    name,
                }],
                // never recorded (the store refused it): saved whole now
                None => vec![Effect::SaveSession {
                    name,
                    outcome: Box::new(f.outcome.clone()),
                }],
            }
        }
        PromptKind::ConfirmPrune { count } => {
            if p.text.trim().eq_ignore_ascii_case("y") || p.text.trim().eq_ignore_ascii_case("yes")
            {
                s.status = format!("deleting {count} runs not kept…");
                vec![Effect::PruneUnkept]
            } else {
                s.status = "nothing deleted (type y to confirm)".into();
                vec![]
            }
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
        PromptKind::Sweep { key } => sweep::submit(s, &key, &p.text),
        PromptKind::Search => sweep::search_submit(s, &p.text),
        PromptKind::Figure { session, figure } => figure::submit(s, session, figure, &p.text),
        PromptKind::ConfirmOverwrite {
            session,
            figure,
            path,
        } => figure::overwrite(s, session, figure, path, &p.text),
        PromptKind::Filter => {
            sessions::filter_typed(s, &p.text);
            let shown = s.sessions.runs.rows(&s.sessions.list).len();
            s.status = if p.text.trim().is_empty() {
                "no filter".into()
            } else {
                format!("{shown} runs match '{}' (Esc clears)", p.text.trim())
            };
            vec![]
        }
        PromptKind::Predict { session, name } => sessions::predict(s, session, name, &p.text),
        PromptKind::AssignView { .. } => data::assign_view(s, &p.text),
        PromptKind::RenameView { from } => data::rename_view(s, &from, &p.text),
        PromptKind::FindFile => data::find_submit(s, &p.text),
        // Enter at "quit?" keeps the work: only y quits.
        PromptKind::ConfirmQuit { .. } => {
            s.status = "still here (y at the question quits)".into();
            vec![]
        }
    }
}
