//! Searches from the workbench: `w` on a numeric Kernel field asks a range and marks the
//! field with it; `w` in Run asks how (grid, random draws, halving) and starts the engine's
//! cross-validated search in the worker; rows arrive as `RunMessage::SweepRow` and the best
//! configuration, refitted, ends the run like a fit (`s` saves it).

use ovk_core::train::sweep::SweepRow;

use super::super::effect::Effect;
use super::super::state::{
    integer_field, parse_how, parse_sweep, plan_search, search_configs, sweep_default_text,
    sweepable, Mark, Pane, Prompt, PromptKind, RunState, RunStatus, State, SweepSet, SweepState,
};
use ovk_core::train::search::Strategy;
use ovk_core::train::RunConfig;

/// `w` in the Kernel pane: ask the range for the field under the cursor (its mark's, if it
/// is marked already).
pub(super) fn prompt(s: &mut State) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only: open the workbench to sweep".into();
        return vec![];
    }
    let Some(f) = s.kernel.current().map(|i| &s.kernel.fields[i]) else {
        return vec![];
    };
    if !sweepable(f) {
        s.status = format!(
            "{} is not a number: w marks a numeric field for search (σ, λ, rank, iterations …)",
            f.key()
        );
        return vec![];
    }
    let text = match s.search.get(f.key()) {
        Some(m) => m.text.clone(),
        None => sweep_default_text(f),
    };
    s.prompt = Some(Prompt::new(
        PromptKind::Sweep {
            key: f.key().to_string(),
        },
        text,
    ));
    vec![]
}

/// Enter at the range prompt: check the range against the field and mark the field for
/// search with it (an empty range unmarks it). `w` in Run starts the search.
pub(super) fn submit(s: &mut State, key: &str, text: &str) -> Vec<Effect> {
    let Some(field) = s.kernel.fields.iter().find(|f| f.key() == key).cloned() else {
        return vec![];
    };
    if text.trim().is_empty() {
        s.status = if s.search.remove(key) {
            format!("{key} is no longer marked for search")
        } else {
            format!("{key} was not marked")
        };
        return vec![];
    }
    let plan = match parse_sweep(&field, text) {
        Ok(p) => p,
        Err(why) => {
            s.status = format!("sweep {key}: {why}");
            s.prompt = Some(Prompt::new(
                PromptKind::Sweep {
                    key: key.to_string(),
                },
                text.to_string(),
            ));
            return vec![];
        }
    };
    let label = plan.label.clone();
    let n = plan.values.len();
    drop_foreign_marks(s);
    s.search.set(Mark {
        text: text.trim().to_string(),
        plan,
        integer: integer_field(&field),
    });
    s.status = format!(
        "marked: {} ({label}: {n} values) — w on another field adds it, w in Run (4) \
         searches them",
        s.search.labels()
    );
    vec![]
}

/// `w` in the Run pane: ask how to search the marked fields.
pub(super) fn search_prompt(s: &mut State) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only: open the workbench to search".into();
        return vec![];
    }
    drop_foreign_marks(s);
    if s.search.marks.is_empty() {
        s.status = "no field is marked for search: w on a Kernel (3) field marks it with its \
                    range"
            .into();
        return vec![];
    }
    s.prompt = Some(Prompt::new(PromptKind::Search, s.search.default_how()));
    vec![]
}

