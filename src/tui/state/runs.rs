//! The Sessions pane's runs table: every saved session as a row, its hyperparameters and test
//! metrics as columns; sorted by a chosen column, filtered by text, and marked runs kept by path
//! (so sorting, filtering and re-listing never change which runs are marked).

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;

use ovk_core::methods::TraceRecord;
use ovk_core::session::{Listing, Summary};

use super::super::widgets::fmt_num;

/// What a column of the runs table shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Column {
    Name,
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
            Column::Setting(_) | Column::Metric(_) | Column::Iterations | Column::FitSeconds
        )
    }

    pub fn cell(&self, s: &Summary) -> String {
        match self {
            Column::Name => s.name.clone(),
            Column::Method => s.method.clone(),
            Column::Dataset => s.dataset.clone(),
            Column::Created => s.created.replace('T', " ").chars().take(16).collect(),
            Column::Setting(k) => match s.settings.get(k) {
                // A long number (0.018000000000000002) in the screen's short form.
                Some(v) if v.len() > 9 => v.parse::<f64>().map_or_else(|_| v.clone(), fmt_num),
                Some(v) => v.clone(),
                None => "—".into(),
            },
            Column::Metric(k) => s.metrics.get(k).map_or_else(|| "—".into(), |v| fmt_num(*v)),
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
            Column::FitSeconds => s.fit_s.to_string(),
            c => c.cell(s),
        }
    }

    fn number(&self, s: &Summary) -> Option<f64> {
        match self {
            Column::Setting(k) => s.settings.get(k)?.parse().ok(),
            Column::Metric(k) => s.metrics.get(k).copied(),
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
}

/// The runs table's columns for this store: fixed ones, every metric, then every setting any
/// session has (those that differ between runs first).
pub fn columns(list: &[Listing]) -> Vec<Column> {
    let runs: Vec<&Summary> = list
        .iter()
        .filter_map(|l| match l {
            Listing::Ok(s) => Some(s.as_ref()),
            Listing::Corrupt { .. } => None,
        })
        .collect();
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
    let mut cols = vec![Column::Name, Column::Method, Column::Dataset];
    cols.extend(metrics.into_iter().map(Column::Metric));
    cols.extend(settings.into_iter().map(Column::Setting));
    cols.extend([Column::Iterations, Column::FitSeconds, Column::Created]);
    cols
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
        if self.filter.trim().is_empty() {
            ok.extend((0..list.len()).filter(|&i| matches!(list[i], Listing::Corrupt { .. })));
        }
        ok
    }

    pub fn is_marked(&self, s: &Summary) -> bool {
        self.marked.contains(&s.path)
    }
}
