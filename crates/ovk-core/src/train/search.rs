//! Searching several hyperparameters at once: the configurations to try — every combination of
//! the axes, or N seeded random draws (log-uniform on log ranges) — successive halving over the
//! training rows (many configurations on a few rows, the best on more: the kernel-method
//! analogue of scikit-learn's HalvingRandomSearchCV), and nested cross-validation around the
//! whole search, which estimates the tuned procedure without the optimism of its own choice.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::pipeline::{self, estimate};
use super::sweep::{
    check_size, run_sweep, settings, varying, SweepResult, SweepRow, MAX_CONFIGURATIONS,
};
use super::RunConfig;
use crate::data::CvFold;
use crate::kernels::InputRank;
use crate::metrics::MetricMap;
use crate::session::CvEstimate;
use crate::util::rng::Rng;
use crate::{OvkError, Result};

/// The values one searched setting takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Axis {
    /// These values (as text, as a config file spells them).
    List(Vec<String>),
    /// A range: a grid takes `n` values (ends included, evenly spaced on a log or linear
    /// scale); a random search draws from it (log-uniformly on a log range). `integer` ranges
    /// give whole numbers.
    Range {
        /// The lower end.
        lo: f64,
        /// The upper end.
        hi: f64,
        /// Spaced (or drawn) on a log scale.
        log: bool,
        /// How many values a grid takes (None: only a random search can use the range).
        n: Option<usize>,
        /// Whole numbers only.
        integer: bool,
    },
}

/// How the configurations are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    /// Every combination.
    Grid,
    /// `trials` seeded draws.
    Random,
    /// Successive halving over training rows, on the grid or (with `trials`) random draws.
    Halving,
}

impl Strategy {
    /// Every strategy, in the order help text lists them.
    pub const ALL: [Strategy; 3] = [Strategy::Grid, Strategy::Random, Strategy::Halving];

    /// The strategy's word (`grid`, `random`, `halving`).
    pub fn as_str(&self) -> &'static str {
        match self {
            Strategy::Grid => "grid",
            Strategy::Random => "random",
            Strategy::Halving => "halving",
        }
    }
}

/// A search: the axes, the strategy and its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Search {
    /// The swept settings: each key with the values it takes.
    pub axes: Vec<(String, Axis)>,
    /// How configurations are drawn from the axes.
    pub strategy: Strategy,
    /// Random draws (random search; halving over random draws).
    pub trials: Option<usize>,
    /// Seed of the draws.
    pub seed: u64,
    /// Halving: keep 1/factor of the configurations at each rung (≥ 2).
    pub factor: usize,
    /// Halving: training rows of the first rung (default: all rows / factor^(rungs − 1)).
    pub min_rows: Option<usize>,
}

/// Halving keeps a third of the configurations at each rung unless told otherwise.
pub const DEFAULT_FACTOR: usize = 3;

impl Search {
    /// The settings of each configuration to try, by key, as text.
    pub fn candidates(&self) -> Result<Vec<BTreeMap<String, String>>> {
        let draws = match (self.strategy, self.trials) {
            (Strategy::Random, None) => {
                return Err(OvkError::input(
                    "search = \"random\" needs trials = N (how many configurations to draw)",
                ))
            }
            (Strategy::Random, Some(n)) | (Strategy::Halving, Some(n)) => Some(n),
            (Strategy::Grid, Some(_)) => {
                return Err(OvkError::input(
                    "trials = N goes with search = \"random\" or \"halving\"; a grid tries \
                     every combination",
                ))
            }
            _ => None,
        };
        match draws {
            Some(n) => self.random(n),
            None => self.grid(),
        }
    }

    /// Every combination of the axes (the first axis varies slowest).
    fn grid(&self) -> Result<Vec<BTreeMap<String, String>>> {
        let lists: Vec<(String, Vec<String>)> = self
            .axes
            .iter()
            .map(|(k, a)| Ok((k.clone(), grid_values_of(k, a)?)))
            .collect::<Result<_>>()?;
        let size = lists
            .iter()
            .try_fold(1usize, |acc, (_, v)| acc.checked_mul(v.len()));
        if size.is_none_or(|n| n > MAX_CONFIGURATIONS) {
            return Err(OvkError::input(format!(
                "the grid has more than {MAX_CONFIGURATIONS} configurations; use fewer values, \
                 or search = \"random\" with trials = N"
            )));
        }
        let mut out = vec![BTreeMap::new()];
        for (k, vals) in &lists {
            out = out
                .into_iter()
                .flat_map(|base| {
                    vals.iter().map(move |v| {
                        let mut m = base.clone();
                        m.insert(k.clone(), v.clone());
                        m
                    })
                })
                .collect();
        }
        Ok(out)
    }

