//! Data pane: folders and files, column roles, the split; and the answers of listing a folder,
//! reading a table and computing the median σ.

use std::path::PathBuf;

use ovk_core::data::{Missing, TargetScale};
use ovk_core::util::choice::Choice;

use super::super::action::Action;
use super::super::effect::Effect;
use super::super::roles;
use super::super::state::{
    DataFocus, Median, Prompt, PromptKind, Role, RunState, RunStatus, State,
};
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
        Action::Filter => {
            s.data.focus = DataFocus::Files;
            s.prompt = Some(Prompt::new(PromptKind::FindFile, ""));
            vec![]
        }
        Action::Space => mark(s),
        Action::ViewPrompt => view_prompt(s),
        Action::RenameView => rename_prompt(s),
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

/// `u` and Backspace: the parent folder, from the files or the columns alike (Esc is "back to
/// the files").
fn parent_dir(s: &mut State) -> Vec<Effect> {
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

/// Type-to-find: the first entry whose name holds `text` (any case), from the top.
pub(super) fn find_typed(s: &mut State, text: &str) {
    let want = text.trim().to_lowercase();
    if want.is_empty() {
        return;
    }
    match s
        .data
        .entries
        .iter()
        .position(|e| e.name.to_lowercase().contains(&want))
    {
        Some(i) => {
            s.data.file_cursor = i;
            s.status = format!("found {} (Enter opens it)", s.data.entries[i].name);
        }
        None => s.status = format!("no file or folder here has '{}' in its name", text.trim()),
    }
}

/// Enter at the find prompt: open what it found.
pub(super) fn find_submit(s: &mut State, text: &str) -> Vec<Effect> {
    find_typed(s, text);
    let found = s
        .data
        .entries
        .get(s.data.file_cursor)
        .is_some_and(|e| e.name.to_lowercase().contains(&text.trim().to_lowercase()));
    if found && !text.trim().is_empty() {
        open_selected(s)
    } else {
        vec![]
    }
}

/// Space on a column: mark it (or unmark it) for `V`, and move on.
fn mark(s: &mut State) -> Vec<Effect> {
    if s.data.table.is_none() || s.data.focus != DataFocus::Columns {
        return vec![];
    }
    let n = s.data.roles.len();
    s.data.marked.resize(n, false);
    let i = s.data.col_cursor;
    if i >= n {
        return vec![];
    }
    s.data.marked[i] = !s.data.marked[i];
    let k = s.data.marked.iter().filter(|m| **m).count();
    s.status = format!(
        "{} marked — V puts the marked columns into a named view",
        super::super::widgets::count(k, "column")
    );
    s.data.col_cursor = (i + 1).min(n - 1);
    vec![]
}

/// `V`: ask for a view's name and its columns.
fn view_prompt(s: &mut State) -> Vec<Effect> {
    if s.data.table.is_none() {
        s.status = "open a file first (Enter), then choose a view's columns".into();
        return vec![];
    }
    let marked = s.data.marked.iter().filter(|m| **m).count();
    let start = s
        .data
        .view_name(s.data.col_cursor)
        .map(|v| format!("{v} = "))
        .unwrap_or_default();
    s.prompt = Some(Prompt::new(PromptKind::AssignView { marked }, start));
    vec![]
}

/// `n`: rename the view of the column under the cursor (to another view's name: merge).
fn rename_prompt(s: &mut State) -> Vec<Effect> {
    match s.data.view_name(s.data.col_cursor) {
        Some(from) => {
            s.prompt = Some(Prompt::new(
                PromptKind::RenameView { from: from.clone() },
                from,
            ));
        }
        None => {
            s.status = "this column is in no view: n renames the view of the column under the \
             cursor (V makes one)"
                .into();
        }
    }
    vec![]
}

/// `NAME = COLUMNS` (ranges a..b, globs p_*, /regex/, lists a,b — the run's selectors), or
/// `NAME` alone for the marked columns (else the one under the cursor): those of them that are
/// features become view NAME.
pub(super) fn assign_view(s: &mut State, text: &str) -> Vec<Effect> {
    let Some(t) = &s.data.table else {
        return vec![];
    };
    let (name, selectors) = match text.split_once('=') {
        Some((n, c)) => (n.trim().to_string(), Some(c.trim().to_string())),
        None => (text.trim().to_string(), None),
    };
    if name.is_empty() || name.contains(',') {
        s.status = "a view needs a name: NAME = columns (a..b, glob*, /regex/), or NAME for the \
         marked columns"
            .into();
        return vec![];
    }
    let picked: Vec<usize> = match selectors.filter(|c| !c.is_empty()) {
        Some(sel) => {
            let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
            match ovk_core::data::select_columns(&t.path, &names, &[sel]) {
                Ok(p) => p,
                Err(e) => {
                    s.status = e.to_string();
                    return vec![];
                }
            }
        }
        None if s.data.marked.iter().any(|m| *m) => (0..s.data.marked.len())
            .filter(|&i| s.data.marked[i])
            .collect(),
        None => vec![s.data.col_cursor],
    };
    let (mut taken, mut left) = (Vec::new(), 0usize);
    for i in picked {
        match s.data.roles.get(i) {
            Some(Role::Feature | Role::View) => taken.push(i),
            Some(_) => left += 1,
            None => {}
        }
    }
    if taken.is_empty() {
        s.status = format!(
            "no feature among those columns: a view groups features (f makes a column one); \
             {left} target, class, ignored or marker column{} left as {}",
            if left == 1 { "" } else { "s" },
            if left == 1 { "it was" } else { "they were" }
        );
        return vec![];
    }
    for &i in &taken {
        s.data.roles[i] = Role::View;
        s.data.view_of[i] = Some(name.clone());
    }
    s.data.views_edited = true;
    s.data.marked.iter_mut().for_each(|m| *m = false);
    let total = (0..s.data.roles.len())
        .filter(|&i| s.data.view_name(i).as_deref() == Some(name.as_str()))
        .count();
    let skipped = match left {
        0 => String::new(),
        k => format!(
            " · {} (target, class, ignored) left as {}",
            super::super::widgets::count(k, "column"),
            if k == 1 { "it was" } else { "they were" }
        ),
    };
    s.status = format!(
        "view {name}: {} added, {total} in all{skipped}",
        super::super::widgets::count(taken.len(), "column")
    );
    data_changed(s)
}

/// The view `from` renamed `to`; onto an existing view's name, the two merge.
pub(super) fn rename_view(s: &mut State, from: &str, to: &str) -> Vec<Effect> {
    let to = to.trim();
    if to.is_empty() || to.contains(',') || to.contains('=') {
        s.status = "a view's name is a word (no , or =)".into();
        return vec![];
    }
    if to == from {
        s.status = "same name: nothing changed".into();
        return vec![];
    }
    let merge = s.data.views().iter().any(|v| v == to);
    let mut moved = 0;
    for i in 0..s.data.roles.len() {
        if s.data.view_name(i).as_deref() == Some(from) {
            s.data.view_of[i] = Some(to.to_string());
            moved += 1;
        }
    }
    s.data.views_edited = true;
    s.status = if merge {
        format!(
            "view {from} merged into {to} ({} moved)",
            super::super::widgets::count(moved, "column")
        )
    } else {
        format!("view {from} is now {to}")
    };
    data_changed(s)
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
                    s.status = not_a_table(&want);
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
                    s.data.marked = vec![false; guess.roles.len()];
                    s.data.views_edited = false;
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
                    s.data.marked.clear();
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

/// Why a file given to open is not in the list: the tables the workbench reads.
fn not_a_table(path: &std::path::Path) -> String {
    let name = super::super::widgets::file_name(path);
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    let hint = match ext.as_deref() {
        Some("txt" | "dat") => " (a comma-separated text table can be renamed .csv)",
        _ => "",
    };
    format!(
        "{name} is not a table the workbench reads: it opens .csv, .tsv and .parquet files{hint}; \
         its folder is listed"
    )
}
