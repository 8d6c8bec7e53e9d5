//! The learning methods, one module each (a file, or a folder when the method has several
//! parts), behind one small trait: declare hyperparameters, fit with a progress observer (which
//! may cancel), and return a model that predicts. The mathematics of each is in
//! docs/methods.md.

pub mod details;
mod expansion;
pub mod input;
mod krylov;
mod observer;
pub mod params;
mod parts;
mod shape;
mod target_scaled;

pub mod kde;
pub mod krr;
pub mod lowrank_okl;
pub mod mvml;
pub mod okl;
pub mod vvmr;

use ndarray::{Array2, ArrayView2};

pub(crate) use expansion::{FeatureExpansion, KernelExpansion};

pub use expansion::Coef;
pub use input::Route;
pub(crate) use observer::record_solved;
pub use observer::Clock;
pub use observer::{check_cancel, Collect, Observer, Phase, Silent, TraceRecord};
pub use params::ParamDefault;
pub use params::{MethodConfig, ParamKind, ParamSpec, Params, Value};
pub use parts::ModelParts;
pub use parts::{load_model, KINDS};
pub(crate) use shape::linear_kind;
pub use shape::{mats, mats_freed, ProblemShape, LOADING_BYTES, LOADING_PEAK_BYTES, RUNTIME_BYTES};
pub(crate) use target_scaled::TargetScaled;

use crate::data::{Task, View};
use crate::kernels::{Kernel, KernelSpec};
use crate::util::choice::{choice_enum, Choice};
use crate::{OvkError, Result};

/// Everything a method may need, prepared by `train::pipeline` from the user's data.
#[derive(Debug, Clone)]
pub struct Problem {
    /// Training inputs ℓ×d, scaled. For semi-supervised methods this includes unlabeled rows.
    pub x: Array2<f64>,
    /// Training targets ℓ×m (class columns already coded). Rows of unlabeled points are NaN.
    pub y: Array2<f64>,
    /// `labeled[i]` is false for a training row whose targets are hidden or missing.
    pub labeled: Vec<bool>,
    /// Held-out rows a method may choose hyperparameters on — only when the user asks for the
    /// papers' protocol by name (`--select-on test`); `None` otherwise, so that by default no
    /// method can see the test rows' targets.
    pub holdout: Option<Holdout>,
    /// The input kernel with every parameter resolved on the training inputs.
    pub kernel: Kernel,
    /// The kernel as the user chose it (per-view kernels re-resolve σ on each view).
    pub kernel_spec: KernelSpec,
    /// The task the targets were coded for.
    pub task: Task,
    /// Names of the columns of `x`.
    pub feature_names: Vec<String>,
    /// Names of the columns of `y` (targets, or one per class).
    pub output_names: Vec<String>,
    /// Groups of feature columns (multi-view methods); empty when the data has no views.
    pub views: Vec<View>,
    /// Seed for any randomness inside the method (Nyström samples …).
    pub seed: u64,
}

/// Held-out inputs and their targets (in the units the fit sees).
#[derive(Debug, Clone)]
pub struct Holdout {
    /// Held-out inputs (rows×d).
    pub x: Array2<f64>,
    /// Their targets (rows×m).
    pub y: Array2<f64>,
}

/// A builder for the problems tests, benches and tools make by hand (the pipeline fills every
/// field from prepared data instead): `Problem::new(x, y, kernel)` is regression with every row
/// labeled, no test rows, `KernelSpec::default()`, names `x0…`/`y0…`, no views and seed 0; each
/// `with_*` changes one thing.
impl Problem {
    /// Regression on `x` (ℓ×d) and `y` (ℓ×m) with `kernel`, every row labeled, no test rows.
    pub fn new(x: Array2<f64>, y: Array2<f64>, kernel: Kernel) -> Problem {
        let (n, d, m) = (x.nrows(), x.ncols(), y.ncols());
        Problem {
            holdout: None,
            labeled: vec![true; n],
            x,
            y,
            kernel,
            kernel_spec: KernelSpec::default(),
            task: Task::Regression,
            feature_names: (0..d).map(|j| format!("x{j}")).collect(),
            output_names: (0..m).map(|k| format!("y{k}")).collect(),
            views: Vec::new(),
            seed: 0,
        }
    }