    /// `n` seeded draws: a list's values uniformly, a range uniformly on its scale.
    fn random(&self, n: usize) -> Result<Vec<BTreeMap<String, String>>> {
        if n == 0 || n > MAX_CONFIGURATIONS {
            return Err(OvkError::input(format!(
                "trials = {n}: draw between 1 and {MAX_CONFIGURATIONS} configurations"
            )));
        }
        let mut rng = Rng::new(self.seed ^ 0x005e_a7c4);
        Ok((0..n)
            .map(|_| {
                self.axes
                    .iter()
                    .map(|(k, a)| (k.clone(), draw(a, &mut rng)))
                    .collect()
            })
            .collect())
    }
}

fn grid_values_of(key: &str, a: &Axis) -> Result<Vec<String>> {
    match a {
        Axis::List(v) => Ok(v.clone()),
        Axis::Range { n: None, .. } => Err(OvkError::input(format!(
            "'{key}': a range on a grid needs n = N values (or search = \"random\")"
        ))),
        Axis::Range {
            lo,
            hi,
            log,
            n: Some(n),
            integer,
        } => {
            let mut vals: Vec<String> = super::sweep::grid_values(*lo, *hi, *n, *log)
                .into_iter()
                .map(|v| number(v, *integer))
                .collect();
            if *integer {
                vals.dedup(); // a short integer range rounds neighbours to one value
            }
            Ok(vals)
        }
    }
}

fn draw(a: &Axis, rng: &mut Rng) -> String {
    match a {
        Axis::List(v) => v[rng.below(v.len())].clone(),
        Axis::Range {
            lo,
            hi,
            log,
            integer,
            ..
        } => {
            let u = rng.uniform();
            let v = if *log {
                (lo.ln() + u * (hi.ln() - lo.ln())).exp()
            } else {
                lo + u * (hi - lo)
            };
            number(v.clamp(lo.min(*hi), lo.max(*hi)), *integer)
        }
    }
}

fn number(v: f64, integer: bool) -> String {
    if integer {
        format!("{}", v.round() as i64)
    } else {
        format!("{v}")
    }
}

/// Successive halving: every configuration on few training rows, the best 1/`factor` on
/// `factor` times as many, … the last rung on every training row. Each rung scores by
/// `folds`-fold cross-validation on its rows. The result's rows are each configuration's last
/// rung (its `rung` and `train_rows` say which); the best is the best of the last rung.
pub fn run_halving(
    configs: &[RunConfig],
    search: &Search,
    folds: usize,
    jobs: usize,
    cancel: Arc<AtomicBool>,
    mut on_row: impl FnMut(&SweepRow),
) -> Result<SweepResult> {
    if configs.is_empty() {
        return Err(OvkError::input("the search has no configurations"));
    }
    let factor = search.factor.max(2);
    let n_train = training_rows(&configs[0])?;
    let rungs = rung_sizes(configs.len(), factor).len();
    // four rows per fold at least, so that every fold trains and scores on something
    let floor_rows = 4 * folds;
    let first = search
        .min_rows
        .unwrap_or_else(|| n_train / factor.pow(rungs.saturating_sub(1) as u32))
        .max(floor_rows)
        .min(n_train);
    check_size(configs.len(), Some(folds * rungs))?;
    // a rung's rows list what varies over the whole search, not over its survivors
    let labels = varying(&configs.iter().map(settings).collect::<Vec<_>>());
    let mut alive: Vec<usize> = (0..configs.len()).collect();
    let mut last: BTreeMap<usize, SweepRow> = BTreeMap::new();
    let mut interrupted = false;
    for rung in 0..rungs {
        let rows = if rung + 1 == rungs {
            n_train
        } else {
            (first * factor.pow(rung as u32)).min(n_train)
        };
        let rung_configs: Vec<RunConfig> = alive
            .iter()
            .map(|&c| {
                let mut cfg = configs[c].clone();
                cfg.data.train_rows = (rows < n_train).then_some(rows);
                exact_below_rank(&mut cfg, rows, folds);
                cfg
            })
            .collect();
        let result = run_sweep(&rung_configs, Some(folds), jobs, cancel.clone(), |row| {
            let mut row = row.clone();
            row.index = alive[row.index];
            row.values = labels[row.index].clone();
            row.rung = Some(rung);
            row.train_rows = Some(rows);
            on_row(&row);
        })?;
        for mut row in result.rows.iter().cloned() {
            row.index = alive[row.index];
            row.values = labels[row.index].clone();
            row.rung = Some(rung);
            row.train_rows = Some(rows);
            last.insert(row.index, row);
        }
        if result.interrupted {
            interrupted = true;
            break;
        }
        if rung + 1 < rungs {
            let keep = rung_sizes(configs.len(), factor)[rung + 1];
            alive = result
                .ranked()
                .into_iter()
                .filter(|r| r.error.is_none() && r.mean.is_finite())
                .take(keep)
                .map(|r| alive[r.index])
                .collect();
            alive.sort_unstable();
            if alive.is_empty() {
                break;
            }
        }
    }
    let mut result = SweepResult {
        folds: Some(folds),
        rows: last.into_values().collect(),
        best: None,
        interrupted,
    };
    result.best = result
        .ranked()
        .first()
        .filter(|r| r.error.is_none() && r.mean.is_finite())
        .map(|r| r.index);
    Ok(result)
}

