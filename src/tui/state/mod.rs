//! Everything the workbench shows, as plain data. Only `update` changes it; `render` reads it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use ovk_core::methods::{self, Method, MethodName, TraceRecord};
use ovk_core::session::{Listing, SessionRecord, Summary};
use ovk_core::train::{RunConfig, RunOutcome};
use ovk_core::util::choice::Choice;

use super::theme::Theme;

mod data;
mod form;
pub mod readiness;
mod run;
mod runs;
mod search;
mod sweep;

pub use data::{DataFocus, DataState, FileEntry, Median, Role, SplitChoice};
pub use form::{Field, FieldKind, KernelState};
pub use run::{RunState, RunStatus};
pub use runs::{columns, group_key, mixed_tasks, rows_id, Column, MarkedRun, RunsView};
pub use search::{parse_how, plan_search, How, Mark, SearchMarks, HOW_USAGE};
pub use sweep::default_text as sweep_default_text;
pub use sweep::{
    integer as integer_field, search_configs, PlanAxis, ScoreGrid, SweepPlan, SweepState,
};
pub use sweep::{parse as parse_sweep, sweepable, MAX_VALUES as MAX_SWEEP_VALUES};

/// The folds `f` in Run cycles through (`None`: no cross-validation).
pub const CV_CHOICES: [Option<usize>; 4] = [None, Some(3), Some(5), Some(10)];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    Data,
    Method,
    Kernel,
    Run,
    Charts,
    Matrices,
    Results,
    Sessions,
}

