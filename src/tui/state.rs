//! Everything the workbench shows, as plain data. Only `update` changes it; `render` reads it.

use std::path::PathBuf;
use std::time::Instant;

use crate::data::{DataConfig, Scale, Table};
use crate::kernels::{KernelName, KernelSpec, Sigma};
use crate::methods::{self, Method, ParamKind, ParamSpec, Params, Phase, TraceRecord, Value};
use crate::session::{Listing, SessionRecord};
use crate::train::{RunConfig, RunOutcome};

use super::theme::Theme;

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

/// What a column of the table is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Feature,
    Target,
    Class,
    /// A feature that also names a view: its prefix (up to the first `_`) groups columns.
    View,
    Ignore,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Feature => "feature",
            Role::Target => "target",
            Role::Class => "class",
            Role::View => "view",
            Role::Ignore => "ignore",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    pub name: String,
    pub path: PathBuf,
    pub is_dir: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataFocus {
    Files,
    Columns,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Median {
    Unknown,
    Computing,
    Value(f64),
    Failed(String),
}

#[derive(Debug, Clone)]
pub struct DataState {
    pub dir: PathBuf,
    pub entries: Vec<FileEntry>,
    pub file_cursor: usize,
    pub focus: DataFocus,
    pub table: Option<Table>,
    pub load_error: Option<String>,
    /// The table being read on a background thread; an answer for any other path is stale.
    pub loading: Option<PathBuf>,
    pub roles: Vec<Role>,
    pub col_cursor: usize,
    /// Where the pre-filled roles came from (sidecar file or naming convention).
    pub roles_source: Option<String>,
    pub test_fraction: f64,
    pub seed: u64,
    pub scale: Scale,
    pub median: Median,
    /// Bumped whenever the data choice changes, so a late median result for an old choice is dropped.
    pub generation: u64,
}

impl DataState {
    pub fn new(dir: PathBuf) -> Self {
        DataState {
            dir,
            entries: Vec::new(),
            file_cursor: 0,
            focus: DataFocus::Files,
            table: None,
            load_error: None,
            loading: None,
            roles: Vec::new(),
            col_cursor: 0,
            roles_source: None,
            test_fraction: 0.25,
            seed: 0,
            scale: Scale::Standard,
            median: Median::Unknown,
            generation: 0,
        }
    }

    fn names_with(&self, pick: impl Fn(Role) -> bool) -> Vec<String> {
        match &self.table {
            Some(t) => t
                .columns
                .iter()
                .zip(&self.roles)
                .filter(|(_, r)| pick(**r))
                .map(|(c, _)| c.name.clone())
                .collect(),
            None => Vec::new(),
        }
    }

    pub fn features(&self) -> Vec<String> {
        self.names_with(|r| matches!(r, Role::Feature | Role::View))
    }

    pub fn targets(&self) -> Vec<String> {
        self.names_with(|r| r == Role::Target)
    }

    pub fn class(&self) -> Option<String> {
        self.names_with(|r| r == Role::Class).into_iter().next()
    }

    /// View prefixes (text before the first `_`) of the columns marked as views, in order.
    pub fn views(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for name in self.names_with(|r| r == Role::View) {
            let p = name.split('_').next().unwrap_or(&name).to_string();
            if !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }

    /// The data half of a run configuration, or why there is none yet.
    pub fn config(&self) -> Result<DataConfig, String> {
        let Some(t) = &self.table else {
            return Err("no table loaded — open a file in the Data pane (1)".into());
        };
        let features = self.features();
        if features.is_empty() {
            return Err("no feature columns — mark some with f".into());
        }
        let targets = self.targets();
        let class = self.class();
        if targets.is_empty() && class.is_none() {
            return Err("no target — mark a class column with c or target columns with t".into());
        }
        let mut cfg = DataConfig::new(t.path.clone());
        cfg.features = Some(features);
        cfg.targets = (!targets.is_empty()).then_some(targets);
        cfg.class = class;
        let views = self.views();
        cfg.views = (!views.is_empty()).then_some(views);
        cfg.test_fraction = self.test_fraction;
        cfg.seed = self.seed;
        cfg.scale = self.scale;
        Ok(cfg)
    }
}

#[derive(Debug, Clone)]
pub struct MethodState {
    pub cursor: usize,
    pub chosen: usize,
}

/// What an editable field stands for.
#[derive(Debug, Clone, Copy)]
pub enum FieldKind {
    KernelName,
    Sigma,
    Degree,
    Coef0,
    Param(ParamSpec),
}

#[derive(Debug, Clone)]
pub struct Field {
    pub kind: FieldKind,
    pub text: String,
    /// The reason the text is refused, checked on every keystroke.
    pub error: Option<String>,
}

impl Field {
    pub fn new(kind: FieldKind, text: String) -> Field {
        let mut f = Field {
            kind,
            text,
            error: None,
        };
        f.validate();
        f
    }

    pub fn key(&self) -> &'static str {
        match self.kind {
            FieldKind::KernelName => "kernel",
            FieldKind::Sigma => "sigma",
            FieldKind::Degree => "degree",
            FieldKind::Coef0 => "coef0",
            FieldKind::Param(s) => s.key,
        }
    }

    pub fn label(&self) -> &'static str {
        match self.kind {
            FieldKind::KernelName => "input kernel",
            FieldKind::Sigma => "width",
            FieldKind::Degree => "degree",
            FieldKind::Coef0 => "offset",
            FieldKind::Param(s) => s.label,
        }
    }

    pub fn unit(&self) -> &'static str {
        match self.kind {
            FieldKind::KernelName => "",
            FieldKind::Sigma => "σ",
            FieldKind::Degree => "d",
            FieldKind::Coef0 => "c",
            FieldKind::Param(s) => s.unit,
        }
    }

    pub fn help(&self) -> String {
        match self.kind {
            FieldKind::KernelName => {
                "scalar input kernel: linear, gaussian, polynomial or laplacian (space cycles)"
                    .into()
            }
            FieldKind::Sigma => {
                "kernel width σ: a positive number, or 'median' for the median distance between \
                 training rows"
                    .into()
            }
            FieldKind::Degree => "polynomial degree d, 1 to 20".into(),
            FieldKind::Coef0 => "polynomial offset c ≥ 0 in (xᵀz + c)^d".into(),
            FieldKind::Param(s) => s.help.into(),
        }
    }

    pub fn default_text(&self) -> String {
        match self.kind {
            FieldKind::KernelName => "gaussian".into(),
            FieldKind::Sigma => "median".into(),
            FieldKind::Degree => "2".into(),
            FieldKind::Coef0 => "1".into(),
            FieldKind::Param(s) => s.default_value().map(|v| v.to_string()).unwrap_or_default(),
        }
    }

    /// Re-check the text; sets `error` to the reason it is refused.
    pub fn validate(&mut self) {
        self.error = self.value().err();
    }

    /// The parsed parameter value (`None`: left empty, the method's default applies).
    pub fn value(&self) -> Result<Option<Value>, String> {
        let t = self.text.trim();
        match self.kind {
            FieldKind::KernelName => KernelName::parse(t)
                .map(|_| None)
                .map_err(|e| e.to_string()),
            FieldKind::Sigma => Sigma::parse(t).map(|_| None).map_err(|e| e.to_string()),
            FieldKind::Degree => match t.parse::<u32>() {
                Ok(d) if (1..=20).contains(&d) => Ok(None),
                _ => Err(format!("degree: '{t}' is not a whole number from 1 to 20")),
            },
            FieldKind::Coef0 => match t.parse::<f64>() {
                Ok(c) if c.is_finite() && c >= 0.0 => Ok(None),
                _ => Err(format!("coef0: '{t}' is not a number ≥ 0")),
            },
            FieldKind::Param(spec) => {
                if t.is_empty() {
                    Ok(None)
                } else {
                    spec.parse(t).map(Some).map_err(|e| e.to_string())
                }
            }
        }
    }

    /// Space on a choice field moves to the next option.
    pub fn cycle(&mut self) {
        let next = |opts: &[&str], cur: &str| -> String {
            let i = opts
                .iter()
                .position(|o| *o == cur)
                .map_or(0, |i| (i + 1) % opts.len());
            opts[i].to_string()
        };
        match self.kind {
            FieldKind::KernelName => {
                let names: Vec<&str> = KernelName::ALL.iter().map(|k| k.as_str()).collect();
                self.text = next(&names, self.text.trim());
            }
            FieldKind::Param(ParamSpec {
                kind: ParamKind::Choice(opts),
                ..
            }) if !opts.is_empty() => self.text = next(opts, self.text.trim()),
            FieldKind::Param(ParamSpec {
                kind: ParamKind::Bool,
                ..
            }) => {
                self.text = if self.text.trim() == "true" {
                    "false"
                } else {
                    "true"
                }
                .into();
            }
            _ => {}
        }
        self.validate();
    }

    pub fn cycles(&self) -> bool {
        matches!(
            self.kind,
            FieldKind::KernelName
                | FieldKind::Param(ParamSpec {
                    kind: ParamKind::Choice(_) | ParamKind::Bool,
                    ..
                })
        )
    }
}

