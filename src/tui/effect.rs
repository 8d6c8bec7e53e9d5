//! What `update` asks the outside world to do, as data. The driver carries effects out and
//! feeds their results back as actions, so `update` itself never blocks or touches a file.

use std::path::PathBuf;

use ovk_core::data::DataConfig;
use ovk_core::methods::TraceRecord;
use ovk_core::train::{RunConfig, RunOutcome};

#[derive(Debug)]
pub enum Effect {
    ListDir {
        dir: PathBuf,
        select: Option<PathBuf>,
    },
    LoadTable(PathBuf),
    /// σ = median on the scaled training rows of this data choice.
    ComputeMedian {
        generation: u64,
        config: DataConfig,
    },
    StartRun(RunConfig),
    /// Score each configuration by CV (`folds`; `None`: on the test part), then refit the best.
    StartSweep {
        configs: Vec<RunConfig>,
        folds: Option<usize>,
    },
    /// Successive halving over training rows (each rung by `folds`-fold CV, keeping
    /// 1/`factor`), then refit the best.
    StartHalving {
        configs: Vec<RunConfig>,
        folds: Option<usize>,
        factor: usize,
    },
    /// Draw `figure` of the session in `session` into `path` (`ovk export --figure`); a file
    /// already there is replaced only when `overwrite` (the user said y).
    ExportFigure {
        session: PathBuf,
        figure: crate::figure::Figure,
        path: PathBuf,
        overwrite: bool,
    },
    CancelRun,
    /// Save `outcome` as a new session, kept, named `name` (a result that was never recorded).
    SaveSession {
        name: String,
        outcome: Box<RunOutcome>,
    },
    /// Record a finished fit nobody recorded (the thread runner's), not kept.
    RecordRun(Box<RunOutcome>),
    /// Record a cancelled fit nobody recorded, from what the workbench saw of it.
    RecordStopped {
        config: RunConfig,
        trace: Vec<TraceRecord>,
        notes: Vec<String>,
        seconds: f64,
    },
    /// Keep the recorded run in `dir` under `name` (`s`).
    KeepSession {
        dir: PathBuf,
        name: String,
    },
    /// Delete every run not kept (asked first).
    PruneUnkept,
    ListSessions,
    OpenSession(PathBuf),
    LoadCompare(PathBuf, PathBuf),
    /// Compare these runs side by side (`ovk compare`): metrics, per output, paired tests.
    LoadComparison(Vec<PathBuf>),
    /// Apply the model saved in `session` to the rows of `data` (`ovk predict`).
    Predict {
        session: PathBuf,
        name: String,
        data: PathBuf,
    },
    /// Read a marked run's trace for the Charts overlay.
    LoadMarked(PathBuf),
    RenameSession {
        id: String,
        name: String,
    },
    DeleteSession {
        id: String,
    },
    /// Write `text` to a new file named after `name` (`ovk-NAME.csv`, never overwriting, never
    /// into the session store nor over one of `inputs`).
    Export {
        name: String,
        text: String,
        inputs: Vec<PathBuf>,
    },
}
