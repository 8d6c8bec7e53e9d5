//! Minh & Sindhwani 2011, Figure 2 / Table 1 protocol: semi-supervised multi-label learning,
//! ℓ labeled training points drawn at random (10 draws), the rest of the training part
//! unlabeled; mean AUC over labels on the unlabeled points (transductive) and on the official
//! test part (inductive), for the full model and its special cases γ_I = 0 (vector-valued RLS)
//! and γ_O = 0 (independent Laplacian RLS).

use ndarray::{Array2, Axis};

use super::data::{config, gaussian, linear, read_csv};
use super::{baseline_metric, float, metric, params, Ctx, Row, Stat, Table};
use crate::kernels::{InputRank, KernelSpec};
use crate::Result;

struct Set {
    name: &'static str,
    path: std::path::PathBuf,
    labeled: f64,
    kernel: KernelSpec,
}

const MODELS: [(&str, Option<(&str, f64)>); 3] = [
    ("full (γ_I = 1e-3, γ_O = 0.5)", None),
    ("γ_I = 0 (vector-valued RLS)", Some(("gamma_i", 0.0))),
    ("γ_O = 0 (independent LapRLS)", Some(("gamma_o", 0.0))),
];

/// emotions with its official split (rows 0–390 train, 391–592 test) as an `is_test` column.
fn emotions(ctx: &Ctx) -> Result<std::path::PathBuf> {
    let src = ctx.bundled("emotions.csv")?;
    let csv = read_csv(&src, None)?;
    let n = csv.rows.nrows();
    let flag = Array2::from_shape_fn((n, 1), |(i, _)| if i >= 391 { 1.0 } else { 0.0 });
    let rows = ndarray::concatenate(Axis(1), &[csv.rows.view(), flag.view()])
        .map_err(|e| crate::OvkError::internal(e.to_string()))?;
    let mut header = csv.header.clone();
    header.push("is_test".into());
    let out = ctx.work_file("emotions-split.csv")?;
    super::data::write_csv(&out, &header, &rows)?;
    Ok(out)
}

pub fn run(ctx: &mut Ctx) -> Result<Table> {
    let draws: u64 = if ctx.quick { 2 } else { 10 };
    let mut sets = vec![Set {
        name: "emotions",
        path: emotions(ctx)?,
        labeled: if ctx.quick { 40.0 } else { 100.0 },
        kernel: gaussian(None),
    }];
    let mut notes = vec![
        format!(
            "emotions: 391 training songs (official split), ℓ = {} labeled per draw, the rest \
             unlabeled (transductive); the 202 test songs (inductive). Gaussian kernel at the \
             median σ, standard scaling, default graphs (10-NN heat weights, normalised \
             Laplacian; 3-NN output graph), γ_A = 1e-2.",
            sets[0].labeled
        ),
        "Paper: their data sets (scene, yeast-like, RCV1) are not these; the paper column is empty."
            .to_string(),
    ];
    if !ctx.quick {
        match ctx.shared("tmc2007.csv") {
            Ok(path) => {
                let mut kernel = linear();
                kernel.input_rank = InputRank::Rank(1000);
                sets.push(Set {
                    name: "tmc2007",
                    path,
                    labeled: 500.0,
                    kernel,
                });
            }
            Err(e) => notes.push(format!("tmc2007 skipped: {e}")),
        }
    }
    let mut rows = Vec::new();
    for set in &sets {
        let mut results = Vec::new();
        let mut failed = None;
        'models: for (label, change) in MODELS {
            let (mut trans, mut induc, mut base) = (Vec::new(), Vec::new(), Vec::new());
            for d in 0..draws {
                let mut p = params(&[]);
                if let Some((k, v)) = change {
                    p.set(k, float(v));
                }
                let tag = change.map_or("full".to_string(), |(k, _)| format!("{k}0"));
                let mut c = config(
                    set.path.clone(),
                    "vvmr",
                    set.kernel.clone(),
                    p,
                    format!("paper-vvmr-{}-{tag}-draw{d}", set.name),
                );
                c.data.targets = Some(vec!["label_*".into()]);
                c.data.test_column = Some("is_test".into());
                c.data.labeled = Some(set.labeled);
                c.data.seed = d;
                let r = match ctx.fit(c) {
                    Ok(o) => o.record,
                    Err(e @ crate::OvkError::Cancelled) => return Err(e),
                    Err(e) if set.name != "emotions" => {
                        failed = Some(e.to_string());
                        break 'models;
                    }
                    Err(e) => return Err(e),
                };
                trans.push(100.0 * metric(&r, "unlabeled", "mean_auc")?);
                induc.push(100.0 * metric(&r, "test", "mean_auc")?);
                base.push(100.0 * baseline_metric(&r, "mean_auc")?);
            }
            results.push((label, trans, induc, base));
        }
        if let Some(e) = failed {
            notes.push(format!(
                "{}: cannot run yet on main — {e} (vvmr's low-rank route is being built on \
                 branch lowrank2; this experiment passes --input-rank 1000 and a linear kernel)",
                set.name
            ));
            continue;
        }
        for (label, trans, induc, base) in results {
            rows.push(Row {
                label: format!("{} {label}, transductive", set.name),
                paper: None,
                ours: Stat::of(&trans),
                baseline: None,
            });
            rows.push(Row {
                label: format!("{} {label}, inductive", set.name),
                paper: None,
                ours: Stat::of(&induc),
                baseline: Some(Stat::of(&base)),
            });
        }
    }
    Ok(Table {
        experiment: "vvmr-multilabel",
        metric: format!("mean AUC over labels (%), mean ± sd over {draws} labeled draws"),
        baseline: "krr on the labeled points only (inductive)".into(),
        rows,
        notes,
        sessions: Vec::new(),
        seconds: 0.0,
    })
}