    /// The rows from `n_train` on become the held-out rows a method may choose on (as
    /// `--select-on test` gives them), replacing any.
    pub fn holding_out(mut self, n_train: usize) -> Problem {
        let n = self.x.nrows();
        assert!(n_train <= n, "holding_out({n_train}) of {n} rows");
        self.holdout = Some(Holdout {
            x: self.x.slice(ndarray::s![n_train.., ..]).to_owned(),
            y: self.y.slice(ndarray::s![n_train.., ..]).to_owned(),
        });
        self.x = self.x.slice(ndarray::s![..n_train, ..]).to_owned();
        self.y = self.y.slice(ndarray::s![..n_train, ..]).to_owned();
        self.labeled.truncate(n_train);
        self
    }

    /// The held-out inputs (no rows when there are none).
    pub fn holdout_x(&self) -> ndarray::ArrayView2<'_, f64> {
        match &self.holdout {
            Some(h) => h.x.view(),
            None => self.x.slice(ndarray::s![..0, ..]),
        }
    }

    /// The held-out targets (no rows when there are none).
    pub fn holdout_y(&self) -> ndarray::ArrayView2<'_, f64> {
        match &self.holdout {
            Some(h) => h.y.view(),
            None => self.y.slice(ndarray::s![..0, ..]),
        }
    }

    /// Held-out rows a method may choose on (what `--select-on test` gives it).
    pub fn with_holdout(mut self, x: Array2<f64>, y: Array2<f64>) -> Problem {
        self.holdout = Some(Holdout { x, y });
        self
    }

    /// Rows whose flag is false become unlabeled: their targets are hidden (NaN), as the
    /// pipeline hides them.
    pub fn with_labeled(mut self, labeled: Vec<bool>) -> Problem {
        assert_eq!(labeled.len(), self.x.nrows(), "one flag per training row");
        for (mut row, _) in self
            .y
            .rows_mut()
            .into_iter()
            .zip(&labeled)
            .filter(|(_, &l)| !l)
        {
            row.fill(f64::NAN);
        }
        self.labeled = labeled;
        self
    }

    /// The same problem with the kernel as chosen set to `kernel_spec`.
    pub fn with_kernel_spec(mut self, kernel_spec: KernelSpec) -> Problem {
        self.kernel_spec = kernel_spec;
        self
    }

    /// The same problem with task `task`.
    pub fn with_task(mut self, task: Task) -> Problem {
        self.task = task;
        self
    }

    /// The same problem with these feature and output names.
    pub fn with_names(mut self, features: &[&str], outputs: &[&str]) -> Problem {
        self.feature_names = features.iter().map(|s| s.to_string()).collect();
        self.output_names = outputs.iter().map(|s| s.to_string()).collect();
        self
    }

    /// The same problem with these feature views.
    pub fn with_views(mut self, views: Vec<View>) -> Problem {
        self.views = views;
        self
    }

    /// The same problem with the method's random seed set to `seed`.
    pub fn with_seed(mut self, seed: u64) -> Problem {
        self.seed = seed;
        self
    }

    /// Number of training rows ℓ.
    pub fn n_train(&self) -> usize {
        self.x.nrows()
    }
    /// Number of outputs m.
    pub fn n_outputs(&self) -> usize {
        self.y.ncols()
    }
    /// Rows of `x`/`y` that carry labels.
    pub(crate) fn labeled_rows(&self) -> Vec<usize> {
        (0..self.labeled.len())
            .filter(|&i| self.labeled[i])
            .collect()
    }

    /// The labeled rows' inputs and targets, copied only when some rows are unlabeled: a fit
    /// whose model keeps no rows of its own (a factor's, `Basis::model_rows`) then holds no
    /// copy of the inputs through the fit (86 MB on tmc2007).
    pub(crate) fn labeled_part(&self) -> LabeledPart<'_> {
        let rows = self.labeled_rows();
        let copied = (rows.len() < self.x.nrows()).then(|| {
            (
                crate::linalg::select_rows(self.x.view(), &rows),
                crate::linalg::select_rows(self.y.view(), &rows),
            )
        });
        LabeledPart {
            problem: self,
            copied,
        }
    }
}

