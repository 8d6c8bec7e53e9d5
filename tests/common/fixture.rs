//! A hand-built session record and a private store directory for the session tests.

use std::collections::BTreeMap;
use std::path::PathBuf;

use ovk_core::data::{DataConfig, DatasetInfo, Scale, Task};
use ovk_core::kernels::{Kernel, KernelSpec};
use ovk_core::methods::{MethodName, Params, TraceRecord, Value};
use ovk_core::session::{KernelRecord, Metrics, SessionRecord, Split, Store, Timings, SCHEMA};
use ovk_core::train::RunConfig;

/// A fresh, empty store under the temp directory, unique to this process and test.
pub fn temp_store(name: &str) -> (PathBuf, Store) {
    let dir = std::env::temp_dir().join(format!("ovk-store-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Store::open(Some(&dir)).expect("open store");
    (dir, store)
}

/// A multi-label session with 3 outputs, 6 training and 2 test rows.
pub fn record(name: &str, created: &str, trace_len: usize) -> SessionRecord {
    let metric = |pairs: &[(&str, f64)]| {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), *v))
            .collect::<BTreeMap<_, _>>()
    };
    let trace = (0..trace_len)
        .map(|i| TraceRecord {
            iter: i,
            objective: 10.0 / (i + 1) as f64,
            residual: Some(0.5f64.powi(i as i32)),
            lambda: Some(0.1),
            val_metric: Some(0.7),
            elapsed_ms: i as f64 * 1.5,
            ..Default::default()
        })
        .collect();
    let params = Params::new()
        .with("lambda", Value::Float(0.1))
        .with("max_iter", Value::Int(50));
    SessionRecord {
        schema: SCHEMA.to_string(),
        id: String::new(),
        name: name.to_string(),
        created: created.to_string(),
        ovk_version: "0.1.0".to_string(),
        dataset: DatasetInfo {
            path: PathBuf::from("/data/yeast.csv"),
            absolute_path: None,
            size: None,
            sha256: "ab".repeat(32),
            rows: 8,
            features: vec!["f0".into(), "f1".into()],
            targets: vec!["l0".into(), "l1".into(), "l2".into()],
            packed_width: None,
        },
        task: Task::Multilabel,
        method: "okl".to_string(),
        kernel: KernelRecord {
            spec: KernelSpec::default(),
            resolved: Kernel::Gaussian { sigma: 1.25 },
        },
        params: params.clone(),
        scale: Scale::Standard,
        split: Split {
            seed: 7,
            test_fraction: 0.25,
            train: (0..6).collect(),
            test: vec![6, 7],
            labeled: None,
            unlabeled: None,
            id: None,
            folds: None,
        },
        feature_names: vec!["f0".into(), "f1".into()],
        output_names: vec!["l0".into(), "l1".into(), "l2".into()],
        trace,
        iterations: trace_len,
        converged: true,
        objective: Some(1.5),
        metrics: Metrics {
            train: metric(&[("mean_auc", 0.95), ("hamming", 0.1), ("mse", 0.2)]),
            test: metric(&[("mean_auc", 0.8), ("hamming", 0.25), ("mse", 0.4)]),
            unlabeled: None,
        },
        baseline: Some(Metrics {
            train: metric(&[("mean_auc", 0.9)]),
            test: metric(&[("mean_auc", 0.75)]),
            unlabeled: None,
        }),
        timings: Timings {
            load_s: 0.01,
            fit_s: 0.5,
            predict_s: 0.02,
            total_s: 0.53,
        },
        matrices: BTreeMap::new(),
        details: serde_json::Map::new(),
        notes: vec!["step halved twice".to_string()],
        config: RunConfig {
            data: DataConfig::new("/data/yeast.csv"),
            method: MethodName::Okl,
            kernel: KernelSpec::default(),
            params,
            name: Some(name.to_string()),
            cv: None,
            select_on: Default::default(),
        },
        model: None,
        status: Default::default(),
        kept: true,
        optimistic: None,
        cv: None,
        cv_baseline: None,
    }
}
