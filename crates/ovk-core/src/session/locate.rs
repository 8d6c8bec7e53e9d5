//! Where a session's data file is now: the copy the user points at, else the recorded absolute
//! path, the recorded path from the working directory, beside the session, and the recorded
//! relative path from each folder above the session (a store kept inside a project, like the
//! bundled `sessions/`). A file counts only if its SHA-256 is the recorded one; failing that,
//! a file found by those rules whose content changed is returned with its new hash, so
//! `replay --verify` can re-run on it and say the data changed. A `--data` copy must match.

use std::path::{Path, PathBuf};

use crate::data::{sha256_file, DatasetInfo};
use crate::{OvkError, Result};

/// The data file found, and which rule found it (for messages).
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    /// Where the file is.
    pub path: PathBuf,
    /// The rule that found it (`given by --data` …), for messages.
    pub how: &'static str,
    /// The file's SHA-256 when it is not the recorded one (the file changed since the run).
    pub changed: Option<String>,
}

/// Find the data file of a session saved in `dir`; `given` is the user's `--data FILE`.
pub fn locate_data(dir: &Path, info: &DatasetInfo, given: Option<&Path>) -> Result<Located> {
    if let Some(p) = given {
        // Says what is there when it is not a regular file (a FIFO, /dev/zero), without
        // blocking on it.
        crate::data::files::open_regular(p, "data")
            .map_err(|e| OvkError::input(format!("{e} (given by --data)")))?;
        check_hash(p, info, "given by --data")?;
        return Ok(Located {
            path: p.to_path_buf(),
            how: "given by --data",
            changed: None,
        });
    }
    let mut tried = Vec::new();
    let mut first_mismatch = None;
    for (path, how) in candidates(dir, info) {
        if tried.contains(&path) {
            continue;
        }
        tried.push(path.clone());
        if !path.is_file() {
            continue;
        }
        let now = sha256_file(&path)?;
        if now == info.sha256 {
            return Ok(Located {
                path,
                how,
                changed: None,
            });
        }
        first_mismatch.get_or_insert(Located {
            path,
            how,
            changed: Some(now),
        });
    }
    if let Some(found) = first_mismatch {
        return Ok(found);
    }
    let list: Vec<String> = tried.iter().map(|p| p.display().to_string()).collect();
    Err(OvkError::input(format!(
        "the session's data file {} is not where it was (looked at {}); point at a copy with \
         --data FILE",
        info.path.display(),
        list.join(", ")
    )))
}

fn candidates(dir: &Path, info: &DatasetInfo) -> Vec<(PathBuf, &'static str)> {
    let mut out = Vec::new();
    if let Some(a) = &info.absolute_path {
        out.push((a.clone(), "at its recorded absolute path"));
    }
    out.push((info.path.clone(), "at its recorded path"));
    if let Some(name) = info.path.file_name() {
        out.push((dir.join(name), "beside the session"));
        if let Some(parent) = dir.parent() {
            out.push((parent.join(name), "beside the session store"));
        }
    }
    if info.path.is_relative() {
        let abs_dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        for up in abs_dir.ancestors().skip(1) {
            out.push((up.join(&info.path), "from a folder above the session"));
        }
    }
    out
}

fn check_hash(path: &Path, info: &DatasetInfo, how: &str) -> Result<()> {
    let now = sha256_file(path)?;
    if now == info.sha256 {
        return Ok(());
    }
    Err(OvkError::input(format!(
        "{} ({how}) is not the file the session was trained on: its SHA-256 is {now}, the \
         session recorded {} (for {})",
        path.display(),
        info.sha256,
        info.path.display()
    )))
}
