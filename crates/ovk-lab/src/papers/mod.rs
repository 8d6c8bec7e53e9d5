//! The papers' experiments, each end to end on the paper's protocol and through the product's
//! own path (a `RunConfig` per configuration, `train::run`, a session saved per fit), summed up
//! as one table: the paper's figure, ours, and the baseline (L = I, the identity kernel, a
//! single view). `ovk paper NAME` is the face; docs/papers.md holds the full runs' tables.

mod data;
mod kde_ocr;
mod kde_usps;
mod lowrank;
mod mvml_uwave;
mod mvml_views;
mod okl_sim;
mod okl_usps;
mod vvmr_draws;
mod vvmr_multilabel;
mod vvmr_scene;
mod vvmr_tuned;

use std::path::{Path, PathBuf};
use std::time::Instant;

use ovk_core::methods::{check_cancel, Observer, Params, Value};
use ovk_core::session::{SessionRecord, Store};
use ovk_core::train::{self as engine, RunConfig, RunOutcome};
use ovk_core::{OvkError, Result};

/// One experiment of one paper.
pub struct Experiment {
    pub name: &'static str,
    /// Paper and section.
    pub source: &'static str,
    pub summary: &'static str,
    run: fn(&mut Ctx) -> Result<Table>,
}

/// Every experiment, in the order of docs/papers.md.
pub const EXPERIMENTS: &[Experiment] = &[
    Experiment {
        name: "okl-sim",
        source: "Dinuzzo, Ong, Gehler, Pillonetto, ICML 2011, §5.1 (Figure 2)",
        summary: "sim0–sim3 Gaussian mixtures, 5 % training, linear kernel, 20 splits: accuracy of learned L vs L = I",
        run: okl_sim::run,
    },
    Experiment {
        name: "okl-usps",
        source: "Dinuzzo et al., ICML 2011, §5.2.1 (Figure 3a)",
        summary: "USPS standard split 7291/2007, Gaussian kernel: accuracy vs their 96.5 %, top-10 similarities of L",
        run: okl_usps::run,
    },
    Experiment {
        name: "okl-usps-tuned",
        source: "Dinuzzo et al., ICML 2011, §5.2.1",
        summary: "USPS standard split: σ and λ by validation (as a user would tune them) for OKL and L = I apart, then exact fits",
        run: okl_usps::tuned,
    },
    Experiment {
        name: "lowrank-exp1",
        source: "Dinuzzo & Fukumizu, ACML 2011, §6, experiment 1",
        summary: "gp-mix, m = 200 outputs, 100/100: validation MSE vs rank p, against L = I and full rank",
        run: lowrank::exp1,
    },
    Experiment {
        name: "lowrank-exp2",
        source: "Dinuzzo & Fukumizu, ACML 2011, §6, experiment 2",
        summary: "gp-mix, m = 100 000 outputs, p = 50, 25 λ: wall time vs their 45 s, validation MSE vs L = I",
        run: lowrank::exp2,
    },
    Experiment {
        name: "kde-usps",
        source: "Kadri, Ghavamzadeh, Preux, ICML 2013, Table 2 (left)",
        summary: "USPS top half → bottom half, first 1000 digits, 5 folds of 200 training: RBF loss of the three operator kernels",
        run: kde_usps::run,
    },
    Experiment {
        name: "kde-ocr",
        source: "Kadri, Ghavamzadeh, Preux, ICML 2013, Table 2 (right)",
        summary: "OCR words (Taskar), train on one fold, test on the other nine, cubic polynomial kernel, 26·p one-hot outputs: % letters recognised",
        run: kde_ocr::run,
    },
    Experiment {
        name: "vvmr-multilabel",
        source: "Minh & Sindhwani, ICML 2011, Figure 2 / Table 1 protocol",
        summary: "emotions and tmc2007: transductive and inductive mean AUC over 10 labeled draws, full model vs γ_I = 0 and γ_O = 0",
        run: vvmr_multilabel::run,
    },
    Experiment {
        name: "vvmr-scene",
        source: "Minh & Sindhwani, ICML 2011, Table 1 and Figures 1–2 (scene)",
        summary: "scene at the paper's scale (raw features, σ 4.3, 100 labels, 5 draws): transductive and inductive AUC, ablations, γ_I scales, krr at the paper's λ and tuned",
        run: vvmr_scene::run,
    },
    Experiment {
        name: "vvmr-tuned",
        source: "Minh & Sindhwani, ICML 2011, Table 1 protocol (emotions, tmc2007)",
        summary: "emotions and tmc2007: vvmr's (γ_A, γ_I) and krr's λ by the same 3-fold CV, then transductive and inductive AUC over 5 labeled draws",
        run: vvmr_tuned::run,
    },
    Experiment {
        name: "mvml-views",
        source: "Huusari, Kadri, Capponi, Table 1 protocol",
        summary: "mfeat (6 views, 0–4 vs 5–9): MVML, MVML-sparse, MVML_Cov, MVML_I and single views at Nyström 6/12/24 %, 4 samples",
        run: mvml_views::run,
    },
    Experiment {
        name: "mvml-uwave",
        source: "Huusari, Kadri, Capponi, Table 1 (uWaveGesture)",
        summary: "uWaveGesture training split (3 views, 8 classes), 5-fold CV: MVML variants at Nyström 6/12/24 %, OKL, one view",
        run: mvml_uwave::run,
    },
];

