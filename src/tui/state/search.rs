//! A search over several Kernel fields from the workbench: `w` marks a field with its range
//! (the sweep prompt's `LOW HIGH N [log|lin]`), and `w` in Run says how to search the marked
//! fields — every combination, seeded random draws (log-uniform on log ranges), or successive
//! halving over training rows — and starts it. The configurations are drawn here, the way
//! `ovk sweep` draws them (`train::search`), so a search is the same from either side.

use std::collections::BTreeMap;

use ovk_core::train::search::{rung_sizes, Axis, Search, Strategy, DEFAULT_FACTOR};

use super::sweep::{PlanAxis, SweepPlan};

/// A field marked for search: the range typed and the grid it gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Mark {
    pub text: String,
    /// The field's one-field sweep: its key, label, scale, grid values and folds.
    pub plan: SweepPlan,
    /// Whether the field takes whole numbers (a rank, an iteration count).
    pub integer: bool,
}

/// The marked fields, in the order marked, and how the last search was asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchMarks {
    pub marks: Vec<Mark>,
    pub how: Option<String>,
}

impl SearchMarks {
    /// The mark of field `key`.
    pub fn get(&self, key: &str) -> Option<&Mark> {
        self.marks.iter().find(|m| m.plan.key == key)
    }

    /// Mark `key` (or change its range), keeping its place among the marks.
    pub fn set(&mut self, mark: Mark) {
        match self.marks.iter_mut().find(|m| m.plan.key == mark.plan.key) {
            Some(m) => *m = mark,
            None => self.marks.push(mark),
        }
    }

    /// Unmark `key`; whether it was marked.
    pub fn remove(&mut self, key: &str) -> bool {
        let n = self.marks.len();
        self.marks.retain(|m| m.plan.key != key);
        self.marks.len() != n
    }

    /// The marked fields' labels, as a list for a status line.
    pub fn labels(&self) -> String {
        let l: Vec<&str> = self.marks.iter().map(|m| m.plan.label.as_str()).collect();
        l.join(", ")
    }

    /// The text the search prompt starts with: the last one asked, else a grid on the marks'
    /// folds.
    pub fn default_how(&self) -> String {
        if let Some(h) = &self.how {
            return h.clone();
        }
        let cv = match self.marks.first().and_then(|m| m.plan.folds) {
            Some(k) => format!("cv={k}"),
            None => "cv=0".into(),
        };
        format!("grid {cv}")
    }
}

/// How to search: the strategy and its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct How {
    pub strategy: Strategy,
    pub trials: Option<usize>,
    pub seed: u64,
    pub factor: usize,
    pub folds: Option<usize>,
}

/// The search prompt's syntax, for its title and its errors.
pub const HOW_USAGE: &str =
    "grid | random trials=N [seed=S] | halving [trials=N] [factor=F], then [cv=K]";

/// At most this many configurations in a workbench search (`ovk sweep` takes more).
pub const MAX_CONFIGS: usize = 2000;