#[derive(Debug, Clone)]
pub struct KernelState {
    pub fields: Vec<Field>,
    /// Index into `visible()`.
    pub cursor: usize,
    pub editing: bool,
    /// The text before editing began (Esc puts it back).
    pub backup: String,
}

impl KernelState {
    pub fn for_method(method: &dyn Method, previous: Option<&KernelState>) -> KernelState {
        // Carry over what the user typed, not the old method's defaults: methods differ in
        // them (tol 1e-8 vs 1e-4; λ absent means a λ path for low-rank OKL).
        let keep = |key: &str, default: String| -> String {
            previous
                .and_then(|p| p.fields.iter().find(|f| f.key() == key))
                .filter(|f| f.text != f.default_text())
                .map(|f| f.text.clone())
                .unwrap_or(default)
        };
        let mut fields: Vec<Field> = [
            FieldKind::KernelName,
            FieldKind::Sigma,
            FieldKind::Degree,
            FieldKind::Coef0,
        ]
        .into_iter()
        .map(|k| {
            let f = Field::new(k, String::new());
            Field::new(k, keep(f.key(), f.default_text()))
        })
        .collect();
        for spec in method.params() {
            let f = Field::new(FieldKind::Param(*spec), String::new());
            fields.push(Field::new(
                FieldKind::Param(*spec),
                keep(spec.key, f.default_text()),
            ));
        }
        KernelState {
            fields,
            cursor: 0,
            editing: false,
            backup: String::new(),
        }
    }

