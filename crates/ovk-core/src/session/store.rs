//! The session store: a directory of session directories. Writes are atomic (a temp directory
//! renamed into place), listing never fails on a corrupt entry, and loading checks the schema.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use ndarray::Array2;

use super::durable::{replace_synced, sync_dir, write_npy_synced, write_synced};
use super::load::{load, read_record, store_error};
use super::naming::{is_plain_name, new_id, safe_name};
use super::temporaries::WorkDir;
use super::{RunStatus, SessionRecord, SCHEMA};
use crate::{OvkError, Result};

/// The session store: a directory holding one subdirectory per saved run.
pub struct Store {
    root: PathBuf,
}

/// One line of `ovk sessions`, or the reason an entry could not be read.
#[derive(Debug, Clone)]
pub enum Listing {
    /// A session that could be read.
    Ok(Box<Summary>),
    /// A session directory that could not be read: where it is and why.
    Corrupt {
        /// The session directory.
        path: PathBuf,
        /// Why it could not be read.
        reason: String,
    },
}

/// What the session list shows of one saved run, read from its `session.json`.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The run's id (its directory name).
    pub id: String,
    /// The run's name.
    pub name: String,
    /// When it was saved (RFC 3339, UTC).
    pub created: String,
    /// File name of the data it was fitted on.
    pub dataset: String,
    /// The method's name.
    pub method: String,
    /// The task's primary test metric (name, value), when recorded.
    pub key_metric: Option<(String, f64)>,
    /// The session's directory.
    pub path: PathBuf,
    /// The settings it was fitted with, by key (kernel, σ as used, the method's parameters):
    /// the columns of the workbench's runs table.
    pub settings: BTreeMap<String, String>,
    /// Every test metric, by name.
    pub metrics: BTreeMap<String, f64>,
    /// The data file it was fitted on, as recorded (and as configured, when that differs).
    pub data_files: Vec<PathBuf>,
    /// Iterations the fit ran.
    pub iterations: usize,
    /// Seconds the fit took.
    pub fit_s: f64,
    /// False for a fit recorded by itself and not kept yet (the workbench's `s` keeps it).
    pub kept: bool,
    /// Whether the run finished or was cancelled.
    pub status: RunStatus,
    /// Why its test metrics are optimistic (rows that also chose something), when they are.
    pub optimistic: Option<String>,
    /// The rows it was fitted and scored on (`Split::fingerprint`): equal ids, same rows.
    pub split_id: String,
    /// `--cv K`: the folds' id, and the primary metric's mean and sd over them.
    pub folds_id: Option<String>,
    /// `--cv K`: (K, mean, sd) of the primary metric over the folds.
    pub cv: Option<(usize, f64, f64)>,
}

/// Work directories (saves in progress, deletions) start with this; listing skips them.
const TMP_PREFIX: &str = ".tmp-";

impl Store {
    /// `dir`, else `$OVK_SESSIONS`, else the per-user data directory (`directories`), joined
    /// with `sessions`. Created when absent.
    pub fn open(dir: Option<&Path>) -> Result<Store> {
        let root = Store::locate(dir)?;
        if let Ok(m) = fs::metadata(&root) {
            if !m.is_dir() {
                return Err(OvkError::input(format!(
                    "{}: the session store must be a directory, but it is {}",
                    root.display(),
                    crate::data::files::kind_of(&m)
                )));
            }
        }
        fs::create_dir_all(&root).map_err(|e| {
            store_error(format!("creating the session store {}", root.display()), e)
        })?;
        if !root.is_dir() {
            return Err(OvkError::input(format!(
                "{}: the session store must be a directory",
                root.display()
            )));
        }
        Ok(Store { root })
    }

    /// The store `open` would find, when it exists already: for commands that only read it or
    /// keep their writes out of it, which should not create it.
    pub fn existing(dir: Option<&Path>) -> Result<Option<Store>> {
        let root = Store::locate(dir)?;
        Ok(root.is_dir().then_some(Store { root }))
    }

    /// Where `open` would find the store, without creating it.
    pub fn locate(dir: Option<&Path>) -> Result<PathBuf> {
        Ok(match dir {
            Some(d) => d.to_path_buf(),
            None => match std::env::var_os("OVK_SESSIONS").filter(|v| !v.is_empty()) {
                Some(v) => PathBuf::from(v),
                None => directories::ProjectDirs::from("", "", "ovk")
                    .map(|p| p.data_dir().join("sessions"))
                    .ok_or_else(|| {
                        OvkError::input(
                            "cannot find a home directory for the session store; set \
                             OVK_SESSIONS or pass --sessions <dir>",
                        )
                    })?,
            },
        })
    }

