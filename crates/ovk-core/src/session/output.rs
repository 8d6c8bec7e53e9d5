//! Where a command writes a file the user named (`export --trace FILE`, `gen --out FILE`,
//! `predict --out FILE` …): one set of rules, so no writer clobbers what it must not.
//!
//! - `-` is standard output.
//! - Nothing is written into the session store or over an input of the run (the session's
//!   data file): those are refused whatever `--force` says.
//! - A new regular file is written to a temporary file beside it and published by a link that
//!   fails if the name was taken meanwhile; an existing regular file is replaced (temporary file
//!   renamed over it) only with `--force`. A symbolic link to a regular file counts as that file:
//!   with `--force` its target is replaced and the link stays a link.
//! - A FIFO or a character device (`/dev/stdout`, a terminal) is written through, never
//!   replaced; a directory, a block device or a dangling link is refused.
//! - Every write error (`/dev/full`, a full disk) is reported with its cause; exit status 2.

use std::fs::{self, OpenOptions};
use std::io::{self, BufWriter, ErrorKind, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use super::durable::{write_atomic, Publish};
use super::store::{Listing, Store};
use crate::{OvkError, Result};

/// A file's identity on this machine: the device and inode it lives at, whatever path (a
/// link, another working directory, a bind mount) leads there.
type Identity = (u64, u64);

fn identity(p: &Path) -> Option<Identity> {
    fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// Something an output must not be written over or into: its canonical path, its identity,
/// and what it is, for the message.
#[derive(Debug, Clone)]
struct Protected {
    path: PathBuf,
    id: Option<Identity>,
    what: String,
}

impl Protected {
    fn of(p: &Path, what: String) -> Option<Protected> {
        let path = fs::canonicalize(p).ok()?;
        Some(Protected {
            id: identity(&path),
            path,
            what,
        })
    }
}

/// What an output may not touch, and whether an existing file may be replaced.
#[derive(Debug, Clone, Default)]
pub struct OutputRules {
    /// `--force`: replace an existing regular file.
    pub force: bool,
    /// The flag that gives this permission, for messages (`--force`).
    pub(crate) force_flag: &'static str,
    /// Directories nothing is written into (the session store, the session's directory).
    protected_dirs: Vec<Protected>,
    /// Files never overwritten (the inputs of the run), with what they are.
    protected_files: Vec<Protected>,
}

impl OutputRules {
    /// Rules for a file written outside any session (`gen`, `bench data`, a benchmark ledger):
    /// never into the session store.
    pub fn outside_store(force: bool, sessions: Option<&std::path::Path>) -> crate::Result<Self> {
        let rules = OutputRules::new(force);
        Ok(match super::Store::existing(sessions)? {
            Some(store) => rules.protect_store(&store),
            None => rules,
        })
    }

    /// Rules with nothing protected yet; an existing file is replaced only with `force`.
    pub fn new(force: bool) -> Self {
        OutputRules {
            force,
            force_flag: "--force",
            ..Default::default()
        }
    }

    /// Refuse writing anywhere inside `dir` (`what` names it in the message).
    pub fn protect_dir(mut self, dir: &Path, what: impl Into<String>) -> Self {
        self.protected_dirs.extend(Protected::of(dir, what.into()));
        self
    }

    /// Refuse writing over `file` (`what` names it in the message). A file that does not
    /// exist protects nothing.
    pub fn protect_file(mut self, file: &Path, what: impl Into<String>) -> Self {
        self.protected_files
            .extend(Protected::of(file, what.into()));
        self
    }

    /// Refuse writing over `data` or its sidecar.
    fn protect_data(mut self, data: &Path, what: &str) -> Self {
        self = self.protect_file(data, what);
        if let Some(side) = crate::data::sidecar_path(data) {
            self = self.protect_file(&side, format!("the sidecar of {what}"));
        }
        self
    }

    /// Refuse writing into the session store or over the data file (or its sidecar) of any
    /// session in it: for files ovk writes outside a session (`gen`, `bench data`, a ledger).
    pub(crate) fn protect_store(mut self, store: &Store) -> Self {
        self = self.protect_dir(store.root(), "the session store");
        for listing in store.list() {
            let Listing::Ok(s) = listing else { continue };
            for data in &s.data_files {
                self = self.protect_data(data, &format!("the data file of session {}", s.id));
            }
        }
        self
    }

    /// Refuse writing into `store` or the session's directory, or over any file the session
    /// depends on: its data file (as recorded, as configured, and by the absolute path the run
    /// read, so that no working directory makes a difference), the data's sidecar, and kde's
    /// candidates file — whatever `--force` says.
    pub fn protect_session(mut self, s: &super::Loaded, store: &Path) -> Self {
        let r = &s.record;
        self = self
            .protect_dir(store, "the session store")
            .protect_dir(&s.dir, "the session's directory");
        // A relative name is relative to where the run ran: from elsewhere it names another
        // file. Where the run's folder is known (sessions record the absolute data path),
        // names are taken from there; an older session's, from here.
        let ran_in = run_dir(&r.dataset);
        let from_run = |p: &Path| match &ran_in {
            Some(d) => d.join(p),
            None => p.to_path_buf(),
        };
        let what = format!("the data file of session {}", r.id);
        for p in [&r.dataset.path, &r.config.data.path] {
            self = self.protect_data(&from_run(p), &what);
        }
        if let Some(abs) = &r.dataset.absolute_path {
            self = self.protect_data(abs, &what);
        }
        if let Some(crate::util::param::Value::Text(c)) = r.params.0.get("candidates") {
            let what = format!("the candidates file of session {}", r.id);
            self = self.protect_file(&from_run(Path::new(c)), what);
        }
        self
    }
}

/// The working directory of the run that read `info` (its data path made absolute, less the
/// relative path it was given as), when the path was given relative.
///
/// `run_dir(lin.csv, /w/a/lin.csv)` is `/w/a`; with `../d/lin.csv` and `/w/a/../d/lin.csv`
/// (`std::path::absolute` keeps the `..`) it is `/w/a` too.
fn run_dir(info: &crate::data::DatasetInfo) -> Option<PathBuf> {
    let abs = info.absolute_path.as_ref()?;
    if info.path.is_absolute() {
        return None;
    }
    let (mut a, rel) = (abs.components().rev(), info.path.components().rev());
    for x in rel {
        if a.next() != Some(x) {
            return None;
        }
    }
    Some(a.rev().collect())
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Dest {
    Stdout,
    Stderr,
    /// A FIFO or character device, opened and written in place.
    Through(PathBuf),
    /// A new regular file at this (resolved) path.
    Create(PathBuf),
    /// An existing regular file at this (resolved) path, replaced (`--force`).
    Replace(PathBuf),
}

/// A checked destination: `plan` decided how to write it; `write_with` writes it.
#[derive(Debug, Clone)]
pub struct Output {
    shown: PathBuf,
    dest: Dest,
}

fn refuse(path: &Path, why: impl std::fmt::Display) -> OvkError {
    OvkError::input(format!("{}: {why}", path.display()))
}

/// Check `path` against `rules` and decide how it will be written; nothing is written yet.
pub fn plan(path: &Path, rules: &OutputRules) -> Result<Output> {
    let shown = path.to_path_buf();
    // `-` and the names of the standard streams write to the stream itself: opening
    // /dev/stdout would resolve to whatever the shell redirected it to (a regular file that
    // would need --force, or be truncated).
    let std_stream = |names: [&str; 3]| names.iter().any(|n| path.as_os_str() == *n);
    if path.as_os_str() == "-" || std_stream(["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]) {
        return Ok(Output {
            shown,
            dest: Dest::Stdout,
        });
    }
    if std_stream(["/dev/stderr", "/dev/fd/2", "/proc/self/fd/2"]) {
        return Ok(Output {
            shown,
            dest: Dest::Stderr,
        });
    }
    if path.as_os_str().is_empty() {
        return Err(OvkError::input("an output file name is empty"));
    }
    let dest = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let name = path
                .file_name()
                .ok_or_else(|| refuse(path, "is not a file name"))?;
            let parent = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let dir = fs::canonicalize(parent).map_err(|e| {
                refuse(
                    path,
                    format!("cannot write there: the folder {}: {e}", parent.display()),
                )
            })?;
            if !dir.is_dir() {
                return Err(refuse(
                    path,
                    format!("{} is not a folder", parent.display()),
                ));
            }
            Dest::Create(dir.join(name))
        }
        Err(e) => return Err(refuse(path, format!("cannot be checked: {e}"))),
        Ok(link) => {
            let meta = match fs::metadata(path) {
                Ok(m) => m,
                Err(_) if link.file_type().is_symlink() => {
                    return Err(refuse(
                        path,
                        "is a symbolic link to nothing; refusing to create a file through it",
                    ))
                }
                Err(e) => return Err(refuse(path, format!("cannot be checked: {e}"))),
            };
            let real = fs::canonicalize(path)
                .map_err(|e| refuse(path, format!("cannot be resolved: {e}")))?;
            let t = meta.file_type();
            if t.is_dir() {
                return Err(refuse(path, "is a directory; give a file name"));
            } else if t.is_block_device() || t.is_socket() {
                let what = if t.is_socket() {
                    "a socket"
                } else {
                    "a block device"
                };
                return Err(refuse(path, format!("is {what}; ovk does not write to it")));
            } else if t.is_fifo() || t.is_char_device() {
                Dest::Through(real)
            } else {
                if !rules.force {
                    // A protected file is refused as such, not as merely existing.
                    Output {
                        shown: shown.clone(),
                        dest: Dest::Replace(real.clone()),
                    }
                    .check_protected(rules)?;
                    let via = if link.file_type().is_symlink() {
                        format!(" (a symbolic link to {})", real.display())
                    } else {
                        String::new()
                    };
                    return Err(refuse(
                        path,
                        format!(
                            "already exists{via}; pass {} to replace it, or choose another name",
                            rules.force_flag
                        ),
                    ));
                }
                Dest::Replace(real)
            }
        }
    };
    let out = Output { shown, dest };
    out.check_protected(rules)?;
    Ok(out)
}

/// `plan` for several outputs of one command: all are checked before any is written, and two
/// outputs naming the same file are refused.
pub fn plan_all(paths: &[&Path], rules: &OutputRules) -> Result<Vec<Output>> {
    let outs = paths
        .iter()
        .map(|p| plan(p, rules))
        .collect::<Result<Vec<_>>>()?;
    for (i, a) in outs.iter().enumerate() {
        for b in &outs[i + 1..] {
            if a.dest == b.dest && a.real().is_some() {
                return Err(refuse(
                    &b.shown,
                    format!(
                        "is given twice as an output (also as {})",
                        a.shown.display()
                    ),
                ));
            }
        }
    }
    Ok(outs)
}

impl Output {
    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.shown
    }

    /// Whether this writes a regular file (not a stream or a device).
    pub fn is_file(&self) -> bool {
        matches!(self.dest, Dest::Create(_) | Dest::Replace(_))
    }

    fn real(&self) -> Option<&Path> {
        match &self.dest {
            Dest::Stdout | Dest::Stderr => None,
            Dest::Through(p) | Dest::Create(p) | Dest::Replace(p) => Some(p),
        }
    }

    fn check_protected(&self, rules: &OutputRules) -> Result<()> {
        let Some(real) = self.real() else {
            return Ok(());
        };
        // Into a protected folder: by path, or by identity for a folder met through another
        // path to it (a bind mount) on the way up.
        let ancestors: Vec<(&Path, Option<Identity>)> =
            real.ancestors().skip(1).map(|a| (a, identity(a))).collect();
        for dir in &rules.protected_dirs {
            let inside = real.starts_with(&dir.path)
                || ancestors
                    .iter()
                    .any(|(_, id)| id.is_some() && *id == dir.id);
            if inside {
                return Err(refuse(
                    &self.shown,
                    format!(
                        "is inside {} {}; ovk never writes there — choose a path outside it",
                        dir.what,
                        dir.path.display()
                    ),
                ));
            }
        }
        let meta = fs::metadata(real).ok();
        let real_id = meta.as_ref().map(|m| (m.dev(), m.ino()));
        for file in &rules.protected_files {
            if real == file.path || (real_id.is_some() && real_id == file.id) {
                return Err(refuse(
                    &self.shown,
                    format!(
                        "is {}; refusing to overwrite an input of the run (even with {})",
                        file.what, rules.force_flag
                    ),
                ));
            }
        }
        // A file with other names may be one inside a protected folder (a hard link to a
        // session's matrix): look for it there.
        if let (Some(m), Some(id)) = (&meta, real_id) {
            if m.is_file() && m.nlink() > 1 {
                for dir in &rules.protected_dirs {
                    if let Some(twin) = find_identity(&dir.path, id, 2) {
                        return Err(refuse(
                            &self.shown,
                            format!(
                                "is another name (a hard link) of {}, inside {} {}; ovk never \
                                 writes there (even with {})",
                                twin.display(),
                                dir.what,
                                dir.path.display(),
                                rules.force_flag
                            ),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Write `bytes`.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        self.write_with(|w| w.write_all(bytes))
    }

    /// Write what `fill` produces. A regular file appears complete or not at all; an error
    /// (disk full, `/dev/full`, a closed pipe) names the file and its cause.
    pub fn write_with(&self, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<()> {
        let fail = |e: io::Error| refuse(&self.shown, format!("cannot write: {e}"));
        match &self.dest {
            Dest::Stdout => to_stream(io::stdout().lock(), "standard output", fill),
            Dest::Stderr => to_stream(io::stderr().lock(), "standard error", fill),
            Dest::Through(p) => {
                // Opening a FIFO waits for its reader, as a shell redirection does.
                let f = OpenOptions::new().write(true).open(p).map_err(fail)?;
                let mut w = BufWriter::new(f);
                fill(&mut w).and_then(|_| w.flush()).map_err(fail)
            }
            Dest::Create(p) | Dest::Replace(p) => {
                let publish = match self.dest {
                    Dest::Create(_) => Publish::New,
                    _ => Publish::Replace,
                };
                match write_atomic(p, publish, fill) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == ErrorKind::AlreadyExists && publish == Publish::New => {
                        Err(refuse(
                            &self.shown,
                            "was created by someone else while ovk wrote it; nothing replaced",
                        ))
                    }
                    Err(e) => Err(fail(e)),
                }
            }
        }
    }
}

/// A regular file with identity `id` in `dir` or its folders down to `depth` levels (a store
/// holds sessions, a session its files), links not followed.
fn find_identity(dir: &Path, id: Identity, depth: usize) -> Option<PathBuf> {
    for e in fs::read_dir(dir).ok()?.flatten() {
        let Ok(m) = e.metadata() else { continue };
        if m.is_file() && (m.dev(), m.ino()) == id {
            return Some(e.path());
        }
        if m.is_dir() && depth > 1 {
            if let Some(p) = find_identity(&e.path(), id, depth - 1) {
                return Some(p);
            }
        }
    }
    None
}

/// `fill` into a standard stream, buffered and flushed; an error names the stream.
fn to_stream(
    stream: impl Write,
    name: &str,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    let mut w = BufWriter::new(stream);
    fill(&mut w)
        .and_then(|_| w.flush())
        .map_err(|e| OvkError::input(format!("writing to {name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ovk-output-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn new_files_are_written_existing_ones_need_force() {
        let d = temp("force");
        let f = d.join("a.csv");
        plan(&f, &OutputRules::new(false))
            .unwrap()
            .write(b"1\n")
            .unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"1\n");
        let e = plan(&f, &OutputRules::new(false)).unwrap_err().to_string();
        assert!(e.contains("already exists") && e.contains("--force"), "{e}");
        plan(&f, &OutputRules::new(true))
            .unwrap()
            .write(b"2\n")
            .unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"2\n");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1, "no temporary left");
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn a_symlink_keeps_being_a_link_and_protected_files_are_refused() {
        let d = temp("links");
        let target = d.join("t.csv");
        fs::write(&target, "old").unwrap();
        let link = d.join("l.csv");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        plan(&link, &OutputRules::new(true))
            .unwrap()
            .write(b"new")
            .unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
        let rules = OutputRules::new(true).protect_file(&target, "the data file");
        let e = plan(&link, &rules).unwrap_err().to_string();
        assert!(e.contains("input of the run"), "{e}");
        let rules = OutputRules::new(true).protect_dir(&d, "the session store");
        let e = plan(&d.join("x.csv"), &rules).unwrap_err().to_string();
        assert!(e.contains("session store"), "{e}");
        let dangling = d.join("dangling.csv");
        std::os::unix::fs::symlink(d.join("nowhere"), &dangling).unwrap();
        assert!(plan(&dangling, &OutputRules::new(true)).is_err());
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn a_runs_folder_is_its_absolute_data_path_less_the_relative_one() {
        let info = |p: &str, a: &str| crate::data::DatasetInfo {
            path: p.into(),
            absolute_path: Some(a.into()),
            size: None,
            sha256: String::new(),
            rows: 0,
            features: Vec::new(),
            targets: Vec::new(),
            packed_width: None,
        };
        let dir = |p: &str, a: &str| run_dir(&info(p, a));
        assert_eq!(dir("lin.csv", "/w/a/lin.csv"), Some("/w/a".into()));
        assert_eq!(
            dir("../d/lin.csv", "/w/a/../d/lin.csv"),
            Some("/w/a".into())
        );
        assert_eq!(dir("/w/lin.csv", "/w/lin.csv"), None);
        assert_eq!(dir("x.csv", "/w/a/lin.csv"), None);
    }

    #[test]
    fn devices_are_written_through_and_their_errors_reported() {
        let full = Path::new("/dev/full");
        if full.exists() {
            let e = plan(full, &OutputRules::new(false))
                .unwrap()
                .write(&[b'x'; 100_000])
                .unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains("/dev/full"), "{e}");
            assert!(full.exists() && !fs::metadata(full).unwrap().is_file());
        }
        plan(Path::new("/dev/null"), &OutputRules::new(false))
            .unwrap()
            .write(b"x")
            .unwrap();
    }
}
