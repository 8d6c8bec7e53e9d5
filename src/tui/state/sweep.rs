//! A sweep started from the workbench: one numeric setting over a range, scored by k-fold CV on
//! the training part (the engine's `train::sweep`), its rows arriving as they finish. The range
//! typed at the prompt is parsed and checked here against the field's `ParamSpec`.

use ovk_core::kernels::{InputRank, Sigma};
use ovk_core::methods::{ParamKind, Value};
use ovk_core::session::SessionRecord;
use ovk_core::train::search::Strategy;
use ovk_core::train::sweep::{grid_values, SweepResult, SweepRow};
use ovk_core::train::RunConfig;

use super::form::{Field, FieldKind};

/// What a sweep runs: `key` over `values`, each scored with `folds`-fold CV. A search over
/// several fields has one `axes` entry per field and each configuration's values in `points`;
/// `key`, `label` and `values` then name the search and hold the first field's values.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlan {
    pub key: String,
    /// The field's symbol or label for axes and titles (`λ`, `σ`, `rank`).
    pub label: String,
    pub values: Vec<f64>,
    pub log: bool,
    pub folds: Option<usize>,
    /// The searched fields, in the order they were marked (one for a one-field sweep).
    pub axes: Vec<PlanAxis>,
    /// Each configuration's value of each axis.
    pub points: Vec<Vec<f64>>,
    pub strategy: Strategy,
    /// Rows the search sends: one per configuration, or per configuration and rung (halving).
    pub evaluations: usize,
}

/// One searched field.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanAxis {
    pub key: String,
    pub label: String,
    pub log: bool,
}

impl SweepPlan {
    /// A one-field grid sweep of `values`.
    fn single(axis: PlanAxis, values: Vec<f64>, folds: Option<usize>) -> SweepPlan {
        SweepPlan {
            key: axis.key.clone(),
            label: axis.label.clone(),
            log: axis.log,
            points: values.iter().map(|v| vec![*v]).collect(),
            evaluations: values.len(),
            values,
            folds,
            axes: vec![axis],
            strategy: Strategy::Grid,
        }
    }

    /// The axes whose values differ between configurations (a heatmap's, a table's columns).
    pub fn varying(&self) -> Vec<usize> {
        (0..self.axes.len())
            .filter(|&a| {
                let mut vals = self.points.iter().filter_map(|p| p.get(a));
                let first = vals.next();
                vals.any(|v| Some(v) != first)
            })
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct SweepState {
    pub plan: SweepPlan,
    /// Scored configurations, in the order they finished.
    pub rows: Vec<SweepRow>,
}

impl SweepState {
    /// The metric the rows were scored by (`score` before the first row).
    pub fn metric(&self) -> String {
        self.rows
            .first()
            .map_or_else(|| "score".to_string(), |r| r.metric.clone())
    }

    /// How the search scored: `3-fold CV accuracy`, or `test-part mse` without CV.
    pub fn scored_by(&self) -> String {
        let how = self
            .plan
            .folds
            .map_or_else(|| "test-part".to_string(), |k| format!("{k}-fold CV"));
        format!("{how} {}", self.metric())
    }

    /// A saved sweep (the table in a session's details) as the live sweep showed it, for its
    /// curve in a replay or an opened session: the swept setting is the one its rows vary.
    /// `fields` (the form of its method) name the setting as the prompt did (λ, σ).
    pub fn from_record(r: &SessionRecord, fields: &[Field]) -> Option<SweepState> {
        let table: SweepResult = r.read_details().sweep()?;
        let keys: Vec<String> = table
            .rows
            .iter()
            .find(|r| !r.values.is_empty())?
            .values
            .keys()
            .cloned()
            .collect();
        let n = table.rows.iter().map(|row| row.index + 1).max()?;
        let mut points = vec![vec![f64::NAN; keys.len()]; n];
        for row in &table.rows {
            for (a, key) in keys.iter().enumerate() {
                points[row.index][a] = row.values.get(key)?.parse().ok()?;
            }
        }
        let axes: Vec<PlanAxis> = keys
            .iter()
            .enumerate()
            .map(|(a, key)| {
                let label = fields
                    .iter()
                    .find(|f| f.key() == key)
                    .map_or_else(|| key.clone(), label_of);
                let known: Vec<f64> = points
                    .iter()
                    .map(|p| p[a])
                    .filter(|v| v.is_finite())
                    .collect();
                let (lo, hi) = known
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                        (a.min(*v), b.max(*v))
                    });
                // a grid over a decade or more was a log one
                let log = lo > 0.0 && hi >= 10.0 * lo;
                PlanAxis {
                    key: key.clone(),
                    label,
                    log,
                }
            })
            .collect();
        let values: Vec<f64> = points.iter().map(|p| p[0]).collect();
        let mut plan = SweepPlan::single(axes[0].clone(), values, table.folds);
        if axes.len() > 1 {
            plan.key = keys.join("×");
            plan.label = axes
                .iter()
                .map(|a| a.label.as_str())
                .collect::<Vec<_>>()
                .join(" × ");
            plan.axes = axes;
            plan.points = points;
        }
        if table.rows.iter().any(|r| r.rung.is_some()) {
            plan.strategy = Strategy::Halving;
        }
        plan.evaluations = table.rows.len();
        Some(SweepState {
            plan,
            rows: table.rows,
        })
    }

