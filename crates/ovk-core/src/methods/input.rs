//! Which input kernel a method solves on, and K's spectrum on that route.
//!
//! Four routes (docs/methods.md §6):
//! - **exact**: the n×n Gram matrix, eigendecomposed once (O(n³), several n×n in memory);
//! - **primal**: a linear kernel with d ≤ n features is `K = XXᵀ` exactly, so `Z = X`;
//! - **low rank**: a Nyström factor `K ≈ ZZᵀ` (Z n×r, `kernels::input_factor`);
//! - **Krylov**: a linear kernel on sparse rows, for okl and krr, on a block Krylov basis of
//!   the targets (`methods::krylov`, which builds that spectrum).
//!
//! On the last two, `ZᵀZ = V diag(s) Vᵀ` (r×r) gives the thin SVD `Z = U diag(√s) Vᵀ` with
//! `U = Z V diag(s)^{-½}` never formed: `K̃ = U diag(s) Uᵀ` has r nonzero eigenvalues and an
//! (n − r)-dimensional null space. The spectral forms krr, okl and lowrank-okl solve then hold
//! with r eigenvalues: the rotated targets are `Ỹ = UᵀY = diag(s)^{-½} Vᵀ ZᵀY`, the null-space
//! rows contribute the constant `‖Y − UUᵀY‖² = ‖Y‖² − ‖Ỹ‖²` to every fit term and nothing to
//! predictions (`Zᵀ(I − UUᵀ) = 0`), and a coefficient matrix `C = U C̃ + (null part)` is kept as
//! `ZᵀC = V diag(√s) C̃` (r×m): the model predicts `z(x)ᵀ ZᵀC`.

use ndarray::{s, Array1, Array2, ArrayView2, Zip};

use super::details::FactorRecord;
use super::expansion::{Coef, FeatureExpansion, KernelExpansion, TrainingFeatures};
use super::{check_cancel, mats, mats_freed, Model, Observer, Phase};
use crate::kernels::{
    cross_gram, gram, input_factor, FeatureMap, InputFactor, InputRank, Kernel, Landmarks,
};
use crate::linalg::{eigh_factored, gram_tn, interruptible, matmul, matmul_tn, Eigenvectors};
use crate::util::fingerprint::Fingerprint;
use crate::{OvkError, Result};

/// Under `--input-rank auto`, training sets up to this many rows are solved exactly. Measured
/// on this machine class (2 cores): one eigendecomposition of a 5000×5000 Gram matrix takes
/// about 40 s, beyond which an exact fit passes a minute (docs/performance.md).
pub const AUTO_EXACT_MAX: usize = 5000;
/// The rank `--input-rank auto` takes beyond `AUTO_EXACT_MAX` rows.
pub const AUTO_RANK: usize = 2000;

/// How the input kernel enters a fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// The exact n×n Gram matrix.
    Exact,
    /// Linear kernel, d ≤ n: `Z = X` (exact).
    Primal,
    /// Linear kernel on packed sparse rows: a block Krylov basis of the targets under K, grown
    /// until the fit is exact to `krylov::KRYLOV_TOL` (`methods::krylov`; okl and krr).
    Krylov,
    /// A rank-`rank` Nyström factor K ≈ ZZᵀ with these landmarks.
    LowRank {
        /// The factor's rank r (columns of Z).
        rank: usize,
        /// How the landmarks are picked.
        landmarks: Landmarks,
        /// Taken by `--input-rank auto` rather than asked for.
        automatic: bool,
    },
}

impl Route {
    /// The route for `n` training rows of `d` features, for a method that can solve on a
    /// factor (the others keep `Method::input_route`'s exact default).
    pub fn resolve(
        choice: InputRank,
        landmarks: Landmarks,
        linear: bool,
        n: usize,
        d: usize,
    ) -> Result<Route> {
        if let InputRank::Rank(r) = choice {
            if r > n {
                return Err(OvkError::input(format!(
                    "--input-rank {r} is larger than the {n} training rows; choose at most {n} \
                     (or exact)"
                )));
            }
        }
        let primal = linear && d <= n;
        Ok(match choice {
            InputRank::Exact if primal => Route::Primal,
            InputRank::Exact => Route::Exact,
            InputRank::Rank(r) if primal && r >= d => Route::Primal,
            InputRank::Rank(r) => Route::LowRank {
                rank: r,
                landmarks,
                automatic: false,
            },
            InputRank::Auto if primal => Route::Primal,
            InputRank::Auto if n > AUTO_EXACT_MAX => Route::LowRank {
                rank: AUTO_RANK.min(n),
                landmarks,
                automatic: true,
            },
            InputRank::Auto => Route::Exact,
        })
    }