    /// The store's directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Write a new session (record + matrices) atomically; returns its directory.
    ///
    /// The id is the record's `id` when it is a plain name (the pipeline fills it with
    /// `new_id`), else a fresh `new_id(name)`; `-2`, `-3` … are appended while it is taken.
    /// Everything is written and synced in `.tmp-<id>-<pid>-<nonce>/` (its lock held
    /// meanwhile), then the directory is renamed into place, so an interrupted save never
    /// leaves a half-written session in the listing.
    pub fn save(
        &self,
        record: &SessionRecord,
        matrices: &[(String, Array2<f64>)],
    ) -> Result<PathBuf> {
        let mut files = BTreeMap::new();
        for (name, _) in matrices {
            if !is_plain_name(name) || name.contains(char::is_whitespace) {
                return Err(OvkError::internal(format!(
                    "matrix name '{name}' cannot be a file name"
                )));
            }
            if files.insert(name.clone(), format!("{name}.npy")).is_some() {
                return Err(OvkError::internal(format!(
                    "matrix '{name}' is saved twice"
                )));
            }
        }
        self.remove_stale_work_dirs();
        let base = if is_safe_id(&record.id) {
            record.id.clone()
        } else {
            new_id(&record.name)
        };
        for attempt in 1..=10_000u32 {
            let id = if attempt == 1 {
                base.clone()
            } else {
                format!("{base}-{attempt}")
            };
            let dest = self.root.join(&id);
            if dest.symlink_metadata().is_ok() {
                continue;
            }
            let mut rec = record.clone();
            rec.name = safe_name(&rec.name);
            rec.schema = SCHEMA.to_string();
            rec.id = id.clone();
            rec.matrices = files.clone();
            let work = WorkDir::reserve(&self.root, &format!("{TMP_PREFIX}{id}"))
                .map_err(|e| store_error(format!("saving into {}/", self.root.display()), e))?;
            write_session_dir(work.path(), &rec, matrices)?;
            match work.publish(&dest) {
                Ok(()) => {
                    sync_dir(&self.root)?;
                    return Ok(dest);
                }
                // Another process took the id between the check and the rename.
                Err(_) if dest.symlink_metadata().is_ok() => {}
                Err(e) => {
                    return Err(store_error(
                        format!("moving the session into place at {}", dest.display()),
                        e,
                    ));
                }
            }
        }
        Err(OvkError::internal(format!(
            "no free session id for '{base}' in {}",
            self.root.display()
        )))
    }

    /// Every session, newest first (by `created`, then id); unreadable entries are listed as
    /// `Corrupt`, after the readable ones. Hidden entries (work directories) and plain files
    /// are skipped.
    pub fn list(&self) -> Vec<Listing> {
        let entries = match fs::read_dir(&self.root) {
            Ok(rd) => rd,
            Err(e) => {
                return vec![Listing::Corrupt {
                    path: self.root.clone(),
                    reason: format!("cannot read the session store: {e}"),
                }]
            }
        };
        let mut ok = Vec::new();
        let mut corrupt = Vec::new();
        for entry in entries.flatten() {
            let dir_name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if dir_name.starts_with('.') || !path.is_dir() {
                continue;
            }
            match read_record(&path) {
                Ok(rec) => ok.push(summarize(dir_name, &rec, path)),
                Err(e) => corrupt.push((path, e.to_string())),
            }
        }
        let stamp = |s: &Summary| chrono::DateTime::parse_from_rfc3339(&s.created).ok();
        ok.sort_by(|a, b| (stamp(b), &b.created, &b.id).cmp(&(stamp(a), &a.created, &a.id)));
        corrupt.sort();
        ok.into_iter()
            .map(|s| Listing::Ok(Box::new(s)))
            .chain(
                corrupt
                    .into_iter()
                    .map(|(path, reason)| Listing::Corrupt { path, reason }),
            )
            .collect()
    }

    /// Give a session (named as `resolve` accepts) a new display name; its id stays.
    pub fn rename(&self, id: &str, new_name: &str) -> Result<()> {
        let new_name = safe_name(new_name);
        if new_name.is_empty() {
            return Err(OvkError::input("a session name cannot be empty"));
        }
        let dir = self.resolve(id)?;
        let mut record = load(&dir)?.record;
        record.name = new_name;
        save_record(&dir, &record)
    }