/// Parse `grid|random|halving [trials=N] [seed=S] [factor=F] [cv=K]`.
pub fn parse_how(text: &str) -> Result<How, String> {
    let mut words = text.split_whitespace();
    let strategy = match words.next() {
        Some("grid") => Strategy::Grid,
        Some("random") => Strategy::Random,
        Some("halving") => Strategy::Halving,
        Some(w) => return Err(format!("'{w}' is not a search — type {HOW_USAGE}")),
        None => return Err(format!("type {HOW_USAGE}")),
    };
    let mut how = How {
        strategy,
        trials: None,
        seed: 0,
        factor: DEFAULT_FACTOR,
        folds: Some(3),
    };
    let whole = |k: &str, v: &str, lo: usize, hi: usize| {
        v.parse::<usize>()
            .ok()
            .filter(|n| (lo..=hi).contains(n))
            .ok_or_else(|| format!("{k}= needs a whole number from {lo} to {hi}, got '{v}'"))
    };
    for w in words {
        let (k, v) = w
            .split_once('=')
            .ok_or_else(|| format!("'{w}' is not understood — type {HOW_USAGE}"))?;
        match k {
            "trials" if strategy != Strategy::Grid => {
                how.trials = Some(whole(k, v, 1, MAX_CONFIGS)?)
            }
            "trials" => {
                return Err(
                    "trials= goes with random or halving; a grid tries every combination".into(),
                )
            }
            "seed" => {
                how.seed = v
                    .parse()
                    .map_err(|_| format!("seed= needs a whole number, got '{v}'"))?
            }
            "factor" if strategy == Strategy::Halving => how.factor = whole(k, v, 2, 10)?,
            "factor" => return Err("factor= goes with halving".into()),
            "cv" => {
                how.folds = match v {
                    "0" | "none" | "no" => None,
                    v => Some(whole(k, v, 2, 20)?),
                }
            }
            _ => return Err(format!("'{w}' is not understood — type {HOW_USAGE}")),
        }
    }
    if strategy == Strategy::Random && how.trials.is_none() {
        return Err("random needs trials=N: how many configurations to draw".into());
    }
    if strategy == Strategy::Halving && how.folds.is_none() {
        return Err("halving compares configurations by CV on each rung: cv=K, 2 to 20".into());
    }
    Ok(how)
}

/// The configurations a search of `marks` tries: every combination of their grids (the first
/// mark varies slowest) or `trials` seeded draws from their ranges.
pub fn plan_search(marks: &[Mark], how: &How) -> Result<SweepPlan, String> {
    if marks.is_empty() {
        return Err("no field is marked: w on a Kernel field marks it with its range".into());
    }
    let axes: Vec<(String, Axis)> = marks
        .iter()
        .map(|m| {
            let v = &m.plan.values;
            let axis = match how.trials {
                Some(_) => Axis::Range {
                    lo: v[0],
                    hi: v[v.len() - 1],
                    log: m.plan.log,
                    n: None,
                    integer: m.integer,
                },
                None => Axis::List(v.iter().map(|x| format!("{x}")).collect()),
            };
            (m.plan.key.clone(), axis)
        })
        .collect();
    if how.trials.is_none() {
        let size = marks
            .iter()
            .try_fold(1usize, |acc, m| acc.checked_mul(m.plan.values.len()));
        if size.is_none_or(|n| n > MAX_CONFIGS) {
            return Err(format!(
                "the grid has more than {MAX_CONFIGS} configurations: fewer values, or \
                 random trials=N"
            ));
        }
    }
    let search = Search {
        axes,
        strategy: how.strategy,
        trials: how.trials,
        seed: how.seed,
        factor: how.factor,
        min_rows: None,
    };
    let candidates: Vec<BTreeMap<String, String>> =
        search.candidates().map_err(|e| e.to_string())?;
    let points: Vec<Vec<f64>> = candidates
        .iter()
        .map(|c| {
            marks
                .iter()
                .map(|m| {
                    c.get(&m.plan.key)
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(f64::NAN)
                })
                .collect()
        })
        .collect();
    let axes: Vec<PlanAxis> = marks.iter().map(|m| m.plan.axes[0].clone()).collect();
    let label = axes
        .iter()
        .map(|a| a.label.as_str())
        .collect::<Vec<_>>()
        .join(" × ");
    let evaluations = match how.strategy {
        Strategy::Halving => rung_sizes(points.len(), how.factor).iter().sum(),
        _ => points.len(),
    };
    Ok(SweepPlan {
        key: axes
            .iter()
            .map(|a| a.key.as_str())
            .collect::<Vec<_>>()
            .join("×"),
        label,
        values: points.iter().map(|p| p[0]).collect(),
        log: axes[0].log,
        folds: how.folds,
        axes,
        points,
        strategy: how.strategy,
        evaluations,
    })
}
