//! Minh & Sindhwani 2011's semi-supervised protocol, shared by vvmr-scene and vvmr-tmc2007-tuned:
//! ℓ labeled training rows drawn at random (seed = draw), the rest of the training part
//! unlabeled; transductive AUC on the unlabeled rows, inductive on the test part; and the tuning
//! of vvmr and krr by one K-fold CV of the training part, so that the two meet on equal terms.
//!
//! krr on the same labels is vvmr with γ_I = γ_O = 0 and γ_A = λ/ℓ: problem (12) becomes
//! `(1/ℓ) Σ ‖f(xᵢ) − yᵢ‖² + γ_A ‖f‖²`, whose eq. (17) is `(J G) A + ℓγ_A A = Y` — the unlabeled
//! rows of A are 0 and the labeled ones solve `(K + λI) A = Y`, kernel ridge with λ = ℓγ_A — so
//! the same run gives krr's transductive figure too, on the same input kernel (exact or Nyström).

use super::data::config;
use super::{float, metric, params, Ctx, Stat};
use ovk_core::data::{CvFold, Scale};
use ovk_core::kernels::KernelSpec;
use ovk_core::methods::{MethodName, Params, Value};
use ovk_core::Result;

/// A configuration: its label and vvmr's parameters over the protocol's.
pub(super) struct Model {
    pub label: String,
    set: Vec<(&'static str, Value)>,
}

impl Model {
    pub fn new(label: impl Into<String>, set: &[(&'static str, Value)]) -> Self {
        Model {
            label: label.into(),
            set: set.to_vec(),
        }
    }

    /// krr with λ = ℓγ_A on `labeled` labels (see the module's comment).
    pub fn krr(label: impl Into<String>, lambda: f64, labeled: f64) -> Self {
        Model::new(
            label,
            &[
                ("gamma_i", float(0.0)),
                ("gamma_o", float(0.0)),
                ("gamma_a", float(lambda / labeled)),
            ],
        )
    }
}

/// vvmr over γ_A × γ_I (γ_O the protocol's), labelled "γ_A a γ_I g".
pub(super) fn vvmr_grid(gamma_a: &[f64], gamma_i: &[f64]) -> Vec<Model> {
    gamma_a
        .iter()
        .flat_map(|&a| {
            gamma_i.iter().map(move |&g| {
                Model::new(
                    format!("γ_A {a:e} γ_I {g:e}"),
                    &[("gamma_a", float(a)), ("gamma_i", float(g))],
                )
            })
        })
        .collect()
}

/// krr over λ on `labeled` labels, labelled "λ l".
pub(super) fn krr_grid(lambdas: &[f64], labeled: f64) -> Vec<Model> {
    lambdas
        .iter()
        .map(|&l| Model::krr(format!("λ {l:e}"), l, labeled))
        .collect()
}

/// The protocol: a table with `label_*` targets and an `is_test` column, its input kernel,
/// scaling, ℓ and vvmr's parameters before a model's own.
pub(super) struct Draws {
    pub path: std::path::PathBuf,
    /// Sessions are named `paper-{name}-{tag}`.
    pub name: &'static str,
    pub kernel: KernelSpec,
    pub scale: Scale,
    pub labeled: f64,
    pub base: Vec<(&'static str, Value)>,
}

/// One method tuned by the CV, then run on the draws.
pub(super) struct Tuned<'a> {
    pub best: &'a Model,
    /// Every grid point's mean validation AUC, "label auc".
    pub seen: Vec<String>,
    pub transductive: Stat,
    pub inductive: Stat,
}

impl Draws {
    fn params(&self, m: &Model) -> Params {
        let mut p = params(&self.base);
        for (k, v) in &m.set {
            p.set(k, v.clone());
        }
        p
    }

    /// (transductive, inductive) mean AUC (%) of `m` on draw `seed`, or on a CV fold of it.
    pub fn fit(
        &self,
        ctx: &mut Ctx,
        m: &Model,
        seed: u64,
        cv: Option<CvFold>,
        tag: &str,
    ) -> Result<(f64, f64)> {
        let mut c = config(
            self.path.clone(),
            MethodName::Vvmr,
            self.kernel.clone(),
            self.params(m),
            format!("paper-{}-{tag}", self.name),
        );
        c.data.targets = Some(vec!["label_*".into()]);
        c.data.test_column = Some("is_test".into());
        c.data.labeled = Some(self.labeled);
        c.data.scale = self.scale;
        c.data.seed = seed;
        c.data.cv = cv;
        let r = ctx.fit(c)?.record;
        Ok((
            100.0 * metric(&r, "unlabeled", "mean_auc")?,
            100.0 * metric(&r, "test", "mean_auc")?,
        ))
    }

    /// (transductive, inductive) over draws 0..`draws`.
    pub fn draws(&self, ctx: &mut Ctx, m: &Model, draws: u64, tag: &str) -> Result<(Stat, Stat)> {
        let (mut t, mut i) = (Vec::new(), Vec::new());
        for d in 0..draws {
            let (a, b) = self.fit(ctx, m, d, None, &format!("{tag}-draw{d}"))?;
            t.push(a);
            i.push(b);
        }
        Ok((Stat::of(&t), Stat::of(&i)))
    }

    /// The model of `grid` with the best mean validation AUC over `folds` folds of the
    /// training part (draw 0's seed; ℓ labels among each fold's training rows, the held-out
    /// fold's labels scored) — the same CV for every method.
    pub fn tune<'a>(
        &self,
        ctx: &mut Ctx,
        grid: &'a [Model],
        folds: usize,
        tag: &str,
    ) -> Result<(&'a Model, Vec<String>)> {
        let mut best = (f64::NEG_INFINITY, 0);
        let mut seen = Vec::new();
        for (g, m) in grid.iter().enumerate() {
            let mut auc = 0.0;
            for fold in 0..folds {
                let cv = Some(CvFold { folds, fold });
                auc += self.fit(ctx, m, 0, cv, &format!("{tag}-cv{g}-f{fold}"))?.1 / folds as f64;
            }
            seen.push(format!("{} {auc:.2}", m.label));
            if auc > best.0 {
                best = (auc, g);
            }
        }
        Ok((&grid[best.1], seen))
    }

    /// `grid` tuned by `folds`-fold CV, its best model then run on `draws` draws.
    pub fn tuned<'a>(
        &self,
        ctx: &mut Ctx,
        grid: &'a [Model],
        folds: usize,
        draws: u64,
        tag: &str,
    ) -> Result<Tuned<'a>> {
        let (best, seen) = self.tune(ctx, grid, folds, &format!("tune-{tag}"))?;
        let (transductive, inductive) = self.draws(ctx, best, draws, &format!("tuned-{tag}"))?;
        Ok(Tuned {
            best,
            seen,
            transductive,
            inductive,
        })
    }
}