    /// Keep a session the workbench recorded by itself (`s`), under `new_name` when given;
    /// `--prune-unkept` never removes it after this.
    pub fn keep(&self, id: &str, new_name: Option<&str>) -> Result<()> {
        let dir = self.resolve(id)?;
        let mut record = load(&dir)?.record;
        if let Some(name) = new_name {
            let name = safe_name(name);
            if name.is_empty() {
                return Err(OvkError::input("a session name cannot be empty"));
            }
            record.name = name;
        }
        record.kept = true;
        save_record(&dir, &record)
    }

    /// The sessions not kept (fits recorded by themselves, cancelled runs) created more than
    /// `older_than` ago (all of them when `None`), oldest last — what `prune_unkept` removes.
    pub fn unkept(&self, older_than: Option<std::time::Duration>) -> Vec<Summary> {
        let now = chrono::Utc::now();
        self.list()
            .into_iter()
            .filter_map(|l| match l {
                Listing::Ok(s) if !s.kept => Some(*s),
                _ => None,
            })
            .filter(|s| match older_than {
                None => true,
                Some(age) => chrono::DateTime::parse_from_rfc3339(&s.created)
                    .ok()
                    .and_then(|t| (now - t.with_timezone(&chrono::Utc)).to_std().ok())
                    .is_some_and(|elapsed| elapsed >= age),
            })
            .collect()
    }

    /// Delete the sessions `unkept` lists; returns the ids removed. A session that cannot be
    /// removed stops the pruning with its reason (those before it are gone).
    pub fn prune_unkept(&self, older_than: Option<std::time::Duration>) -> Result<Vec<String>> {
        let mut removed = Vec::new();
        for s in self.unkept(older_than) {
            self.delete(&s.id)?;
            removed.push(s.id);
        }
        Ok(removed)
    }

    /// Remove a session given by id (or by its path); refuses anything that is not a directory
    /// directly inside the store.
    pub fn delete(&self, id: &str) -> Result<()> {
        let dir = if is_plain_name(id) && self.root.join(id).is_dir() {
            self.root.join(id)
        } else if Path::new(id).is_dir() {
            PathBuf::from(id)
        } else {
            let by_name: Vec<String> = self.named(id).into_iter().map(|s| s.id).collect::<Vec<_>>();
            let hint = if by_name.is_empty() {
                String::new()
            } else {
                format!(
                    "; '{id}' is the name of {}, delete by id",
                    by_name.join(", ")
                )
            };
            return Err(OvkError::input(format!(
                "no session with id '{id}' in {}{hint}",
                self.root.display()
            )));
        };
        let canon = |p: &Path| fs::canonicalize(p).map_err(|e| OvkError::io_path(p, e));
        let (dir_c, root_c) = (canon(&dir)?, canon(&self.root)?);
        if dir_c.parent() != Some(root_c.as_path()) {
            return Err(OvkError::input(format!(
                "{} is not a session of the store {}; refusing to delete it",
                dir.display(),
                self.root.display()
            )));
        }
        // Renamed out of the listing first, so a failure halfway never shows a half session.
        let leaf = dir_c
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let doomed = WorkDir::reserve(&root_c, &format!("{TMP_PREFIX}deleting-{leaf}"))
            .map_err(|e| store_error(format!("deleting {}", dir.display()), e))?;
        fs::rename(&dir_c, doomed.path())
            .map_err(|e| store_error(format!("deleting {}", dir.display()), e))?;
        fs::remove_dir_all(doomed.path())
            .map_err(|e| store_error(format!("deleting {}", dir.display()), e))
    }

    /// A session named by path, by id, or by unique name within the store.
    pub fn resolve(&self, arg: &str) -> Result<PathBuf> {
        if arg.trim().is_empty() {
            return Err(OvkError::input("no session given"));
        }
        let as_path = Path::new(arg);
        if as_path.is_dir() {
            return Ok(as_path.to_path_buf());
        }
        if is_plain_name(arg) && self.root.join(arg).is_dir() {
            return Ok(self.root.join(arg));
        }
        let mut matches = self.named(arg);
        match matches.len() {
            0 => Err(OvkError::input(format!(
                "no session '{arg}': not a directory, nor an id or a name in {} \
                 (see `ovk sessions`)",
                self.root.display()
            ))),
            1 => Ok(matches.remove(0).path),
            n => {
                let ids: Vec<String> = matches
                    .iter()
                    .map(|s| format!("{} ({})", s.id, s.created))
                    .collect();
                Err(OvkError::input(format!(
                    "{n} sessions are named '{arg}'; give one of their ids: {}",
                    ids.join(", ")
                )))
            }
        }
    }