impl Pane {
    pub const ALL: [Pane; 8] = [
        Pane::Data,
        Pane::Method,
        Pane::Kernel,
        Pane::Run,
        Pane::Charts,
        Pane::Matrices,
        Pane::Results,
        Pane::Sessions,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Pane::Data => "Data",
            Pane::Method => "Method",
            Pane::Kernel => "Kernel",
            Pane::Run => "Run",
            Pane::Charts => "Charts",
            Pane::Matrices => "Matrices",
            Pane::Results => "Results",
            Pane::Sessions => "Sessions",
        }
    }

    pub fn index(self) -> usize {
        Pane::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    pub fn next(self) -> Pane {
        Pane::ALL[(self.index() + 1) % Pane::ALL.len()]
    }

    pub fn prev(self) -> Pane {
        Pane::ALL[(self.index() + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }
}

#[derive(Debug, Clone)]
pub struct MethodState {
    pub cursor: usize,
    pub chosen: usize,
}

/// A finished fit, from this run or from a saved session.
#[derive(Debug, Clone)]
pub struct Finished {
    pub outcome: RunOutcome,
    /// Where it is in the session store — recorded the moment it finished (kept or not, as
    /// `outcome.record.kept` says), or where it was opened from. `None` only while a fit the
    /// workbench records itself is being written, or when that failed.
    pub saved: Option<PathBuf>,
}

impl Finished {
    /// Recorded but not kept by the user yet.
    pub fn unkept(&self) -> bool {
        self.saved.is_some() && !self.outcome.record.kept
    }
}

/// A value a sweep put into the form: which field, the value, and the data it was best on.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSet {
    pub method: String,
    pub key: String,
    pub value: String,
    pub data: PathBuf,
}

#[derive(Debug, Clone, Default)]
pub struct MatrixState {
    pub selected: usize,
    /// Zoom steps above the fitted view (0): the largest zoom that shows the whole matrix, or
    /// a dense overview (two rows per line, in blocks if need be) when even zoom 1 does not
    /// fit. Counted from the fit because the fit depends on the screen. Each matrix starts at 0.
    pub zoom: u16,
    pub cursor: (usize, usize),
    /// A square outputs × outputs matrix shown as correlations (`c`).
    pub correlation: bool,
    /// Its outputs in the clustered order (`o`), with that order once computed: (matrix
    /// index, order).
    pub clustered: bool,
    pub order: Option<(usize, Vec<usize>)>,
}

/// Scroll positions of the long lists (trace, records, notes): `None` follows the end.
#[derive(Debug, Clone, Default)]
pub struct Scroll {
    /// Run pane: the trace row at the cursor (`None`: the newest, following a live fit).
    pub trace: Option<usize>,
    /// Run pane: first note line shown.
    pub notes: usize,
    /// Results pane: selected row of the records table (`None`: the kept row).
    pub records: Option<usize>,
    /// Results pane: columns of the records table scrolled past, after its pinned first one.
    pub record_cols: usize,
    /// Results pane: first line of details & notes shown.
    pub details: usize,
    /// Sessions pane: first line of the compare table.
    pub compare: usize,
    /// The help overlay's first row (it is taller than a 24-line terminal).
    pub help: usize,
    /// Sessions pane: the predictions' columns scrolled past (`[` `]`), after the row number.
    pub prediction_cols: usize,
}

/// Results pane: the per-output diagnostics in place of the summary (`d`), for one part.
#[derive(Debug, Clone, Default)]
pub struct DiagView {
    pub shown: bool,
    /// The training part (`p` toggles); the test part by default.
    pub train: bool,
    /// The class, label or output at the cursor (j k); a regression draws this output.
    pub row: usize,
}

impl DiagView {
    pub fn part(&self) -> &'static str {
        if self.train {
            "train"
        } else {
            "test"
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct SessionsState {
    pub root: Option<PathBuf>,
    pub list: Vec<Listing>,
    /// Position in the shown rows (`runs.rows(&list)`), not in `list`.
    pub cursor: usize,
    /// Sort, filter, marks and the marked runs' curves.
    pub runs: RunsView,
    pub compare: Option<Box<(SessionRecord, SessionRecord)>>,
    /// The marked runs compared, all of them (shown in place of the two-run settings).
    pub comparison: Option<Box<ovk_core::session::compare::Comparison>>,
    /// A saved model's predictions on a file (`p`), shown until Esc.
    pub predictions: Option<Box<Predictions>>,
    pub error: Option<String>,
}

impl SessionsState {
    /// The run under the cursor.
    pub fn selected(&self) -> Option<&Summary> {
        let i = *self.runs.rows(&self.list).get(self.cursor)?;
        match self.list.get(i)? {
            Listing::Ok(sum) => Some(sum),
            Listing::Corrupt { .. } => None,
        }
    }

    /// The runs table's columns: with mixed tasks, those of the selected run's task.
    pub fn columns(&self) -> Vec<Column> {
        let family = self.selected().and_then(runs::family);
        let mut cols = columns(&self.list, family);
        if self.runs.grouped {
            // the rows a group shares, beside the name
            if let Some(i) = cols.iter().position(|c| *c == Column::Rows) {
                let c = cols.remove(i);
                cols.insert(1, c);
            }
        }
        cols
    }
}

/// `ovk predict` from the workbench: which session, which file, the table, where it scrolls.
#[derive(Debug, Clone, PartialEq)]
pub struct Predictions {
    pub session: String,
    pub data: PathBuf,
    pub table: ovk_core::train::PredictionTable,
    pub scroll: usize,
    /// The file's columns the model does not read (a model applied to another data set's
    /// table): said in the status line when there are any.
    pub ignored: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PromptKind {
    SaveName,
    Rename {
        id: String,
    },
    ConfirmDelete {
        id: String,
        name: String,
    },
    /// Sweep the Kernel field `key`: the prompt takes `LOW HIGH N [log|lin] [cv=K]`.
    Sweep {
        key: String,
    },
    /// Run: how to search the marked fields (`grid|random|halving …`), then start.
    Search,
    /// `e` on a chart or heatmap: the file to draw `figure` of the session in `session` to
    /// (.svg or .png; .csv writes the data instead).
    Figure {
        session: PathBuf,
        figure: crate::figure::Figure,
    },
    /// The figure's file exists: y overwrites it.
    ConfirmOverwrite {
        session: PathBuf,
        figure: crate::figure::Figure,
        path: PathBuf,
    },
    /// Sessions: the runs table's filter, applied as it is typed.
    Filter,
    /// Sessions: the file to apply the selected session's model to.
    Predict {
        session: PathBuf,
        name: String,
    },
    /// `q` with a fit running: y quits (the fit is recorded as cancelled), n or Esc stays.
    ConfirmQuit {
        why: String,
    },
    /// Sessions: delete the `count` runs not kept? y deletes.
    ConfirmPrune {
        count: usize,
    },
    /// Data: `NAME = COLUMNS` or `NAME` (for the `marked` columns) makes a view.
    AssignView {
        marked: usize,
    },
    /// Data: the view `from`'s new name (an existing view's name merges them).
    RenameView {
        from: String,
    },
    /// Data: type-to-find in the file list.
    FindFile,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
}

impl Prompt {
    /// A prompt of `kind` whose answer starts as `text`.
    pub fn new(kind: PromptKind, text: impl Into<String>) -> Self {
        Prompt {
            kind,
            text: text.into(),
        }
    }
}

/// Trace playback of a saved session.
#[derive(Debug, Clone)]
pub struct Replay {
    /// Index of the last trace record shown.
    pub cursor: usize,
    pub playing: bool,
    pub last_step: Instant,
}

/// The finished run a new result replaced, kept for the Charts overlay.
#[derive(Debug, Clone)]
pub struct PreviousRun {
    pub name: String,
    pub method: String,
    pub dataset: PathBuf,
    pub trace: Vec<TraceRecord>,
}

#[derive(Debug, Clone)]
pub struct State {
    pub pane: Pane,
    pub data: DataState,
    pub method: MethodState,
    pub kernel: KernelState,
    /// Each method's form as last left, so one method's λ never reaches another.
    pub kernel_by_method: HashMap<String, KernelState>,
    /// Each file's split settings as last left (a test fraction of 0 stays with its file).
    pub split_by_file: HashMap<PathBuf, SplitChoice>,
    pub run: RunState,
    /// `--cv K` for the next fit (`f` in Run): K folds of the training part, or none.
    pub cv: Option<usize>,
    /// The value the last sweep put into the form, while it is there.
    pub sweep_set: Option<SweepSet>,
    /// Kernel fields marked for a search (`w`), with their ranges.
    pub search: SearchMarks,
    pub result: Option<Finished>,
    /// The previous finished run, for the overlay in Charts.
    pub previous: Option<PreviousRun>,
    /// Off by default: an overlay is asked for (o), and drawn only for the same data and method.
    pub overlay: bool,
    pub matrices: MatrixState,
    pub scroll: Scroll,
    pub diag: DiagView,
    pub sessions: SessionsState,
    pub prompt: Option<Prompt>,
    pub help: bool,
    /// `i`: the overlay with the texts cut to fit, in full.
    pub full_text: bool,
    /// Read-only: a saved session opened with `ovk replay`.
    pub replay: Option<Replay>,
    pub status: String,
    pub now: Instant,
    pub quit: bool,
    pub theme: Theme,
}

impl State {
    pub fn new(dir: PathBuf) -> State {
        let methods = methods::registry();
        let chosen = MethodName::ALL
            .iter()
            .position(|&n| n == MethodName::Okl)
            .unwrap_or(0);
        let kernel = match methods.get(chosen) {
            Some(m) => KernelState::for_method(*m, None),
            None => KernelState {
                fields: Vec::new(),
                factor_route: false,
                cursor: 0,
                editing: false,
                backup: String::new(),
            },
        };
        State {
            pane: Pane::Data,
            data: DataState::new(dir),
            method: MethodState {
                cursor: chosen,
                chosen,
            },
            kernel,
            kernel_by_method: HashMap::new(),
            split_by_file: HashMap::new(),
            run: RunState::new(),
            cv: None,
            sweep_set: None,
            search: SearchMarks::default(),
            result: None,
            previous: None,
            overlay: false,
            matrices: MatrixState::default(),
            scroll: Scroll::default(),
            diag: DiagView::default(),
            sessions: SessionsState::default(),
            prompt: None,
            help: false,
            full_text: false,
            replay: None,
            status: "ready — pick a file in Data (Enter), then r in Run; ? lists every key".into(),
            now: Instant::now(),
            quit: false,
            theme: Theme::default(),
        }
    }

    /// What quitting now would stop: a running fit (recorded as cancelled). A finished fit is
    /// in the store already, so nothing else is lost.
    pub fn unsaved_work(&self) -> Option<String> {
        self.is_running().then(|| {
            "a fit is running — quitting stops it (it is recorded as cancelled, with its trace \
             so far)"
                .to_string()
        })
    }

    /// The curve to overlay in Charts — while a fit runs, the last result; after, the run it
    /// replaced — when it was fitted by the same method on the same file (otherwise its scale
    /// says nothing about this run). `Err` says why nothing is drawn.
    pub fn overlay_trace(&self) -> Result<(&str, &[TraceRecord]), String> {
        let (name, method, dataset, trace) = if self.is_running() {
            match &self.result {
                Some(f) => {
                    let r = &f.outcome.record;
                    (
                        r.name.as_str(),
                        r.method.as_str(),
                        &r.config.data.path,
                        &r.trace[..],
                    )
                }
                None => return Err("no earlier run".into()),
            }
        } else {
            match &self.previous {
                Some(p) => (p.name.as_str(), p.method.as_str(), &p.dataset, &p.trace[..]),
                None => return Err("no earlier run".into()),
            }
        };
        let (cur_method, cur_data) = if self.is_running() {
            match &self.run.config {
                Some(c) => (c.method.name(), &c.data.path),
                None => return Err("no earlier run".into()),
            }
        } else {
            match &self.result {
                Some(f) => (
                    f.outcome.record.method.as_str(),
                    &f.outcome.record.config.data.path,
                ),
                None => return Err("no earlier run".into()),
            }
        };
        if method != cur_method || dataset != cur_data {
            let file = dataset.file_name().map_or_else(
                || dataset.display().to_string(),
                |f| f.to_string_lossy().into(),
            );
            return Err(format!("earlier run is {method} on {file}: not comparable"));
        }
        Ok((name, trace))
    }

    /// The chosen method (the Method pane lists `methods::registry()`, in `MethodName` order).
    pub fn method_name(&self) -> Option<MethodName> {
        MethodName::ALL.get(self.method.chosen).copied()
    }

    pub fn method(&self) -> Option<&'static dyn Method> {
        self.method_name().map(methods::find)
    }

    pub fn is_running(&self) -> bool {
        self.run.status == RunStatus::Running
    }

    /// The whole configuration, or the first reason it cannot run.
    pub fn run_config(&self) -> Result<RunConfig, String> {
        let mut data = self.data.config()?;
        let name = self.method_name().ok_or("no method chosen (2 Method)")?;
        let method = methods::find(name);
        if let Some(why) = readiness::misfit(method, &self.data) {
            return Err(why);
        }
        // Columns marked as views (often by the sidecar) are plain features to a single-kernel
        // method; the session then records no views it did not use.
        if !method.multi_view() {
            data.views = None;
        }
        if let Some((key, why)) = self.kernel.first_error() {
            return Err(format!("fix {key} in the Kernel pane (3): {why}"));
        }
        let kernel = self.kernel.kernel_spec()?;
        let params = self.kernel.params()?;
        let cfg = RunConfig {
            data,
            method: name,
            kernel,
            params,
            name: None,
            cv: self.cv,
            select_on: Default::default(),
        };
        cfg.validate().map_err(|e| e.to_string())?;
        Ok(cfg)
    }

    /// The trace the Charts pane draws: the live one while running, else the result's (cut at
    /// the replay cursor).
    pub fn chart_trace(&self) -> &[TraceRecord] {
        if self.is_running() {
            return &self.run.trace;
        }
        match &self.result {
            Some(f) => {
                let t = &f.outcome.record.trace;
                match &self.replay {
                    Some(r) if !t.is_empty() => &t[..=r.cursor.min(t.len() - 1)],
                    _ => t,
                }
            }
            None => &self.run.trace,
        }
    }

    /// The trace the Run pane lists: this fit's while one has run, else the shown result's.
    pub fn run_trace(&self) -> &[TraceRecord] {
        match (&self.run.status, &self.result) {
            (RunStatus::Idle, Some(f)) => &f.outcome.record.trace,
            _ => &self.run.trace,
        }
    }

    pub fn output_names(&self) -> Vec<String> {
        self.result
            .as_ref()
            .map(|f| f.outcome.record.output_names.clone())
            .unwrap_or_default()
    }
}
