//! A saved model checked as strictly as a fit checks what it makes: a session is a folder of
//! files anyone can edit, and a value no fit produces (σ = −1, a scale of −1, a feature named
//! twice, a transposed `L_S`) would otherwise change predictions without a word. Each refusal
//! names the file and the field.

use std::path::Path;

use ndarray::Array2;

use super::{ModelRecord, SessionRecord};
use crate::data::{Scale, Scaler, TargetScale, MAX_MAGNITUDE};
use crate::kernels::Kernel;
use crate::methods::{Model, ModelParts};
use crate::{OvkError, Result};

fn refuse(file: &Path, field: &str, why: impl std::fmt::Display) -> OvkError {
    OvkError::input(format!(
        "{}: {field}: {why} (ovk never saves this; the session was edited or is corrupt)",
        file.display()
    ))
}

/// The record's side of the model: names, scalings, fill values, classes, the kernel used.
pub(crate) fn check_record(json: &Path, r: &SessionRecord, rec: &ModelRecord) -> Result<()> {
    let (d, m) = (r.feature_names.len(), r.output_names.len());
    distinct(json, "feature_names", &r.feature_names)?;
    distinct(json, "output_names", &r.output_names)?;
    check_scaler(json, "model.scaler", &rec.scaler, d, "feature columns")?;
    if r.scale == Scale::None
        && (rec.scaler.mean.iter().any(|&v| v != 0.0) || rec.scaler.std.iter().any(|&v| v != 1.0))
    {
        return Err(refuse(
            json,
            "model.scaler",
            "the features were not scaled (scale = none) but the saved scaling is not the \
             identity",
        ));
    }
    match (&rec.target_scaler, r.config.data.target_scale) {
        (None, TargetScale::None) => {}
        (Some(t), how) if how != TargetScale::None => {
            check_scaler(json, "model.target_scaler", t, m, "outputs")?;
            if how == TargetScale::Center && t.std.iter().any(|&v| v != 1.0) {
                return Err(refuse(
                    json,
                    "model.target_scaler",
                    "the targets were only centred (target_scale = center) but the saved \
                     scaling divides them",
                ));
            }
        }
        (t, how) => {
            return Err(refuse(
                json,
                "model.target_scaler",
                format!(
                    "{} beside config.data.target_scale = {}",
                    if t.is_some() { "present" } else { "absent" },
                    serde_json::to_string(&how).unwrap_or_default()
                ),
            ))
        }
    }
    if let Some(fill) = &rec.fill {
        if fill.len() != d {
            return Err(refuse(
                json,
                "model.fill",
                format!("{} values for {d} feature columns", fill.len()),
            ));
        }
        if let Some(v) = fill.iter().find(|v| v.abs() > MAX_MOMENT) {
            return Err(refuse(json, "model.fill", format!("holds {v:e}")));
        }
    }
    if let Some(c) = &rec.class {
        distinct(json, "model.class.values", &c.values)?;
    }
    r.kernel
        .resolved
        .check()
        .map_err(|e| refuse(json, "kernel.resolved", e))
}

/// Every name once: a feature named twice reads one column twice.
fn distinct(json: &Path, field: &str, names: &[String]) -> Result<()> {
    let mut seen = std::collections::HashMap::new();
    for (i, n) in names.iter().enumerate() {
        if let Some(first) = seen.insert(n.as_str(), i) {
            return Err(refuse(
                json,
                field,
                format!("`{n}` appears twice (entries {first} and {i})"),
            ));
        }
    }
    Ok(())
}

/// The least positive scale a fit makes: the square root of the least positive variance
/// (a smaller variance underflows to 0, and a column of variance 0 keeps scale 1).
const MIN_SCALE: f64 = 2.2e-162;

/// The most a mean, a scale or a fill value of values a fit accepts (within ±`MAX_MAGNITUDE`)
/// can be: twice that bound leaves room for the rounding of a sum at it.
const MAX_MOMENT: f64 = 2.0 * MAX_MAGNITUDE;

/// A saved scaling: one mean and one scale per column, as `Scaler::fit` and
/// `Scaler::fit_targets` make them from values a fit accepts: a mean within ±`MAX_MOMENT`, a
/// scale between `MIN_SCALE` and `MAX_MOMENT`.
fn check_scaler(json: &Path, field: &str, s: &Scaler, count: usize, of: &str) -> Result<()> {
    if s.mean.len() != count || s.std.len() != count {
        return Err(refuse(
            json,
            field,
            format!(
                "{} means and {} scales for {count} {of}",
                s.mean.len(),
                s.std.len()
            ),
        ));
    }
    if let Some(bad) = s.mean.iter().chain(&s.std).find(|v| !v.is_finite()) {
        return Err(refuse(json, field, format!("holds {bad}")));
    }
    if let Some((j, v)) = s.std.iter().enumerate().find(|(_, v)| **v <= 0.0) {
        return Err(refuse(
            json,
            field,
            format!("the scale of column {j} is {v}; a scale is positive"),
        ));
    }
    if let Some((j, v)) = s
        .std
        .iter()
        .enumerate()
        .find(|(_, v)| !(MIN_SCALE..=MAX_MOMENT).contains(*v))
    {
        return Err(refuse(
            json,
            field,
            format!(
                "the scale of column {j} is {v:e}, outside [{MIN_SCALE:e}, {MAX_MOMENT:e}] \
                 where the scales of values a fit accepts lie"
            ),
        ));
    }
    if let Some((j, v)) = s
        .mean
        .iter()
        .enumerate()
        .find(|(_, v)| v.abs() > MAX_MOMENT)
    {
        return Err(refuse(
            json,
            field,
            format!(
                "the mean of column {j} is {v:e}, beyond ±{MAX_MOMENT:e} where the means of \
                 values a fit accepts lie"
            ),
        ));
    }
    Ok(())
}