    /// Columns of Z, or None on the exact route.
    pub(crate) fn factor_columns(&self, d: usize) -> Option<usize> {
        match *self {
            Route::Exact | Route::Krylov => None,
            Route::Primal => Some(d),
            Route::LowRank { rank, .. } => Some(rank),
        }
    }

    /// A note for the session when the route was not the user's explicit choice.
    pub fn note(&self, n: usize) -> Option<String> {
        match *self {
            Route::LowRank {
                rank,
                landmarks,
                automatic: true,
            } => Some(format!(
                "{n} training rows exceed the exact limit of {AUTO_EXACT_MAX} (about a minute on \
                 2 cores): solved on a rank-{rank} Nyström factor of the input kernel \
                 ({} landmarks); give --input-rank exact for the exact solve, or another rank",
                landmarks.name()
            )),
            Route::Primal => Some(format!(
                "linear kernel with d ≤ n: solved in the primal (Z = X, exact, O(n d²)) instead \
                 of through the {n}×{n} Gram matrix"
            )),
            Route::Krylov => Some(format!(
                "linear kernel on sparse rows: solved exactly on a block Krylov basis of the \
                 targets (each product K·V costs O(nnz)) instead of through the {n}×{n} Gram \
                 matrix's eigendecomposition"
            )),
            _ => None,
        }
    }

    /// The name the session and the CLI's JSON give the route.
    pub fn name(&self) -> &'static str {
        match self {
            Route::Exact => "exact",
            Route::Primal => "primal",
            Route::Krylov => "krylov",
            Route::LowRank { .. } => "low_rank",
        }
    }
}

/// How spectral coefficients map back to the model.
#[derive(Debug, Clone)]
pub(crate) enum Basis {
    /// The eigenvectors U (n×n) of the exact Gram matrix, kept factored (`Eigenvectors`):
    /// `C = U C̃`. Shared: the spectrum cached for the krr baseline holds the same blocks, not
    /// a copy.
    Eigen(std::sync::Arc<Eigenvectors>),
    /// A factor `K̃ = ZZᵀ`, Z itself dropped after the rotation.
    Factor(Box<FactorBasis>),
}

/// What a factor keeps once Z is gone.
#[derive(Debug, Clone)]
pub(crate) struct FactorBasis {
    /// The eigenvectors V of `ZᵀZ = V diag(s) Vᵀ` (r_z×r_z), kept factored as K's are on the
    /// exact route (`linalg::Eigenvectors`): only ever applied to r_z×m blocks.
    v: std::sync::Arc<Eigenvectors>,
    /// V's first `dropped` columns lie below Z's numerical rank and are left out.
    dropped: usize,
    /// `√s` of the kept eigenvalues.
    sqrt_s: Array1<f64>,
    pub map: FeatureMap,
    pub summary: FactorSummary,
    /// Z and its rows, kept for the fit's own training-row predictions (low-rank route only).
    pub training: Option<std::sync::Arc<TrainingFeatures>>,
}

impl FactorBasis {
    /// Columns of Z (the order of ZᵀZ).
    pub(crate) fn order(&self) -> usize {
        self.v.nrows()
    }

    /// `V diag(φ(√s)) C̃` (r_z×k) for C̃ with one row per kept eigenvalue: `ZᵀC` with
    /// φ = identity, `V diag(s)^{-½} C̃` with φ = 1/x.
    fn v_times(&self, ct: ArrayView2<f64>, phi: impl Fn(f64) -> f64) -> Array2<f64> {
        let mut padded = Array2::<f64>::zeros((self.dropped + ct.nrows(), ct.ncols()));
        let mut kept = padded.slice_mut(s![self.dropped.., ..]);
        kept.assign(&ct);
        Zip::from(kept.rows_mut())
            .and(&self.sqrt_s)
            .for_each(|mut row, &root| row *= phi(root));
        self.v.apply(padded.view())
    }