    /// The readable sessions called `name`, newest first.
    fn named(&self, name: &str) -> Vec<Summary> {
        self.list()
            .into_iter()
            .filter_map(|l| match l {
                Listing::Ok(s) if s.name == name => Some(*s),
                _ => None,
            })
            .collect()
    }
}

/// Whether a cancelled run's σ is a number it used (given, or resolved from its data).
fn sigma_known(rec: &SessionRecord) -> bool {
    matches!(rec.kernel.spec.sigma, crate::kernels::Sigma::Value(_))
        || !rec.dataset.sha256.is_empty()
}

/// Ids become directory names: letters, digits, `-`, `_`, `.`, not starting with `.`.
fn is_safe_id(id: &str) -> bool {
    is_plain_name(id)
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Rewrite `dir/session.json` atomically (synced temp file renamed over it).
pub fn save_record(dir: &Path, record: &SessionRecord) -> Result<()> {
    let text = to_json(record)?;
    replace_synced(&dir.join("session.json"), text.as_bytes())
}

fn to_json(record: &SessionRecord) -> Result<String> {
    crate::util::json::to_readable_json(record)
        .map_err(|e| OvkError::internal(format!("serializing the session record: {e}")))
}

impl Store {
    /// Remove work directories left by a process killed mid-save or mid-delete: their writer
    /// no longer holds their lock, whatever host or PID namespace it ran in. Listing never
    /// shows them; this reclaims the space.
    fn remove_stale_work_dirs(&self) {
        super::temporaries::remove_abandoned_work_dirs(&self.root, TMP_PREFIX);
    }
}

/// Fill a fresh work directory with `session.json` and one `.npy` per matrix, all synced.
fn write_session_dir(
    tmp: &Path,
    record: &SessionRecord,
    matrices: &[(String, Array2<f64>)],
) -> Result<()> {
    fs::create_dir(tmp).map_err(|e| store_error(format!("creating {}", tmp.display()), e))?;
    for (name, a) in matrices {
        let file = &record.matrices[name];
        write_npy_synced(&tmp.join(file), a)?;
    }
    write_synced(&tmp.join("session.json"), to_json(record)?.as_bytes())?;
    sync_dir(tmp)
}

fn summarize(id: String, rec: &SessionRecord, path: PathBuf) -> Summary {
    let (metric, _) = crate::metrics::primary(rec.task);
    let dataset = rec
        .dataset
        .path
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| rec.dataset.path.display().to_string());
    Summary {
        id,
        name: rec.name.clone(),
        created: rec.created.clone(),
        dataset,
        method: rec.method.clone(),
        key_metric: rec
            .metrics
            .test
            .get(metric)
            .map(|v| (metric.to_string(), *v)),
        path,
        settings: settings_of(rec),
        metrics: rec.metrics.test.clone().into_iter().collect(),
        iterations: rec.iterations,
        fit_s: rec.timings.fit_s,
        kept: rec.kept,
        status: rec.status,
        optimistic: rec.optimistic.as_ref().map(|o| o.reason.clone()),
        split_id: rec.split.id_or_computed(&rec.dataset.sha256),
        folds_id: rec.split.folds.as_ref().map(|f| f.id.clone()),
        cv: rec.cv.as_ref().and_then(|cv| {
            let s = cv.get(metric)?;
            Some((s.folds.len(), s.mean, s.sd))
        }),
        data_files: {
            let mut files = vec![rec.dataset.path.clone()];
            let others = [
                Some(&rec.config.data.path),
                rec.dataset.absolute_path.as_ref(),
            ];
            for p in others.into_iter().flatten() {
                if !files.contains(p) {
                    files.push(p.clone());
                }
            }
            files
        },
    }
}

/// The hyperparameters of a saved fit as text by key, as used: defaults filled in, a "median"
/// σ resolved.
fn settings_of(rec: &SessionRecord) -> BTreeMap<String, String> {
    let mut m = rec.config.settings();
    m.remove("method");
    // The parameters as used, defaults included (a λ left at its default is still a λ).
    for (k, v) in &rec.params.0 {
        m.insert(k.clone(), v.to_string());
    }
    // A run stopped before its data were read never resolved a median σ.
    if let (
        crate::kernels::Kernel::Gaussian { sigma } | crate::kernels::Kernel::Laplacian { sigma },
        true,
    ) = (
        rec.kernel.resolved,
        rec.status.is_finished() || sigma_known(rec),
    ) {
        m.insert("sigma".into(), sigma.to_string());
    }
    m
}
