//! Reading a session directory back: the record (schema checked) and its matrices (shape
//! checked against the record).

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use ndarray::Array2;
use ndarray_npy::ReadNpyExt;

use super::naming::is_plain_name;
use super::{SessionRecord, SCHEMA};
use crate::{OvkError, Result};

/// A session read from disk.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The session's directory.
    pub dir: PathBuf,
    /// Its `session.json`.
    pub record: SessionRecord,
}

/// Read and check a session directory.
pub fn load(dir: &Path) -> Result<Loaded> {
    Ok(Loaded {
        dir: dir.to_path_buf(),
        record: read_record(dir)?,
    })
}

/// A record is a few kilobytes to a few megabytes (its trace); more is not one ovk wrote.
const RECORD_CAP: u64 = 256 << 20;

/// An I/O failure on a session's file: the user's store, so exit 2 with the cause.
pub(crate) fn store_io(path: &Path, doing: &str, e: std::io::Error) -> OvkError {
    OvkError::input(format!("{doing} {}: {e}", path.display()))
}

/// `store_io` with the context already phrased.
pub(crate) fn store_error(context: impl Into<String>, e: std::io::Error) -> OvkError {
    OvkError::input(format!("{}: {e}", context.into()))
}

/// Refuse a session file that is a symbolic link leading out of its session directory (to
/// `/dev/zero`, or to another user's file): a session is read from its own directory only.
pub(crate) fn inside(dir: &Path, file: &Path) -> Result<()> {
    let canon = |p: &Path| fs::canonicalize(p).map_err(|e| store_io(p, "resolving", e));
    let (d, f) = (canon(dir)?, canon(file)?);
    if f.parent() != Some(d.as_path()) {
        return Err(OvkError::bad_session(format!(
            "{}: a symbolic link to {}, outside the session directory; refusing to read it",
            file.display(),
            f.display()
        )));
    }
    Ok(())
}

/// The record in `dir/session.json`, with a message naming the problem when it cannot be read.
pub(crate) fn read_record(dir: &Path) -> Result<SessionRecord> {
    match fs::metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(OvkError::bad_session(format!(
                "{}: no such session directory",
                dir.display()
            )))
        }
        Err(e) => return Err(OvkError::io_path(dir, e)),
        Ok(m) if !m.is_dir() => {
            return Err(OvkError::bad_session(format!(
                "{}: not a directory (a session is a directory holding session.json)",
                dir.display()
            )))
        }
        Ok(_) => {}
    }
    let path = dir.join("session.json");
    match fs::symlink_metadata(&path) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err(OvkError::bad_session(format!(
                "{}: no session.json — not an ovk session, or a save that never finished",
                dir.display()
            )))
        }
        Err(e) => return Err(store_io(&path, "reading", e)),
        Ok(_) => {}
    }
    inside(dir, &path)?;
    let bytes = crate::data::files::read_text_file(&path, RECORD_CAP, "a session record")?;
    let text = String::from_utf8(bytes)
        .map_err(|_| OvkError::bad_session(format!("{}: not UTF-8 text", path.display())))?;
    parse_record(&path, &text)
}

/// Parse `session.json` text: JSON syntax first (with serde's line and column), then the schema
/// tag, then the record itself.
pub(crate) fn parse_record(path: &Path, text: &str) -> Result<SessionRecord> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| OvkError::bad_session(format!("{}: invalid JSON: {e}", path.display())))?;
    match value.get("schema") {
        Some(serde_json::Value::String(s)) if s == SCHEMA => {}
        Some(serde_json::Value::String(s)) => {
            return Err(OvkError::bad_session(format!(
                "{}: schema '{s}' is not one this ovk {} reads (it reads '{SCHEMA}'); \
                 use the ovk version that wrote it",
                path.display(),
                env!("CARGO_PKG_VERSION")
            )))
        }
        _ => {
            return Err(OvkError::bad_session(format!(
                "{}: not an ovk session record (no \"schema\" field; expected '{SCHEMA}')",
                path.display()
            )))
        }
    }
    serde_json::from_str(text).map_err(|e| {
        OvkError::bad_session(format!(
            "{}: does not match schema '{SCHEMA}': {e}",
            path.display()
        ))
    })
}

/// The shape a saved matrix must have, when the record fixes it, and why.
fn expected_shape(record: &SessionRecord, name: &str) -> Option<((usize, usize), String)> {
    let m = record.output_names.len();
    match name {
        "output_kernel" => Some(((m, m), format!("m × m for m = {m} outputs"))),
        "predictions_test" => Some((
            (record.split.test.len(), m),
            format!("{} test rows × {m} outputs", record.split.test.len()),
        )),
        "predictions_train" => Some((
            (record.split.train.len(), m),
            format!("{} training rows × {m} outputs", record.split.train.len()),
        )),
        _ => None,
    }
}

impl Loaded {
    /// A saved matrix by name (`output_kernel`), read from its `.npy`.
    pub fn matrix(&self, name: &str) -> Result<Array2<f64>> {
        let Some(file) = self.record.matrices.get(name) else {
            let available: Vec<&str> = self.record.matrices.keys().map(String::as_str).collect();
            let hint = if available.is_empty() {
                "it saved no matrices".to_string()
            } else {
                format!("available: {}", available.join(", "))
            };
            return Err(OvkError::bad_session(format!(
                "session {} has no matrix '{name}' ({hint})",
                self.dir.display()
            )));
        };
        if !is_plain_name(file) {
            return Err(OvkError::bad_session(format!(
                "{}: matrix '{name}' points to '{file}', which is not a file of the session \
                 directory",
                self.dir.join("session.json").display()
            )));
        }
        let path = self.dir.join(file);
        if path.symlink_metadata().is_err() {
            return Err(OvkError::bad_session(format!(
                "{}: missing (session.json lists it as matrix '{name}')",
                path.display()
            )));
        }
        inside(&self.dir, &path)?;
        let (f, meta) = crate::data::files::open_regular(&path, "a saved matrix")?;
        crate::kernels::check_fits(meta.len(), &format!("reading matrix '{name}'"))?;
        super::npy_claims::check(&path).map_err(|why| {
            OvkError::bad_session(format!(
                "{}: cannot read matrix '{name}' as a 2-D f64 .npy: {why}",
                path.display()
            ))
        })?;
        let a = Array2::<f64>::read_npy(std::io::BufReader::new(f)).map_err(|e| {
            OvkError::bad_session(format!(
                "{}: cannot read matrix '{name}' as a 2-D f64 .npy: {e}",
                path.display()
            ))
        })?;
        if let Some((shape, why)) = expected_shape(&self.record, name) {
            if a.dim() != shape {
                return Err(OvkError::bad_session(format!(
                    "{}: matrix '{name}' has shape {}×{}, expected {}×{} ({why})",
                    path.display(),
                    a.nrows(),
                    a.ncols(),
                    shape.0,
                    shape.1
                )));
            }
        }
        if let Some(((i, j), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(OvkError::bad_session(format!(
                "{}: matrix '{name}' holds {v} at [{i}, {j}]; ovk never saves a non-finite \
                 matrix, so the file is corrupt or was edited",
                path.display()
            )));
        }
        Ok(a)
    }
}