    /// `G V diag(√s)` (t×k) for rows G (t×r_z) in Z's coordinates: `K(x, X) U` for G the
    /// features of rows x.
    pub(crate) fn rows_times(&self, g: Array2<f64>) -> Array2<f64> {
        let mut gv = self
            .v
            .right_apply(g)
            .slice(s![.., self.dropped..])
            .to_owned();
        Zip::from(gv.columns_mut())
            .and(&self.sqrt_s)
            .for_each(|mut col, &root| col *= root);
        gv
    }
}

impl Basis {
    /// The rows a model on this basis keeps of the training inputs `x`: all of them on the
    /// exact route (its kernel expansion), none on a factor (its model reads Z's rows, the
    /// training rows known again by their fingerprint, `TrainingFeatures`).
    pub(crate) fn model_rows(&self, x: ArrayView2<f64>) -> Array2<f64> {
        match self {
            Basis::Eigen(_) => x.to_owned(),
            Basis::Factor(_) => Array2::zeros((0, x.ncols())),
        }
    }

    /// The factor's summary for the session (None on the exact route).
    pub(crate) fn factor_summary(&self) -> Option<&FactorSummary> {
        match self {
            Basis::Eigen(_) => None,
            Basis::Factor(f) => Some(&f.summary),
        }
    }

    /// Spectral coefficients C̃ (rows = eigenvalues) to the model's coefficients: `C = U C̃`
    /// (n×m) on the exact route, `ZᵀC = V diag(√s) C̃` (r_z×m) on a factor.
    pub(crate) fn lift(&self, ct: ArrayView2<f64>) -> Array2<f64> {
        match self {
            Basis::Eigen(u) => u.apply(ct),
            Basis::Factor(f) => f.v_times(ct, |root| root),
        }
    }

    /// `K C = U diag(s) C̃` on the training rows for spectral coefficients C̃, when U is all of
    /// K's eigenvectors (the exact route): the training rows' predictions without a second
    /// n×n Gram matrix. None on a factor (whose model keeps Z instead) or a Krylov basis.
    pub(crate) fn fitted(&self, s: &Array1<f64>, ct: ArrayView2<f64>) -> Option<Array2<f64>> {
        match self {
            Basis::Eigen(u) if u.nrows() == u.ncols() && u.ncols() == s.len() => {
                let mut sct = ct.to_owned();
                Zip::from(sct.rows_mut())
                    .and(s)
                    .for_each(|mut row, &si| row *= si);
                Some(u.apply(sct.view()))
            }
            _ => None,
        }
    }

    /// The model `Ŷ = K(x, X) C` (exact) or `z(x)ᵀ ZᵀC` (factor) for lifted coefficients, with
    /// the training rows' predictions `fitted` when the fit has them (`Basis::fitted`).
    pub fn model(
        &self,
        kernel: Kernel,
        x_train: Array2<f64>,
        coef: Coef,
        fitted: Option<Array2<f64>>,
    ) -> Box<dyn Model> {
        match self {
            Basis::Eigen(_) => Box::new(KernelExpansion {
                kernel,
                x_train,
                coef,
                fitted: fitted.map(std::sync::Arc::new),
            }),
            Basis::Factor(f) => Box::new(FeatureExpansion::new(
                f.map.clone(),
                coef,
                f.training.clone(),
            )),
        }
    }

    /// `K(x_new, X) U` (t × #eigenvalues): exact `cross_gram · U`, factor `z(x_new)ᵀ V diag(√s)`.
    pub fn cross(
        &self,
        kernel: &Kernel,
        x_train: ArrayView2<f64>,
        x_new: ArrayView2<f64>,
    ) -> Result<Array2<f64>> {
        match self {
            Basis::Eigen(u) => Ok(u.right_apply(cross_gram(kernel, x_new, x_train)?)),
            Basis::Factor(f) => Ok(f.rows_times(f.map.features(x_new)?)),
        }
    }

