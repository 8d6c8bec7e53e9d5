//! Carries out `update`'s effects — list a folder, load a table, start or cancel a fit, save,
//! list, open, rename, delete sessions — and turns their answers into actions. Slow work
//! (the fit, the median σ, reading a table or a session) runs on threads; this side only
//! polls channels, so a large file never freezes the screen.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{channel, Receiver, SendError, Sender, TryRecvError};

use ovk_core::data::{self, DataConfig, PrepareOptions};
use ovk_core::kernels::median_distance;
use ovk_core::session::{self, output, SessionRecord, Store};
use ovk_core::train::worker::{spawn_worker, Work, WorkerHandle};
use ovk_core::train::{self, RunHandle, RunMessage, RunOutcome};
use ovk_core::{OvkError, Result};

use super::action::Action;
use super::effect::Effect;
use super::state::{FileEntry, MarkedRun};

/// Rows of the table kept for the preview.
const HEAD_ROWS: usize = 12;

/// A slow read, run off the UI thread; its answer is an action.
type Read = Box<dyn FnOnce() -> Action + Send>;

/// A fit in progress: in a worker process (what the workbench uses), or on a thread of this
/// one when no worker could be started.
enum Runner {
    Worker(WorkerHandle),
    Thread(RunHandle),
}

impl Runner {
    fn rx(&self) -> &Receiver<RunMessage> {
        match self {
            Runner::Worker(h) => &h.rx,
            Runner::Thread(h) => &h.rx,
        }
    }

    fn cancel(&self) {
        match self {
            Runner::Worker(h) => h.cancel(),
            Runner::Thread(h) => h.cancel(),
        }
    }
}

/// How often the worker's memory is read while it runs.
const MEMORY_EVERY: std::time::Duration = std::time::Duration::from_millis(1000);

pub struct Driver {
    run: Option<Runner>,
    /// When the running worker's memory was last read.
    memory_read: Option<std::time::Instant>,
    store: std::result::Result<Store, String>,
    median_rx: Option<Receiver<(u64, std::result::Result<f64, String>)>>,
    /// Only the latest median request waits while one is computing (older ones are stale).
    median_pending: Option<(u64, DataConfig)>,
    /// Reads (tables, sessions) for the reader thread; `None` if it could not be started.
    reads: Option<Sender<Read>>,
    /// The reader thread's answers, each one finished action.
    answers: Receiver<Action>,
    queue: Vec<Action>,
}

impl Driver {
    pub fn new(sessions_dir: Option<&Path>) -> Driver {
        let (reads, read_rx) = channel::<Read>();
        let (answer_tx, answers) = channel();
        let reader = std::thread::Builder::new()
            .name("ovk-reader".into())
            .spawn(move || {
                for read in read_rx {
                    if answer_tx.send(read()).is_err() {
                        break;
                    }
                }
            });
        Driver {
            reads: reader.ok().map(|_| reads),
            answers,
            run: None,
            memory_read: None,
            store: Store::open(sessions_dir).map_err(|e| e.to_string()),
            median_rx: None,
            median_pending: None,
            queue: Vec::new(),
        }
    }

    pub fn execute(&mut self, effects: Vec<Effect>) {
        for e in effects {
            self.execute_one(e);
        }
    }