/// A problem's labeled rows: its own arrays when every row is labeled, else a copy of the rows
/// that are (`Problem::labeled_part`).
pub(crate) struct LabeledPart<'a> {
    problem: &'a Problem,
    copied: Option<(Array2<f64>, Array2<f64>)>,
}

impl LabeledPart<'_> {
    /// The labeled rows' inputs.
    pub(crate) fn x(&self) -> ArrayView2<'_, f64> {
        match &self.copied {
            Some((x, _)) => x.view(),
            None => self.problem.x.view(),
        }
    }

    /// The labeled rows' targets.
    pub(crate) fn y(&self) -> ArrayView2<'_, f64> {
        match &self.copied {
            Some((_, y)) => y.view(),
            None => self.problem.y.view(),
        }
    }

    /// The inputs and targets as owned arrays (copied here when they were not already).
    pub(crate) fn into_owned(self) -> (Array2<f64>, Array2<f64>) {
        self.copied
            .unwrap_or_else(|| (self.problem.x.clone(), self.problem.y.clone()))
    }
}

/// A fitted model: maps new inputs to real-valued outputs (scores, for classification).
pub trait Model: Send + Sync {
    /// Predicted outputs (rows×m, in the units the fit saw) for the scaled inputs `x` (rows×d).
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>>;
    /// What prediction needs, to save in a session and load back with `load_model`: a kind,
    /// settings as JSON, arrays by name. See `parts.rs` for the pattern a new model follows.
    fn parts(&self) -> ModelParts;
    /// `parts` of a model no longer needed: its arrays may move instead of being copied.
    fn into_parts(self: Box<Self>) -> ModelParts {
        self.parts()
    }
    /// The number of (scaled) feature columns `predict` expects, when the model knows it.
    fn n_features(&self) -> Option<usize> {
        None
    }
}

/// What a fit returns besides the model: enough for a session to show and replay it.
pub struct Fit {
    /// The fitted model.
    pub model: Box<dyn Model>,
    /// Number of iterations the fit ran.
    pub iterations: usize,
    /// Whether the method's stopping test was met.
    pub converged: bool,
    /// The paper's objective at the returned solution; `None` when the method does not compute
    /// it (a note says why). A non-finite `Some` is a diverged fit: the pipeline refuses it.
    pub objective: Option<f64>,
    /// Learned matrices to save, as `<name>.npy` (e.g. `output_kernel`, `coefficients`).
    pub matrices: Vec<(String, Array2<f64>)>,
    /// Method-specific results for session.json (`path`, `certificate`, block norms …).
    pub details: serde_json::Map<String, serde_json::Value>,
    /// Remarks for the user (a fallback taken, steps halved …).
    pub notes: Vec<String>,
    /// What the fit chose on the problem's held-out rows (`Problem::holdout`, given only by
    /// `--select-on test`), e.g. "λ and p"; the pipeline marks their metrics optimistic.
    pub chose_on_test: Option<String>,
}

impl Fit {
    /// A fit of `model` with no iterations, converged, and nothing else recorded.
    pub fn new(model: Box<dyn Model>) -> Self {
        Fit {
            model,
            iterations: 0,
            converged: true,
            objective: None,
            matrices: Vec::new(),
            details: serde_json::Map::new(),
            notes: Vec::new(),
            chose_on_test: None,
        }
    }
}