    /// `U C̃` (n × k) for spectral coefficients C̃ (one row per eigenvalue), U never formed:
    /// applied factored on the exact route, `Z (V diag(s)^{-½} C̃)` on a factor, recomputing Z.
    pub fn vectors_times(
        &self,
        x_train: ArrayView2<f64>,
        ct: ArrayView2<f64>,
    ) -> Result<Array2<f64>> {
        match self {
            Basis::Eigen(u) => Ok(u.apply(ct)),
            Basis::Factor(f) => Ok(matmul(
                f.map.features(x_train)?.view(),
                f.v_times(ct, |root| 1.0 / root).view(),
            )),
        }
    }
}

/// What the session records about a factor.
#[derive(Debug, Clone, PartialEq)]
pub struct FactorSummary {
    /// How the input kernel entered the fit (`Route`'s name).
    pub route: &'static str,
    pub(crate) requested: usize,
    /// Rank r of the factor obtained.
    pub rank: usize,
    /// How the landmarks were chosen; `None` for an exact factor.
    pub landmarks: Option<Landmarks>,
    /// `(tr K − ‖Z‖²_F) / tr K`: 0 for an exact factor.
    pub trace_error: f64,
    /// Seconds spent building the factor.
    pub seconds: f64,
}

impl FactorSummary {
    /// What factor `f` is, reached by `route` in `seconds`.
    pub fn of(route: &'static str, f: &InputFactor, seconds: f64) -> Self {
        FactorSummary {
            route,
            requested: f.requested,
            rank: f.rank(),
            landmarks: f.how,
            trace_error: f.trace_error,
            seconds,
        }
    }

    /// The summary as `details.input_factor` holds it.
    pub fn record(&self) -> FactorRecord {
        FactorRecord {
            route: self.route.to_string(),
            requested_rank: Some(self.requested),
            rank: Some(self.rank),
            landmarks: self.landmarks.map(|l| l.name().to_string()),
            trace_error: Some(self.trace_error),
            seconds: Some(self.seconds),
        }
    }

    /// The summary as JSON, for `details`.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self.record()).unwrap_or(serde_json::Value::Null)
    }
}

/// K (or K̃) in its eigenbasis with the targets rotated into it.
#[derive(Debug, Clone)]
pub(crate) struct InputSpectrum {
    /// Eigenvalues, ascending: all n (negatives clamped to 0) on the exact route, the r kept
    /// ones on a factor.
    pub s: Array1<f64>,
    /// The most negative eigenvalue before clamping (0 when K was PSD).
    pub clamped: f64,
    /// `Ỹ = UᵀY`, one row per eigenvalue.
    pub yt: Array2<f64>,
    /// `‖Y − UUᵀY‖²_F`: the targets' share in K̃'s null space beyond the rows of `yt` (0 on
    /// the exact route, where every eigenvector is kept).
    pub(crate) null_sq: f64,
    pub basis: Basis,
    /// Training rows n (on a factor, more than the eigenvalues kept).
    pub n: usize,
}

impl InputSpectrum {
    /// Z and its rows, when this spectrum is a low-rank factor's that kept them.
    fn training_features(&self) -> Option<&std::sync::Arc<TrainingFeatures>> {
        match &self.basis {
            Basis::Factor(b) => b.training.as_ref(),
            Basis::Eigen(_) => None,
        }
    }

    /// Build the route's kernel, decompose it and rotate `y` — the Gram/factor and
    /// decomposition phases of a fit, each ending in a cancellation check.
    pub fn build(
        route: Route,
        kernel: &Kernel,
        x: ArrayView2<f64>,
        y: ArrayView2<f64>,
        seed: u64,
        obs: &mut dyn Observer,
    ) -> Result<Self> {
        // The pipeline fits the krr baseline on the same rows right after the method: the
        // exact eigenbasis, or the factor with its eigenproblem and rotation, is reused, not
        // rebuilt (and the training rows are scored without a second Gram matrix).
        let key = cache_key_of(route, kernel, x, y, seed);
        if let Some(sp) = key.and_then(cached) {
            return Ok(sp);
        }
        if key.is_some() {
            // The last run's n×n basis or Z goes before this one's is built: never two.
            forget_cached_spectrum();
        }
        let sp = match route {
            Route::Exact => {
                obs.phase(Phase::Gram, None);
                let k = gram(kernel, x)?;
                check_cancel(obs)?;
                obs.phase(Phase::Decomposition, None);
                let y = y.to_owned();
                interruptible(&|| obs.is_cancelled(), move || Self::exact(k, y.view()))?
            }
            Route::Primal => {
                obs.phase(Phase::Decomposition, None);
                Self::of_factor(InputFactor::linear(x), y, "primal", 0.0)?
            }
            Route::Krylov => {
                return Err(OvkError::internal(
                    "the Krylov route's spectrum depends on λ: built by methods::krylov",
                ))
            }
            Route::LowRank {
                rank, landmarks, ..
            } => {
                let clock = std::time::Instant::now();
                let f = factor_observed(kernel, x, rank, landmarks, seed, obs)?;
                check_cancel(obs)?;
                obs.phase(Phase::Decomposition, None);
                let seconds = clock.elapsed().as_secs_f64();
                Self::from_factor(f, y, "low_rank", seconds, Some(x))?
            }
        };
        check_cancel(obs)?;
        if let Some(key) = key {
            remember(key, &sp);
        }
        Ok(sp)
    }

