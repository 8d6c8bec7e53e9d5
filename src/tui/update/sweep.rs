//! Sweeps from the workbench: `w` on a numeric Kernel field asks a range, Enter checks it
//! against the field and starts the engine's cross-validated sweep on the background thread;
//! rows arrive as `RunMessage::SweepRow` and the best configuration, refitted, ends the run
//! like a fit (`s` saves it).

use ovk_core::train::sweep::SweepRow;

use super::super::effect::Effect;
use super::super::state::{
    parse_sweep, sweep_configs, sweep_default_text, sweepable, Pane, Prompt, PromptKind, RunState,
    RunStatus, State, SweepSet, SweepState,
};
use ovk_core::train::RunConfig;

/// `w` in the Kernel pane: ask the range for the field under the cursor.
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
            "{} is not a number: w sweeps a numeric field (σ, λ, rank, iterations …)",
            f.key()
        );
        return vec![];
    }
    s.prompt = Some(Prompt::new(
        PromptKind::Sweep {
            key: f.key().to_string(),
        },
        sweep_default_text(f),
    ));
    vec![]
}

/// Enter at the sweep prompt: check the range and the rest of the form, then start.
pub(super) fn submit(s: &mut State, key: &str, text: &str) -> Vec<Effect> {
    let again = |s: &mut State, why: String| {
        s.status = format!("sweep {key}: {why}");
        s.prompt = Some(Prompt::new(
            PromptKind::Sweep {
                key: key.to_string(),
            },
            text.to_string(),
        ));
        vec![]
    };
    if s.is_running() {
        s.status = "a fit is already running (Esc or c in Run cancels it)".into();
        return vec![];
    }
    let Some(field) = s.kernel.fields.iter().find(|f| f.key() == key).cloned() else {
        return vec![];
    };
    let plan = match parse_sweep(&field, text) {
        Ok(p) => p,
        Err(why) => return again(s, why),
    };
    // The swept field's own text does not matter (each value replaces it); the rest must run.
    let form = s.kernel.clone();
    if let Some(f) = s.kernel.fields.iter_mut().find(|f| f.key() == key) {
        f.text = ovk_core::methods::Value::Float(plan.values[0]).to_string();
        f.validate();
    }
    let base = s.run_config();
    s.kernel = form;
    let base = match base {
        // Each configuration is scored on the sweep's own folds: no --cv inside them.
        Ok(c) => RunConfig { cv: None, ..c },
        Err(why) => {
            s.status = format!("cannot sweep: {why}");
            return vec![];
        }
    };
    let configs = sweep_configs(&base, &plan, &field);
    let folds = plan.folds;
    let n = configs.len();
    s.run = RunState::new();
    s.run.status = RunStatus::Running;
    s.run.started = Some(s.now);
    // Shown in Run: the form as typed (the swept field's own text is not what runs).
    s.run.config = Some(s.run_config().unwrap_or_else(|_| base.clone()));
    s.run.sweep = Some(SweepState {
        plan: plan.clone(),
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
    s.status = format!(
        "sweeping {} over {n} values ({cv}) with {} — the best is refitted and kept",
        plan.label, base.method
    );
    vec![Effect::StartSweep { configs, folds }]
}

/// The sweep is over and its best configuration refitted: that value goes into its Kernel
/// field, so the next fit (and what the pane shows) is the one kept. Returns what was set.
pub(super) fn keep_best(s: &mut State) -> Option<String> {
    let sw = s.run.sweep.as_ref()?;
    let best = sw.best()?;
    // as the engine wrote it (a whole number for an integer field), else the grid's value
    let value = match best.values.get(&sw.plan.key) {
        Some(v) => v.clone(),
        None => ovk_core::methods::Value::Float(*sw.plan.values.get(best.index)?).to_string(),
    };
    let label = sw.plan.label.clone();
    let key = sw.plan.key.clone();
    let data = s.run.config.as_ref().map(|c| c.data.path.clone());
    let method = s.method().map(|m| m.name().to_string());
    let field = s.kernel.fields.iter_mut().find(|f| f.key() == key)?;
    field.text = value.clone();
    field.validate();
    s.sweep_set = match (data, method) {
        (Some(data), Some(method)) => Some(SweepSet {
            method,
            key,
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
    Some(format!("{label} = {value}"))
}

/// The best configuration in the table's terms: its value and its row as the table numbers
/// and stars it (the engine's own index counts from 0).
fn best_words(sw: &SweepState) -> String {
    let Some(b) = sw.best() else {
        return "none".into();
    };
    let v = sw.plan.values.get(b.index).copied().unwrap_or(f64::NAN);
    format!(
        "{} = {} (row {} of {}, *)",
        sw.plan.label,
        ovk_core::methods::Value::Float(v),
        b.index + 1,
        sw.plan.values.len()
    )
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
            let v = sw.plan.values.get(row.index).copied().unwrap_or(f64::NAN);
            s.run.notes.push(format!(
                "{} = {} failed: {e}",
                sw.plan.label,
                ovk_core::methods::Value::Float(v)
            ));
        }
        sw.rows.push(row);
        let total = sw.plan.values.len();
        s.run.phase_done = sw.rows.len();
        s.run.phase_total = Some(total);
        // The ETA's pace: the sweep's time per configuration so far.
        s.run.phase_started = s.run.started;
        if sw.rows.len() == total && sw.best().is_some() {
            let note = refitting(&best_words(sw));
            s.status = note.clone();
            s.run.notes.push(note);
        } else if let Some(b) = sw.best() {
            let v = sw.plan.values.get(b.index).copied().unwrap_or(f64::NAN);
            s.status = format!(
                "sweep {}/{total} · best so far {} = {} ({} {:.4})",
                sw.rows.len(),
                sw.plan.label,
                ovk_core::methods::Value::Float(v),
                b.metric,
                b.mean
            );
        }
    }
}
