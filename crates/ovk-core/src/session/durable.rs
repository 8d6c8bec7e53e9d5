//! Writes that survive a crash: data is flushed to disk before the rename that publishes it.
//! `write_atomic` is the one way ovk writes a file whole or not at all (a session's record
//! rewritten, every output a command writes); a session's folder is published whole by
//! `store.rs`, through a work folder (`temporaries::WorkDir`).

use std::fs::{self, File};
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::Path;

use ndarray::Array2;
use ndarray_npy::WriteNpyExt;

use super::load::store_error;
use super::temporaries::{create_locked, remove_abandoned_files, unique_name, InFlight};
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
    write_atomic(path, Publish::Replace, |w| w.write_all(bytes))
        .map_err(|e| store_error(format!("replacing {}", path.display()), e))
}

/// How a finished temporary takes its destination's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Publish {
    /// Only if the name is still free (a link, which fails if it was taken meanwhile):
    /// `AlreadyExists` otherwise.
    New,
    /// Over the file there, keeping its permissions (a rename).
    Replace,
}

/// Write `dest` whole or not at all: `fill` writes a temporary beside it (created new, locked
/// while it lives, listed for a signal's cleanup), which is flushed to disk and then given
/// `dest`'s name. Temporaries of `dest` that dead writers left are removed first.
pub(crate) fn write_atomic(
    dest: &Path,
    publish: Publish,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = dest
        .file_name()
        .ok_or_else(|| io::Error::new(ErrorKind::InvalidInput, "not a file name"))?
        .to_string_lossy()
        .into_owned();
    let prefix = format!(".{name}.tmp-");
    remove_abandoned_files(dir, &prefix);
    let tmp = dir.join(unique_name(&format!(".{name}.tmp")));
    let file = create_locked(&tmp)?;
    let flight = InFlight::new(vec![tmp.clone()]);
    let written = (|| -> io::Result<()> {
        let mut w = BufWriter::new(&file);
        fill(&mut w)?;
        w.flush()?;
        drop(w);
        if publish == Publish::Replace {
            if let Ok(m) = fs::metadata(dest) {
                file.set_permissions(m.permissions())?;
            }
        }
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    let published = flight.publish(Some(dest), || match publish {
        Publish::New => {
            publish_new(&tmp, dest)?;
            // After a link the temporary is a second name of `dest`.
            let _ = fs::remove_file(&tmp);
            Ok(())
        }
        Publish::Replace => fs::rename(&tmp, dest),
    });
    if published.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    published?;
    // Best effort: some file systems cannot sync a directory, and the data already are.
    let _ = File::open(dir).and_then(|d| d.sync_all());
    Ok(())
}

/// Link `tmp` to `dest` only if `dest` does not exist (a rename would replace a file created
/// meanwhile). Where hard links are not supported, a rename after a last check.
fn publish_new(tmp: &Path, dest: &Path) -> io::Result<()> {
    match fs::hard_link(tmp, dest) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(e),
        Err(_) if fs::symlink_metadata(dest).is_ok() => {
            Err(io::Error::from(ErrorKind::AlreadyExists))
        }
        Err(_) => fs::rename(tmp, dest),
    }
}
