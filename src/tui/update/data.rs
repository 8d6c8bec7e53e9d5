//! Data pane: folders and files, column roles, the split; and the answers of listing a folder,
//! reading a table and computing the median σ.

use std::path::PathBuf;

use ovk_core::data::{Missing, TargetScale};
use ovk_core::util::choice::Choice;

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::roles;
use super::super::state::{DataFocus, Median, Role, RunState, RunStatus, State};
use super::{delta, moved};

pub(super) fn on_key(s: &mut State, a: Action) -> Vec<Effect> {
    if let Some(d) = delta(&a) {
        match s.data.focus {
            DataFocus::Files => {
                s.data.file_cursor = moved(s.data.file_cursor, d, s.data.entries.len())
            }
            DataFocus::Columns => {
                s.data.col_cursor = moved(s.data.col_cursor, d, s.data.roles.len())
            }
        }
        return vec![];
    }
    if s.replay.is_some() && !matches!(a, Action::Back) {
        s.status = "replay is read-only".into();
        return vec![];
    }
    match a {
        Action::Back => {
            s.data.focus = DataFocus::Files;
            vec![]
        }
        Action::Enter => open_selected(s),
        Action::SetRole(role) => set_role(s, role),
        Action::TestFraction(_) if s.data.test_column().is_some() => {
            s.status = format!(
                "the test rows are those `{}` marks; x on it (or f) splits at random instead",
                s.data.test_column().unwrap_or_default()
            );
            vec![]
        }
        Action::TestFraction(d) => {
            let f = (s.data.split.test_fraction + 0.05 * d as f64).clamp(0.0, 0.9);
            s.data.split.test_fraction = (f * 100.0).round() / 100.0;
            s.status = format!("test fraction {:.2}", s.data.split.test_fraction);
            data_changed(s)
        }
        Action::Seed(d) => {
            s.data.split.seed = s.data.split.seed.saturating_add_signed(d);
            s.status = format!("split seed {}", s.data.split.seed);
            data_changed(s)
        }
        Action::ToggleScale => {
            s.data.split.scale = s.data.split.scale.next();
            data_changed(s)
        }
        Action::CycleTargetScale => {
            let t = &mut s.data.split.target_scale;
            *t = t.next();
            s.status = match *t {
                TargetScale::None => "targets as in the file (no intercept)",
                TargetScale::Center => "targets centred: an intercept, predicted in their units",
                TargetScale::Standard => "targets standardised: each output weighs the same",
            }
            .into();
            data_changed(s)
        }
        Action::ToggleDropMissing => {
            // refuse → drop → impute → refuse
            let m = &mut s.data.split.missing;
            *m = m.next();
            s.status = match *m {
                Missing::Drop => "rows with a missing cell in a used column are dropped".into(),
                Missing::Impute => "missing features are imputed (numeric: column mean; text: \
                                    most frequent value); rows missing an output are dropped"
                    .into(),
                Missing::Refuse => "missing cells refuse the run (m: drop, then impute)".into(),
            };
            data_changed(s)
        }
        Action::Labeled(d) => {
            let cur = s.data.split.labeled.unwrap_or(1.0);
            let next = ((cur + 0.05 * d as f64) * 100.0).round() / 100.0;
            s.data.split.labeled = (next < 1.0).then_some(next.max(0.05));
            s.status = match s.data.split.labeled {
                Some(f) => format!(
                    "labeled fraction {f:.2}: the other training rows lose their labels \
                     (semi-supervised methods use them unlabeled)"
                ),
                None => "every training row keeps its label".into(),
            };
            data_changed(s)
        }
        Action::ParentDir => parent_dir(s),
        _ => vec![],
    }
}

fn parent_dir(s: &mut State) -> Vec<Effect> {
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

fn open_selected(s: &mut State) -> Vec<Effect> {
    if s.data.focus != DataFocus::Files {
        return vec![];
    }
    match s.data.entries.get(s.data.file_cursor) {
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
    }
}

fn set_role(s: &mut State, role: Role) -> Vec<Effect> {
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
    if role == Role::TestMarker {
        // One marker: the previous one is ignored (a split marker is no input).
        for r in s.data.roles.iter_mut() {
            if *r == Role::TestMarker {
                *r = Role::Ignore;
            }
        }
    }
    s.data.roles[i] = role;
    if let Some(v) = s.data.view_of.get_mut(i) {
        *v = None; // `v` groups by prefix; a sidecar view name no longer applies
    }
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

/// The split settings of the open file, remembered for when it is opened again.
fn remember_split(s: &mut State) {
    if let Some(t) = &s.data.table {
        s.split_by_file.insert(t.path.clone(), s.data.split);
    }
}

/// The data choice changed: the median σ is stale; recompute it when the choice is complete.
pub(super) fn data_changed(s: &mut State) -> Vec<Effect> {
    remember_split(s);
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

pub(super) fn answer(s: &mut State, a: Action) -> Vec<Effect> {
    match a {
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
                    let guess = roles::prefill(&t, sidecar.as_deref());
                    s.data.roles = guess.roles;
                    s.data.view_of = guess.views;
                    s.data.roles_source = guess.source;
                    s.status = format!(
                        "{}: {} rows × {} columns — set roles with f t c v x T",
                        path.display(),
                        t.n_rows,
                        t.columns.len()
                    );
                    // A file starts with its own split settings, not the last file's.
                    s.data.split = s.split_by_file.get(&t.path).copied().unwrap_or_default();
                    s.data.table = Some(t);
                    s.data.load_error = None;
                    // A failed or cancelled fit is over once other data are loaded: its badge
                    // and partial trace must not stay as if they were about these.
                    if matches!(s.run.status, RunStatus::Failed(_) | RunStatus::Cancelled) {
                        s.run = RunState::new();
                    }
                    s.data.focus = super::super::state::DataFocus::Columns;
                    s.data.col_cursor = 0;
                    if let Some(said) = super::sweep::forget_best_on_other_data(s) {
                        s.status = format!("{} · {said}", s.status);
                    }
                    data_changed(s)
                }
                Err(e) => {
                    s.data.table = None;
                    s.data.roles.clear();
                    s.data.view_of.clear();
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
        _ => vec![],
    }
}
