//! Hyperparameter sweeps: many run configurations, each scored by k-fold cross-validation on
//! the training part (or on the test part without CV), run in parallel, reported row by row.
//! Every fit is independent and deterministic, so results do not depend on the job count.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::channel;
use std::sync::Arc;
use std::time::Instant;

use super::pipeline::{self, mean_sd};
use super::RunConfig;
use crate::data::CvFold;
use crate::methods::Observer;
use crate::metrics;
use crate::session::details::key;
use crate::{OvkError, Result};

/// More configurations than this is a slip in a range (`n = 100000` on several keys), not a
/// plan: the grid alone would take gigabytes before the first fit.
pub const MAX_CONFIGURATIONS: usize = 100_000;

/// At most this many fits (configurations × folds) in one sweep.
pub const MAX_FITS: usize = 1_000_000;

/// Refuse a sweep of more than `MAX_FITS` fits before allocating its task list.
pub fn check_size(configurations: usize, folds: Option<usize>) -> Result<()> {
    let k = folds.unwrap_or(1);
    match configurations.checked_mul(k) {
        Some(n) if n <= MAX_FITS => Ok(()),
        _ => Err(OvkError::input(format!(
            "the sweep would run {configurations} configurations × {k} folds; at most {MAX_FITS} \
             fits — use fewer values or fewer folds"
        ))),
    }
}

pub use crate::session::sweep_table::{SweepResult, SweepRow};

/// The settings of a configuration that a sweep can vary, flattened to text by key.
pub fn settings(c: &RunConfig) -> BTreeMap<String, String> {
    c.settings()
}

/// Keep only the settings that differ between configurations.
pub fn varying(all: &[BTreeMap<String, String>]) -> Vec<BTreeMap<String, String>> {
    let keys: Vec<String> = all
        .iter()
        .flat_map(|m| m.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|k| {
            let first = all.first().and_then(|m| m.get(k));
            all.iter().any(|m| m.get(k) != first)
        })
        .collect();
    all.iter()
        .map(|m| {
            keys.iter()
                .filter_map(|k| m.get(k).map(|v| (k.clone(), v.clone())))
                .collect()
        })
        .collect()
}

/// A fold's validation score, or why it failed.
type FoldScore = std::result::Result<f64, String>;

/// (configuration, fold, (score, metric name, higher is better) or error, seconds).
type Finished = (
    usize,
    usize,
    std::result::Result<(f64, String, bool), String>,
    f64,
);