/// The model's own settings and arrays, before `methods::load_model` builds it: every kernel
/// within a fit's bounds (and, outside the per-view kernels of mvml, the kernel the record
/// says the fit used), every `L_S` lower triangular with a positive diagonal.
pub(crate) fn check_parts(dir: &Path, r: &SessionRecord, parts: &ModelParts) -> Result<()> {
    let json = dir.join("session.json");
    if let Some(v) = parts.settings.get("kernel") {
        let k: Kernel = parts.setting("kernel")?;
        k.check()
            .map_err(|e| refuse(&json, "model.settings.kernel", e))?;
        if k != r.kernel.resolved {
            return Err(refuse(
                &json,
                "model.settings.kernel",
                format!(
                    "{v} differs from the kernel the fit used ({})",
                    r.kernel.resolved
                ),
            ));
        }
    }
    if let Some(views) = parts.settings.get("views").and_then(|v| v.as_array()) {
        for (l, view) in views.iter().enumerate() {
            let field = format!("model.settings.views[{l}]");
            let k: Kernel = serde_json::from_value(view["kernel"].clone())
                .map_err(|e| refuse(&json, &format!("{field}.kernel"), e))?;
            k.check()
                .map_err(|e| refuse(&json, &format!("{field}.kernel"), e))?;
            if let Some(why) = view_kernel_differs(r, l, &k) {
                return Err(refuse(&json, &format!("{field}.kernel"), why));
            }
            let d = r.model_inputs();
            let columns: Vec<usize> = serde_json::from_value(view["columns"].clone())
                .map_err(|e| refuse(&json, &format!("{field}.columns"), e))?;
            if let Some(c) = columns.iter().find(|&&c| c >= d) {
                return Err(refuse(
                    &json,
                    &format!("{field}.columns"),
                    format!("column {c} of {d} feature columns"),
                ));
            }
        }
    }
    for (name, a) in &parts.arrays {
        if name == "l_s" {
            lower_triangular(&dir.join(format!("model_{name}.npy")), a)?;
        }
    }
    Ok(())
}

/// How view `l`'s kernel differs from the one the fit reported for it (`details.view_kernels`
/// and `details.view_sigmas` by `details.views`, where the session has them).
fn view_kernel_differs(r: &SessionRecord, l: usize, k: &Kernel) -> Option<String> {
    let d = super::Details::of(&r.details);
    let shown = d.view_kernels().get(l)?.clone();
    if !shown.starts_with(k.name().name()) {
        return Some(format!(
            "{k} differs from the kernel the fit used ({shown})"
        ));
    }
    let view = d.views().get(l)?.clone();
    let sigma = d.view_sigma(&view)?;
    match *k {
        Kernel::Gaussian { sigma: s } | Kernel::Laplacian { sigma: s } if s != sigma => Some(
            format!("σ = {s} differs from the σ the fit used for view `{view}` ({sigma})"),
        ),
        _ => None,
    }
}

/// `L_S` as the factor makes it (`kernels::lowrank`): square, zero above the diagonal, a
/// positive diagonal. A transposed file is upper triangular and solves the wrong system.
fn lower_triangular(file: &Path, l: &Array2<f64>) -> Result<()> {
    let field = "L_S";
    if l.nrows() != l.ncols() {
        return Err(refuse(
            file,
            field,
            format!("shape {:?} is not square", l.dim()),
        ));
    }
    if let Some(((i, j), v)) = l.indexed_iter().find(|((i, j), v)| j > i && **v != 0.0) {
        return Err(refuse(
            file,
            field,
            format!("holds {v} at [{i}, {j}], above the diagonal of a lower-triangular factor (a transposed file?)"),
        ));
    }
    if let Some((i, v)) = l
        .diag()
        .iter()
        .enumerate()
        .find(|(_, v)| v.is_nan() || **v <= 0.0)
    {
        return Err(refuse(
            file,
            field,
            format!("its diagonal holds {v} at [{i}, {i}]; a Cholesky factor's is positive"),
        ));
    }
    Ok(())
}

/// The number of outputs the model predicts, from a prediction on no rows (no work), against
/// the outputs the record names.
pub(crate) fn check_outputs(dir: &Path, model: &dyn Model, d: usize, m: usize) -> Result<()> {
    let got = model.predict(Array2::<f64>::zeros((0, d)).view())?.ncols();
    if got != m {
        return Err(refuse(
            &dir.join("session.json"),
            "output_names",
            format!(
                "{m} outputs, but the model's arrays predict {got} (a transposed or edited array?)"
            ),
        ));
    }
    Ok(())
}
