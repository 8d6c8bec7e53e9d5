//! Writes that survive a crash: data is flushed to disk before the rename that publishes it.

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::Path;

use ndarray::Array2;
use ndarray_npy::WriteNpyExt;

use super::load::store_error;
use crate::{OvkError, Result};

/// Create `path` with `bytes` and flush it to disk.
pub(crate) fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |e| store_error(format!("writing {}", path.display()), e);
    let mut f = File::create(path).map_err(io)?;
    f.write_all(bytes).map_err(io)?;
    f.sync_all().map_err(io)
}

/// Write `a` as a numpy `.npy` (little-endian f64, C order) and flush it to disk.
pub(crate) fn write_npy_synced(path: &Path, a: &Array2<f64>) -> Result<()> {
    let io = |e| store_error(format!("writing {}", path.display()), e);
    let f = File::create(path).map_err(io)?;
    let mut w = BufWriter::new(f);
    a.write_npy(&mut w)
        .map_err(|e| OvkError::input(format!("writing {}: {e}", path.display())))?;
    let f = w
        .into_inner()
        .map_err(|e| store_error(format!("writing {}", path.display()), e.into_error()))?;
    f.sync_all().map_err(io)
}

/// Flush a directory's entries (new names, renames) to disk.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    let io = |e| store_error(format!("syncing directory {}", dir.display()), e);
    File::open(dir).map_err(io)?.sync_all().map_err(io)
}

/// Replace `path` with `bytes` atomically: a synced temporary beside it, renamed over it.
pub(crate) fn replace_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| OvkError::internal(format!("{} has no parent", path.display())))?;
    let file = path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file}.tmp-{}", std::process::id()));
    if let Err(e) = write_synced(&tmp, bytes) {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(store_error(format!("replacing {}", path.display()), e));
    }
    sync_dir(dir)
}
