//! Sessions pane and saving: the list, open, rename, delete, compare two marked sessions; and
//! the answers of the store.

use crate::session::{Listing, Summary};

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::state::{Pane, Prompt, PromptKind, State};
use super::{delta, moved, run};

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    if let Some(d) = delta(&a) {
        if s.sessions.compare.is_some() && matches!(a, Action::MoveCursor(..)) {
            s.scroll.compare = (s.scroll.compare as i64 + d).max(0) as usize;
        } else {
            s.sessions.cursor = moved(s.sessions.cursor, d, s.sessions.list.len());
        }
        return vec![];
    }
    match a {
        Action::Back => {
            s.sessions.compare = None;
            s.sessions.marked.clear();
            vec![]
        }
        Action::Enter => match selected(s) {
            Some(sum) => vec![Effect::OpenSession(sum.path.clone())],
            None => vec![],
        },
        Action::Space => mark(s),
        Action::Rename => {
            if let Some(sum) = selected(s) {
                s.prompt = Some(Prompt {
                    kind: PromptKind::Rename { id: sum.id.clone() },
                    text: sum.name.clone(),
                });
            }
            vec![]
        }
        Action::Delete => {
            if let Some(sum) = selected(s) {
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
        _ => vec![],
    }
}

fn mark(s: &mut State) -> Vec<Effect> {
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
    s.scroll.compare = 0;
    if let [a, b] = s.sessions.marked[..] {
        let path = |i: usize| match &s.sessions.list[i] {
            Listing::Ok(sum) => Some(sum.path.clone()),
            _ => None,
        };
        if let (Some(a), Some(b)) = (path(a), path(b)) {
            return vec![Effect::LoadCompare(a, b)];
        }
    }
    vec![]
}

fn selected(s: &State) -> Option<&Summary> {
    match s.sessions.list.get(s.sessions.cursor)? {
        Listing::Ok(sum) => Some(sum),
        Listing::Corrupt { .. } => None,
    }
}

/// `s`: ask a name for the shown result. Says why when there is nothing (new) to save.
pub(super) fn save(s: &mut State) -> Vec<Effect> {
    let cancelled = s.run.status == super::super::state::RunStatus::Cancelled;
    match &s.result {
        None if cancelled => {
            s.status =
                "the fit was cancelled: there is no result to save — r starts a new fit".into()
        }
        None if s.is_running() => {
            s.status = "the fit is still running — s saves it once it has finished".into()
        }
        None => s.status = "nothing to save yet — run a fit first (r)".into(),
        Some(_) if s.replay.is_some() => {
            s.status = "replay is read-only: this session is already saved".into()
        }
        Some(f) => {
            if let Some(p) = &f.saved {
                s.status = format!("already saved ({}); saving again makes a copy", p.display());
            } else if cancelled {
                s.status = format!(
                    "the last fit was cancelled: this saves the earlier result '{}'",
                    f.outcome.record.name
                );
            }
            let name = f.outcome.record.name.clone();
            s.prompt = Some(Prompt {
                kind: PromptKind::SaveName,
                text: name,
            });
        }
    }
    vec![]
}

pub(super) fn answer(s: &mut State, a: Action) -> Vec<Effect> {
    match a {
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
                    run::install_result(s, outcome, Some(path));
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
        _ => vec![],
    }
}