/// Enter at the search prompt: draw the configurations, check the rest of the form, start.
pub(super) fn search_submit(s: &mut State, text: &str) -> Vec<Effect> {
    let again = |s: &mut State, why: String| {
        s.status = format!("search: {why}");
        s.prompt = Some(Prompt::new(PromptKind::Search, text.to_string()));
        vec![]
    };
    if s.is_running() {
        s.status = "a fit is already running (Esc or c in Run cancels it)".into();
        return vec![];
    }
    let how = match parse_how(text) {
        Ok(h) => h,
        Err(why) => return again(s, why),
    };
    let plan = match plan_search(&s.search.marks, &how) {
        Ok(p) => p,
        Err(why) => return again(s, why),
    };
    s.search.how = Some(text.trim().to_string());
    // The searched fields' own texts do not matter (each point replaces them); the rest must run.
    let form = s.kernel.clone();
    for (axis, v) in plan.axes.iter().zip(&plan.points[0]) {
        if let Some(f) = s.kernel.fields.iter_mut().find(|f| f.key() == axis.key) {
            f.text = ovk_core::methods::Value::Float(*v).to_string();
            f.validate();
        }
    }
    let base = s.run_config();
    s.kernel = form;
    let base = match base {
        // Each configuration is scored on the search's own folds: no --cv inside them.
        Ok(c) => RunConfig { cv: None, ..c },
        Err(why) => {
            s.status = format!("cannot search: {why}");
            return vec![];
        }
    };
    let configs = search_configs(&base, &plan, &s.kernel.fields);
    let folds = plan.folds;
    let n = configs.len();
    s.run = RunState::new();
    s.run.status = RunStatus::Running;
    s.run.started = Some(s.now);
    // Shown in Run: the form as typed (the searched fields' own texts are not what runs).
    s.run.config = Some(s.run_config().unwrap_or_else(|_| base.clone()));
    let strategy = plan.strategy;
    let label = plan.label.clone();
    s.run.sweep = Some(SweepState {
        plan,
        rows: Vec::new(),
    });
    s.scroll.trace = None;
    s.scroll.notes = 0;
    s.pane = Pane::Run;
    // The live validation curve, not marked runs, is what Charts shows now.
    s.sessions.runs.chart_marked = false;
    let cv = folds.map_or_else(
        || "scored on the test part".into(),
        |k| format!("{k}-fold CV"),
    );
    let what = match strategy {
        Strategy::Grid if n == 1 || label.contains('×') => format!("{n} combinations"),
        Strategy::Grid => format!("{n} values"),
        Strategy::Random => format!("{n} random draws (seed {})", how.seed),
        Strategy::Halving => format!(
            "{n} configurations by successive halving (a 1/{} survives each rung)",
            how.factor
        ),
    };
    s.status = format!(
        "{} {label} over {what} ({cv}) with {} — the best is refitted and kept",
        if label.contains('×') {
            "searching"
        } else {
            "sweeping"
        },
        base.method
    );
    match strategy {
        Strategy::Halving => vec![Effect::StartHalving {
            configs,
            folds,
            factor: how.factor,
        }],
        _ => vec![Effect::StartSweep { configs, folds }],
    }
}

/// The sweep is over and its best configuration refitted: its values go into their Kernel
/// fields, so the next fit (and what the pane shows) is the one kept. Returns what was set.
pub(super) fn keep_best(s: &mut State) -> Option<String> {
    let sw = s.run.sweep.as_ref()?;
    let best = sw.best()?;
    let point = sw.plan.points.get(best.index)?.clone();
    // as the engine wrote them (a whole number for an integer field), else the grid's value
    let set: Vec<(String, String, String)> = sw
        .plan
        .axes
        .iter()
        .zip(&point)
        .map(|(a, v)| {
            let value = match best.values.get(&a.key) {
                Some(v) => v.clone(),
                None => ovk_core::methods::Value::Float(*v).to_string(),
            };
            (a.key.clone(), a.label.clone(), value)
        })
        .collect();
    let data = s.run.config.as_ref().map(|c| c.data.path.clone());
    let method = s.method().map(|m| m.name().to_string());
    for (key, _, value) in &set {
        if let Some(field) = s.kernel.fields.iter_mut().find(|f| f.key() == *key) {
            field.text = value.clone();
            field.validate();
        }
    }
    s.sweep_set = match (data, method, set.as_slice()) {
        (Some(data), Some(method), [(key, _, value)]) => Some(SweepSet {
            method,
            key: key.clone(),
            value: value.clone(),
            data,
        }),
        _ => None,
    };
    let sw = s.run.sweep.as_ref()?;
    // the note said "refitting…" while it ran; now it is done
    let words = best_words(sw);
    if let Some(n) = s.run.notes.iter_mut().find(|n| **n == refitting(&words)) {
        *n = format!("refitted the best, {words}, on the whole training part: the result shown");
    }
    let said: Vec<String> = set
        .iter()
        .map(|(_, label, value)| format!("{label} = {value}"))
        .collect();
    Some(said.join(", "))
}