pub fn find(name: &str) -> Result<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = EXPERIMENTS.iter().map(|e| e.name).collect();
        OvkError::input(format!(
            "no experiment '{name}' (try: {}; `ovk paper --list` describes them)",
            names.join(", ")
        ))
    })
}

/// Mean and sample standard deviation (None for one value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub mean: f64,
    pub sd: Option<f64>,
}

impl Stat {
    pub fn one(v: f64) -> Self {
        Stat { mean: v, sd: None }
    }
    pub fn of(values: &[f64]) -> Self {
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let sd = (values.len() > 1)
            .then(|| (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
        Stat { mean, sd }
    }
    pub fn is_finite(&self) -> bool {
        self.mean.is_finite() && self.sd.is_none_or(f64::is_finite)
    }
}

/// One configuration: the paper's figure (when it reports one), ours, the baseline's.
#[derive(Debug, Clone)]
pub struct Row {
    pub label: String,
    pub paper: Option<f64>,
    pub ours: Stat,
    pub baseline: Option<Stat>,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub experiment: &'static str,
    /// What the figures are (e.g. "test accuracy (%)").
    pub metric: String,
    /// What the baseline column is.
    pub baseline: String,
    pub rows: Vec<Row>,
    /// Protocol choices and differences from the paper, one line each.
    pub notes: Vec<String>,
    /// Ids of the sessions saved, one per fit.
    pub sessions: Vec<String>,
    pub seconds: f64,
}

/// What an experiment runs with.
pub struct Ctx<'a> {
    pub quick: bool,
    /// `--data`: a file or a folder holding the large sets.
    pub data: Option<PathBuf>,
    store: &'a Store,
    /// Where generated and derived tables are written (beside the store).
    pub work: PathBuf,
    obs: &'a mut dyn Observer,
    sessions: Vec<String>,
}

impl<'a> Ctx<'a> {
    /// Fit `cfg` through the pipeline and save its session.
    pub fn fit(&mut self, cfg: RunConfig) -> Result<RunOutcome> {
        cfg.validate()?;
        let label = cfg.name.clone().unwrap_or_else(|| cfg.default_name());
        self.obs.note(&format!("fit {label}"));
        let outcome = engine::run(&cfg, self.obs)?;
        check_cancel(self.obs)?;
        let dir = self.store.save(&outcome.record, &outcome.matrices)?;
        self.sessions.push(
            dir.file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        Ok(outcome)
    }

    /// A large data set: `--data` (the file, or `name` inside the folder), else
    /// `$OVK_SHARED_DATA/name`, else `../shared/datasets/name`, else the bundled `datasets/name`.
    pub fn shared(&self, name: &str) -> Result<PathBuf> {
        let mut tried = Vec::new();
        if let Some(d) = &self.data {
            let p = if d.is_dir() { d.join(name) } else { d.clone() };
            if p.is_file() {
                return Ok(p);
            }
            return Err(OvkError::input(format!(
                "--data {}: no {name} there (it is in the shared datasets: ../shared/datasets/{name})",
                d.display()
            )));
        }
        tried.extend(
            crate::datasets::shared_dirs()
                .into_iter()
                .map(|d| d.join(name)),
        );
        tried.push(Path::new("datasets").join(name));
        tried.into_iter().find(|p| p.is_file()).ok_or_else(|| {
            OvkError::input(format!(
                "{name} not found in $OVK_SHARED_DATA, ../shared/datasets or datasets/: pass \
                 --data PATH (the file, or the folder holding it; see datasets/README.md)"
            ))
        })
    }

    /// A bundled data set (`datasets/name`).
    pub fn bundled(&self, name: &str) -> Result<PathBuf> {
        if let Some(p) = crate::datasets::bundled(name) {
            return Ok(p);
        }
        Err(OvkError::input(format!(
            "datasets/{name} not found: run ovk paper from the repository root, or pass --data"
        )))
    }

    /// A file in this experiment's work folder (created when absent).
    pub fn work_file(&self, name: &str) -> Result<PathBuf> {
        std::fs::create_dir_all(&self.work)
            .map_err(|e| OvkError::io(format!("creating {}", self.work.display()), e))?;
        Ok(self.work.join(name))
    }

    pub fn note(&mut self, msg: &str) {
        self.obs.note(msg);
    }
}

/// Run `exp`, saving its sessions in `store` and its generated tables beside it.
pub fn run(
    exp: &Experiment,
    quick: bool,
    data: Option<PathBuf>,
    store: &Store,
    obs: &mut dyn Observer,
) -> Result<Table> {
    // Absolute, so that a relative store ("--sessions s") does not put the tables in the
    // working directory.
    let root = std::fs::canonicalize(store.root())
        .map_err(|e| OvkError::io(format!("reading {}", store.root().display()), e))?;
    let parent = root.parent().unwrap_or(&root);
    let work = parent.join("paper-data").join(exp.name);
    obs.note(&format!(
        "the experiment's generated data go to {}",
        work.display()
    ));
    let t0 = Instant::now();
    let mut ctx = Ctx {
        quick,
        data,
        store,
        work,
        obs,
        sessions: Vec::new(),
    };
    let mut table = (exp.run)(&mut ctx)?;
    table.sessions = std::mem::take(&mut ctx.sessions);
    table.seconds = t0.elapsed().as_secs_f64();
    if quick {
        table.notes.insert(
            0,
            "QUICK run: a reduced protocol for tests, not the paper's".into(),
        );
    }
    Ok(table)
}

/// A metric of a part ("train", "test", "unlabeled") of a record.
pub fn metric(r: &SessionRecord, part: &str, key: &str) -> Result<f64> {
    let map = match part {
        "train" => Some(&r.metrics.train),
        "test" => Some(&r.metrics.test),
        _ => r.metrics.unlabeled.as_ref(),
    };
    map.and_then(|m| m.get(key).copied())
        .ok_or_else(|| OvkError::internal(format!("session {}: no {part} metric {key}", r.id)))
}

/// The krr baseline's test metric the pipeline records beside every run.
pub fn baseline_metric(r: &SessionRecord, key: &str) -> Result<f64> {
    r.baseline
        .as_ref()
        .and_then(|b| b.test.get(key).copied())
        .ok_or_else(|| OvkError::internal(format!("session {}: no baseline {key}", r.id)))
}

pub fn float(v: f64) -> Value {
    Value::Float(v)
}

pub fn params(items: &[(&str, Value)]) -> Params {
    let mut p = Params::new();
    for (k, v) in items {
        p.set(k, v.clone());
    }
    p
}