/// A learning method: its name, hyperparameters, memory estimate and fit.
pub trait Method: Sync {
    /// The name used by `--method` and in sessions (`okl`).
    fn name(&self) -> &'static str;
    /// One line for menus and `--help`.
    fn summary(&self) -> &'static str;
    /// The paper the method implements.
    fn citation(&self) -> &'static str;
    /// The hyperparameters, with kinds and defaults.
    fn params(&self) -> &'static [ParamSpec];
    /// Tasks the method accepts (others are refused before the fit with a clear message).
    fn supports(&self, _task: Task) -> bool {
        true
    }
    /// The tasks `supports` accepts, in words: "regression, multiclass and multilabel".
    fn supported_tasks(&self) -> String {
        let names: Vec<&str> = Task::ALL
            .iter()
            .copied()
            .filter(|&t| self.supports(t))
            .map(Task::name)
            .collect();
        match names.split_last() {
            Some((last, [])) => format!("{last} only"),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
            None => "no task".into(),
        }
    }
    /// Semi-supervised methods receive unlabeled training rows (targets NaN, `labeled` false).
    fn semi_supervised(&self) -> bool {
        false
    }
    /// Multi-view methods use the data's views (`--views`); the others fit one kernel on all
    /// feature columns.
    fn multi_view(&self) -> bool {
        false
    }
    /// Fit `problem` with `params`, reporting progress and checking cancellation through `obs`.
    fn fit(&self, problem: &Problem, params: &Params, obs: &mut dyn Observer) -> Result<Fit>;
    /// Whether the fit can run on the shared low-rank factor of the input kernel
    /// (`--input-rank`, `--landmarks`); such a method overrides `input_route` too.
    fn input_factor(&self) -> bool {
        false
    }
    /// Whether `--input-rank R` means something to the method: the shared factor's rank, or
    /// (mvml) its landmark columns in all.
    fn takes_input_rank(&self) -> bool {
        self.input_factor()
    }
    /// How the input kernel enters the fit (`methods::input`): methods that can solve on a
    /// low-rank factor resolve `--input-rank` here; the others are always exact.
    fn input_route(&self, shape: &ProblemShape) -> Result<Route> {
        if let crate::kernels::InputRank::Rank(_) = shape.input_rank {
            let with: Vec<&str> = registry()
                .iter()
                .filter(|m| m.takes_input_rank())
                .map(|m| m.name())
                .collect();
            return Err(OvkError::input(format!(
                "--input-rank: {} takes auto or exact, having no low-rank input-kernel route; \
                 a rank needs a method that has one: {}",
                self.name(),
                with.join(", ")
            )));
        }
        Ok(Route::Exact)
    }
    /// The route whose cost the time estimate counts (`train::estimate`): `input_route`, unless
    /// the method approximates its kernels its own way (mvml's block Nyström costs about what
    /// a factor of its landmark columns does).
    fn costed_route(&self, shape: &ProblemShape, _params: &Params) -> Result<Route> {
        self.input_route(shape)
    }
    /// Peak bytes the fit (and the prediction on the training and test rows after it)
    /// allocates, from the shapes alone: the pipeline refuses, before any work, a run that
    /// would not fit in memory. Default: a Gram matrix, its factor and a temporary (ℓ×ℓ each).
    fn peak_bytes(&self, shape: &ProblemShape, _params: &Params) -> Result<u64> {
        Ok(mats(3, shape.n_labeled, shape.n_labeled))
    }
    /// Bytes of the training rows the fit copies beside the prepared ones, held at its peak
    /// (its labeled part, the rows a model keeps), where `peak_bytes` does not count them
    /// already. Default: one copy of the labeled rows' inputs and targets.
    fn row_copy_bytes(&self, shape: &ProblemShape, _params: &Params) -> Result<u64> {
        Ok(mats(1, shape.n_labeled, shape.d + shape.m))
    }
    /// Floor cost of an exact fit in units of one n×n symmetric eigendecomposition (the time
    /// estimate `train::estimate` scales it by this machine's measured rate).
    fn exact_eighs(&self) -> f64 {
        1.0
    }
    /// The way out when `peak_bytes` exceeds the memory available (flags to change).
    fn memory_advice(&self) -> &'static str {
        crate::large_n_advice!()
    }
}

