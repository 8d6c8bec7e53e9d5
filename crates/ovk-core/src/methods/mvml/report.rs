//! Step 5: what a fit saves — the learned metric of every output (A, or the paper's reduced
//! `Ã = Nᵀ A N` with Nyström), view weights and block norms, each with its axes labelled by
//! view (`details.axes`: matrix name → `{"rows": AXIS, "cols": AXIS}`, AXIS either
//! `{"labels": [...]}` or `{"blocks": [{"name", "size"}, ...]}`), and each view's σ.

use ndarray::{s, Array2};
use serde_json::{json, Map, Value as Json};

use std::collections::BTreeMap;

use super::{NystromChoice, Run, Setup, Views, MAX_SAVED_SIDE};
use crate::kernels::Kernel;
use crate::methods::details::{axes_json, key, AxisBlock, DeclaredAxis, MatrixAxes};
use crate::methods::{Fit, Problem};

/// The paper's `Ã_lm = N_lᵀ A_lm N_m = (X_l Σ_l) Â_lm (X_m Σ_m)ᵀ` from Â in eigen-coordinates.
fn reduced(a: &Array2<f64>, back: &[Array2<f64>]) -> Array2<f64> {
    let v = back.len();
    let r = a.nrows() / v.max(1);
    let mut out = Array2::zeros(a.raw_dim());
    for l in 0..v {
        for m in 0..v {
            let blk = a.slice(s![l * r..(l + 1) * r, m * r..(m + 1) * r]);
            let b = back[l].dot(&blk).dot(&back[m].t());
            out.slice_mut(s![l * r..(l + 1) * r, m * r..(m + 1) * r])
                .assign(&b);
        }
    }
    out
}

fn nested(a: &Array2<f64>) -> Json {
    Json::Array(a.rows().into_iter().map(|r| json!(r.to_vec())).collect())
}

fn sigma_of(k: &Kernel) -> Json {
    match k {
        Kernel::Gaussian { sigma } | Kernel::Laplacian { sigma } => json!(sigma),
        _ => Json::Null,
    }
}

/// Why the metric is missing from the session, and the Nyström fraction that would keep it:
/// the one giving `⌊MAX_SAVED_SIDE / v⌋` landmarks per view.
fn unsaved_metric_note(v: usize, r: usize, n: usize, saved: usize, n_out: usize) -> String {
    let per_view = MAX_SAVED_SIDE / v.max(1);
    let keeps = NystromChoice::landmarks(per_view, n);
    format!(
        "the {s}×{s} metric was saved for {saved} of {n_out} outputs: over the \
         {max}×{max} limit of a saved matrix; `--nystrom {}` or less ({per_view} landmarks \
         per view) keeps it. Block norms are saved for every output",
        keeps.shown(n),
        s = v * r,
        max = MAX_SAVED_SIDE,
    )
}