    fn execute_one(&mut self, effect: Effect) {
        match effect {
            Effect::ListDir { dir, select } => {
                let entries = list_dir(&dir).map_err(|e| e.to_string());
                self.queue.push(Action::DirListed {
                    dir,
                    entries,
                    select,
                });
            }
            Effect::LoadTable(path) => self.in_background(move || {
                let table = data::load_table(&path, HEAD_ROWS).map_err(|e| e.to_string());
                // The sidecar a run would read, through the same guards (no FIFO, capped).
                let sidecar = data::sidecar_path(&path)
                    .filter(|p| p.exists())
                    .and_then(|p| data::files::read_text_file(&p, 1 << 20, "a sidecar").ok())
                    .and_then(|b| String::from_utf8(b).ok())
                    .or_else(|| data::implied_roles_toml(&path));
                Action::TableLoaded {
                    path,
                    table,
                    sidecar,
                }
            }),
            Effect::ComputeMedian { generation, config } => {
                if self.median_rx.is_some() {
                    self.median_pending = Some((generation, config));
                } else {
                    self.spawn_median(generation, config);
                }
            }
            Effect::StartRun(cfg) => self.start(Work::Fit(Box::new(cfg))),
            Effect::StartSweep { configs, folds } => {
                self.warn_widths(&configs);
                // Fits run one at a time: the machine's cores go to each fit's own threads.
                self.start(Work::Sweep {
                    configs,
                    folds,
                    jobs: 1,
                    halving: None,
                })
            }
            Effect::StartHalving {
                configs,
                folds,
                factor,
            } => {
                self.warn_widths(&configs);
                self.start(Work::Sweep {
                    configs,
                    folds,
                    jobs: 1,
                    halving: Some(factor),
                })
            }
            Effect::LoadMarked(path) => self.in_background(move || {
                let r = session::load(&path)
                    .map(|l| marked_run(l.record))
                    .map_err(|e| e.to_string());
                Action::MarkedLoaded(path, r)
            }),
            Effect::CancelRun => {
                if let Some(h) = &self.run {
                    h.cancel();
                }
            }
            Effect::SaveSession { name, outcome } => {
                let r = self.store().and_then(|st| {
                    let mut record = outcome.record.clone();
                    record.name = name;
                    record.kept = true;
                    st.save(&record, &outcome.matrices)
                        .map_err(|e| e.to_string())
                });
                self.queue.push(Action::Saved(r));
            }
            Effect::RecordRun(outcome) => {
                let r = self.store().and_then(|st| {
                    let mut record = outcome.record.clone();
                    record.kept = false;
                    st.save(&record, &outcome.matrices)
                        .map_err(|e| e.to_string())
                });
                self.queue.push(Action::Recorded(r));
            }
            Effect::RecordStopped {
                config,
                trace,
                notes,
                seconds,
            } => {
                let record = SessionRecord::stopped(&config, trace, notes, seconds);
                let r = self
                    .store()
                    .and_then(|st| st.save(&record, &[]).map_err(|e| e.to_string()));
                self.queue.push(Action::Recorded(r));
            }
            Effect::KeepSession { dir, name } => {
                let r = self.store().and_then(|st| {
                    st.keep(&dir.to_string_lossy(), Some(&name))
                        .map(|_| (dir, name))
                        .map_err(|e| e.to_string())
                });
                self.queue.push(Action::Kept(r));
            }
            Effect::PruneUnkept => {
                let r = self.store().and_then(|st| {
                    st.prune_unkept(None)
                        .map(|ids| match ids.len() {
                            1 => "deleted 1 run not kept".to_string(),
                            n => format!("deleted {n} runs not kept"),
                        })
                        .map_err(|e| e.to_string())
                });
                self.queue.push(Action::SessionChanged(r));
            }
            Effect::ListSessions => {
                let (root, list) = match &self.store {
                    Ok(st) => (Ok(st.root().to_path_buf()), st.list()),
                    Err(e) => (Err(e.clone()), Vec::new()),
                };
                self.queue.push(Action::SessionsListed { root, list });
            }
            Effect::OpenSession(path) => self.in_background(move || {
                let r = open_session(&path)
                    .map(|o| Box::new((path, o)))
                    .map_err(|e| e.to_string());
                Action::SessionOpened(r)
            }),
            Effect::Predict {
                session,
                name,
                data,
            } => self.in_background(move || {
                let r = ovk_core::train::predict_file_noting(&session, &data)
                    .map(|(table, ignored)| {
                        Box::new(super::state::Predictions {
                            session: name,
                            data,
                            table,
                            scroll: 0,
                            ignored,
                        })
                    })
                    .map_err(|e| e.to_string());
                Action::Predicted(r)
            }),
            Effect::LoadCompare(a, b) => self.in_background(move || {
                let r = session::load(&a)
                    .and_then(|la| session::load(&b).map(|lb| Box::new((la.record, lb.record))))
                    .map_err(|e| e.to_string());
                Action::CompareLoaded(r)
            }),
            Effect::LoadComparison(dirs) => self.in_background(move || {
                let r = dirs
                    .iter()
                    .map(|d| session::load(d))
                    .collect::<Result<Vec<_>>>()
                    .and_then(|runs| session::compare::compare(&runs))
                    .map(Box::new)
                    .map_err(|e| e.to_string());
                Action::ComparisonLoaded(r)
            }),
            Effect::RenameSession { id, name } => {
                let r = self.store().and_then(|st| {
                    st.rename(&id, &name)
                        .map(|_| format!("renamed to '{name}'"))
                        .map_err(|e| e.to_string())
                });
                self.queue.push(Action::SessionChanged(r));
            }
            Effect::Export { name, text, inputs } => {
                let mut rules = output::OutputRules::new(false);
                if let Ok(st) = &self.store {
                    rules = rules.protect_dir(st.root(), "the session store");
                }
                for p in &inputs {
                    rules = rules.protect_file(p, "an input of the fit");
                }
                self.queue
                    .push(Action::Exported(export_file(&name, &text, &rules)));
            }
            Effect::ExportFigure {
                session,
                figure,
                path,
                overwrite,
            } => {
                if !overwrite && std::fs::symlink_metadata(&path).is_ok() {
                    self.queue.push(Action::FigureExists {
                        session,
                        figure,
                        path,
                    });
                    return;
                }
                let mut rules = output::OutputRules::new(overwrite);
                if let Ok(st) = &self.store {
                    rules = rules.protect_dir(st.root(), "the session store");
                }
                self.in_background(move || {
                    Action::Exported(draw_figure(&session, &figure, &path, &rules))
                });
            }
            Effect::DeleteSession { id } => {
                let r = self.store().and_then(|st| {
                    st.delete(&id)
                        .map(|_| format!("deleted session {id}"))
                        .map_err(|e| e.to_string())
                });
                self.queue.push(Action::SessionChanged(r));
            }
        }
    }

