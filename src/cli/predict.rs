//! `ovk predict SESSION --data FILE [--out FILE|-]`: the saved model on new rows.

use std::path::Path;

use crate::session::Store;
use crate::train::{predict_file, write_predictions};
use crate::Result;

pub fn predict(arg: &str, data: &Path, out: &Path, sessions: Option<&Path>) -> Result<i32> {
    let dir = match Path::new(arg).is_dir() {
        true => Path::new(arg).to_path_buf(),
        false => Store::open(sessions)?.resolve(arg)?,
    };
    refuse_clobbering(out, data, &dir)?;
    let table = predict_file(&dir, data)?;
    write_predictions(&table, out)?;
    if !crate::data::is_stdout(out) {
        eprintln!(
            "wrote {} ({} rows, {} outputs)",
            out.display(),
            table.n_rows(),
            table.output_names.len()
        );
    }
    Ok(0)
}

/// Predictions never replace the rows they were made from, nor a file of the session.
fn refuse_clobbering(out: &Path, data: &Path, session: &Path) -> Result<()> {
    if crate::data::is_stdout(out) {
        return Ok(());
    }
    let abs = |p: &Path| std::fs::canonicalize(p).ok();
    let target = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| abs(Path::new(".")), abs)
        .zip(out.file_name())
        .map(|(dir, name)| dir.join(name));
    let (Some(target), Some(session)) = (target, abs(session)) else {
        return Ok(());
    };
    if Some(&target) == abs(data).as_ref() {
        return Err(crate::OvkError::input(format!(
            "--out {}: that is the data file being predicted; choose another file",
            out.display()
        )));
    }
    if target.starts_with(&session) {
        return Err(crate::OvkError::input(format!(
            "--out {}: that is inside the session {}; choose a file outside it",
            out.display(),
            session.display()
        )));
    }
    Ok(())
}
