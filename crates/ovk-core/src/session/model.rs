//! A session's saved model put back together: every part present (a missing file is named),
//! finite, and consistent with the record, before `methods::load_model` sees it.

use crate::methods::{self, Model, ModelParts};
use crate::{OvkError, Result};

use super::{model_checks, model_matrix_name, Loaded, ModelRecord};

/// The session's model and its record; a session saved without one is refused with the way out.
pub fn load_model(s: &Loaded) -> Result<(ModelRecord, Box<dyn Model>)> {
    load_model_sized(s).map(|(rec, model, _)| (rec, model))
}

/// `load_model`, with the numbers a prediction holds per input row besides its result: the
/// rows of every model array summed (each a reference set a new row is compared with, or
/// coefficients a product passes through) — an upper bound for every model ovk saves.
pub(crate) fn load_model_sized(s: &Loaded) -> Result<(ModelRecord, Box<dyn Model>, usize)> {
    let r = &s.record;
    let Some(rec) = r.model.clone() else {
        return Err(OvkError::bad_session(format!(
            "{}: the session holds no model (it was saved by an ovk that did not keep models); \
             re-run it with `ovk run --config` on its settings, or `ovk replay --verify`, to \
             get one",
            s.dir.display()
        )));
    };
    let json = s.dir.join("session.json");
    let d = r.feature_names.len();
    model_checks::check_record(&json, r, &rec)?;
    if !rec.feature_dtypes.is_empty() && rec.feature_dtypes.len() != d {
        return Err(OvkError::bad_session(format!(
            "{}: the model records {} feature dtypes for {d} feature columns",
            json.display(),
            rec.feature_dtypes.len()
        )));
    }
    if let Some(c) = &rec.class {
        if c.values.len() != r.output_names.len() {
            return Err(OvkError::bad_session(format!(
                "{}: the model records {} classes for {} outputs",
                json.display(),
                c.values.len(),
                r.output_names.len()
            )));
        }
    }
    if !methods::KINDS.contains(&rec.kind.as_str()) {
        return Err(OvkError::bad_session(format!(
            "{}: unknown model kind `{}` (this ovk reads {}); use the ovk version that saved it",
            json.display(),
            rec.kind,
            methods::KINDS.join(", ")
        )));
    }
    let mut parts = ModelParts::new(&rec.kind);
    parts.settings = rec.settings.clone();
    for name in &rec.arrays {
        let matrix = model_matrix_name(name);
        let file = s.dir.join(format!("{matrix}.npy"));
        if !r.matrices.contains_key(&matrix) || !file.is_file() {
            return Err(OvkError::bad_session(format!(
                "{}: missing — the session's model needs it (array `{name}`)",
                file.display()
            )));
        }
        let a = s.matrix(&matrix)?;
        if a.iter().any(|v| !v.is_finite()) {
            return Err(OvkError::bad_session(format!(
                "{}: the model array `{name}` holds NaN or infinite values (corrupt session)",
                file.display()
            )));
        }
        parts.arrays.push((name.clone(), a));
    }
    model_checks::check_parts(&s.dir, r, &parts)?;
    let work_per_row = parts.arrays.iter().map(|(_, a)| a.nrows()).sum();
    let model = methods::load_model(parts)
        .map_err(|e| OvkError::bad_session(format!("{}: {e}", s.dir.display())))?;
    let d = r.model_inputs();
    if let Some(k) = model.n_features() {
        if k != d {
            return Err(OvkError::bad_session(format!(
                "{}: the model reads {k} feature columns but the session names {d}",
                s.dir.display()
            )));
        }
    }
    if let Some(bad) = r.output_names.iter().position(|n| n.is_empty()) {
        return Err(OvkError::bad_session(format!(
            "{}: output {bad} has no name",
            json.display()
        )));
    }
    model_checks::check_outputs(&s.dir, model.as_ref(), d, r.output_names.len())?;
    let model = methods::TargetScaled::wrap(model, rec.target_scaler.as_ref());
    Ok((rec, model, work_per_row))
}
