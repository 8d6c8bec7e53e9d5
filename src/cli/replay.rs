//! `ovk replay SESSION --print | --verify`.

use std::path::Path;

use ovk_core::methods::Silent;
use ovk_core::session::{self, Store};
use ovk_core::{train, Result};

/// Relative tolerance for `--verify`: the engine is deterministic, so a re-run should agree to
/// the last bits; this leaves room only for summation order in threaded kernels.
const VERIFY_RTOL: f64 = 1e-9;

pub struct ReplayArgs<'a> {
    pub session: &'a str,
    pub print: bool,
    pub verify: bool,
    /// A moved copy of the data file (`--data`).
    pub data: Option<&'a Path>,
    pub sessions: Option<&'a Path>,
}

pub fn replay(a: ReplayArgs) -> Result<i32> {
    let ReplayArgs {
        session: arg,
        print,
        verify,
        data,
        sessions,
    } = a;
    let dir = match Path::new(arg).is_dir() {
        true => Path::new(arg).to_path_buf(),
        false => Store::open(sessions)?.resolve(arg)?,
    };
    if data.is_some() && !verify {
        return Err(ovk_core::OvkError::input(
            "--data goes with --verify (it names the data file to re-run the session on)",
        ));
    }
    if !print && !verify {
        crate::tui::run_replay(dir)?;
        return Ok(0);
    }
    let loaded = session::load(&dir)?;
    if print {
        out!("{}", session::summary_text(&loaded.record))?;
    }
    if !verify {
        return Ok(0);
    }
    let located = session::locate_data(&dir, &loaded.record.dataset, data)?;
    let config = relocated_config(&loaded.record, &located.path);
    if located.path != loaded.record.config.data.path {
        errln!("data: {} ({})", located.path.display(), located.how);
    }
    // A changed data file explains any difference below: say so first.
    let mut mismatches = Vec::new();
    let saved_hash = &loaded.record.dataset.sha256;
    if let Some(now) = &located.changed {
        if !saved_hash.is_empty() {
            mismatches.push(format!(
                "data file {}: its SHA-256 is {} now but was {} when the session was saved (the \
                 file changed; differences below follow from it)",
                session::display_safe(&located.path.display().to_string()),
                short(now),
                short(saved_hash)
            ));
        }
    }
    check_grams(&loaded.record)?;
    let rerun = train::run(&config, &mut Silent)?;
    let mut exact = true;
    let saved = &loaded.record.metrics;
    let new = &rerun.record.metrics;
    for (part, a, b) in [
        ("train", &saved.train, &new.train),
        ("test", &saved.test, &new.test),
    ] {
        for (k, v) in a {
            match b.get(k) {
                Some(w) if close(*v, *w) => exact &= v.to_bits() == w.to_bits(),
                Some(w) => mismatches.push(format!("metric {part}.{k}: saved {v}, re-run {w}")),
                None => mismatches.push(format!("metric {part}.{k}: saved {v}, not in the re-run")),
            }
        }
    }
    // A session saved by an ovk whose model format has since changed: its model's arrays and
    // settings, and matrices this ovk no longer forms, cannot match; they are listed as not
    // compared, while the metrics and the stored predictions, what the model is for, still are.
    let format_changed = match (&loaded.record.model, &rerun.record.model) {
        (Some(a), Some(b)) => a.format_differs(b),
        _ => false,
    };
    let model_json = |m: &Option<session::ModelRecord>| {
        let mut v = json_of(m);
        if let (true, Some(o)) = (format_changed, v.as_object_mut()) {
            o.remove("arrays");
            o.remove("settings");
        }
        v
    };
    let mut not_compared = Vec::new();
    // What predictions use besides the matrices: the model's settings, scaler and classes, the
    // kernel as used, and the split the metrics were scored on.
    for (what, a, b) in [
        (
            "model",
            model_json(&loaded.record.model),
            model_json(&rerun.record.model),
        ),
        (
            "kernel",
            json_of(&loaded.record.kernel),
            json_of(&rerun.record.kernel),
        ),
        // The rows themselves: a session saved before splits carried their fingerprint has
        // none, and the fingerprint follows from the rows.
        (
            "split",
            json_of(&rows_of(&loaded.record.split)),
            json_of(&rows_of(&rerun.record.split)),
        ),
    ] {
        if let Some(at) = first_difference(what, &a, &b) {
            mismatches.push(at);
        }
    }
    let saved_model_arrays: Vec<String> = match &loaded.record.model {
        Some(m) if format_changed => m
            .arrays
            .iter()
            .map(|a| session::model_matrix_name(a))
            .collect(),
        _ => Vec::new(),
    };
    for name in loaded.record.matrices.keys() {
        let retired = format_changed && rerun.matrix(name).is_none();
        if retired || saved_model_arrays.contains(name) {
            not_compared.push(name.clone());
            continue;
        }
        let saved_m = loaded.matrix(name)?;
        match rerun.matrix(name) {
            Some(m) if m.dim() == saved_m.dim() => {
                let scale = saved_m
                    .iter()
                    .fold(0.0f64, |a, v| a.max(v.abs()))
                    .max(1e-300);
                // NaN-aware: f64::max would drop a NaN difference and pass the matrix.
                let diff = (&saved_m - m).iter().fold(0.0f64, |a, v| {
                    if v.is_nan() {
                        f64::NAN
                    } else {
                        a.max(v.abs())
                    }
                });
                if diff.is_nan() || diff > VERIFY_RTOL * scale {
                    mismatches.push(format!("matrix {name}: max |difference| {diff:.3e}"));
                }
                exact &= saved_m
                    .iter()
                    .zip(m.iter())
                    .all(|(a, b)| a.to_bits() == b.to_bits());
            }
            Some(m) => mismatches.push(format!(
                "matrix {name}: saved shape {:?}, re-run {:?}",
                saved_m.dim(),
                m.dim()
            )),
            None => mismatches.push(format!("matrix {name}: not produced by the re-run")),
        }
    }
    if mismatches.is_empty() {
        outln!(
            "verified: re-running {} reproduces {} metrics and {} matrices {}",
            dir.display(),
            saved.train.len() + saved.test.len(),
            loaded.record.matrices.len() - not_compared.len(),
            if exact {
                "bit for bit".to_string()
            } else {
                format!("to a relative {VERIFY_RTOL:e} (not bit for bit: another CPU's SIMD path?)")
            }
        )?;
        report_not_compared(&not_compared)?;
        Ok(0)
    } else {
        outln!("verification FAILED for {}:", dir.display())?;
        for m in &mismatches {
            outln!("  {m}")?;
        }
        report_not_compared(&not_compared)?;
        Ok(1)
    }
}

