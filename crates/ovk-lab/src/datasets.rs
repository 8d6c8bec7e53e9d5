//! Where the harness finds data sets — one locator for `ovk paper`, `ovk bench` and the
//! `benches/`. The small sets ship in the repository's `datasets/`; the large ones and the
//! papers' own data are read in place from the shared datasets folder and never copied.

use std::path::{Path, PathBuf};

/// The repository's `datasets/`: from the working directory (cargo runs benches at the
/// repository root), else beside this crate as it was compiled.
fn bundled_dirs() -> Vec<PathBuf> {
    vec![
        PathBuf::from("datasets"),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets"),
    ]
}

/// The shared datasets folder: `$OVK_SHARED_DATA`, else `../shared/datasets` from the working
/// directory, else beside the repository as compiled.
pub fn shared_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(v) = std::env::var_os("OVK_SHARED_DATA").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(v));
    }
    dirs.push(PathBuf::from("../shared/datasets"));
    dirs.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/datasets"));
    dirs
}

/// The first shared datasets folder that exists (for messages and `--data-dir` defaults).
pub fn shared_dir() -> PathBuf {
    shared_dirs()
        .into_iter()
        .find(|d| d.is_dir())
        .unwrap_or_else(|| PathBuf::from("../shared/datasets"))
}

/// A bundled data set, `datasets/name`.
pub fn bundled(name: &str) -> Option<PathBuf> {
    bundled_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// A large data set from the shared folder.
pub fn shared(name: &str) -> Option<PathBuf> {
    shared_dirs()
        .into_iter()
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `name` wherever it is: bundled first, then shared.
pub fn find(name: &str) -> Option<PathBuf> {
    bundled(name).or_else(|| shared(name))
}
