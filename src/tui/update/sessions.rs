//! Sessions pane and saving: the runs table (sort by a column, filter, mark any number for the
//! Charts overlay), open, rename, delete, compare the marked runs; and the answers of the store.

use std::path::PathBuf;

use ovk_core::session::{Listing, Summary};
use ovk_core::train::RunOutcome;

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::state::{Column, Pane, Prompt, PromptKind, RunState, State};
use super::{delta, moved, replay, run};

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    if let Some(d) = delta(&a) {
        if let Some(p) = &mut s.sessions.predictions {
            let n = p.table.n_rows();
            p.scroll = moved(p.scroll, d, n);
        } else if (s.sessions.compare.is_some() || s.sessions.comparison.is_some())
            && matches!(a, Action::MoveCursor(..))
        {
            s.scroll.compare = (s.scroll.compare as i64 + d).max(0) as usize;
        } else {
            let n = s.sessions.runs.rows(&s.sessions.list).len();
            s.sessions.cursor = moved(s.sessions.cursor, d, n);
        }
        return vec![];
    }
    match a {
        Action::Column(d) if s.sessions.predictions.is_some() => {
            // sideways through the predictions' columns (the view clamps at the last page)
            let c = &mut s.scroll.prediction_cols;
            *c = (*c as i64 + d as i64).max(0) as usize;
            vec![]
        }
        Action::Back => {
            s.scroll.prediction_cols = 0;
            if s.sessions.predictions.take().is_some() {
                s.status = "predictions closed".into();
            } else if s.sessions.compare.is_some() || s.sessions.comparison.is_some() {
                s.sessions.compare = None;
                s.sessions.comparison = None;
                s.status = "compare closed".into();
            } else if !s.sessions.runs.filter.is_empty() {
                s.sessions.runs.filter.clear();
                s.status = "filter cleared".into();
            } else if !s.sessions.runs.marked.is_empty() {
                s.sessions.runs.marked.clear();
                s.status = "marks cleared".into();
            }
            vec![]
        }
        Action::Enter => match selected(s) {
            Some(sum) => vec![Effect::OpenSession(sum.path.clone())],
            None => vec![],
        },
        Action::Space => mark(s),
        Action::Compare => compare(s),
        Action::Column(d) => {
            let n = s.sessions.columns().len();
            s.sessions.runs.column = moved(s.sessions.runs.column, d as i64, n);
            vec![]
        }
        Action::SortBy => {
            sort_by_column(s);
            vec![]
        }
        Action::Filter => {
            s.prompt = Some(Prompt::new(
                PromptKind::Filter,
                s.sessions.runs.filter.clone(),
            ));
            vec![]
        }
        Action::Rename => {
            ask_selected(s, |sum| {
                (PromptKind::Rename { id: sum.id.clone() }, sum.name.clone())
            });
            vec![]
        }
        Action::Delete => {
            ask_selected(s, |sum| {
                let (id, name) = (sum.id.clone(), sum.name.clone());
                (PromptKind::ConfirmDelete { id, name }, String::new())
            });
            vec![]
        }
        Action::Refresh => vec![Effect::ListSessions],
        Action::GroupByRows => {
            let runs = &mut s.sessions.runs;
            runs.grouped = !runs.grouped;
            s.status = if runs.grouped {
                format!(
                    "grouped by the rows each run was scored on: {} groups (same data, split and \
                     folds; = again ungroups)",
                    runs.groups(&s.sessions.list)
                )
            } else {
                "not grouped".into()
            };
            vec![]
        }
        Action::PrunePrompt => {
            let count = s
                .sessions
                .list
                .iter()
                .filter(|l| matches!(l, Listing::Ok(sum) if !sum.kept))
                .count();
            if count == 0 {
                s.status = "every run is kept: nothing to delete".into();
            } else {
                s.prompt = Some(Prompt::new(PromptKind::ConfirmPrune { count }, ""));
            }
            vec![]
        }
        Action::PredictPrompt => {
            let asked = ask_selected(s, |sum| {
                let (session, name) = (sum.path.clone(), sum.name.clone());
                (PromptKind::Predict { session, name }, String::new())
            });
            if !asked {
                s.status = "no session selected to predict with".into();
            }
            vec![]
        }
        _ => vec![],
    }
}

/// Enter at the predict prompt: the file, relative to where ovk was started.
pub(super) fn predict(
    s: &mut State,
    session: std::path::PathBuf,
    name: String,
    file: &str,
) -> Vec<Effect> {
    let file = file.trim();
    if file.is_empty() {
        s.status = "predict needs a CSV or Parquet file".into();
        return vec![];
    }
    s.status = format!("predicting {file} with '{name}'…");
    vec![Effect::Predict {
        session,
        name,
        data: file.into(),
    }]
}