/// The advice when the ℓ×ℓ input Gram matrix is what does not fit, besides a low-rank input
/// kernel (which the pipeline proposes with its own estimate where the method has that route).
/// One definition for every method's `memory_advice`; a macro so methods can extend it with
/// `concat!`.
#[macro_export]
macro_rules! large_n_advice {
    () => {
        "use fewer training points (--test-fraction above 0.25, or subsample the file)"
    };
}

choice_enum! {
    /// A method by the name `--method`, configs and sessions use; `find` gives the method.
    pub enum MethodName: "method" {
        /// Kernel ridge regression with the identity output kernel.
        Krr = "krr",
        /// Output kernel learning: the output kernel L learned by block coordinate descent.
        Okl = "okl",
        /// Low-rank output kernel learning: L = BBᵀ of rank p, along a λ path.
        LowRankOkl = "lowrank-okl",
        /// Kernel dependency estimation: regression into the output kernel's feature space.
        Kde = "kde",
        /// Vector-valued manifold regularisation (semi-supervised).
        Vvmr = "vvmr",
        /// Multi-view metric learning.
        Mvml = "mvml",
    }
}

/// Every method ovk offers, in menu order (that of `MethodName::ALL`). Adding one here and to
/// `MethodName` makes it appear in the CLI, the config reference and the TUI.
pub fn registry() -> &'static [&'static dyn Method] {
    &[
        &krr::Krr,
        &okl::Okl,
        &lowrank_okl::LowRankOkl,
        &kde::Kde,
        &vvmr::Vvmr,
        &mvml::Mvml,
    ]
}

/// The method of a name.
pub fn find(name: MethodName) -> &'static dyn Method {
    match name {
        MethodName::Krr => &krr::Krr,
        MethodName::Okl => &okl::Okl,
        MethodName::LowRankOkl => &lowrank_okl::LowRankOkl,
        MethodName::Kde => &kde::Kde,
        MethodName::Vvmr => &vvmr::Vvmr,
        MethodName::Mvml => &mvml::Mvml,
    }
}

/// The method a user named (a flag, a config): an unknown name is an input error that lists
/// the valid ones and names the closest.
pub fn find_named(name: &str) -> Result<&'static dyn Method> {
    MethodName::parse(name).map(find)
}

/// The methods that fit from a factor's sums streamed past memory (`train::pipeline::stream`):
/// with squared loss on a factor they need only ZᵀZ, ZᵀY and ‖Y‖², never Z.
pub const STREAMED: &[MethodName] = &[MethodName::Krr, MethodName::Okl, MethodName::LowRankOkl];

/// A streamed fit's training rows in two parts, for a method that chooses on a validation part:
/// the spectrum of the part it fits the candidates on, and the sums over the part that scores
/// them.
pub(crate) struct HeldOut {
    /// The spectrum of the fit part's sums.
    pub fit: input::InputSpectrum,
    /// The validation part's sums.
    pub val: input::FactorSums,
}

/// The share of the training rows a streamed fit of `name` holds back as its validation part,
/// or `None` when it chooses nothing on one.
pub(crate) fn streamed_validation(name: MethodName, params: &Params) -> Result<Option<f64>> {
    match name {
        MethodName::LowRankOkl => lowrank_okl::streamed_validation(params),
        _ => Ok(None),
    }
}

