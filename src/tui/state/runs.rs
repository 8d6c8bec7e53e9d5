//! The Sessions pane's runs table: every recorded run as a row — kept or not, finished or
//! cancelled — its score, the rows it was scored on, its hyperparameters and test metrics as
//! columns (those of the selected run's task, when the store mixes tasks); sorted by a chosen
//! column, grouped by the rows scored on, filtered by text, and marked runs kept by path (so
//! sorting, filtering and re-listing never change which runs are marked).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use ovk_core::methods::TraceRecord;
use ovk_core::session::{Listing, Summary};

use super::super::widgets::fmt_num;

/// What a column of the runs table shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Name,
    /// The run's own primary test metric, named (`accuracy 0.931`), whatever its task.
    Score,
    /// `--cv K`: the primary metric's mean ± sd over the folds.
    Cv,
    /// Which rows trained and scored it: the split's id, and the folds' for a CV run.
    Rows,
    Method,
    Dataset,
    Created,
    /// A hyperparameter (`sigma`, `lambda`, `rank` …).
    Setting(String),
    /// A test metric (`accuracy`, `mse` …).
    Metric(String),
    Iterations,
    FitSeconds,
}

impl Column {
    pub fn title(&self) -> String {
        match self {
            Column::Name => "name".into(),
            Column::Score => "score".into(),
            Column::Cv => "cv mean ± sd".into(),
            Column::Rows => "rows".into(),
            Column::Method => "method".into(),
            Column::Dataset => "dataset".into(),
            Column::Created => "created".into(),
            Column::Setting(k) => k.clone(),
            Column::Metric(k) => format!("test {k}"),
            Column::Iterations => "iters".into(),
            Column::FitSeconds => "fit s".into(),
        }
    }

    /// Screen width the column asks for.
    pub fn width(&self) -> u16 {
        match self {
            Column::Name => 18,
            Column::Score => 16,
            Column::Cv => 17,
            Column::Rows => 11,
            Column::Dataset => 14,
            Column::Created => 16,
            Column::Method => 11,
            Column::Iterations => 6,
            Column::FitSeconds => 7,
            // Room for the sort arrow after the title.
            c => (c.title().chars().count() as u16 + 1).clamp(9, 15),
        }
    }

    /// Numbers sort as numbers, everything else as text.
    fn numeric(&self) -> bool {
        matches!(
            self,
            Column::Setting(_)
                | Column::Metric(_)
                | Column::Score
                | Column::Cv
                | Column::Iterations
                | Column::FitSeconds
        )
    }

    pub fn cell(&self, s: &Summary) -> String {
        // A metric of rows that also chose something carries a dagger (the key line says why).
        let dagger = if s.optimistic.is_some() { "†" } else { "" };
        match self {
            Column::Name => s.name.clone(),
            Column::Score => match (&s.key_metric, s.status.is_finished()) {
                (_, false) => "cancelled".into(),
                (Some((m, v)), true) => format!("{} {}{dagger}", short_metric(m), fmt_num(*v)),
                (None, true) => "—".into(),
            },
            Column::Cv => s.cv.map_or_else(
                || "—".into(),
                |(k, mean, sd)| format!("{k}× {}±{}", fmt_num(mean), fmt_num(sd)),
            ),
            Column::Rows => rows_id(s),
            Column::Method => s.method.clone(),
            Column::Dataset => s.dataset.clone(),
            Column::Created => s.created.replace('T', " ").chars().take(16).collect(),
            Column::Setting(k) => match s.settings.get(k) {
                // A long number (0.018000000000000002) in the screen's short form.
                Some(v) if v.len() > 9 => v.parse::<f64>().map_or_else(|_| v.clone(), fmt_num),
                Some(v) => v.clone(),
                None => "—".into(),
            },
            Column::Metric(k) => s
                .metrics
                .get(k)
                .map_or_else(|| "—".into(), |v| format!("{}{dagger}", fmt_num(*v))),
            Column::Iterations => s.iterations.to_string(),
            Column::FitSeconds => format!("{:.2}", s.fit_s),
        }
    }