/// Score `configs` as one search: successive halving keeping 1/`factor` per rung when
/// `halving` says so (by `folds`-fold CV, three when none is given), else each configuration once.
pub(crate) fn run_search(
    configs: &[RunConfig],
    folds: Option<usize>,
    halving: Option<usize>,
    jobs: usize,
    cancel: Arc<AtomicBool>,
    on_row: impl FnMut(&SweepRow),
) -> Result<SweepResult> {
    match halving {
        Some(factor) => {
            let search = Search {
                axes: Vec::new(),
                strategy: Strategy::Halving,
                trials: None,
                seed: 0,
                factor,
                min_rows: None,
            };
            let folds = folds.unwrap_or(super::sweep::DEFAULT_FOLDS);
            run_halving(configs, &search, folds, jobs, cancel, on_row)
        }
        None => run_sweep(configs, folds, jobs, cancel, on_row),
    }
}

/// A Nyström factor whose rank reaches the rows it is fitted on is the exact kernel: at a rung
/// whose folds train on no more rows than `input_rank`, the exact route stands in rather than
/// refusing a configuration only because the rung is small.
fn exact_below_rank(cfg: &mut RunConfig, rows: usize, folds: usize) {
    let fold_train = rows - rows.div_ceil(folds.max(1));
    if let InputRank::Rank(r) = cfg.kernel.input_rank {
        if r >= fold_train {
            cfg.kernel.input_rank = InputRank::Exact;
        }
    }
}

/// How many configurations each rung of a halving over `n` configurations scores: all of
/// them, then a `factor`-th (rounded up) at each rung down to the last, which keeps fewer than
/// `factor`.
pub fn rung_sizes(n: usize, factor: usize) -> Vec<usize> {
    let factor = factor.max(2);
    let mut sizes = vec![n];
    while let Some(&last) = sizes.last() {
        if last < factor {
            break;
        }
        sizes.push(last.div_ceil(factor));
    }
    sizes
}

/// The number of training rows `config` fits on (its split, read once).
fn training_rows(config: &RunConfig) -> Result<usize> {
    let method = config.checked_method()?;
    let mut c = config.clone();
    c.data.cv = None;
    c.data.train_rows = None;
    Ok(pipeline::prepare(method, &c)?.train_rows.len())
}

/// One outer fold of a nested cross-validation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NestedFold {
    /// The outer fold's index (0-based).
    pub fold: usize,
    /// The configuration the inner search chose on the other folds, by its settings.
    pub chosen: BTreeMap<String, String>,
    pub(crate) chosen_index: usize,
    /// The chosen configuration refitted on the other folds, scored on this one.
    pub metrics: MetricMap,
}

/// Nested cross-validation of a whole search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Nested {
    /// Number of outer folds K.
    pub k: usize,
    pub(crate) inner_folds: usize,
    /// One result per outer fold, in fold order.
    pub folds: Vec<NestedFold>,
    /// Per metric, over the outer folds: an estimate of the tuned procedure (search + refit),
    /// not of any one configuration.
    pub estimate: CvEstimate,
}