    /// The spectrum a method fitted on the same rows just built on this exact or low-rank route
    /// (the pipeline's krr baseline reuses it), if any.
    pub(crate) fn cached_for(
        route: Route,
        kernel: &Kernel,
        x: ArrayView2<f64>,
        y: ArrayView2<f64>,
        seed: u64,
    ) -> Option<Self> {
        cache_key_of(route, kernel, x, y, seed).and_then(cached)
    }

    /// `K = U diag(s) Uᵀ` (O(n³)), `Ỹ = UᵀY`, K consumed: U is kept factored, never formed.
    pub fn exact(k: Array2<f64>, y: ArrayView2<f64>) -> Result<Self> {
        let n = k.nrows();
        check_rows(n, y)?;
        let (values, u) = eigh_factored(k)?;
        let clamped = values.iter().copied().fold(0.0, f64::min);
        Ok(InputSpectrum {
            s: values.mapv(|v| v.max(0.0)),
            clamped,
            yt: u.apply_t(y),
            null_sq: 0.0,
            basis: Basis::Eigen(std::sync::Arc::new(u)),
            n,
        })
    }

    /// From a factor: `ZᵀZ = V diag(s) Vᵀ` (r×r), eigenvalues below `r·ε·max s` dropped (Z's
    /// numerical rank), `Ỹ = diag(s)^{-½} Vᵀ (ZᵀY)`.
    pub(crate) fn of_factor(
        f: InputFactor,
        y: ArrayView2<f64>,
        route: &'static str,
        seconds: f64,
    ) -> Result<Self> {
        Self::from_factor(f, y, route, seconds, None)
    }

    /// `of_factor`, keeping Z beside its rows `x` when given (see `TrainingFeatures`).
    fn from_factor(
        f: InputFactor,
        y: ArrayView2<f64>,
        route: &'static str,
        seconds: f64,
        x: Option<ArrayView2<f64>>,
    ) -> Result<Self> {
        check_rows(f.z.nrows(), y)?;
        let sums = FactorSums {
            ztz: gram_tn(f.z.view()),
            zty: matmul_tn(f.z.view(), y), // r_z×m
            y_sq: y.iter().map(|v| v * v).sum(),
            n: f.z.nrows(),
        };
        let summary = FactorSummary::of(route, &f, seconds);
        let mut sp = Self::from_sums(sums, f.map, summary)?;
        if let (Some(x), Basis::Factor(b)) = (x, &mut sp.basis) {
            b.training = Some(TrainingFeatures::kept(x, f.z));
        }
        Ok(sp)
    }