    /// The cell at full precision for export (empty when the run has no such value).
    pub fn raw(&self, s: &Summary) -> String {
        match self {
            Column::Created => s.created.clone(),
            Column::Setting(k) => s.settings.get(k).cloned().unwrap_or_default(),
            Column::Metric(k) => s.metrics.get(k).map(|v| v.to_string()).unwrap_or_default(),
            Column::Score => s
                .key_metric
                .as_ref()
                .map(|(m, v)| format!("{m} {v}"))
                .unwrap_or_default(),
            Column::Cv => {
                s.cv.map(|(k, mean, sd)| format!("{k} folds: {mean} ± {sd}"))
                    .unwrap_or_default()
            }
            Column::Rows => match &s.folds_id {
                Some(f) => format!("{} folds {f}", s.split_id),
                None => s.split_id.clone(),
            },
            Column::FitSeconds => s.fit_s.to_string(),
            c => c.cell(s),
        }
    }

    fn number(&self, s: &Summary) -> Option<f64> {
        match self {
            Column::Setting(k) => s.settings.get(k)?.parse().ok(),
            Column::Metric(k) => s.metrics.get(k).copied(),
            Column::Score => s.key_metric.as_ref().map(|(_, v)| *v),
            Column::Cv => s.cv.map(|(_, mean, _)| mean),
            Column::Iterations => Some(s.iterations as f64),
            Column::FitSeconds => Some(s.fit_s),
            _ => None,
        }
    }
}

/// A marked run's convergence curve, read from its session for the Charts overlay.
#[derive(Debug, Clone)]
pub struct MarkedRun {
    pub name: String,
    pub method: String,
    pub dataset: String,
    pub trace: Vec<TraceRecord>,
}

#[derive(Debug, Clone, Default)]
pub struct RunsView {
    /// The column the header cursor is on (`[` `]` move it; `o` sorts by it).
    pub column: usize,
    /// Sorted by this column, descending when true. `None`: newest first, as listed.
    pub sort: Option<(Column, bool)>,
    /// Every word must match (`method:okl`, `dataset:iris`, `λ` …; plain words search name,
    /// method and dataset).
    pub filter: String,
    /// Marked runs (any number) for the Charts overlay, and two of them for Compare.
    pub marked: Vec<PathBuf>,
    /// Curves of marked runs, once read.
    pub curves: HashMap<PathBuf, Result<MarkedRun, String>>,
    /// Charts shows the marked runs (m in Charts switches back to this run).
    pub chart_marked: bool,
    /// Runs scored on the same rows (split, and folds for CV runs) are listed together.
    pub grouped: bool,
}

/// The short form of a metric's name in the score column.
fn short_metric(m: &str) -> &str {
    match m {
        "accuracy" => "acc",
        "mean_auc" => "auc",
        m => m,
    }
}

/// The split's id, and the folds' after a slash for a CV run: 6 + 4 hex digits, enough to
/// tell apart the row sets of one store.
pub fn rows_id(s: &Summary) -> String {
    let short = |id: &str, n: usize| id.chars().take(n).collect::<String>();
    match &s.folds_id {
        Some(f) => format!("{}/{}", short(&s.split_id, 6), short(f, 4)),
        None => short(&s.split_id, 6),
    }
}

/// What runs scored on the same rows share: the data file, the split, the folds.
type GroupKey = (String, String, Option<String>);

pub fn group_key(s: &Summary) -> GroupKey {
    (s.dataset.clone(), s.split_id.clone(), s.folds_id.clone())
}

/// The task family of a run: its primary metric's name (cancelled runs have none).
pub fn family(s: &Summary) -> Option<&str> {
    s.key_metric.as_ref().map(|(m, _)| m.as_str())
}

/// The runs table's columns for this store: fixed ones, every metric, then every setting any
/// session has (those that differ between runs first). With `family` (the selected run's
/// primary metric) the metrics and settings are those of the runs of that task only: a store
/// of regression and classification runs would otherwise show every task's metrics at once.
pub fn columns(list: &[Listing], family: Option<&str>) -> Vec<Column> {
    let all: Vec<&Summary> = list
        .iter()
        .filter_map(|l| match l {
            Listing::Ok(s) => Some(s.as_ref()),
            Listing::Corrupt { .. } => None,
        })
        .collect();
    let of_family: Vec<&Summary> = all
        .iter()
        .copied()
        .filter(|s| family.is_none_or(|f| self::family(s) == Some(f)))
        .collect();
    let runs = if of_family.is_empty() {
        all.clone()
    } else {
        of_family
    };
    let mut settings = BTreeSet::new();
    let mut metrics = BTreeSet::new();
    for s in &runs {
        settings.extend(s.settings.keys().cloned());
        metrics.extend(s.metrics.keys().cloned());
    }
    // Settings that differ between runs first: a tolerance every run shares says little.
    let varies = |k: &String| {
        let first = runs.first().and_then(|s| s.settings.get(k));
        runs.iter().any(|s| s.settings.get(k) != first)
    };
    let (mut settings, same): (Vec<String>, Vec<String>) = settings.into_iter().partition(varies);
    settings.extend(same);
    let mut cols = vec![Column::Name, Column::Score];
    if all.iter().any(|s| s.cv.is_some()) {
        cols.push(Column::Cv);
    }
    cols.extend([Column::Method, Column::Dataset, Column::Rows]);
    cols.extend(metrics.into_iter().map(Column::Metric));
    cols.extend(settings.into_iter().map(Column::Setting));
    cols.extend([Column::Iterations, Column::FitSeconds, Column::Created]);
    cols
}