/// Fit method `name` (one of `STREAMED`) on the spectrum of a factor's streamed sums over every
/// training row, `held` its parts when it asked for a validation part; `p` names the problem
/// and holds no rows, `y_norm` is ‖Y‖_F over the rows summed.
pub(crate) fn fit_streamed(
    name: MethodName,
    p: &Problem,
    sp: input::InputSpectrum,
    held: Option<HeldOut>,
    y_norm: f64,
    params: &Params,
    obs: &mut dyn Observer,
) -> Result<Fit> {
    match name {
        MethodName::Krr => krr::fit_streamed(p, sp, params, obs),
        MethodName::Okl => okl::fit_streamed(p, sp, y_norm, params, obs),
        MethodName::LowRankOkl => lowrank_okl::fit_streamed(p, sp, held, params, obs),
        other => Err(OvkError::internal(format!("{other} has no streamed route"))),
    }
}

/// Bytes a streamed fit of `name` holds beside the stream's own sums, sample and test part:
/// r factor columns, m outputs.
pub(crate) fn streamed_fit_bytes(
    name: MethodName,
    r: usize,
    m: usize,
    params: &Params,
) -> Result<u64> {
    Ok(match name {
        // the spectrum, C, the model and the krr baseline's (r×m); okl's L and its solver (m×m)
        MethodName::Krr | MethodName::Okl => mats(12, r, m) + mats(12, m, m),
        MethodName::LowRankOkl => lowrank_okl::streamed_fit_bytes(r, m, params)?,
        other => return Err(OvkError::internal(format!("{other} has no streamed route"))),
    })
}

/// Reject non-finite values before they reach a session (a diverging fit names the cause).
pub(crate) fn ensure_finite(what: &str, value: f64) -> Result<()> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(OvkError::numerical(format!(
            "the {what} became {value} — the fit diverged (likely causes: λ too small for an \
             ill-conditioned Gram matrix, or a step size too large)"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::param::ParamKind;

    #[test]
    fn the_registry_is_every_name_in_order() {
        let names: Vec<&str> = registry().iter().map(|m| m.name()).collect();
        assert_eq!(names, MethodName::NAMES);
        for &n in MethodName::ALL {
            assert_eq!(find(n).name(), n.name());
        }
        let e = find_named("okll").err().expect("no method okll");
        assert_eq!(e.kind(), crate::ErrorKind::UnknownChoice);
        assert!(e.to_string().contains("did you mean 'okl'"), "{e}");
    }

    /// Every hyperparameter that is a choice lists exactly the words of its enum.
    #[test]
    fn every_choice_list_is_its_enums_names() {
        fn names<C: Choice>() -> (&'static str, &'static [&'static str]) {
            (C::KEY, C::NAMES)
        }
        let enums = [
            names::<params::common::Solver>(),
            names::<okl::LUpdate>(),
            names::<kde::solve::OvkKind>(),
            names::<kde::OutputKernel>(),
            names::<kde::preimage::Preimage>(),
            names::<crate::kernels::GraphWeights>(),
            names::<crate::kernels::LaplacianKind>(),
            names::<mvml::Init>(),
            names::<mvml::AStepRule>(),
            names::<mvml::ViewSigma>(),
            names::<mvml::MetricSpace>(),
            names::<crate::kernels::KernelName>(),
            names::<crate::kernels::Landmarks>(),
            names::<vvmr::GammaIScale>(),
        ];
        let kernel_options = crate::kernels::options::KERNEL_OPTIONS;
        let specs = registry()
            .iter()
            .flat_map(|m| m.params())
            .chain(kernel_options.iter());
        let mut seen = 0;
        for spec in specs {
            if let ParamKind::Choice(list) = spec.kind {
                let Some((_, words)) = enums.iter().find(|(k, _)| *k == spec.key) else {
                    panic!("choice `{}` has no enum", spec.key)
                };
                assert_eq!(&list, words, "{}", spec.key);
                let default = spec.default_value().map(|v| v.to_string());
                assert!(
                    default.as_deref().is_some_and(|d| list.contains(&d)),
                    "{}: default {default:?}",
                    spec.key
                );
                seen += 1;
            }
        }
        assert!(seen >= enums.len(), "only {seen} choices seen");
    }
}
