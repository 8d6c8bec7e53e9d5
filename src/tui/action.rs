//! Everything that can happen to the workbench: keys (already interpreted), mouse clicks, the
//! clock, and the answers of background work. `update` turns each into state and effects.

use std::path::PathBuf;
use std::time::Instant;

use ovk_core::data::Table;
use ovk_core::session::{Listing, SessionRecord};
use ovk_core::train::{RunMessage, RunOutcome};

use super::state::{FileEntry, MarkedRun, Pane, Role};

#[derive(Debug)]
pub enum Action {
    /// q or Ctrl-C: quits, or asks first while a fit runs.
    Quit,
    /// SIGTERM, or y at the question: quit now (a running fit is cancelled).
    ForceQuit,
    NextPane,
    PrevPane,
    Goto(Pane),
    ToggleHelp,
    /// `i`: the status line and the name under the cursor in full (they are cut to fit).
    ShowFull,
    /// Esc: close an overlay, leave a field, go back, or cancel a run (Run pane).
    Back,
    Up,
    Down,
    Top,
    Bottom,
    Enter,
    /// Space: cycle a choice, mark a session, play/pause a replay.
    Space,
    /// A mouse click at a screen cell.
    Click {
        col: u16,
        row: u16,
    },
    /// Text typed into a field or a prompt.
    Char(char),
    Backspace,
    ClearText,
    // Data pane
    SetRole(Role),
    TestFraction(i32),
    Seed(i64),
    ToggleScale,
    /// Target scaling none → center → standard.
    CycleTargetScale,
    ToggleDropMissing,
    /// Labeled fraction of the training rows ± 0.05 (semi-supervised methods).
    Labeled(i32),
    ParentDir,
    /// `V`: put columns (a range, glob, regex, or the marked ones) into a named view.
    ViewPrompt,
    /// `n` in Data: rename the cursor column's view (onto another view's name: merge).
    RenameView,
    // Run
    StartRun,
    CancelRun,
    /// `s`: keep the shown run under a name.
    Save,
    /// `f` in Run: the next fit's cross-validation folds, off → 3 → 5 → 10.
    CycleFolds,
    /// `u` in Run and Results: the shown session's settings into the form.
    UseSettings,
    /// Run and Results: scroll the notes / details by lines.
    ScrollNotes(i32),
    /// Results: per-output diagnostics in place of the summary, and back.
    ToggleDiagnostics,
    /// Results diagnostics: the training part or the test part.
    TogglePart,
    /// Write what the pane shows (matrix, table, trace) as CSV.
    Export,
    // Kernel
    /// `w`: sweep the field under the cursor over a range (asks the range).
    SweepPrompt,
    // Charts
    ToggleOverlay,
    /// `m`: the marked runs' curves / this run's charts.
    ToggleMarked,
    /// Matrices: a square output kernel as correlations L_ij / √(L_ii L_jj), or raw.
    ToggleCorrelation,
    /// Matrices: a square output kernel's outputs clustered (related ones together), or in
    /// file order.
    ToggleOrder,
    // Matrices
    NextMatrix,
    PrevMatrix,
    Zoom(i32),
    /// `0`: back to the fitted view.
    ZoomFit,
    MoveCursor(i32, i32),
    // Sessions
    Rename,
    Delete,
    Refresh,
    /// `c`: compare the first two marked runs.
    Compare,
    /// `[` `]`: move the runs table's column cursor.
    Column(i32),
    /// `o`: sort the runs table by the column under the cursor.
    SortBy,
    /// `/`: filter the runs table.
    Filter,
    /// `=`: group the runs table by the rows the runs were scored on.
    GroupByRows,
    /// `P`: delete the runs not kept (asks first).
    PrunePrompt,
    // Replay
    Step(i64),
    // The world answering
    Tick(Instant),
    Run(RunMessage),
    DirListed {
        dir: PathBuf,
        entries: Result<Vec<FileEntry>, String>,
        /// A file to select and open once listed (`ovk PATH/file.csv`).
        select: Option<PathBuf>,
    },
    TableLoaded {
        path: PathBuf,
        table: Result<Table, String>,
        /// The text of `<stem>.toml` beside the file, when there is one.
        sidecar: Option<String>,
    },
    MedianComputed {
        generation: u64,
        result: Result<f64, String>,
    },
    Saved(Result<PathBuf, String>),
    /// A run the workbench recorded itself (finished or cancelled), or why it could not.
    Recorded(Result<PathBuf, String>),
    /// The run in this directory is kept under this name.
    Kept(Result<(PathBuf, String), String>),
    /// The running worker's resident memory and its peak, in bytes.
    WorkerMemory {
        rss: u64,
        peak: u64,
    },
    SessionsListed {
        root: Result<PathBuf, String>,
        list: Vec<Listing>,
    },
    SessionOpened(Result<Box<(PathBuf, RunOutcome)>, String>),
    CompareLoaded(Result<Box<(SessionRecord, SessionRecord)>, String>),
    /// p in Sessions: ask for a file to predict on with the selected session's model.
    PredictPrompt,
    /// The model's predictions on that file, or why not.
    Predicted(Result<Box<super::state::Predictions>, String>),
    /// A marked run's curve, read for the Charts overlay.
    MarkedLoaded(PathBuf, Result<MarkedRun, String>),
    /// A rename or delete finished (message for the status bar); the list is refreshed after.
    SessionChanged(Result<String, String>),
    /// An export finished (message for the status bar).
    Exported(Result<String, String>),
    /// A search's absolute widths far from the median distance the kernel will see
    /// (`train::width::sweep_width_warnings`), for Run's notes.
    WidthWarnings(Vec<String>),
    /// The marked runs compared (`ovk_core::session::compare`).
    ComparisonLoaded(Result<Box<ovk_core::session::compare::Comparison>, String>),
    /// A figure's file exists: ask before overwriting it.
    FigureExists {
        session: PathBuf,
        figure: crate::figure::Figure,
        path: PathBuf,
    },
}