    /// (value, mean score) of the scored rows, in the order of the values: the validation curve.
    pub fn curve(&self) -> Vec<(f64, f64)> {
        let mut pts: Vec<(f64, f64)> = self
            .latest()
            .into_iter()
            .filter(|r| r.error.is_none() && r.mean.is_finite())
            .filter_map(|r| Some((*self.plan.values.get(r.index)?, r.mean)))
            .filter(|(x, _)| x.is_finite())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    }

    /// Each configuration's last row (a halving scores survivors again on more rows), in the
    /// order of the configurations.
    pub fn latest(&self) -> Vec<&SweepRow> {
        let mut by: std::collections::BTreeMap<usize, &SweepRow> = Default::default();
        for r in &self.rows {
            let e = by.entry(r.index).or_insert(r);
            if r.rung >= e.rung {
                *e = r;
            }
        }
        by.into_values().collect()
    }

    /// The best scored row so far, as the engine ranks them (a later rung of a halving first).
    pub fn best(&self) -> Option<&SweepRow> {
        let table = SweepResult {
            folds: self.plan.folds,
            rows: self.latest().into_iter().cloned().collect(),
            best: None,
            interrupted: false,
        };
        let index = table
            .ranked()
            .first()
            .filter(|r| r.error.is_none() && r.mean.is_finite())?
            .index;
        self.latest().into_iter().find(|r| r.index == index)
    }

    /// How many configurations (single sweep) or evaluations (halving) the search sends.
    pub fn total(&self) -> usize {
        self.plan.evaluations.max(self.plan.points.len())
    }
}

/// The scores over two searched fields, for a heatmap: each axis's values (a random search's
/// many draws binned on the axis's scale), and per cell the best score of its configurations.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoreGrid {
    /// Each column's value (a bin's centre when binned), ascending.
    pub xs: Vec<f64>,
    /// Each row's value, ascending.
    pub ys: Vec<f64>,
    /// `cells[y][x]`: the best mean score there, if any configuration there was scored.
    pub cells: Vec<Vec<Option<f64>>>,
    /// The cell of the search's best configuration.
    pub best: Option<(usize, usize)>,
    pub higher_is_better: bool,
    /// Whether the axes are bins of drawn values rather than the values themselves.
    pub binned: bool,
}

/// Values beyond this many distinct ones on an axis are binned (a random search's draws).
const MAX_CELLS: usize = 12;
/// Bins of a binned axis.
const BINS: usize = 8;

/// Which cell of an axis a value falls in.
type CellOf = Box<dyn Fn(f64) -> usize>;

/// An axis's cells: its distinct values, or `BINS` bins of them on its scale; and the cell of
/// a value.
fn axis_cells(values: &[f64], log: bool) -> (Vec<f64>, CellOf, bool) {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    if v.len() <= MAX_CELLS {
        let cells = v.clone();
        return (
            cells,
            Box::new(move |x| v.iter().position(|y| *y == x).unwrap_or(0)),
            false,
        );
    }
    let log = log && v[0] > 0.0;
    let t = move |x: f64| if log { x.ln() } else { x };
    let (lo, hi) = (t(v[0]), t(v[v.len() - 1]));
    let w = (hi - lo) / BINS as f64;
    let centres = (0..BINS)
        .map(|b| {
            let c = lo + w * (b as f64 + 0.5);
            if log {
                c.exp()
            } else {
                c
            }
        })
        .collect();
    let cell = move |x: f64| (((t(x) - lo) / w).floor().max(0.0) as usize).min(BINS - 1);
    (centres, Box::new(cell), true)
}