/// `o`: sort by the column under the header cursor; again reverses; a third time, newest first.
fn sort_by_column(s: &mut State) {
    let cols = s.sessions.columns();
    let Some(col) = cols.get(s.sessions.runs.column).cloned() else {
        return;
    };
    let title = col.title();
    // Metrics and settings start best/largest first is a guess; text starts A→Z.
    let first_desc = matches!(col, Column::Metric(_));
    s.sessions.runs.sort = match s.sessions.runs.sort.take() {
        Some((c, d)) if c == col && d == first_desc => Some((c, !d)),
        Some((c, _)) if c == col => None,
        _ => Some((col, first_desc)),
    };
    s.status = match &s.sessions.runs.sort {
        Some((_, true)) => format!("sorted by {title}, largest first (o again reverses)"),
        Some((_, false)) => format!("sorted by {title}, smallest first (o again: newest first)"),
        None => "sorted newest first".into(),
    };
}

/// The filter prompt's text, applied as it is typed.
pub(super) fn filter_typed(s: &mut State, text: &str) {
    s.sessions.runs.filter = text.trim().to_string();
    s.sessions.cursor = 0;
}

/// Space: mark or unmark the run under the cursor (any number: Charts overlays them all, `c`
/// compares two). A newly marked run's curve is read in the background.
fn mark(s: &mut State) -> Vec<Effect> {
    let Some(path) = selected(s).map(|sum| sum.path.clone()) else {
        return vec![];
    };
    let runs = &mut s.sessions.runs;
    let mut effects = vec![];
    if let Some(k) = runs.marked.iter().position(|m| *m == path) {
        runs.marked.remove(k);
    } else {
        runs.marked.push(path.clone());
        runs.chart_marked = true;
        if !runs.curves.contains_key(&path) {
            effects.push(Effect::LoadMarked(path));
        }
    }
    let n = runs.marked.len();
    s.status = match n {
        0 => "no run marked".into(),
        1 => "1 run marked — mark more: 5 Charts overlays their curves".into(),
        _ => format!("{n} runs marked — 5 Charts overlays their curves · c compares them"),
    };
    s.sessions.cursor += 1;
    let rows = s.sessions.runs.rows(&s.sessions.list).len();
    s.sessions.cursor = s.sessions.cursor.min(rows.saturating_sub(1));
    effects
}

/// `c`: the marked runs side by side — every metric, per output, paired tests over shared
/// folds (`ovk compare`); the first two's settings while that loads or where it cannot.
fn compare(s: &mut State) -> Vec<Effect> {
    s.scroll.compare = 0;
    s.sessions.comparison = None;
    match &s.sessions.runs.marked[..] {
        [a, b, ..] => {
            s.status = format!("comparing {} marked runs…", s.sessions.runs.marked.len());
            vec![
                Effect::LoadCompare(a.clone(), b.clone()),
                Effect::LoadComparison(s.sessions.runs.marked.clone()),
            ]
        }
        _ => {
            s.status = "mark two runs with Space, then c compares them".into();
            vec![]
        }
    }
}

/// Ask `ask(selected)`'s prompt, its answer starting as the text given, about the selected
/// session; false when none is selected.
fn ask_selected(s: &mut State, ask: impl FnOnce(&Summary) -> (PromptKind, String)) -> bool {
    let Some((kind, text)) = selected(s).map(ask) else {
        return false;
    };
    s.prompt = Some(Prompt::new(kind, text));
    true
}

/// A saved session becomes what every pane shows. With no fit running, the Run pane, its
/// notes and the status badge are emptied of the last fit (its trace and "finished in" are
/// not this session's); a fit still running keeps its progress and replaces the session when
/// it ends. In a replay the session is replayed from its whole trace.
fn show_opened(s: &mut State, outcome: RunOutcome, path: PathBuf) {
    if s.replay.is_some() {
        return replay::show_replayed(s, outcome, path);
    }
    if !s.is_running() {
        s.run = RunState::new();
        s.scroll.trace = None;
        s.scroll.notes = 0;
    }
    run::install_result(s, outcome, Some(path));
}

fn selected(s: &State) -> Option<&Summary> {
    s.sessions.selected()
}

