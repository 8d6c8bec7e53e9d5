//! `--cv K`: a configuration estimated by K-fold cross-validation on the training part — the
//! stages run on each fold (training on K − 1 folds, scoring the held-out one), then once on
//! the whole training part, scored once on the test rows. The test rows are in no fold.

use super::{run_once, Ended};
use crate::data::CvFold;
use crate::methods::{Observer, Phase, TraceRecord};
use crate::metrics;
use crate::session::{fingerprint, CvEstimate, CvStat, FoldAssignment, MetricMap};
use crate::train::RunConfig;
use crate::Result;

/// The folds, then the final fit; the record carries the folds' estimates.
pub(super) fn run_cv(config: &RunConfig, k: usize, obs: &mut dyn Observer) -> Result<Ended> {
    let mut method_scores: Vec<MetricMap> = Vec::with_capacity(k);
    let mut baseline_scores: Vec<Option<MetricMap>> = Vec::with_capacity(k);
    let mut held_out: Vec<Vec<usize>> = Vec::with_capacity(k);
    for fold in 0..k {
        obs.note(&format!("cross-validation: fold {} of {k}", fold + 1));
        let mut c = config.clone();
        c.cv = None;
        c.data.cv = Some(CvFold { folds: k, fold });
        match run_once(&c, &mut FoldObserver(obs))? {
            Ended::Finished(o) => {
                method_scores.push(o.record.metrics.test);
                baseline_scores.push(o.record.baseline.map(|b| b.test));
                held_out.push(o.record.split.test);
            }
            Ended::Cancelled(mut r) => {
                r.config = config.clone();
                r.notes.push(format!(
                    "cancelled during fold {} of {k} of the cross-validation",
                    fold + 1
                ));
                return Ok(Ended::Cancelled(r));
            }
        }
    }
    let mut c = config.clone();
    c.cv = None;
    let ended = run_once(&c, obs)?;
    let Ended::Finished(mut outcome) = ended else {
        return Ok(ended);
    };
    let r = &mut outcome.record;
    r.config = config.clone();
    r.split.folds = Some(FoldAssignment {
        k,
        seed: config.data.seed,
        id: fingerprint(&(&r.dataset.sha256, &held_out)),
    });
    let estimate = estimate(&method_scores);
    let (key, _) = metrics::primary(r.task);
    if let Some(s) = estimate.get(key) {
        r.notes.push(format!(
            "{k}-fold cross-validation on the {} training rows: {key} {:.4} ± {:.4} (mean ± sd \
             over the folds); the test metrics are the final fit's on all training rows",
            r.split.train.len(),
            s.mean,
            s.sd
        ));
    }
    r.cv = Some(estimate);
    if baseline_scores.iter().all(Option::is_some) && !baseline_scores.is_empty() {
        let b: Vec<MetricMap> = baseline_scores.into_iter().flatten().collect();
        r.cv_baseline = Some(self::estimate(&b));
    }
    Ok(Ended::Finished(outcome))
}

/// Per metric, mean and sample standard deviation over the folds (NaN where a fold lacks it).
pub fn estimate(folds: &[MetricMap]) -> CvEstimate {
    let mut names: Vec<&String> = folds.iter().flat_map(|m| m.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| {
            let values: Vec<f64> = folds
                .iter()
                .map(|m| m.get(name).copied().unwrap_or(f64::NAN))
                .collect();
            let (mean, sd) = mean_sd(&values);
            (
                name.clone(),
                CvStat {
                    mean,
                    sd,
                    folds: values,
                },
            )
        })
        .collect()
}

/// Mean and sample standard deviation (n − 1; 0 for one value).
pub fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// A fold's progress reaches the face as phases and steps; its trace, notes and records do
/// not (the final fit's are the run's).
struct FoldObserver<'a>(&'a mut dyn Observer);

impl Observer for FoldObserver<'_> {
    fn phase(&mut self, phase: Phase, total: Option<usize>) {
        self.0.phase(phase, total);
    }
    fn record(&mut self, _rec: &TraceRecord) {}
    fn step(&mut self, done: usize, total: usize) {
        self.0.step(done, total);
    }
    fn estimate(&mut self, phases: &[(Phase, f64)]) {
        self.0.estimate(phases);
    }
    fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }
}
