//! Minh & Sindhwani 2011, Table 1 and Figures 1–2 on their own data set, scene (1 211 training
//! and 1 196 test images of the official split), at the paper's scale: raw features in [0, 1]
//! (`--scale none`), σ = 4.3 (their median distance), ℓ = 100 labeled images per draw, the rest
//! of the training images unlabeled, γ_A = 1e-4, 5-NN input and 2-NN output graphs, 5 draws.
//! Transductive AUC on the unlabeled images, inductive on the test images.
//!
//! krr on the same labels is vvmr with γ_I = γ_O = 0 and γ_A = λ/ℓ (`vvmr_draws`), so the same
//! run gives krr's transductive figure too.

use super::data::gaussian;
use super::vvmr_draws::{krr_grid, vvmr_grid, Draws, Model};
use super::{float, Ctx, Row, Stat, Table};
use ovk_core::data::Scale;
use ovk_core::kernels::InputRank;
use ovk_core::methods::Value;
use ovk_core::Result;

/// The paper's σ: the median distance between scene's raw feature vectors.
const SIGMA: f64 = 4.3;
const GAMMA_A: f64 = 1e-4;
const LABELED: f64 = 100.0;
/// Table 1, scene, the paper's vvmr: transductive mean AUC (%).
const PAPER_AUC: f64 = 84.9;

pub fn run(ctx: &mut Ctx) -> Result<Table> {
    let quick = ctx.quick;
    let mut kernel = gaussian(Some(SIGMA));
    kernel.input_rank = InputRank::Exact;
    let scene = Draws {
        path: ctx.shared("scene.csv")?,
        name: "vvmr-scene",
        kernel,
        scale: Scale::None,
        labeled: LABELED,
        base: vec![
            ("gamma_a", float(GAMMA_A)),
            ("knn", Value::Int(5)),
            ("output_knn", Value::Int(2)),
        ],
    };
    let draws: u64 = if quick { 1 } else { 5 };
    let folds = if quick { 2 } else { 3 };
    let paper_lambda = LABELED * GAMMA_A;
    let krr = Model::krr(
        format!("krr, λ = ℓγ_A = {paper_lambda}"),
        paper_lambda,
        LABELED,
    );
    let (krr_t, krr_i) = scene.draws(ctx, &krr, draws, "krr-paper")?;
    let mut rows = Vec::new();
    let mut push = |label: &str, paper: Option<f64>, (t, i): (Stat, Stat)| {
        rows.push(Row {
            label: format!("{label}, transductive"),
            paper,
            ours: t,
            baseline: Some(krr_t),
        });
        rows.push(Row {
            label: format!("{label}, inductive"),
            paper: None,
            ours: i,
            baseline: Some(krr_i),
        });
    };
    let gi = |v: f64| ("gamma_i", float(v));
    let models = [
        Model::new("vvmr (γ_I = 1e-3, γ_O = 0.5)", &[]),
        Model::new("γ_I = 0 (vector-valued RLS)", &[gi(0.0)]),
        Model::new("γ_O = 0 (independent LapRLS)", &[("gamma_o", float(0.0))]),
    ];
    for (k, m) in models.iter().enumerate() {
        let paper = (k == 0).then_some(PAPER_AUC);
        push(
            &m.label,
            paper,
            scene.draws(ctx, m, draws, &format!("m{k}"))?,
        );
    }
    push(&krr.label, None, (krr_t, krr_i));
    // Figure 1: γ_I from 0 up, as eq. (12) prints it (ℓγ_I in eq. 17) and on Belkin's scale
    let (paper_scale, belkin_scale): (&[f64], &[f64]) = if quick {
        (&[0.1], &[100.0])
    } else {
        (&[1e-2, 0.1, 1.0], &[1.0, 10.0, 100.0, 1000.0])
    };
    for &g in paper_scale {
        let m = Model::new(format!("γ_I = {g} (eq. 12 scale)"), &[gi(g)]);
        push(
            &m.label,
            None,
            scene.draws(ctx, &m, draws, &format!("gi{g:e}"))?,
        );
    }
    for &g in belkin_scale {
        let m = Model::new(
            format!("γ_I = {g} (Belkin scale, γ_I/(u+ℓ)²)"),
            &[gi(g), ("gamma_i_scale", Value::Text("belkin".into()))],
        );
        push(
            &m.label,
            None,
            scene.draws(ctx, &m, draws, &format!("gib{g:e}"))?,
        );
    }
    // Tuned by the same CV: vvmr over γ_A × γ_I, krr over λ.
    let (ga, gis, lambdas): (&[f64], &[f64], &[f64]) = if quick {
        (&[1e-4, 1e-2], &[0.0, 1e-3], &[1e-2, 1.0])
    } else {
        (
            &[1e-5, 1e-4, 1e-3, 1e-2],
            &[0.0, 1e-3, 1e-2],
            &[1e-3, 1e-2, 0.1, 1.0, 10.0],
        )
    };
    let (vvmr_grid, krr_grid) = (vvmr_grid(ga, gis), krr_grid(lambdas, LABELED));
    let tuned_v = scene.tuned(ctx, &vvmr_grid, folds, draws, "vvmr")?;
    let tuned_k = scene.tuned(ctx, &krr_grid, folds, draws, "krr")?;
    for (method, t) in [("vvmr", &tuned_v), ("krr", &tuned_k)] {
        push(
            &format!("{method} tuned by CV ({})", t.best.label),
            None,
            (t.transductive, t.inductive),
        );
    }
    Ok(Table {
        experiment: "vvmr-scene",
        metric: format!("mean AUC over the 6 labels (%), mean ± sd over {draws} labeled draws"),
        baseline: format!("krr on the same labels, λ = ℓγ_A = {paper_lambda}"),
        rows,
        notes: vec![
            format!(
                "{}: 1211 training images (official split), ℓ = {LABELED} labeled per draw (seed \
                 = draw), the other 1111 unlabeled (transductive); the 1196 test images \
                 (inductive). Raw features in [0, 1] (--scale none), Gaussian σ = {SIGMA}, γ_A = \
                 {GAMMA_A}, 5-NN input graph (heat weights, normalised Laplacian), 2-NN output \
                 graph, exact Gram matrix.",
                scene.path.display()
            ),
            "krr = vvmr with γ_I = γ_O = 0 and γ_A = λ/ℓ (exactly kernel ridge on the labeled \
             images, λ = ℓγ_A), so both its transductive and inductive AUC are measured."
                .into(),
            "Paper: Table 1 gives 84.9 ± 2.3 (transductive, 10 draws); Figure 1 (AUC rising \
             with γ_I) and Figure 2 (γ_O) are plots without printed numbers."
                .into(),
            format!(
                "Tuning: {folds}-fold CV of the training part (draw 0's seed, {LABELED} labels \
                 among each fold's training rows, AUC on the held-out fold), the same for both. \
                 vvmr (γ_O = 0.5): {}. krr: {}.",
                tuned_v.seen.join(", "),
                tuned_k.seen.join(", ")
            ),
        ],
        sessions: Vec::new(),
        seconds: 0.0,
    })
}
