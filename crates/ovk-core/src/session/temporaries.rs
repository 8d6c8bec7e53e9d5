//! Temporaries — the files and work folders a write fills before it publishes them under their
//! real name — and how a live writer's are told from a dead one's.
//!
//! A writer holds an flock on its temporary (on a work folder's lock file beside it) for the
//! temporary's whole life, so one that nobody holds a lock on was left by a dead process,
//! whichever host, container or PID namespace it ran in: a process id means something only in
//! its own namespace, and a store shared by cluster nodes sees writers of many. The lock is
//! released by the kernel when its holder dies, however it dies.
//!
//! This process's own temporaries are listed while they live, so that a signal ending it can
//! remove them first (`abandon`); publishing (the rename or link that gives a temporary its
//! real name) holds the list's lock, so a temporary is either published whole or removed,
//! never removed while it is being published.

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// A writer creates its temporary, then locks it: a cleaner that finds an empty, unlocked
/// temporary younger than this leaves it to the writer that is about to lock it.
const FRESH: Duration = Duration::from_secs(60);

/// A work folder written by an ovk without locks (no lock file beside it) is taken for
/// abandoned once untouched this long: no save takes a day.
const LEGACY_AGE: Duration = Duration::from_secs(24 * 3600);

/// The lock file beside a work folder is named after it, with this suffix.
const LOCK_SUFFIX: &str = ".lock";

/// `{base}-{pid}-{nonce}`: unique among processes of every host and namespace sharing the
/// folder (two may have the same pid), and still showing which process wrote it.
pub(crate) fn unique_name(base: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    // splitmix64 of the clock and the count
    let mut z = nanos ^ count.rotate_left(32);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    format!("{base}-{}-{:08x}", std::process::id(), z as u32)
}

/// Create `path` for writing (never through a name that exists, a planted link included) and
/// lock it for this process's lifetime or until dropped. Where the file system has no locks
/// the file is created all the same; cleaners then never take it for abandoned.
pub(crate) fn create_locked(path: &Path) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(path)?;
    // SAFETY: flock on a descriptor this function owns.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    Ok(f)
}

/// The lock of the temporary at `path` (the file itself, or a work folder's lock file), when
/// no live process holds it and it is not a writer's in its first moments: the caller removes
/// the temporary while holding it. `None` for a live writer's, or when it cannot be told.
pub(crate) fn abandoned(path: &Path) -> Option<File> {
    // O_NOFOLLOW: never through a link planted at a temporary's name; O_NONBLOCK: a FIFO
    // planted there must not hang the cleaner.
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    // SAFETY: flock on a descriptor this function owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return None;
    }
    let fresh = meta
        .modified()
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_none_or(|age| age < FRESH);
    (meta.len() > 0 || !fresh).then_some(f)
}

/// Remove the abandoned temporaries in `dir` whose names start with `prefix` (the files of
/// dead writers of one destination: `.x.csv.tmp-…`).
pub(crate) fn remove_abandoned_files(dir: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with(prefix) {
            let path = e.path();
            if let Some(_lock) = abandoned(&path) {
                let _ = fs::remove_file(&path);
            }
        }
    }
}

/// Remove the abandoned work folders (and their lock files) in `root` whose names start with
/// `prefix`: a lock file nobody holds, or, with no lock file (an older ovk's), a day untouched.
pub(crate) fn remove_abandoned_work_dirs(root: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(prefix) {
            continue;
        }
        let path = e.path();
        if let Some(dir) = name.strip_suffix(LOCK_SUFFIX) {
            if let Some(_lock) = abandoned(&path) {
                // The folder first: while it exists, so does its lock file.
                match fs::remove_dir_all(root.join(dir)) {
                    Ok(()) => {}
                    Err(e) if e.kind() == ErrorKind::NotFound => {}
                    Err(_) => continue,
                }
                let _ = fs::remove_file(&path);
            }
        } else if !root.join(format!("{name}{LOCK_SUFFIX}")).exists() {
            let old = fs::symlink_metadata(&path)
                .ok()
                .filter(|m| m.is_dir())
                .and_then(|m| m.modified().ok())
                .and_then(|m| m.elapsed().ok())
                .is_some_and(|age| age > LEGACY_AGE);
            if old {
                let _ = fs::remove_dir_all(&path);
            }
        }
    }
}

/// A work folder's name, reserved under a lock held while this value lives. The folder itself
/// is the caller's to create (a save) or to move there (a deletion); whatever is at its name is
/// removed when the value is dropped unpublished.
pub(crate) struct WorkDir {
    dir: PathBuf,
    lock_path: PathBuf,
    /// Dropped after `Drop::drop` has unlinked the lock file: the lock outlives its name.
    _lock: File,
    flight: Option<InFlight>,
}