impl SweepState {
    /// The scores over axes `ax` (columns) and `ay` (rows) of the plan.
    pub fn score_grid(&self, ax: usize, ay: usize) -> Option<ScoreGrid> {
        let rows = self.latest();
        let first = rows.first()?;
        let at = |a: usize| -> Vec<f64> {
            self.plan
                .points
                .iter()
                .map(|p| p.get(a).copied().unwrap_or(f64::NAN))
                .collect()
        };
        let (xs, cx, bx) = axis_cells(&at(ax), self.plan.axes.get(ax)?.log);
        let (ys, cy, by) = axis_cells(&at(ay), self.plan.axes.get(ay)?.log);
        let mut cells = vec![vec![None; xs.len()]; ys.len()];
        let hib = first.higher_is_better;
        let cell_of = |i: usize| -> Option<(usize, usize)> {
            let p = self.plan.points.get(i)?;
            let (x, y) = (*p.get(ax)?, *p.get(ay)?);
            (x.is_finite() && y.is_finite()).then(|| (cy(y), cx(x)))
        };
        for r in rows
            .iter()
            .filter(|r| r.error.is_none() && r.mean.is_finite())
        {
            let Some((i, j)) = cell_of(r.index) else {
                continue;
            };
            let c: &mut Option<f64> = &mut cells[i][j];
            let better = c.is_none_or(|v| if hib { r.mean > v } else { r.mean < v });
            if better {
                *c = Some(r.mean);
            }
        }
        Some(ScoreGrid {
            best: self.best().and_then(|b| cell_of(b.index)),
            xs,
            ys,
            cells,
            higher_is_better: hib,
            binned: bx || by,
        })
    }
}

/// At most this many values in a workbench sweep (the CLI takes grids from a file).
pub const MAX_VALUES: usize = 50;

/// Whether a field can be swept (a number).
pub fn sweepable(f: &Field) -> bool {
    matches!(
        f.kind,
        FieldKind::Sigma
            | FieldKind::Degree
            | FieldKind::Coef0
            | FieldKind::InputRank { rank: true }
            | FieldKind::Param(ovk_core::methods::ParamSpec {
                kind: ParamKind::Float { .. } | ParamKind::Int { .. },
                ..
            })
    )
}

/// The text the prompt starts with: a range around the field's value on its natural scale.
pub fn default_text(f: &Field) -> String {
    let cur: Option<f64> = f.text.trim().parse().ok();
    match f.kind {
        FieldKind::Param(spec) => match spec.kind {
            ParamKind::Float { log: true, .. } => {
                let c = cur.filter(|c| *c > 0.0).unwrap_or(1e-2);
                format!("{} {} 7 log cv=3", fmt(c / 1e3), fmt(c * 1e3))
            }
            ParamKind::Float { min, max, .. } => {
                let hi = if max.is_finite() && max < 1e6 {
                    max
                } else {
                    1.0
                };
                format!("{} {} 5 lin cv=3", fmt(min.max(0.0)), fmt(hi))
            }
            ParamKind::Int { min, max } => {
                let c = cur.unwrap_or(min.max(1) as f64) as i64;
                format!(
                    "{} {} 5 lin cv=3",
                    min.max(c / 4).max(1),
                    max.min(c * 4).max(2)
                )
            }
            _ => String::new(),
        },
        FieldKind::Sigma => "0.1 100 7 log cv=3".into(),
        // around a rank typed, else 100 to 1000 (a rank above the training rows is refused
        // by its fit, and the sweep lists it as failed)
        FieldKind::InputRank { .. } => match cur {
            Some(r) if r >= 1.0 => format!("{} {} 4 log cv=3", (r / 4.0).ceil().max(1.0), r * 2.0),
            _ => "100 1000 4 log cv=3".into(),
        },
        FieldKind::Degree => "1 5 5 lin cv=3".into(),
        FieldKind::Coef0 => "0 2 5 lin cv=3".into(),
        _ => String::new(),
    }
}

fn fmt(x: f64) -> String {
    Value::Float(x).to_string()
}