    fn kernel_name(&self) -> KernelName {
        self.fields
            .iter()
            .find(|f| matches!(f.kind, FieldKind::KernelName))
            .and_then(|f| KernelName::parse(&f.text).ok())
            .unwrap_or(KernelName::Gaussian)
    }

    /// Indices of the fields that apply to the chosen kernel.
    pub fn visible(&self) -> Vec<usize> {
        let k = self.kernel_name();
        (0..self.fields.len())
            .filter(|&i| match self.fields[i].kind {
                FieldKind::Sigma => k.uses_sigma(),
                FieldKind::Degree | FieldKind::Coef0 => k == KernelName::Polynomial,
                _ => true,
            })
            .collect()
    }

    pub fn current(&self) -> Option<usize> {
        self.visible().get(self.cursor).copied()
    }

    /// The first refused field among those that apply: (key, reason).
    pub fn first_error(&self) -> Option<(String, String)> {
        self.visible().into_iter().find_map(|i| {
            let f = &self.fields[i];
            f.error.clone().map(|e| (f.key().to_string(), e))
        })
    }

    pub fn kernel_spec(&self) -> Result<KernelSpec, String> {
        let text = |key: &str| {
            self.fields
                .iter()
                .find(|f| f.key() == key)
                .map(|f| f.text.trim().to_string())
                .unwrap_or_default()
        };
        let name = KernelName::parse(&text("kernel")).map_err(|e| e.to_string())?;
        let mut spec = KernelSpec {
            name,
            ..KernelSpec::default()
        };
        if name.uses_sigma() {
            spec.sigma = Sigma::parse(&text("sigma")).map_err(|e| e.to_string())?;
        }
        if name == KernelName::Polynomial {
            spec.degree = text("degree")
                .parse()
                .map_err(|_| "bad degree".to_string())?;
            spec.coef0 = text("coef0").parse().map_err(|_| "bad coef0".to_string())?;
        }
        Ok(spec)
    }