/// Cancels a fit when the sweep is interrupted.
struct Flag(Arc<AtomicBool>);
impl Observer for Flag {
    fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Folds a sweep is scored on when none are given: choosing on the test part would make the
/// refitted best configuration's test metrics optimistic.
pub const DEFAULT_FOLDS: usize = 3;

/// The folds a sweep of `configs` is scored on: `cv` when given; else `DEFAULT_FOLDS`, unless
/// every configuration asks to choose on the test rows (`select_on = "test"`, the papers'
/// protocols), which scores on the test part.
pub fn folds_for(configs: &[RunConfig], cv: Option<usize>) -> Option<usize> {
    let on_test = !configs.is_empty() && configs.iter().all(|c| c.select_on.is_test());
    cv.or((!on_test).then_some(DEFAULT_FOLDS))
}

/// The configuration of one fold (`None`: score on the test part).
pub(crate) fn fold_config(base: &RunConfig, folds: Option<usize>, fold: usize) -> RunConfig {
    let mut c = base.clone();
    c.data.cv = folds.map(|k| CvFold { folds: k, fold });
    c
}

/// Score every configuration with `folds`-fold CV (or on the test part), `jobs` fits at a
/// time; `on_row` is called (on this thread) as each configuration completes.
pub fn run_sweep(
    configs: &[RunConfig],
    folds: Option<usize>,
    jobs: usize,
    cancel: Arc<AtomicBool>,
    mut on_row: impl FnMut(&SweepRow),
) -> Result<SweepResult> {
    if configs.is_empty() {
        return Err(OvkError::input("the sweep has no configurations"));
    }
    if let Some(k) = folds {
        if k < 2 {
            return Err(OvkError::input(format!(
                "--cv needs at least 2 folds, got {k}"
            )));
        }
    }
    check_size(configs.len(), folds)?;
    for c in configs {
        c.validate()?;
    }
    let k = folds.unwrap_or(1);
    let labels = varying(&configs.iter().map(settings).collect::<Vec<_>>());
    let tasks: Vec<(usize, usize)> = (0..configs.len())
        .flat_map(|c| (0..k).map(move |f| (c, f)))
        .collect();
    let next = AtomicUsize::new(0);
    let (tx, rx) = channel::<Finished>();
    let mut scores: Vec<Vec<Option<FoldScore>>> = vec![vec![None; k]; configs.len()];
    let mut seconds = vec![0.0; configs.len()];
    let mut metric_of: Vec<Option<(String, bool)>> = vec![None; configs.len()];
    let mut rows: Vec<Option<SweepRow>> = vec![None; configs.len()];

    std::thread::scope(|s| {
        for _ in 0..jobs.max(1).min(tasks.len()) {
            let tx = tx.clone();
            let (tasks, next, cancel) = (&tasks, &next, cancel.clone());
            s.spawn(move || loop {
                let t = next.fetch_add(1, Ordering::Relaxed);
                if t >= tasks.len() || cancel.load(Ordering::Relaxed) {
                    break;
                }
                let (c, f) = tasks[t];
                let cfg = fold_config(&configs[c], folds, f);
                let start = Instant::now();
                let res = pipeline::run(&cfg, &mut Flag(cancel.clone()));
                let secs = start.elapsed().as_secs_f64();
                let out = match res {
                    Ok(o) => {
                        let (name, higher) = metrics::primary(o.record.task);
                        let v = o.record.metrics.test.get(name).copied().unwrap_or(f64::NAN);
                        Ok((v, name.to_string(), higher))
                    }
                    Err(OvkError::Cancelled) => break,
                    Err(e) => Err(e.to_string()),
                };
                if tx.send((c, f, out, secs)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (c, f, out, secs) in rx {
            seconds[c] += secs;
            scores[c][f] = Some(match out {
                Ok((v, name, higher)) => {
                    metric_of[c] = Some((name, higher));
                    Ok(v)
                }
                Err(e) => Err(e),
            });
            if scores[c].iter().all(|s| s.is_some()) {
                let row = make_row(c, &labels[c], &scores[c], &metric_of[c], seconds[c]);
                on_row(&row);
                rows[c] = Some(row);
            }
        }
    });

    let interrupted = cancel.load(Ordering::Relaxed) || rows.iter().any(|r| r.is_none());
    let rows: Vec<SweepRow> = rows.into_iter().flatten().collect();
    let mut result = SweepResult {
        folds,
        rows,
        best: None,
        interrupted,
    };
    result.pick_best();
    Ok(result)
}

fn make_row(
    index: usize,
    values: &BTreeMap<String, String>,
    scores: &[Option<FoldScore>],
    metric: &Option<(String, bool)>,
    seconds: f64,
) -> SweepRow {
    let error = scores.iter().find_map(|s| match s {
        Some(Err(e)) => Some(e.clone()),
        _ => None,
    });
    let fold_scores: Vec<f64> = scores
        .iter()
        .map(|s| match s {
            Some(Ok(v)) => *v,
            _ => f64::NAN,
        })
        .collect();
    let (mean, sd) = mean_sd(&fold_scores);
    let (metric, higher_is_better) = metric.clone().unwrap_or_else(|| ("-".into(), false));
    SweepRow {
        index,
        values: values.clone(),
        metric,
        higher_is_better,
        mean,
        sd,
        fold_scores,
        seconds,
        error,
        rung: None,
        train_rows: None,
    }
}

/// The best configuration of a finished sweep refitted on the whole training part (no fold),
/// named `<name>-best`, with the sweep's table in its details: what `ovk sweep` and the
/// workbench keep as the session. Each caller says which configuration it refits in its own
/// terms (the CLI's table numbers them from 0, the workbench's lists their values).
pub fn refit_best(
    configs: &[RunConfig],
    result: &SweepResult,
    obs: &mut dyn Observer,
) -> Result<super::RunOutcome> {
    match refit_best_to_end(configs, result, obs)? {
        super::Ended::Finished(o) => Ok(*o),
        super::Ended::Cancelled(_) => Err(OvkError::Cancelled),
    }
}

/// `refit_best`, keeping a cancelled refit's record (with the sweep's table in its details).
pub(crate) fn refit_best_to_end(
    configs: &[RunConfig],
    result: &SweepResult,
    obs: &mut dyn Observer,
) -> Result<super::Ended> {
    let best = result
        .best
        .ok_or_else(|| OvkError::input("no configuration of the sweep could be scored"))?;
    let mut cfg = configs
        .get(best)
        .ok_or_else(|| OvkError::internal("the sweep's best row is not in its grid"))?
        .clone();
    cfg.data.cv = None;
    cfg.name = Some(format!(
        "{}-best",
        cfg.name.clone().unwrap_or_else(|| cfg.default_name())
    ));
    let table = serde_json::to_value(result).map_err(|e| OvkError::internal(e.to_string()))?;
    let mut outcome = match pipeline::run_to_end(&cfg, obs)? {
        super::Ended::Finished(o) => o,
        super::Ended::Cancelled(mut record) => {
            record.details.insert(key::SWEEP.into(), table);
            return Ok(super::Ended::Cancelled(record));
        }
    };
    if result.folds.is_none() {
        outcome.record.optimistic = Some(crate::session::Optimistic {
            parts: vec!["test".into()],
            reason: "the configuration was chosen by its score on the test rows (a sweep \
                     without folds)"
                .into(),
        });
    }
    outcome.record.details.insert(key::SWEEP.into(), table);
    Ok(super::Ended::Finished(outcome))
}

/// `n` values from `lo` to `hi`, ends included and exactly the user's numbers, evenly spaced
/// on a log scale (`log`, both ends positive) or a linear one.
pub fn grid_values(lo: f64, hi: f64, n: usize, log: bool) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let f = i as f64 / (n.max(2) - 1) as f64;
            // The ends are the user's numbers, not exp(ln a) or a + 1·(b − a) rounded.
            let v = if i == 0 {
                lo
            } else if i == n - 1 {
                hi
            } else if log {
                (lo.ln() + f * (hi.ln() - lo.ln())).exp()
            } else {
                lo + f * (hi - lo)
            };
            v.clamp(lo.min(hi), lo.max(hi))
        })
        .collect()
}

/// Refuse to rank sessions that answer different questions together: one table ranks one
/// dataset (same file, same bytes, same columns and split), one task and one metric. A store of
/// unrelated sessions would otherwise rank an accuracy under an "mse" column.
fn check_one_problem(records: &[&crate::session::SessionRecord]) -> Result<()> {
    let mut problems: Vec<(String, String, usize)> = Vec::new();
    for r in records {
        let mut data = r.config.data.clone();
        data.cv = None;
        let (metric, _) = metrics::primary(r.task);
        let key =
            serde_json::to_string(&(&data, r.task, &r.dataset.sha256, metric)).unwrap_or_default();
        match problems.iter_mut().find(|(k, _, _)| *k == key) {
            Some(p) => p.2 += 1,
            None => {
                let file = data
                    .path
                    .file_name()
                    .map(|f| f.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let label = format!(
                    "{} ({}, {metric})",
                    crate::session::display_safe(&file),
                    r.task.name()
                );
                problems.push((key, label, 1));
            }
        }
    }
    if problems.len() > 1 {
        let each: Vec<String> = problems
            .iter()
            .map(|(_, label, n)| format!("{label}: {n} session{}", if *n == 1 { "" } else { "s" }))
            .collect();
        return Err(OvkError::input(format!(
            "the sessions are of {} different problems ({}); a sweep ranks the sessions of one \
             dataset, split and metric — collect each problem's sessions from its own directory",
            problems.len(),
            each.join("; ")
        )));
    }
    Ok(())
}

/// A session's fold, bounded as a fit bounds it (`CvFold::check`, against the training rows the
/// session itself records) before a sweep's table is sized by it: a session edited to claim
/// 10¹⁵ folds is refused, not allocated.
fn checked_fold(s: &crate::session::Loaded) -> Result<Option<CvFold>> {
    let Some(cv) = s.record.config.data.cv else {
        return Ok(None);
    };
    let split = &s.record.split;
    let rows = split.train.len().saturating_add(split.test.len());
    cv.check(rows).map_err(|why| {
        OvkError::input(format!(
            "{}: config.data.cv: {why}; the session was edited or is corrupt",
            s.dir.join("session.json").display()
        ))
    })?;
    Ok(Some(cv))
}

/// Rebuild a sweep's table from sessions written by `ovk sweep --plan` commands: sessions of
/// the same configuration (all but the fold) are one row.
pub fn collect(sessions: &[crate::session::Loaded]) -> Result<(Vec<RunConfig>, SweepResult)> {
    struct Group {
        config: RunConfig,
        scores: BTreeMap<usize, f64>,
        seconds: f64,
        folds: Option<usize>,
    }
    let folds_of = sessions
        .iter()
        .map(checked_fold)
        .collect::<Result<Vec<_>>>()?;
    let records: Vec<&crate::session::SessionRecord> = sessions.iter().map(|s| &s.record).collect();
    check_one_problem(&records)?;
    let mut groups: Vec<Group> = Vec::new();
    let mut metric: Option<(String, bool)> = None;
    for (r, cv) in records.iter().zip(folds_of) {
        let mut base = r.config.clone();
        base.data.cv = None;
        base.name = None;
        let (name, higher) = metrics::primary(r.task);
        metric = Some((name.to_string(), higher));
        let v = r.metrics.test.get(name).copied().unwrap_or(f64::NAN);
        let fold = cv.map(|c| c.fold).unwrap_or(0);
        match groups.iter_mut().find(|g| g.config == base) {
            Some(g) => {
                g.scores.insert(fold, v);
                g.seconds += r.timings.total_s;
            }
            None => groups.push(Group {
                config: base,
                scores: BTreeMap::from([(fold, v)]),
                seconds: r.timings.total_s,
                folds: cv.map(|c| c.folds),
            }),
        }
    }
    if groups.is_empty() {
        return Err(OvkError::input("no sessions to collect"));
    }
    let most = groups.iter().filter_map(|g| g.folds).max();
    check_size(groups.len(), most)?;
    let folds = groups[0].folds;
    let labels = varying(
        &groups
            .iter()
            .map(|g| settings(&g.config))
            .collect::<Vec<_>>(),
    );
    let mut rows = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let k = g.folds.unwrap_or(1);
        let scores: Vec<Option<FoldScore>> = (0..k)
            .map(|f| {
                Some(
                    g.scores
                        .get(&f)
                        .copied()
                        .ok_or_else(|| format!("fold {f} of {k} is missing")),
                )
            })
            .collect();
        rows.push(make_row(i, &labels[i], &scores, &metric, g.seconds));
    }
    let mut result = SweepResult {
        folds,
        rows,
        best: None,
        interrupted: false,
    };
    result.pick_best();
    Ok((groups.into_iter().map(|g| g.config).collect(), result))
}
