//! A sweep started from the workbench: one numeric setting over a range, scored by k-fold CV on
//! the training part (the engine's `train::sweep`), its rows arriving as they finish. The range
//! typed at the prompt is parsed and checked here against the field's `ParamSpec`.

use ovk_core::kernels::{InputRank, Sigma};
use ovk_core::methods::{ParamKind, Value};
use ovk_core::session::SessionRecord;
use ovk_core::train::sweep::{grid_values, SweepResult, SweepRow};
use ovk_core::train::RunConfig;

use super::form::{Field, FieldKind};

/// What a sweep runs: `key` over `values`, each scored with `folds`-fold CV.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepPlan {
    pub key: String,
    /// The field's symbol or label for axes and titles (`λ`, `σ`, `rank`).
    pub label: String,
    pub values: Vec<f64>,
    pub log: bool,
    pub folds: Option<usize>,
}

#[derive(Debug, Clone)]
pub struct SweepState {
    pub plan: SweepPlan,
    /// Scored configurations, in the order they finished.
    pub rows: Vec<SweepRow>,
}

impl SweepState {
    /// A saved sweep (the table in a session's details) as the live sweep showed it, for its
    /// curve in a replay or an opened session: the swept setting is the one its rows vary.
    /// `fields` (the form of its method) name the setting as the prompt did (λ, σ).
    pub fn from_record(r: &SessionRecord, fields: &[Field]) -> Option<SweepState> {
        let table: SweepResult = r.read_details().sweep()?;
        let key = table.rows.iter().find_map(|row| {
            let mut keys = row.values.keys();
            let k = keys.next()?;
            keys.next().is_none().then(|| k.clone())
        })?;
        let n = table.rows.iter().map(|row| row.index + 1).max()?;
        let mut values = vec![f64::NAN; n];
        for row in &table.rows {
            values[row.index] = row.values.get(&key)?.parse().ok()?;
        }
        let label = fields
            .iter()
            .find(|f| f.key() == key)
            .map_or_else(|| key.clone(), label_of);
        let known: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let (lo, hi) = known
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
                (a.min(*v), b.max(*v))
            });
        Some(SweepState {
            plan: SweepPlan {
                key,
                label,
                values,
                // a grid over a decade or more was a log one
                log: lo > 0.0 && hi >= 10.0 * lo,
                folds: table.folds,
            },
            rows: table.rows,
        })
    }

    /// (value, mean score) of the scored rows, in the order of the values: the validation curve.
    pub fn curve(&self) -> Vec<(f64, f64)> {
        let mut pts: Vec<(f64, f64)> = self
            .rows
            .iter()
            .filter(|r| r.error.is_none() && r.mean.is_finite())
            .filter_map(|r| Some((*self.plan.values.get(r.index)?, r.mean)))
            .filter(|(x, _)| x.is_finite())
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    }

    /// The best scored row so far.
    pub fn best(&self) -> Option<&SweepRow> {
        self.rows
            .iter()
            .filter(|r| r.error.is_none() && r.mean.is_finite())
            .reduce(|a, b| {
                let better = if a.higher_is_better {
                    b.mean > a.mean
                } else {
                    b.mean < a.mean
                };
                if better {
                    b
                } else {
                    a
                }
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
    let integer = matches!(
        f.kind,
        FieldKind::Degree
            | FieldKind::InputRank { .. }
            | FieldKind::Param(ovk_core::methods::ParamSpec {
                kind: ParamKind::Int { .. },
                ..
            })
    );
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
    Ok(SweepPlan {
        key: f.key().to_string(),
        label: label_of(f),
        values,
        log,
        folds,
    })
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

/// One configuration per value: `base` with the swept setting replaced.
pub fn configs(base: &RunConfig, plan: &SweepPlan, f: &Field) -> Vec<RunConfig> {
    plan.values
        .iter()
        .map(|&v| {
            let mut c = base.clone();
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
            c
        })
        .collect()
}
