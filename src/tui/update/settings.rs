//! The form's settings from elsewhere: `f` in Run cycles the next fit's cross-validation
//! folds, and `u` copies the shown session's method, kernel, parameters, folds and split into
//! the form, so an opened run can be fitted again or varied.

use ovk_core::methods::{self, MethodName};
use ovk_core::session::SessionRecord;
use ovk_core::util::choice::Choice;

use super::super::effect::Effect;
use super::super::state::{FieldKind, KernelState, State, CV_CHOICES};

/// `f` in Run: off → 3 → 5 → 10 folds.
pub(super) fn cycle_folds(s: &mut State) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only: open the workbench to run".into();
        return vec![];
    }
    let at = CV_CHOICES.iter().position(|c| *c == s.cv).unwrap_or(0);
    s.cv = CV_CHOICES[(at + 1) % CV_CHOICES.len()];
    let later = if s.is_running() {
        " (from the next fit on)"
    } else {
        ""
    };
    s.status = match s.cv {
        Some(k) => format!(
            "cross-validation: {k} folds of the training part, each metric's mean ± sd, then \
             the final fit scored once on the test rows{later}"
        ),
        None => format!("no cross-validation: one fit, scored on the test rows{later}"),
    };
    vec![]
}

/// `u` in Run and Results: the shown session's settings become the form's.
pub(super) fn use_settings(s: &mut State) -> Vec<Effect> {
    if s.replay.is_some() {
        s.status = "replay is read-only: open the workbench to fit again".into();
        return vec![];
    }
    let Some(f) = &s.result else {
        s.status = "no session shown: open one in 8 Sessions (Enter), then u".into();
        return vec![];
    };
    let record = f.outcome.record.clone();
    if let Some(old) = s.method() {
        s.kernel_by_method
            .insert(old.name().to_string(), s.kernel.clone());
    }
    fill_form(s, &record);
    s.cv = record.config.cv;
    let cfg = &record.config.data;
    let same_file = s.data.table.as_ref().is_some_and(|t| t.path == cfg.path);
    let data = if same_file {
        let split = &mut s.data.split;
        split.test_fraction = cfg.test_fraction;
        split.seed = cfg.seed;
        split.scale = cfg.scale;
        split.target_scale = cfg.target_scale;
        split.labeled = cfg.labeled;
        "; the split (test fraction, seed, scaling) too — the columns' roles stay as in Data"
            .to_string()
    } else {
        let file = cfg.path.file_name().map_or_else(
            || cfg.path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        format!("; its data are {file}: open it in 1 Data to fit it again there")
    };
    s.status = format!(
        "the settings of '{}' are in the form: {}, its kernel and parameters{}{data}",
        record.name,
        record.method,
        if record.config.cv.is_some() {
            ", its folds"
        } else {
            ""
        }
    );
    vec![]
}

/// The method, kernel and parameters `record` ran with, in the form (the method chosen).
pub(super) fn fill_form(s: &mut State, record: &SessionRecord) {
    let cfg = &record.config;
    if let Some(i) = MethodName::ALL.iter().position(|&n| n == cfg.method) {
        s.method.chosen = i;
        s.method.cursor = i;
        s.kernel = KernelState::for_method(methods::find(cfg.method), None);
    }
    for f in s.kernel.fields.iter_mut() {
        let text = match f.kind {
            FieldKind::KernelName => Some(cfg.kernel.name.to_string()),
            FieldKind::Sigma => Some(cfg.kernel.sigma.to_string()),
            FieldKind::Degree => Some(cfg.kernel.degree.to_string()),
            FieldKind::Coef0 => Some(cfg.kernel.coef0.to_string()),
            FieldKind::InputRank { .. } => Some(cfg.kernel.input_rank.to_string()),
            FieldKind::Landmarks => Some(cfg.kernel.landmarks.to_string()),
            FieldKind::Param(spec) => record.params.0.get(spec.key).map(|v| v.to_string()),
        };
        if let Some(t) = text {
            f.text = t;
            f.validate();
        }
    }
    // what the form holds now is this session's, not a sweep's
    s.sweep_set = None;
}