    /// From a factor's sums alone (Z itself never held: `train::pipeline::stream`):
    /// `ZᵀZ = V diag(s) Vᵀ`, eigenvalues below `r·ε·max s` dropped (Z's numerical rank),
    /// `Ỹ = diag(s)^{-½} Vᵀ (ZᵀY)`, and the null-space share `‖Y‖² − ‖Ỹ‖²`.
    pub(crate) fn from_sums(
        sums: FactorSums,
        map: FeatureMap,
        summary: FactorSummary,
    ) -> Result<Self> {
        let FactorSums { ztz, zty, y_sq, n } = sums;
        let (values, v) = eigh_factored(ztz)?;
        let s_max = values.iter().copied().fold(0.0, f64::max);
        let cut = s_max * values.len() as f64 * f64::EPSILON;
        let dropped = values.iter().position(|&v| v > cut).unwrap_or(values.len());
        let s = values.slice(s![dropped..]).to_owned();
        let sqrt_s = s.mapv(f64::sqrt);
        // Ỹ = diag(s)^{-½} Vᵀ ZᵀY, the dropped directions' rows left out
        let mut yt = v.apply_t(zty.view()).slice(s![dropped.., ..]).to_owned();
        Zip::from(yt.rows_mut())
            .and(&sqrt_s)
            .for_each(|mut row, &root| row.mapv_inplace(|x| x / root));
        let yt_sq: f64 = yt.iter().map(|v| v * v).sum();
        // The rank kept: the factor's directions above the cut.
        let summary = FactorSummary {
            rank: s.len(),
            ..summary
        };
        Ok(InputSpectrum {
            s,
            clamped: 0.0,
            yt,
            null_sq: (y_sq - yt_sq).max(0.0),
            basis: Basis::Factor(Box::new(FactorBasis {
                v: std::sync::Arc::new(v),
                dropped,
                sqrt_s,
                map,
                summary,
                training: None,
            })),
            n,
        })
    }
}

/// What a factor route needs of Z (n×r) and the targets Y (n×m): summed over row blocks when
/// Z is never held whole (`train::pipeline::stream`).
#[derive(Debug, Clone)]
pub(crate) struct FactorSums {
    /// ZᵀZ (r×r).
    pub ztz: Array2<f64>,
    /// ZᵀY (r×m).
    pub zty: Array2<f64>,
    /// ‖Y‖²_F.
    pub y_sq: f64,
    /// The rows summed over.
    pub n: usize,
}

impl FactorSums {
    /// The sums over no rows, for r factor columns and m outputs.
    pub fn zeros(r: usize, m: usize) -> Self {
        FactorSums {
            ztz: Array2::zeros((r, r)),
            zty: Array2::zeros((r, m)),
            y_sq: 0.0,
            n: 0,
        }
    }

    /// Add the sums over other rows (a disjoint part of the same table).
    pub fn add(&mut self, other: &FactorSums) {
        self.ztz += &other.ztz;
        self.zty += &other.zty;
        self.y_sq += other.y_sq;
        self.n += other.n;
    }
}

/// Peak bytes of a fit on a factor with n rows and r columns: Z (a round's residual columns
/// are computed and solved in Z's own memory), the r×r eigenproblem, the r×m rotation and the
/// blocked predictions, one block per thread in flight; the caller adds its own n×m blocks.
/// The eigenproblem's temporaries are freed before the predictions, but blocks of r×r below
/// glibc's mmap ceiling stay resident while the predictions' larger blocks are mapped fresh:
/// krr at r = 2000 on tmc2007 peaked while predicting at Z + 2.5 r² + a block per thread
/// (counted as the larger of the two, it read 0.88).
pub(crate) fn factor_peak_bytes(n: usize, r: usize, m: usize, n_test: usize) -> u64 {
    let in_flight = super::expansion::PREDICT_ROWS * rayon::current_num_threads().max(1);
    mats(1, n, r) + mats(4, r, r) + mats(3, r, m) + mats(1, n_test.min(in_flight), r)
}

/// Peak bytes of `InputSpectrum::exact` on ℓ rows: K, reduced to tridiagonal form in its own
/// memory (its reflectors are kept), T's eigenvectors V and the two ℓ×ℓ blocks of faer's divide
/// and conquer — 4 ℓ×ℓ — and one more freed block that stays resident while glibc keeps ℓ×ℓ
/// blocks in its heap (`mats_freed`). U is never formed (`linalg::Eigenvectors`); with U formed
/// and copied out of faer it was 6 ℓ×ℓ and one freed.
pub(crate) fn exact_spectrum_bytes(l: usize) -> u64 {
    mats(4, l, l) + mats_freed(1, l, l)
}