/// Parse `LOW HIGH N [log|lin] [cv=K]` for field `f`; every value is checked as the field
/// checks a typed one, so a sweep never runs a value a fit would refuse.
pub fn parse(f: &Field, text: &str) -> Result<SweepPlan, String> {
    let usage = "type LOW HIGH N [log|lin] [cv=K], e.g. 1e-4 10 8 log cv=3";
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.len() < 3 {
        return Err(usage.into());
    }
    let num = |w: &str| {
        w.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("'{w}' is not a number — {usage}"))
    };
    let (lo, hi) = (num(words[0])?, num(words[1])?);
    let n: usize = words[2]
        .parse()
        .ok()
        .filter(|n| (2..=MAX_VALUES).contains(n))
        .ok_or_else(|| format!("N must be a whole number from 2 to {MAX_VALUES}"))?;
    let natural_log = match f.kind {
        FieldKind::Sigma | FieldKind::InputRank { .. } => true,
        FieldKind::Param(spec) => matches!(spec.kind, ParamKind::Float { log: true, .. }),
        _ => false,
    };
    let mut log = natural_log;
    let mut folds = Some(3);
    for w in &words[3..] {
        match *w {
            "log" => log = true,
            "lin" => log = false,
            w if w.starts_with("cv=") => {
                folds = match &w[3..] {
                    "0" | "none" | "no" => None,
                    k => Some(
                        k.parse::<usize>()
                            .ok()
                            .filter(|k| (2..=20).contains(k))
                            .ok_or("cv=K needs 2 to 20 folds (cv=0: score on the test part)")?,
                    ),
                }
            }
            w => return Err(format!("'{w}' is not understood — {usage}")),
        }
    }
    if log && (lo <= 0.0 || hi <= 0.0) {
        return Err(format!(
            "a log range needs positive ends, got {lo} and {hi}"
        ));
    }
    let integer = integer(f);
    let mut values = grid_values(lo, hi, n, log);
    for v in &mut values {
        // Whole numbers for counts; three significant digits otherwise (λ = 0.001, not
        // 0.0010000000000000002 — the value is saved and shown as typed).
        *v = if integer {
            v.round()
        } else {
            format!("{v:.2e}").parse().unwrap_or(*v)
        };
    }
    values.dedup();
    for v in &values {
        check(f, *v, integer)?;
    }
    let axis = PlanAxis {
        key: f.key().to_string(),
        label: label_of(f),
        log,
    };
    Ok(SweepPlan::single(axis, values, folds))
}

/// Whether field `f` takes whole numbers (a degree, a rank, an iteration count).
pub fn integer(f: &Field) -> bool {
    matches!(
        f.kind,
        FieldKind::Degree
            | FieldKind::InputRank { .. }
            | FieldKind::Param(ovk_core::methods::ParamSpec {
                kind: ParamKind::Int { .. },
                ..
            })
    )
}

/// The field's symbol (`λ`, `σ`) when it has a short one, else its key: axes and titles.
fn label_of(f: &Field) -> String {
    match f.unit() {
        u if !u.is_empty() && u.chars().count() <= 2 => u.to_string(),
        _ => f.key().to_string(),
    }
}

/// Refuse a value the field would refuse, with the field's own message.
fn check(f: &Field, v: f64, integer: bool) -> Result<(), String> {
    let mut probe = f.clone();
    probe.text = if integer {
        format!("{}", v as i64)
    } else {
        fmt(v)
    };
    probe.validate();
    if let Some(e) = probe.error {
        return Err(e);
    }
    if matches!(f.kind, FieldKind::Sigma) && v <= 0.0 {
        return Err(format!("σ must be positive, got {v}"));
    }
    Ok(())
}

/// One configuration per point of a search: `base` with each searched field's value.
pub fn search_configs(base: &RunConfig, plan: &SweepPlan, fields: &[Field]) -> Vec<RunConfig> {
    plan.points
        .iter()
        .map(|p| {
            let mut c = base.clone();
            for (axis, v) in plan.axes.iter().zip(p) {
                if let Some(f) = fields.iter().find(|f| f.key() == axis.key) {
                    apply(&mut c, f, *v);
                }
            }
            c
        })
        .collect()
}

/// `c` with field `f` set to `v`.
fn apply(c: &mut RunConfig, f: &Field, v: f64) {
    match f.kind {
        FieldKind::Sigma => c.kernel.sigma = Sigma::Value(v),
        FieldKind::Degree => c.kernel.degree = v as u32,
        FieldKind::Coef0 => c.kernel.coef0 = v,
        FieldKind::InputRank { .. } => c.kernel.input_rank = InputRank::Rank(v as usize),
        FieldKind::Param(spec) => {
            let value = match spec.kind {
                ParamKind::Int { .. } => Value::Int(v as i64),
                _ => Value::Float(v),
            };
            c.params.set(spec.key, value);
        }
        _ => {}
    }
}