    /// Hand a read to the reader thread; its action arrives through `poll`. Without a reader
    /// (it could not start, or it died) the read runs here: a slower screen, the same answer.
    /// A search's σ values far from the median distance, found off the UI thread (the data
    /// are prepared once per scaling), as `ovk sweep` prints them.
    fn warn_widths(&mut self, configs: &[ovk_core::train::RunConfig]) {
        let configs = configs.to_vec();
        self.in_background(move || {
            Action::WidthWarnings(ovk_core::train::width::sweep_width_warnings(&configs))
        });
    }

    fn in_background(&mut self, read: impl FnOnce() -> Action + Send + 'static) {
        let read: Read = Box::new(read);
        let unsent = match &self.reads {
            Some(tx) => tx.send(read).err().map(|SendError(r)| r),
            None => Some(read),
        };
        if let Some(read) = unsent {
            self.queue.push(read());
        }
    }

    /// Start `work` in a worker process that records its run in the store; without a store,
    /// or when no process can be started, on a thread of this one (the note says what that
    /// costs).
    fn start(&mut self, work: Work) {
        let worker = match (&self.store, std::env::current_exe()) {
            (Ok(st), Ok(exe)) => {
                spawn_worker(&exe, st.root(), work.clone()).map_err(|e| e.to_string())
            }
            (Err(e), _) => Err(format!("no session store: {e}")),
            (_, Err(e)) => Err(format!("cannot find the ovk program: {e}")),
        };
        self.memory_read = None;
        self.run = Some(match worker {
            Ok(h) => Runner::Worker(h),
            Err(why) => {
                self.queue.push(Action::Run(RunMessage::Note(format!(
                    "the fit runs inside the workbench ({why}): a cancel stops it at its next \
                     iteration, not inside a decomposition"
                ))));
                Runner::Thread(match work {
                    Work::Fit(cfg) => train::spawn(*cfg),
                    Work::Sweep {
                        configs,
                        folds,
                        jobs,
                        halving,
                    } => train::spawn_search(configs, folds, halving, jobs),
                })
            }
        });
    }

    fn store(&self) -> std::result::Result<&Store, String> {
        self.store
            .as_ref()
            .map_err(|e| format!("no session store: {e}"))
    }

    fn spawn_median(&mut self, generation: u64, config: DataConfig) {
        let (tx, rx) = channel();
        let spawned = std::thread::Builder::new()
            .name("ovk-median".into())
            .spawn(move || {
                let r = data::prepare(&config, PrepareOptions::default())
                    .map(|p| median_distance(p.x_train.view()))
                    .map_err(|e| e.to_string());
                let _ = tx.send((generation, r));
            });
        match spawned {
            Ok(_) => self.median_rx = Some(rx),
            Err(e) => self.queue.push(Action::MedianComputed {
                generation,
                result: Err(format!("cannot start a thread: {e}")),
            }),
        }
    }

    /// Every answer that arrived since the last call: queued results, all pending run
    /// messages (drained, so a fast fit cannot flood the frame loop), the median.
    pub fn poll(&mut self) -> Vec<Action> {
        let mut out = std::mem::take(&mut self.queue);
        out.extend(self.answers.try_iter());
        if let Some(Runner::Worker(h)) = &self.run {
            let due = self.memory_read.is_none_or(|t| t.elapsed() >= MEMORY_EVERY);
            if due {
                self.memory_read = Some(std::time::Instant::now());
                if let Some((rss, peak)) = h.memory() {
                    out.push(Action::WorkerMemory { rss, peak });
                }
            }
        }
        if let Some(h) = &self.run {
            let mut done = false;
            loop {
                match h.rx().try_recv() {
                    Ok(msg) => {
                        done |= matches!(
                            msg,
                            RunMessage::Finished(_)
                                | RunMessage::Recorded { .. }
                                | RunMessage::Failed { .. }
                                | RunMessage::Cancelled
                        );
                        out.push(Action::Run(msg));
                        if done {
                            break;
                        }
                    }
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        if !done {
                            out.push(Action::Run(RunMessage::Failed {
                                message: "internal error: the fit thread ended without a result"
                                    .into(),
                                exit_code: 1,
                            }));
                        }
                        done = true;
                        break;
                    }
                }
            }
            if done {
                self.run = None;
            }
        }
        if let Some(rx) = &self.median_rx {
            match rx.try_recv() {
                Ok((generation, result)) => {
                    out.push(Action::MedianComputed { generation, result });
                    self.median_rx = None;
                }
                Err(TryRecvError::Disconnected) => self.median_rx = None,
                Err(TryRecvError::Empty) => {}
            }
            if self.median_rx.is_none() {
                if let Some((g, c)) = self.median_pending.take() {
                    self.spawn_median(g, c);
                }
            }
        }
        out
    }
}