/// The best configuration in the table's terms: its value and its row as the table numbers
/// and stars it (the engine's own index counts from 0).
fn best_words(sw: &SweepState) -> String {
    let Some(b) = sw.best() else {
        return "none".into();
    };
    format!(
        "{} (row {} of {}, *)",
        point_words(sw, b.index),
        b.index + 1,
        sw.plan.values.len()
    )
}

/// Configuration `i` of a search as `σ = 1, λ = 0.01`.
fn point_words(sw: &SweepState, i: usize) -> String {
    let point = sw.plan.points.get(i);
    let words: Vec<String> = sw
        .plan
        .axes
        .iter()
        .enumerate()
        .map(|(a, axis)| {
            let v = point.and_then(|p| p.get(a)).copied().unwrap_or(f64::NAN);
            format!("{} = {}", axis.label, ovk_core::methods::Value::Float(v))
        })
        .collect();
    words.join(", ")
}

fn refitting(words: &str) -> String {
    format!("refitting the best, {words}, on the whole training part…")
}

/// Another data file was opened: a value the last sweep chose on other data goes back to its
/// default instead of silently carrying over. What happened, for the status line.
pub(super) fn forget_best_on_other_data(s: &mut State) -> Option<String> {
    let set = s.sweep_set.clone()?;
    let now = s.data.table.as_ref().map(|t| t.path.clone())?;
    if now == set.data {
        return None;
    }
    s.sweep_set = None;
    let reset = |k: &mut super::super::state::KernelState| -> Option<String> {
        let f = k
            .fields
            .iter_mut()
            .find(|f| f.key() == set.key && f.text == set.value)?;
        f.text = f.default_text();
        f.validate();
        Some(f.text.clone())
    };
    let current = s.method().is_some_and(|m| m.name() == set.method);
    let back = if current {
        reset(&mut s.kernel)
    } else {
        s.kernel_by_method.get_mut(&set.method).and_then(reset)
    }?;
    let file = set.data.file_name().map_or_else(
        || set.data.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let back = if back.is_empty() {
        "its default".into()
    } else {
        format!("its default {back}")
    };
    Some(format!(
        "{} = {} was the sweep's best on {file}: back to {back} for these data",
        set.key, set.value
    ))
}

/// A scored configuration of the running sweep.
pub(super) fn row(s: &mut State, row: SweepRow) {
    if let Some(sw) = &mut s.run.sweep {
        // the table has room for "failed" only: the reason goes to the notes, whole
        if let Some(e) = &row.error {
            s.run
                .notes
                .push(format!("{} failed: {e}", point_words(sw, row.index)));
        }
        sw.rows.push(row);
        let total = sw.total();
        s.run.phase_done = sw.rows.len();
        s.run.phase_total = Some(total);
        // The ETA's pace: the sweep's time per configuration so far.
        s.run.phase_started = s.run.started;
        if sw.rows.len() == total && sw.best().is_some() {
            let note = refitting(&best_words(sw));
            s.status = note.clone();
            s.run.notes.push(note);
        } else if let Some(b) = sw.best() {
            s.status = format!(
                "sweep {}/{total} · best so far {} ({} {:.4})",
                sw.rows.len(),
                point_words(sw, b.index),
                b.metric,
                b.mean
            );
        }
    }
}

/// Drop the search marks of fields this form lacks (another method's): the search runs this form.
fn drop_foreign_marks(s: &mut State) {
    let here: Vec<String> = s
        .kernel
        .fields
        .iter()
        .map(|f| f.key().to_string())
        .collect();
    s.search.marks.retain(|m| here.contains(&m.plan.key));
}