/// Whether the store holds runs of more than one task.
pub fn mixed_tasks(list: &[Listing]) -> bool {
    let mut seen: Option<&str> = None;
    for l in list {
        if let Listing::Ok(s) = l {
            match (seen, family(s)) {
                (_, None) => {}
                (None, f) => seen = f,
                (Some(a), Some(b)) if a != b => return true,
                _ => {}
            }
        }
    }
    false
}

fn matches(s: &Summary, filter: &str) -> bool {
    filter.split_whitespace().all(|word| {
        let w = word.to_lowercase();
        let has = |text: &str| text.to_lowercase().contains(&w);
        match w.split_once(':') {
            Some(("method", m)) => s.method.to_lowercase().contains(m),
            Some(("dataset" | "data", d)) => s.dataset.to_lowercase().contains(d),
            Some(("name", n)) => s.name.to_lowercase().contains(n),
            Some((k, v)) => s
                .settings
                .get(k)
                .is_some_and(|x| x.to_lowercase().contains(v)),
            None => has(&s.name) || has(&s.method) || has(&s.dataset),
        }
    })
}

impl RunsView {
    /// Indices into `list` of the rows shown, filtered and in sort order. Unreadable entries
    /// come last and only without a filter.
    pub fn rows(&self, list: &[Listing]) -> Vec<usize> {
        let mut ok: Vec<usize> = (0..list.len())
            .filter(|&i| matches!(&list[i], Listing::Ok(s) if matches(s, &self.filter)))
            .collect();
        self.sorted(list, &mut ok);
        if self.grouped {
            // Stable: within a group the order above (the sort, else newest first) holds.
            ok.sort_by_key(|&i| match &list[i] {
                Listing::Ok(s) => group_key(s),
                Listing::Corrupt { .. } => Default::default(),
            });
        }
        if self.filter.trim().is_empty() {
            ok.extend((0..list.len()).filter(|&i| matches!(list[i], Listing::Corrupt { .. })));
        }
        ok
    }

    /// Sort `ok` (indices of readable entries) by the chosen column.
    fn sorted(&self, list: &[Listing], ok: &mut [usize]) {
        if let Some((col, desc)) = &self.sort {
            let sum = |i: usize| match &list[i] {
                Listing::Ok(s) => Some(s),
                Listing::Corrupt { .. } => None,
            };
            ok.sort_by(|&a, &b| {
                let (Some(a), Some(b)) = (sum(a), sum(b)) else {
                    return std::cmp::Ordering::Equal;
                };
                if col.numeric() {
                    // Missing values sort last whatever the direction.
                    match (col.number(a), col.number(b)) {
                        (Some(x), Some(y)) if *desc => y.total_cmp(&x),
                        (Some(x), Some(y)) => x.total_cmp(&y),
                        (Some(_), None) => std::cmp::Ordering::Less,
                        (None, Some(_)) => std::cmp::Ordering::Greater,
                        (None, None) => std::cmp::Ordering::Equal,
                    }
                } else {
                    let o = col.cell(a).to_lowercase().cmp(&col.cell(b).to_lowercase());
                    if *desc {
                        o.reverse()
                    } else {
                        o
                    }
                }
            });
        }
    }

    /// How many groups of runs scored on the same rows the shown rows make.
    pub fn groups(&self, list: &[Listing]) -> usize {
        let keys: BTreeSet<GroupKey> = self
            .rows(list)
            .into_iter()
            .filter_map(|i| match &list[i] {
                Listing::Ok(s) => Some(group_key(s)),
                Listing::Corrupt { .. } => None,
            })
            .collect();
        keys.len()
    }

    pub fn is_marked(&self, s: &Summary) -> bool {
        self.marked.contains(&s.path)
    }
}