/// Write an export to `ovk-NAME.csv` in the current folder, or `ovk-NAME-2.csv` … when that
/// exists, through the engine's output rules: an export never replaces a file, never writes
/// into the session store, and never over an input of the shown fit.
/// Draw `figure` of the session in `dir` and write it to `path` whole (the CLI's
/// `ovk export --figure`); what happened, for the status line.
fn draw_figure(
    dir: &std::path::Path,
    figure: &crate::figure::Figure,
    path: &std::path::Path,
    rules: &output::OutputRules,
) -> std::result::Result<String, String> {
    let run = || -> ovk_core::Result<()> {
        let format = crate::figure::Format::of(path)?;
        let out = output::plan(path, rules)?;
        let loaded = session::load(dir)?;
        let bytes = crate::figure::render(&loaded, figure, format)?;
        out.write_with(|w| std::io::Write::write_all(w, &bytes))
    };
    run().map_err(|e| e.to_string())?;
    Ok(format!("figure written to {}", path.display()))
}

fn export_file(
    name: &str,
    text: &str,
    rules: &output::OutputRules,
) -> std::result::Result<String, String> {
    let stem = super::export::file_stem(name);
    for k in 1..1000 {
        let file = if k == 1 {
            format!("ovk-{stem}.csv")
        } else {
            format!("ovk-{stem}-{k}.csv")
        };
        let path = PathBuf::from(&file);
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        let out = output::plan(&path, rules).map_err(|e| e.to_string())?;
        match out.write(text.as_bytes()) {
            Ok(()) => {
                let full = std::path::absolute(&path).unwrap_or(path);
                return Ok(format!(
                    "exported {} lines to {}",
                    text.lines().count(),
                    full.display()
                ));
            }
            // Taken between the check and the write: the next name.
            Err(_) if std::fs::symlink_metadata(&path).is_ok() => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!(
        "ovk-{stem}-*.csv: too many exports with this name already"
    ))
}

/// Folders and tables (csv, tsv, parquet) in `dir`, folders first, `..` on top.
pub fn list_dir(dir: &Path) -> Result<Vec<FileEntry>> {
    let rd = std::fs::read_dir(dir).map_err(|e| OvkError::io_path(dir, e))?;
    let mut dirs = Vec::new();
    let mut files = Vec::new();
    for entry in rd.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            dirs.push(FileEntry {
                name: format!("{name}/"),
                path,
                is_dir: true,
            });
        } else {
            let ext = path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase())
                .unwrap_or_default();
            if matches!(ext.as_str(), "csv" | "tsv" | "parquet" | "pq")
                || data::RESEARCH_EXTENSIONS.contains(&ext.as_str())
            {
                files.push(FileEntry {
                    name,
                    path,
                    is_dir: false,
                });
            }
        }
    }
    dirs.sort_by(|a, b| a.name.cmp(&b.name));
    files.sort_by(|a, b| a.name.cmp(&b.name));
    let mut out = Vec::new();
    let parent = std::path::absolute(dir)
        .ok()
        .and_then(|d| d.parent().map(PathBuf::from));
    if let Some(p) = parent {
        out.push(FileEntry {
            name: "../".into(),
            path: p,
            is_dir: true,
        });
    }
    out.extend(dirs);
    out.extend(files);
    Ok(out)
}

/// What the Charts overlay needs of a marked run.
fn marked_run(r: session::SessionRecord) -> MarkedRun {
    let dataset = r.dataset.path.file_name().map_or_else(
        || r.dataset.path.display().to_string(),
        |f| f.to_string_lossy().into_owned(),
    );
    MarkedRun {
        name: r.name,
        method: r.method,
        dataset,
        trace: r.trace,
    }
}

/// A saved session with its matrices, as a run outcome (for Results, Charts, Matrices), the
/// matrices in the order a live fit lists them.
pub fn open_session(dir: &Path) -> Result<RunOutcome> {
    train::read_run(dir)
}