/// What a spectrum on a factor adds to `factor_peak_bytes` (r columns): ZᵀZ's eigenproblem —
/// its eigenvectors and faer's scratch — with V kept factored (`FactorBasis`). Blocks of r×r
/// below glibc's mmap threshold stay in the heap once freed, so they add up rather than
/// replace each other: 7.2 r² beside Z at r = 1000 (okl, ℓ = 3200) and 6.0 at r = 2000
/// (ℓ = 6400), measured across the factor and the eigenproblem (VmRSS traced, 2026-12-02), of
/// which `factor_peak_bytes` counts 4. Five had been counted before V stayed factored: the
/// compare rows of `bench lowrank` then read 1.13–1.16 and okl at ℓ = 6400, r = 2000 1.20.
pub(crate) fn spectrum_bytes(r: usize) -> u64 {
    mats(3, r, r)
}

/// The last low-rank spectrum built in this process, by a hash of everything it depends on.
static LAST_SPECTRUM: std::sync::Mutex<Option<(u64, InputSpectrum)>> = std::sync::Mutex::new(None);

/// The key of the spectrum `route` builds on these rows, if that route's spectrum is cached
/// (exact and low-rank; the Krylov route keys its own by λ, `krylov_key`).
fn cache_key_of(
    route: Route,
    kernel: &Kernel,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
    seed: u64,
) -> Option<u64> {
    match route {
        Route::Exact => Some(cache_key(kernel, x, y, "exact")),
        Route::LowRank {
            rank, landmarks, ..
        } => Some(cache_key(kernel, x, y, (rank, landmarks.name(), seed))),
        Route::Primal | Route::Krylov => None,
    }
}

fn cache_key(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
    route: impl std::hash::Hash,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut data = Fingerprint::new();
    data.array(x);
    data.array(y);
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{kernel:?}").hash(&mut h);
    (data.finish(), route).hash(&mut h);
    h.finish()
}

/// Drop the spectrum kept for the krr baseline (and the n×r Z it holds): the pipeline calls it
/// once the baseline is done.
pub fn forget_cached_spectrum() {
    let Ok(mut guard) = LAST_SPECTRUM.lock() else {
        return;
    };
    if let Some(t) = guard.as_ref().and_then(|(_, sp)| sp.training_features()) {
        // The model that shares these features may outlive the run's baseline.
        t.forget_shared();
    }
    *guard = None;
}

/// Whether `t` are the training features of the spectrum kept for the krr baseline: a model
/// on them then keeps the landmark kernel of the rows it predicts for the baseline's model.
pub(crate) fn kept_for_baseline(t: &TrainingFeatures) -> bool {
    let Ok(guard) = LAST_SPECTRUM.lock() else {
        return false;
    };
    guard
        .as_ref()
        .and_then(|(_, sp)| sp.training_features())
        .is_some_and(|k| std::ptr::eq(k.as_ref(), t))
}

/// The key of a Krylov route's spectrum (`methods::krylov`): it depends on λ through the
/// shifts its basis was grown for.
pub(crate) fn krylov_key(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    y: ArrayView2<f64>,
    lambda: f64,
) -> u64 {
    cache_key(kernel, x, y, ("krylov", lambda.to_bits()))
}

pub(crate) fn cached(key: u64) -> Option<InputSpectrum> {
    let guard = LAST_SPECTRUM.lock().ok()?;
    guard
        .as_ref()
        .filter(|(k, _)| *k == key)
        .map(|(_, sp)| sp.clone())
}

pub(crate) fn remember(key: u64, sp: &InputSpectrum) {
    if let Ok(mut guard) = LAST_SPECTRUM.lock() {
        *guard = Some((key, sp.clone()));
    }
}

fn check_rows(n: usize, y: ArrayView2<f64>) -> Result<()> {
    if n != y.nrows() {
        return Err(OvkError::internal(format!(
            "a {n}-row kernel for {} target rows",
            y.nrows()
        )));
    }
    Ok(())
}

/// `input_factor` as a phase of a fit: the Gram phase with one step per landmark, honouring a
/// cancel between steps.
pub(crate) fn factor_observed(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    rank: usize,
    landmarks: Landmarks,
    seed: u64,
    obs: &mut dyn Observer,
) -> Result<InputFactor> {
    obs.phase(Phase::Factor, Some(rank));
    let mut tick = |done: usize| -> Result<()> {
        obs.step(done, rank);
        check_cancel(obs)
    };
    input_factor(kernel, x, rank, landmarks, seed, &mut tick)
}