/// Nested cross-validation: for each of `k` outer folds of the training part, the whole
/// search (`inner_folds`-fold CV, or halving) runs on the other folds, its best configuration
/// is refitted there and scored on the outer fold. `labels` are the configurations' settings.
#[allow(clippy::too_many_arguments)]
pub fn run_nested(
    configs: &[RunConfig],
    labels: &[BTreeMap<String, String>],
    search: &Search,
    k: usize,
    inner_folds: usize,
    jobs: usize,
    cancel: Arc<AtomicBool>,
    mut on_fold: impl FnMut(&NestedFold),
) -> Result<Nested> {
    if !(2..=crate::config::MAX_CV_FOLDS).contains(&k) {
        return Err(OvkError::input(format!(
            "--nested-cv {k}: the outer cross-validation takes 2 to {} folds",
            crate::config::MAX_CV_FOLDS
        )));
    }
    let mut folds = Vec::with_capacity(k);
    for fold in 0..k {
        let outer = Some(CvFold { folds: k, fold });
        let inner: Vec<RunConfig> = configs
            .iter()
            .map(|c| {
                let mut c = c.clone();
                c.data.outer = outer;
                c
            })
            .collect();
        let result = match search.strategy {
            Strategy::Halving => {
                run_halving(&inner, search, inner_folds, jobs, cancel.clone(), |_| {})?
            }
            _ => run_sweep(&inner, Some(inner_folds), jobs, cancel.clone(), |_| {})?,
        };
        if result.interrupted {
            return Err(OvkError::Cancelled);
        }
        let best = result.best.ok_or_else(|| {
            OvkError::input(format!(
                "outer fold {} of {k}: no configuration of the search could be scored",
                fold + 1
            ))
        })?;
        let mut refit = inner[best].clone();
        refit.data.cv = None;
        refit.data.train_rows = None;
        let out = pipeline::run(&refit, &mut CancelFlag(cancel.clone()))?;
        let f = NestedFold {
            fold,
            chosen: labels.get(best).cloned().unwrap_or_default(),
            chosen_index: best,
            metrics: out.record.metrics.test,
        };
        on_fold(&f);
        folds.push(f);
    }
    let per_fold: Vec<MetricMap> = folds.iter().map(|f| f.metrics.clone()).collect();
    Ok(Nested {
        k,
        inner_folds,
        estimate: estimate(&per_fold),
        folds,
    })
}

/// The nested estimate of the task's primary metric (the first of mean AUC, accuracy and MSE
/// the folds scored), in words.
pub fn describe_nested(n: &Nested) -> String {
    let key = ["mean_auc", "accuracy", "mse"]
        .into_iter()
        .find(|k| n.estimate.contains_key(*k))
        .unwrap_or("mse");
    match n.estimate.get(key) {
        Some(s) => format!(
            "nested {}-fold cross-validation of the whole search ({}-fold inner CV): {key} \
             {:.4} ± {:.4} over the outer folds — an estimate of the tuned procedure, free of \
             the optimism of the search's own best score",
            n.k, n.inner_folds, s.mean, s.sd
        ),
        None => format!("nested {}-fold cross-validation of the whole search", n.k),
    }
}

/// Cancels a refit when the search is interrupted.
struct CancelFlag(Arc<AtomicBool>);

impl crate::methods::Observer for CancelFlag {
    fn is_cancelled(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(axes: Vec<(&str, Axis)>, strategy: Strategy, trials: Option<usize>) -> Search {
        Search {
            axes: axes.into_iter().map(|(k, a)| (k.to_string(), a)).collect(),
            strategy,
            trials,
            seed: 7,
            factor: DEFAULT_FACTOR,
            min_rows: None,
        }
    }

    #[test]
    fn a_grid_is_every_combination_first_axis_slowest() {
        let s = search(
            vec![
                ("a", Axis::List(vec!["1".into(), "2".into()])),
                (
                    "b",
                    Axis::Range {
                        lo: 1.0,
                        hi: 100.0,
                        log: true,
                        n: Some(3),
                        integer: true,
                    },
                ),
            ],
            Strategy::Grid,
            None,
        );
        let c = s.candidates().unwrap();
        let pairs: Vec<(String, String)> =
            c.iter().map(|m| (m["a"].clone(), m["b"].clone())).collect();
        let want = [
            ("1", "1"),
            ("1", "10"),
            ("1", "100"),
            ("2", "1"),
            ("2", "10"),
            ("2", "100"),
        ];
        assert_eq!(
            pairs,
            want.map(|(a, b)| (a.to_string(), b.to_string())).to_vec()
        );
    }

    #[test]
    fn integer_ranges_draw_whole_numbers_within_the_ends() {
        let s = search(
            vec![(
                "rank",
                Axis::Range {
                    lo: 2.0,
                    hi: 9.0,
                    log: false,
                    n: None,
                    integer: true,
                },
            )],
            Strategy::Random,
            Some(50),
        );
        let c = s.candidates().unwrap();
        assert_eq!(c.len(), 50);
        let v: Vec<i64> = c.iter().map(|m| m["rank"].parse().unwrap()).collect();
        assert!(v.iter().all(|r| (2..=9).contains(r)), "{v:?}");
        assert!(v.iter().collect::<std::collections::BTreeSet<_>>().len() >= 5);
    }

    #[test]
    fn rungs_keep_a_factor_th_rounded_up_until_fewer_than_factor_remain() {
        assert_eq!(rung_sizes(12, 3), vec![12, 4, 2]);
        assert_eq!(rung_sizes(27, 3), vec![27, 9, 3, 1]);
        assert_eq!(rung_sizes(2, 3), vec![2]);
        assert_eq!(rung_sizes(10, 2), vec![10, 5, 3, 2, 1]);
    }
}
