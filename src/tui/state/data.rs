//! The data half of the workbench: the folder, the open table, column roles and the split.

use std::path::PathBuf;

use crate::tui::widgets::count;
use ovk_core::data::{DataConfig, Missing, Scale, Table, TargetScale, Task};

/// What a column of the table is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    Feature,
    Target,
    Class,
    /// A feature that also names a view: its prefix (up to the first `_`) groups columns.
    View,
    Ignore,
    /// The column that marks the test rows (nonzero = test): a dataset's official split.
    TestMarker,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Feature => "feature",
            Role::Target => "target",
            Role::Class => "class",
            Role::View => "view",
            Role::Ignore => "ignore",
            Role::TestMarker => "test marker",
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

/// The split settings chosen for one file, restored when it is opened again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SplitChoice {
    pub test_fraction: f64,
    pub seed: u64,
    pub scale: Scale,
    /// `--target-scale`: `y` cycles none → center → standard.
    pub target_scale: TargetScale,
    /// What a missing cell in a used column does; `m` cycles refuse → drop → impute.
    pub missing: Missing,
    /// Semi-supervised methods: the fraction of training rows that keep their labels
    /// (`None`: all of them).
    pub labeled: Option<f64>,
}

/// A file opened for the first time starts from these.
impl Default for SplitChoice {
    fn default() -> Self {
        SplitChoice {
            test_fraction: 0.25,
            seed: 0,
            scale: Scale::Standard,
            target_scale: TargetScale::None,
            missing: Missing::Refuse,
            labeled: None,
        }
    }
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
    /// Per column: the view it belongs to, when its role is `View` (sidecar name or prefix).
    pub view_of: Vec<Option<String>>,
    /// Per column: marked with Space, for `V` to put into a view.
    pub marked: Vec<bool>,
    /// The user built, renamed or merged views (`V`, `n`): the run names every view's columns
    /// (`NAME=COLS`) instead of the prefix or sidecar view of that name.
    pub views_edited: bool,
    pub col_cursor: usize,
    /// Where the pre-filled roles came from (sidecar file or naming convention).
    pub roles_source: Option<String>,
    /// Test fraction, seed, scaling, missing cells, labeled fraction (remembered per file).
    pub split: SplitChoice,
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
            view_of: Vec::new(),
            marked: Vec::new(),
            views_edited: false,
            col_cursor: 0,
            roles_source: None,
            split: SplitChoice::default(),
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

    /// The column marking the test rows, which replaces the random split.
    pub fn test_column(&self) -> Option<String> {
        self.names_with(|r| r == Role::TestMarker)
            .into_iter()
            .next()
    }

    /// The view of column `i` (its sidecar view, else the text before its first `_`).
    pub fn view_name(&self, i: usize) -> Option<String> {
        if self.roles.get(i) != Some(&Role::View) {
            return None;
        }
        if let Some(Some(v)) = self.view_of.get(i) {
            return Some(v.clone());
        }
        let name = &self.table.as_ref()?.columns.get(i)?.name;
        Some(name.split('_').next().unwrap_or(name).to_string())
    }

    /// The views of the columns marked as views, in column order.
    pub fn views(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for i in 0..self.roles.len() {
            if let Some(v) = self.view_name(i) {
                if !out.contains(&v) {
                    out.push(v);
                }
            }
        }
        out
    }

    /// Each view with its number of columns, in column order.
    pub fn view_sizes(&self) -> Vec<(String, usize)> {
        let mut out: Vec<(String, usize)> = Vec::new();
        for i in 0..self.roles.len() {
            if let Some(v) = self.view_name(i) {
                match out.iter_mut().find(|(n, _)| *n == v) {
                    Some((_, k)) => *k += 1,
                    None => out.push((v, 1)),
                }
            }
        }
        out
    }

    /// The views as a run names them: their names, or (once edited here) `NAME=COLS` with the
    /// columns as ranges of neighbours in file order (`Cr=Co..Ni,Zn`).
    pub fn view_entries(&self) -> Vec<String> {
        let views = self.views();
        let Some(t) = self.table.as_ref().filter(|_| self.views_edited) else {
            return views;
        };
        views
            .into_iter()
            .map(|v| {
                let cols: Vec<usize> = (0..self.roles.len())
                    .filter(|&i| self.view_name(i).as_deref() == Some(v.as_str()))
                    .collect();
                let mut parts: Vec<String> = Vec::new();
                let mut k = 0;
                while k < cols.len() {
                    let mut end = k;
                    while end + 1 < cols.len() && cols[end + 1] == cols[end] + 1 {
                        end += 1;
                    }
                    let (a, b) = (&t.columns[cols[k]].name, &t.columns[cols[end]].name);
                    parts.push(if k == end {
                        a.clone()
                    } else {
                        format!("{a}..{b}")
                    });
                    k = end + 1;
                }
                format!("{v}={}", parts.join(","))
            })
            .collect()
    }