/// The saved matrices `--verify` skipped because the session keeps its model in a format this
/// ovk no longer writes.
fn report_not_compared(names: &[String]) -> Result<()> {
    if !names.is_empty() {
        outln!(
            "not compared: {} (the session was saved by an ovk that kept this model in another \
             format; its saved model still predicts as saved)",
            names.join(", ")
        )?;
    }
    Ok(())
}

/// The saved configuration pointed at the file found. A copy without its sidecar gets the
/// roles the sidecar gave (they are in the record), so the re-run reads the same columns.
fn relocated_config(r: &session::SessionRecord, path: &Path) -> ovk_core::train::RunConfig {
    let mut cfg = session::config_as_run(r);
    let had_roles = cfg.data.class.is_some() || cfg.data.targets.is_some();
    cfg.data.path = path.to_path_buf();
    let sidecar_here = ovk_core::data::sidecar_path(path).is_some_and(|p| p.is_file());
    if !had_roles && !sidecar_here {
        match (r.model.as_ref().and_then(|m| m.class.as_ref()), r.task) {
            (Some(c), _) => cfg.data.class = Some(c.column.clone()),
            // An older session does not name its class column: the sidecar must.
            (None, ovk_core::data::Task::Multiclass) => return cfg,
            (None, _) => cfg.data.targets = Some(r.dataset.targets.clone()),
        }
        cfg.data.features = Some(r.feature_names.clone());
        cfg.data.task = Some(r.task);
    }
    cfg
}

/// The first 12 hex digits of a hash.
fn short(hash: &str) -> String {
    hash.chars().take(12).collect()
}

fn json_of(v: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// Where two saved values first differ (numbers within the verification tolerance agree), as
/// `path: saved …, re-run …`.
fn first_difference(
    path: &str,
    saved: &serde_json::Value,
    rerun: &serde_json::Value,
) -> Option<String> {
    use serde_json::Value;
    match (saved, rerun) {
        (Value::Number(a), Value::Number(b)) => match (a.as_f64(), b.as_f64()) {
            (Some(x), Some(y)) if close(x, y) => None,
            _ => Some(format!("{path}: saved {a}, re-run {b}")),
        },
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(&format!("{path}[{i}]"), x, y)),
        (Value::Object(a), Value::Object(b)) if a.len() == b.len() => {
            a.iter().find_map(|(k, x)| {
                let p = format!("{path}.{k}");
                match b.get(k) {
                    Some(y) => first_difference(&p, x, y),
                    None => Some(format!("{p}: saved, not in the re-run")),
                }
            })
        }
        _ if saved == rerun => None,
        _ => Some(format!(
            "{path}: saved {}, re-run {}",
            brief(saved),
            brief(rerun)
        )),
    }
}

/// A JSON value short enough for one line of the report.
fn brief(v: &serde_json::Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn close(a: f64, b: f64) -> bool {
    a == b || (a - b).abs() <= VERIFY_RTOL * a.abs().max(b.abs())
}

/// A precomputed kernel's Gram files must be the ones the session read: another matrix is
/// another kernel, so the re-run would verify nothing.
fn check_grams(record: &session::SessionRecord) -> Result<()> {
    let spec = &record.kernel.spec;
    let files = spec.gram.iter().map(|g| ("Gram matrix", g));
    for (what, g) in files.chain(spec.gram_ids.iter().map(|g| ("Gram ids", g))) {
        let Some(saved) = &g.sha256 else { continue };
        let now = ovk_core::data::sha256_file(&g.path)?;
        if &now != saved {
            return Err(ovk_core::OvkError::input(format!(
                "{what} {}: its SHA-256 is {} now but was {} when the session was saved; the \
                 file changed, so a re-run would fit another kernel — restore the original to \
                 verify the session",
                session::display_safe(&g.path.display().to_string()),
                short(&now),
                short(saved)
            )));
        }
    }
    Ok(())
}

/// A split without its derived fingerprints.
fn rows_of(split: &session::Split) -> session::Split {
    session::Split {
        id: None,
        ..split.clone()
    }
}