pub(crate) fn save(
    fit: &mut Fit,
    p: &Problem,
    setup: &Setup,
    views: &Views,
    run: Run,
    notes: &mut Vec<String>,
) {
    let f = &views.features;
    let v = f.n_views();
    let r = f.r();
    let n_out = run.g.len();
    let names: Vec<String> = p.views.iter().map(|vw| vw.name.clone()).collect();
    let out_names: Vec<String> = (0..n_out)
        .map(|k| {
            p.output_names
                .get(k)
                .cloned()
                .unwrap_or_else(|| format!("output {k}"))
        })
        .collect();
    let view_labels = DeclaredAxis::labels(names.clone());
    let blocks = DeclaredAxis::blocks(
        names
            .iter()
            .map(|n| AxisBlock {
                name: n.clone(),
                size: r,
            })
            .collect(),
    );
    let square = |a: &DeclaredAxis| MatrixAxes {
        rows: Some(a.clone()),
        cols: Some(a.clone()),
    };
    let mut axes = BTreeMap::new();

    let mut saved = 0;
    // moved, not copied: ten outputs' vp×vp metrics at n = 3200, 25 % are 200 MB
    for (k, a) in run.metric.into_iter().enumerate() {
        let Some(a) = a else { continue };
        let a = match (&f.back, run.metric_reduced) {
            (Some(back), false) => reduced(&a, back),
            _ => a,
        };
        let name = if k == 0 {
            "metric".to_string()
        } else {
            format!("metric_{k}")
        };
        axes.insert(name.clone(), square(&blocks));
        fit.matrices.push((name, a));
        saved += 1;
    }
    if saved < n_out {
        notes.push(unsaved_metric_note(v, r, f.n(), saved, n_out));
    }
    let mut weights = Array2::zeros((v, n_out));
    for (k, w) in run.w.iter().enumerate() {
        weights.column_mut(k).assign(w);
    }
    let mean_norms = run
        .block_norms
        .iter()
        .fold(Array2::zeros((v, v)), |a, b| a + b)
        / n_out.max(1) as f64;
    fit.matrices.push(("view_weights".into(), weights));
    axes.insert(
        "view_weights".into(),
        MatrixAxes {
            rows: Some(view_labels.clone()),
            cols: Some(DeclaredAxis::labels(out_names)),
        },
    );
    fit.matrices
        .push(("block_norms".into(), mean_norms.clone()));
    axes.insert("block_norms".into(), square(&view_labels));
    if n_out > 1 {
        // Which matrix is whose — 'metric' only where one was saved (the note above says why
        // none may be).
        let metrics = if saved > 0 {
            "'metric' is output 0's ('metric_k' output k's), "
        } else {
            ""
        };
        notes.push(format!(
            "{n_out} outputs fitted independently, each with its own metric A and weights w; \
             {metrics}'block_norms' the average over outputs"
        ));
    }

    let d = &mut fit.details;
    d.insert(key::VIEWS.into(), json!(names));
    d.insert("view_names".into(), json!(names));
    let sigmas: Map<String, Json> = names
        .iter()
        .zip(&views.kernels)
        .map(|(n, k)| (n.clone(), sigma_of(k)))
        .collect();
    d.insert(key::VIEW_SIGMAS.into(), Json::Object(sigmas));
    d.insert(
        key::VIEW_KERNELS.into(),
        Json::Array(views.kernels.iter().map(|k| json!(k.to_string())).collect()),
    );
    d.insert(key::AXES.into(), axes_json(&axes));
    d.insert("block_norms".into(), nested(&mean_norms));
    d.insert(
        "block_norms_per_output".into(),
        Json::Array(run.block_norms.iter().map(nested).collect()),
    );
    d.insert(
        "view_weights".into(),
        Json::Array(run.w.iter().map(|w| json!(w.to_vec())).collect()),
    );
    d.insert(
        "nystrom".into(),
        match &views.landmarks {
            None => Json::Null,
            Some(idx) => json!({
                "fraction": setup.fraction,
                "p": idx.len(),
                "ranks": views.factors.iter().map(|f| f.rank).collect::<Vec<_>>(),
            }),
        },
    );
    d.insert(
        "metric_space".into(),
        json!(if setup.cfg.root() {
            "root: Ψ_lΨ_lᵀ = K_l (the paper's Ã)"
        } else {
            "gram: Ψ_lΨ_lᵀ = K_l²"
        }),
    );
    d.insert("a_step".into(), json!(run.route));
    d.insert("step_halvings".into(), json!(run.rounds.halvings));
    d.insert("condition_caps".into(), json!(run.caps));
    d.insert("final_step".into(), json!(run.rounds.last_step));
    d.insert("first_order_residual".into(), json!(run.first_order));
    d.insert(
        "outputs".into(),
        json!("independent: one metric A and weights w per output column"),
    );
    d.insert("rank_one_terms".into(), json!(run.terms));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fraction the note proposes, read back from its text.
    fn proposed(note: &str) -> f64 {
        let after = note
            .split("`--nystrom ")
            .nth(1)
            .expect("a proposed fraction");
        after.split('`').next().unwrap().parse().unwrap()
    }

    #[test]
    fn the_proposed_fraction_keeps_the_metric_and_is_near_the_largest_that_does() {
        for v in [1, 2, 3, 6] {
            for n in [2100, 3000, 7291, 16_000, 100_000, 1_000_000] {
                let f = proposed(&unsaved_metric_note(v, n, n, 0, 10));
                // the landmark count `view_features` takes from that fraction
                let p = (f * n as f64).floor() as usize;
                assert!(
                    v * p <= MAX_SAVED_SIDE,
                    "v {v} n {n}: {f} gives {p} per view"
                );
                assert!(
                    v * p * 10 >= MAX_SAVED_SIDE * 9,
                    "v {v} n {n}: {f} is far too small"
                );
            }
        }
    }
}