/// `s`: ask a name to keep the shown run under. Says why when there is nothing to keep.
pub(super) fn save(s: &mut State) -> Vec<Effect> {
    let cancelled = s.run.status == super::super::state::RunStatus::Cancelled;
    match &s.result {
        None if cancelled => {
            s.status = "the fit was cancelled: it is recorded as cancelled (8 Sessions lists it), \
                        with no result to keep — r starts a new fit"
                .into()
        }
        None if s.is_running() => {
            s.status = "the fit is still running — it is recorded when it finishes; s then keeps \
                        it under a name"
                .into()
        }
        None => s.status = "nothing to keep yet — run a fit first (r)".into(),
        Some(_) if s.replay.is_some() => {
            s.status = "replay is read-only: this session is already saved".into()
        }
        Some(f) if f.saved.is_some() && f.outcome.record.kept => {
            s.status = format!(
                "'{}' is kept already ({}) — n in 8 Sessions renames it",
                f.outcome.record.name,
                f.saved
                    .as_ref()
                    .map_or_else(String::new, |p| p.display().to_string())
            )
        }
        Some(f) => {
            if cancelled {
                s.status = format!(
                    "the last fit was cancelled (it is recorded as such): this keeps the earlier \
                     result '{}'",
                    f.outcome.record.name
                );
            }
            let name = f.outcome.record.name.clone();
            s.prompt = Some(Prompt::new(PromptKind::SaveName, name));
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
                    f.outcome.record.kept = true;
                }
                vec![Effect::ListSessions]
            }
            Err(e) => {
                s.status = format!("save failed: {e}");
                vec![]
            }
        },
        Action::Kept(r) => match r {
            Ok((dir, name)) => {
                s.status = format!("kept as '{name}' ({})", dir.display());
                if let Some(f) = s.result.as_mut().filter(|f| f.saved.as_ref() == Some(&dir)) {
                    f.outcome.record.kept = true;
                    f.outcome.record.name = name;
                }
                vec![Effect::ListSessions]
            }
            Err(e) => {
                s.status = format!("could not keep the run: {e}");
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
            let listed: Vec<&std::path::Path> = s
                .sessions
                .list
                .iter()
                .filter_map(|l| match l {
                    Listing::Ok(sum) => Some(sum.path.as_path()),
                    Listing::Corrupt { .. } => None,
                })
                .collect();
            // The shown result's session deleted (pruned, or from outside): s saves it anew.
            let root = s.sessions.root.clone();
            if let Some(f) = s.result.as_mut().filter(|_| s.replay.is_none()) {
                let gone = f.saved.as_deref().is_some_and(|p| {
                    root.as_deref().is_some_and(|r| p.starts_with(r)) && !listed.contains(&p)
                });
                if gone {
                    f.saved = None;
                }
            }
            let runs = &mut s.sessions.runs;
            runs.marked.retain(|p| listed.contains(&p.as_path()));
            runs.curves.retain(|p, _| listed.contains(&p.as_path()));
            let n = s.sessions.columns().len();
            s.sessions.runs.column = s.sessions.runs.column.min(n.saturating_sub(1));
            let rows = s.sessions.runs.rows(&s.sessions.list).len();
            s.sessions.cursor = s.sessions.cursor.min(rows.saturating_sub(1));
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
                    show_opened(s, outcome, path);
                    s.pane = Pane::Results;
                }
                Err(e) => s.status = format!("cannot open the session: {e}"),
            }
            vec![]
        }
        Action::MarkedLoaded(path, r) => {
            if let Err(e) = &r {
                s.status = format!("cannot read the marked run's curve: {e}");
            }
            s.sessions.runs.curves.insert(path, r);
            vec![]
        }
        Action::ComparisonLoaded(r) => {
            match r {
                Ok(c) => {
                    s.status = format!(
                        "{} runs side by side, * best (PgUp PgDn scroll · Esc closes)",
                        c.runs.len()
                    );
                    s.sessions.comparison = Some(c);
                }
                Err(e) => s.status = format!("cannot compare all marked runs: {e}"),
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
        Action::Predicted(r) => {
            match r {
                Ok(p) => {
                    let mut filled = match p.table.filled_rows {
                        0 => String::new(),
                        n => format!(", {n} with missing cells filled as in training"),
                    };
                    if let Some(sc) = &p.table.scored {
                        filled.push_str(&format!(
                            ", {} scored against the outputs the file holds",
                            sc.rows.len() - sc.trained_left_out
                        ));
                        if sc.trained_left_out > 0 {
                            filled.push_str(&format!(
                                " (its {} training rows left out)",
                                sc.trained_left_out
                            ));
                        }
                    }
                    s.status = format!(
                        "{} predictions of '{}' on {}{filled} (j k scroll · e saves the table · \
                         Esc closes)",
                        p.table.n_rows(),
                        p.session,
                        p.data.display()
                    );
                    if let Some(warn) = ignored_warning(&p.ignored) {
                        s.status = format!("{warn} · {}", s.status);
                    }
                    s.sessions.compare = None;
                    s.sessions.comparison = None;
                    s.sessions.predictions = Some(p);
                    s.scroll.prediction_cols = 0;
                }
                Err(e) => s.status = format!("cannot predict: {e}"),
            }
            vec![]
        }
        Action::SessionChanged(r) => {
            s.status = match r {
                Ok(m) => m,
                Err(e) => e,
            };
            s.sessions.compare = None;
            s.sessions.comparison = None;
            vec![Effect::ListSessions]
        }
        _ => vec![],
    }
}

/// A model applied to a table with columns it does not read: their count and a few names, so
/// a model of one data set applied to another's table is noticed.
fn ignored_warning(ignored: &[String]) -> Option<String> {
    const NAMED: usize = 3;
    if ignored.is_empty() {
        return None;
    }
    let mut names = ignored
        .iter()
        .take(NAMED)
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ");
    if ignored.len() > NAMED {
        names.push_str(", …");
    }
    Some(format!(
        "warning: the model ignores {} of this file ({names}) — is it the table it was made for?",
        super::super::widgets::count(ignored.len(), "column")
    ))
}