    /// The task the chosen outputs make, as the engine infers it: a class column is
    /// multi-class; two or more 0/1 targets are multi-label; other targets are regression.
    pub fn task(&self) -> Option<Task> {
        let t = self.table.as_ref()?;
        if self.class().is_some() {
            return Some(Task::Multiclass);
        }
        let targets: Vec<_> = t
            .columns
            .iter()
            .zip(&self.roles)
            .filter(|(_, r)| **r == Role::Target)
            .map(|(c, _)| c)
            .collect();
        match targets.len() {
            0 => None,
            1 => Some(Task::Regression),
            _ if targets
                .iter()
                .all(|c| c.min == Some(0.0) && c.max == Some(1.0) && c.levels.is_none()) =>
            {
                Some(Task::Multilabel)
            }
            _ => Some(Task::Regression),
        }
    }

    /// Rows with a missing cell among the features, and among the outputs (distinct rows).
    pub fn missing_rows(&self) -> (usize, usize) {
        let Some(t) = &self.table else { return (0, 0) };
        let mut feat = std::collections::BTreeSet::new();
        let mut out = std::collections::BTreeSet::new();
        for (c, r) in t.columns.iter().zip(&self.roles) {
            match r {
                Role::Feature | Role::View => feat.extend(c.missing_rows.iter().copied()),
                Role::Target | Role::Class => out.extend(c.missing_rows.iter().copied()),
                Role::Ignore | Role::TestMarker => {}
            }
        }
        (feat.len(), out.len())
    }

    /// What happens to missing cells, and to how many rows, for the Data pane.
    pub fn missing_summary(&self) -> String {
        let (feat, out) = self.missing_rows();
        let any: usize = match &self.table {
            Some(t) => {
                let mut rows = std::collections::BTreeSet::new();
                for (c, r) in t.columns.iter().zip(&self.roles) {
                    if *r != Role::Ignore {
                        rows.extend(c.missing_rows.iter().copied());
                    }
                }
                rows.len()
            }
            None => 0,
        };
        let rows = |n: usize| count(n, "row");
        match self.split.missing {
            _ if any == 0 => "missing: none m".into(),
            Missing::Drop => format!("missing: drop {} m", rows(any)),
            Missing::Impute if out > 0 => format!(
                "missing: impute {}, drop {} (no output) m",
                rows(feat),
                rows(out)
            ),
            Missing::Impute => format!("missing: impute {} m", rows(feat)),
            Missing::Refuse => format!("missing: refuse ({} affected) m", rows(any)),
        }
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
        if let (Some(c), false) = (&class, targets.is_empty()) {
            return Err(format!(
                "`{c}` is the class and {} the targets: a run predicts a class or targets, not \
                 both — x the class column, or x the targets",
                match targets.len() {
                    1 => format!("`{}` is", targets[0]),
                    n => format!("{n} columns are"),
                }
            ));
        }
        // Say here, in full, what the engine would refuse after loading the whole file. Sets,
        // not lists: a sparse block's 47 236 features made this check take seconds a frame.
        let feature_set: std::collections::HashSet<&str> =
            features.iter().map(String::as_str).collect();
        let used: std::collections::HashSet<&str> = feature_set
            .iter()
            .copied()
            .chain(targets.iter().map(String::as_str))
            .chain(class.as_deref())
            .collect();
        for c in t.columns.iter().filter(|c| used.contains(c.name.as_str())) {
            let is_class = class.as_deref() == Some(c.name.as_str());
            let is_feature = feature_set.contains(c.name.as_str());
            let encodable = is_feature && super::super::roles::one_hot(c).is_some();
            if !is_class && !encodable && c.min.is_none() && c.missing < t.n_rows {
                let why = match c.levels {
                    Some(k) if is_feature && !c.date_like => format!(
                        "text with {k} distinct values, too many to one-hot encode (at most {})",
                        ovk_core::data::MAX_LEVELS
                    ),
                    _ if c.date_like => "a date (dates are not encoded)".into(),
                    _ => format!("text ({})", c.dtype),
                };
                return Err(format!(
                    "column `{}` is {why}: mark it x (ignore) or c (class)",
                    c.name
                ));
            }
            if c.missing > 0 && self.split.missing == Missing::Refuse {
                return Err(format!(
                    "column `{}` has {} missing value{}: press m to drop those rows or impute, \
                     or x to ignore the column",
                    c.name,
                    c.missing,
                    if c.missing == 1 { "" } else { "s" }
                ));
            }
        }
        let marker = self.test_column();
        if let Some(c) = t.columns.iter().find(|c| Some(&c.name) == marker.as_ref()) {
            if c.min.is_none() {
                return Err(format!(
                    "column `{}` marks the test rows but is text ({}): a marker is numeric, \
                     nonzero for test rows — mark it x, or another column T",
                    c.name, c.dtype
                ));
            }
            if c.missing > 0 {
                return Err(format!(
                    "column `{}` marks the test rows but {} of its cells are missing: every \
                     row must be 0 (training) or nonzero (test)",
                    c.name, c.missing
                ));
            }
        }
        let mut cfg = DataConfig::new(t.path.clone());
        cfg.test_column = marker;
        cfg.features = Some(features);
        cfg.targets = (!targets.is_empty()).then_some(targets);
        cfg.class = class;
        let views = self.view_entries();
        cfg.views = (!views.is_empty()).then_some(views);
        cfg.test_fraction = self.split.test_fraction;
        cfg.seed = self.split.seed;
        cfg.scale = self.split.scale;
        cfg.target_scale = self.split.target_scale;
        cfg.set_missing(self.split.missing);
        cfg.labeled = self.split.labeled;
        Ok(cfg)
    }
}