    pub fn params(&self) -> Result<Params, String> {
        let mut p = Params::new();
        for f in &self.fields {
            if let FieldKind::Param(spec) = f.kind {
                if let Some(v) = f.value().map_err(|e| e.to_string())? {
                    p.set(spec.key, v);
                }
            }
        }
        Ok(p)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum RunStatus {
    Idle,
    Running,
    Finished,
    Failed(String),
    Cancelled,
}

#[derive(Debug, Clone)]
pub struct RunState {
    pub status: RunStatus,
    pub started: Option<Instant>,
    pub ended: Option<Instant>,
    pub phase: Option<Phase>,
    pub phase_total: Option<usize>,
    pub phase_started: Option<Instant>,
    /// Records received since the current phase began.
    pub phase_done: usize,
    pub trace: Vec<TraceRecord>,
    pub notes: Vec<String>,
    pub cancelling: bool,
}

impl RunState {
    pub fn new() -> Self {
        RunState {
            status: RunStatus::Idle,
            started: None,
            ended: None,
            phase: None,
            phase_total: None,
            phase_started: None,
            phase_done: 0,
            trace: Vec::new(),
            notes: Vec::new(),
            cancelling: false,
        }
    }
}

impl Default for RunState {
    fn default() -> Self {
        Self::new()
    }
}

/// A finished fit, from this run or from a saved session.
#[derive(Debug, Clone)]
pub struct Finished {
    pub outcome: RunOutcome,
    /// Where it is saved, once saved (or where it was loaded from).
    pub saved: Option<PathBuf>,
}

#[derive(Debug, Clone, Default)]
pub struct MatrixState {
    pub selected: usize,
    /// Screen columns per matrix cell (1–8); rows are half as many lines (half-blocks).
    pub zoom: u16,
    pub cursor: (usize, usize),
}

#[derive(Debug, Clone, Default)]
pub struct SessionsState {
    pub root: Option<PathBuf>,
    pub list: Vec<Listing>,
    pub cursor: usize,
    /// Up to two entries marked for comparison (indices into `list`).
    pub marked: Vec<usize>,
    pub compare: Option<Box<(SessionRecord, SessionRecord)>>,
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PromptKind {
    SaveName,
    Rename { id: String },
    ConfirmDelete { id: String, name: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub kind: PromptKind,
    pub text: String,
}

/// Trace playback of a saved session.
#[derive(Debug, Clone)]
pub struct Replay {
    /// Index of the last trace record shown.
    pub cursor: usize,
    pub playing: bool,
    pub last_step: Instant,
}

#[derive(Debug, Clone)]
pub struct State {
    pub pane: Pane,
    pub data: DataState,
    pub method: MethodState,
    pub kernel: KernelState,
    pub run: RunState,
    pub result: Option<Finished>,
    /// The previous finished run's trace, for the overlay in Charts.
    pub previous: Option<(String, Vec<TraceRecord>)>,
    pub overlay: bool,
    pub matrices: MatrixState,
    pub sessions: SessionsState,
    pub prompt: Option<Prompt>,
    pub help: bool,
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
        let chosen = methods.iter().position(|m| m.name() == "okl").unwrap_or(0);
        let kernel = match methods.get(chosen) {
            Some(m) => KernelState::for_method(*m, None),
            None => KernelState {
                fields: Vec::new(),
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
            run: RunState::new(),
            result: None,
            previous: None,
            overlay: true,
            matrices: MatrixState {
                zoom: 2,
                ..MatrixState::default()
            },
            sessions: SessionsState::default(),
            prompt: None,
            help: false,
            replay: None,
            status: "ready — pick a file in Data (Enter), then r in Run; ? lists every key".into(),
            now: Instant::now(),
            quit: false,
            theme: Theme::default(),
        }
    }

    pub fn method(&self) -> Option<&'static dyn Method> {
        methods::registry().get(self.method.chosen).copied()
    }

    pub fn is_running(&self) -> bool {
        self.run.status == RunStatus::Running
    }

    /// The whole configuration, or the first reason it cannot run.
    pub fn run_config(&self) -> Result<RunConfig, String> {
        let data = self.data.config()?;
        let method = self.method().ok_or("no method chosen (2 Method)")?;
        if let Some((key, why)) = self.kernel.first_error() {
            return Err(format!("fix {key} in the Kernel pane (3): {why}"));
        }
        let kernel = self.kernel.kernel_spec()?;
        let params = self.kernel.params()?;
        let cfg = RunConfig {
            data,
            method: method.name().to_string(),
            kernel,
            params,
            name: None,
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

    pub fn output_names(&self) -> Vec<String> {
        self.result
            .as_ref()
            .map(|f| f.outcome.record.output_names.clone())
            .unwrap_or_default()
    }
}