impl WorkDir {
    /// Reserve `root/{base}-{pid}-{nonce}` and lock its lock file.
    pub fn reserve(root: &Path, base: &str) -> io::Result<WorkDir> {
        let mut attempts = 0;
        loop {
            let name = unique_name(base);
            let dir = root.join(&name);
            let lock_path = root.join(format!("{name}{LOCK_SUFFIX}"));
            match create_locked(&lock_path) {
                Ok(mut lock) => {
                    // Who holds it, for a person reading the folder; a cleaner that finds an
                    // unlocked, non-empty lock file knows its writer is gone.
                    let host = fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
                    if let Err(e) = writeln!(lock, "{} pid {}", host.trim(), std::process::id()) {
                        // a full disk: the lock file was made but cannot say whose it is
                        drop(lock);
                        let _ = fs::remove_file(&lock_path);
                        return Err(e);
                    }
                    let flight = InFlight::new(vec![dir.clone(), lock_path.clone()]);
                    return Ok(WorkDir {
                        dir,
                        lock_path,
                        _lock: lock,
                        flight: Some(flight),
                    });
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists && attempts < 16 => attempts += 1,
                Err(e) => return Err(e),
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Move the work folder to `dest` (a rename); the lock file goes when this value drops.
    pub(crate) fn publish(mut self, dest: &Path) -> io::Result<()> {
        let flight = self.flight.take().expect("a work folder is published once");
        let dir = self.dir.clone();
        let published = flight.publish(Some(dest), || fs::rename(&dir, dest));
        if published.is_err() {
            // another writer took `dest` first: this folder is nobody's now
            let _ = fs::remove_dir_all(&dir);
        }
        published
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.flight.is_some() {
            let _ = fs::remove_dir_all(&self.dir);
        }
        let _ = fs::remove_file(&self.lock_path);
    }
}

/// This process's temporaries, and what it published (newest last).
struct Registry {
    in_flight: Vec<PathBuf>,
    published: Vec<PathBuf>,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    in_flight: Vec::new(),
    published: Vec::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Temporaries of this process, listed while this value lives.
pub(crate) struct InFlight {
    paths: Vec<PathBuf>,
}

impl InFlight {
    pub fn new(paths: Vec<PathBuf>) -> InFlight {
        registry().in_flight.extend(paths.iter().cloned());
        InFlight { paths }
    }

    /// Run `publish` (the rename or link) with the list locked, so a signal's cleanup waits
    /// for it; on success the temporaries leave the list and `shown`, if any, is recorded as
    /// published.
    pub(crate) fn publish<T>(
        mut self,
        shown: Option<&Path>,
        publish: impl FnOnce() -> io::Result<T>,
    ) -> io::Result<T> {
        let mut r = registry();
        let out = publish()?;
        r.in_flight.retain(|p| !self.paths.contains(p));
        self.paths.clear();
        if let Some(p) = shown {
            r.published.push(p.to_path_buf());
        }
        Ok(out)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if self.paths.is_empty() {
            return;
        }
        let mut r = registry();
        for p in &self.paths {
            if let Some(i) = r.in_flight.iter().position(|q| q == p) {
                r.in_flight.swap_remove(i);
            }
        }
    }
}

/// What `abandon` did.
#[derive(Debug, Default)]
pub struct Abandoned {
    /// The unfinished temporaries removed.
    pub removed: Vec<PathBuf>,
    /// Everything published, oldest first (complete, and kept).
    pub published: Vec<PathBuf>,
}

/// Remove every temporary of this process and stop it from publishing anything more: for a
/// process about to exit on a signal. Waits for a publish in progress to finish.
pub fn abandon() -> Abandoned {
    let r = registry();
    let mut removed = Vec::new();
    for p in &r.in_flight {
        let gone = match fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => fs::remove_dir_all(p).is_ok(),
            Ok(_) => fs::remove_file(p).is_ok(),
            Err(_) => false,
        };
        if gone && !p.to_string_lossy().ends_with(LOCK_SUFFIX) {
            removed.push(p.clone());
        }
    }
    let published = r.published.clone();
    // Held until the process exits: nothing is published after its temporaries are gone.
    std::mem::forget(r);
    Abandoned { removed, published }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("ovk-temporaries-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_held_temporary_is_live_and_a_released_one_abandoned() {
        let d = temp("held");
        let p = d.join(".x.csv.tmp-1-0");
        let mut f = create_locked(&p).unwrap();
        f.write_all(b"half").unwrap();
        assert!(abandoned(&p).is_none(), "its writer holds it");
        drop(f);
        assert!(abandoned(&p).is_some(), "its writer is gone");
        remove_abandoned_files(&d, ".x.csv.tmp-");
        assert!(!p.exists());
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn an_empty_fresh_temporary_is_left_to_the_writer_about_to_lock_it() {
        let d = temp("fresh");
        let p = d.join(".x.csv.tmp-2-0");
        fs::write(&p, "").unwrap();
        assert!(abandoned(&p).is_none());
        fs::write(&p, "x").unwrap();
        assert!(abandoned(&p).is_some());
        let _ = fs::remove_dir_all(&d);
    }

    #[test]
    fn work_dirs_are_removed_once_their_lock_is_free() {
        let d = temp("work");
        let w = WorkDir::reserve(&d, ".tmp-s").unwrap();
        fs::create_dir(w.path()).unwrap();
        remove_abandoned_work_dirs(&d, ".tmp-");
        assert!(w.path().is_dir(), "a live save is kept");
        let dest = d.join("s");
        w.publish(&dest).unwrap();
        assert!(dest.is_dir());
        let left: Vec<_> = fs::read_dir(&d)
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("s")],
            "no lock file left"
        );
        // A dead writer's: the lock file is there, unlocked and not empty.
        let dead = d.join(".tmp-t-9-0");
        fs::create_dir(&dead).unwrap();
        fs::write(d.join(".tmp-t-9-0.lock"), "host pid 9\n").unwrap();
        // An older ovk's, without a lock file: kept until a day old.
        let legacy = d.join(".tmp-u-42");
        fs::create_dir(&legacy).unwrap();
        remove_abandoned_work_dirs(&d, ".tmp-");
        assert!(!dead.exists() && !d.join(".tmp-t-9-0.lock").exists());
        assert!(legacy.exists());
        let _ = fs::remove_dir_all(&d);
    }
}
