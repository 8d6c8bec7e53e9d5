//! The models most methods return: `f(x) = Σᵢ k(x, xᵢ) cᵢ`, i.e. `Ŷ = K(X_new, X) · Coef`, and
//! its low-rank counterpart `Ŷ = Z(X_new) · β` through a factor's feature map.

use std::sync::{Arc, Mutex, OnceLock};

use ndarray::{s, Array2, ArrayView2, Axis, Zip};
use rayon::prelude::*;

use super::{Model, ModelParts};
use crate::kernels::{cross_gram, packed, FeatureMap, Kernel};
use crate::linalg::{matmul, solve_lower_t};
use crate::util::fingerprint::Fingerprint;
use crate::Result;

pub(crate) struct KernelExpansion {
    pub kernel: Kernel,
    pub x_train: Array2<f64>,
    /// ℓ×m coefficients (for OKL `C L`, for low-rank OKL `A Bᵀ`, kept factored).
    pub coef: Coef,
    /// `K C` on `x_train` when the fit had it for free (krr's exact solve: `Y − λC`), so the
    /// training rows' scores need no second n×n Gram matrix (never saved).
    pub fitted: Option<Arc<Array2<f64>>>,
}

/// An expansion's coefficients: dense (rows × m), or a product `A Bᵀ` (A rows×p, B m×p) kept
/// factored where that is smaller — low-rank OKL's ℓ×m product at m = 10⁵ outputs would
/// otherwise be most of a session.
#[derive(Clone)]
pub enum Coef {
    /// The coefficient matrix itself (rows×m).
    Dense(Array2<f64>),
    /// The product `a bᵀ`, with `a` rows×p and `b` m×p.
    Factored {
        /// The left factor A (rows×p).
        a: Array2<f64>,
        /// The right factor B (m×p).
        b: Array2<f64>,
    },
}

impl From<Array2<f64>> for Coef {
    fn from(c: Array2<f64>) -> Self {
        Coef::Dense(c)
    }
}

impl Coef {
    /// `A Bᵀ`, factored when `p (rows + m) < rows · m`.
    pub fn product(a: Array2<f64>, b: Array2<f64>) -> Coef {
        let (rows, p, m) = (a.nrows(), a.ncols(), b.nrows());
        if p * (rows + m) < rows * m {
            Coef::Factored { a, b }
        } else {
            Coef::Dense(matmul(a.view(), b.t()))
        }
    }

    /// The number of rows (expansion points) of the coefficients.
    pub fn nrows(&self) -> usize {
        match self {
            Coef::Dense(c) => c.nrows(),
            Coef::Factored { a, .. } => a.nrows(),
        }
    }

    /// Outputs m.
    pub fn ncols(&self) -> usize {
        match self {
            Coef::Dense(c) => c.ncols(),
            Coef::Factored { b, .. } => b.nrows(),
        }
    }

    /// `G · Coef` for a t×rows matrix G (a cross-Gram or features), never forming `A Bᵀ`.
    pub fn apply(&self, g: ArrayView2<f64>) -> Array2<f64> {
        match self {
            Coef::Dense(c) => matmul(g, c.view()),
            Coef::Factored { a, b } => matmul(matmul(g, a.view()).view(), b.t()),
        }
    }

    /// Saved as `coef`, or as `coef_a` and `coef_b`.
    fn into_parts(self, parts: ModelParts) -> ModelParts {
        match self {
            Coef::Dense(c) => parts.with_array("coef", c),
            Coef::Factored { a, b } => parts.with_array("coef_a", a).with_array("coef_b", b),
        }
    }

    fn from_parts(parts: &mut ModelParts) -> Result<Coef> {
        if parts.has_array("coef") {
            return Ok(Coef::Dense(parts.take_array("coef")?));
        }
        let a = parts.take_array("coef_a")?;
        let b = parts.take_array("coef_b")?;
        if a.ncols() != b.ncols() {
            return Err(parts.mismatch(&format!(
                "coefficient factors of rank {} and {}",
                a.ncols(),
                b.ncols()
            )));
        }
        Ok(Coef::Factored { a, b })
    }
}

impl KernelExpansion {
    pub(crate) const KIND: &'static str = "kernel-expansion";

    pub(crate) fn from_parts(mut parts: ModelParts) -> Result<Self> {
        let kernel = parts.setting("kernel")?;
        let x_train = parts.take_array("x_train")?;
        let coef = Coef::from_parts(&mut parts)?;
        if x_train.nrows() != coef.nrows() {
            return Err(parts.mismatch(&format!(
                "{} training rows but {} rows of coefficients",
                x_train.nrows(),
                coef.nrows()
            )));
        }
        Ok(KernelExpansion {
            kernel,
            x_train,
            coef,
            fitted: None,
        })
    }
}

impl Model for KernelExpansion {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        if let Some(fitted) = &self.fitted {
            if same_bits(x, self.x_train.view()) {
                return Ok(fitted.as_ref().clone());
            }
        }
        if self.kernel == Kernel::Linear && packed::is_packed(self.x_train.view()) {
            // K(x, X) C as X̃(X̃_trainᵀ C): O(nnz · m), the kernel never formed.
            let apply = |c: ArrayView2<f64>| packed::linear_cross_apply(x, self.x_train.view(), c);
            return Ok(match &self.coef {
                Coef::Dense(c) => apply(c.view())?,
                Coef::Factored { a, b } => matmul(apply(a.view())?.view(), b.t()),
            });
        }
        let k = cross_gram(&self.kernel, x, self.x_train.view())?;
        Ok(self.coef.apply(k.view()))
    }

    fn parts(&self) -> ModelParts {
        self.coef.clone().into_parts(
            ModelParts::new(Self::KIND)
                .with_setting("kernel", &self.kernel)
                .with_array("x_train", self.x_train.clone()),
        )
    }

    fn into_parts(self: Box<Self>) -> ModelParts {
        self.coef.into_parts(
            ModelParts::new(Self::KIND)
                .with_setting("kernel", &self.kernel)
                .with_array("x_train", self.x_train),
        )
    }

    fn n_features(&self) -> Option<usize> {
        Some(self.x_train.ncols())
    }
}

/// The model on a low-rank (or primal) input kernel: `f(x) = z(x)ᵀ β` with the factor's feature
/// map z and `β = ZᵀC` (r×m) — the landmarks stand in for the training set.
pub(crate) struct FeatureExpansion {
    pub map: FeatureMap,
    /// r×m coefficients in the factor's coordinates.
    pub coef: Coef,
    /// The factor's own rows and Z, while the fit that built them lives (never saved).
    pub training: Option<Arc<TrainingFeatures>>,
    /// A Nyström map's `L_S⁻ᵀ β`, made on first use (never saved): see `predict_through_map`.
    on_landmarks: OnceLock<Coef>,
}

/// The training rows a factor was built on and their features Z (n×r): predictions on exactly
/// those rows are `Z β`, not a second n×r pass of kernel evaluations and triangular solves.
#[derive(Debug)]
pub struct TrainingFeatures {
    /// The rows the fit saw, by their fingerprint (`util::fingerprint`: shape and every value
    /// bit for bit; any single changed value changes it). A copy of the rows was kept here
    /// before, 66 MiB beside Z on tmc2007.
    rows: u64,
    /// Their features, `Z` of `K ≈ ZZᵀ`.
    pub z: Array2<f64>,
    /// The landmark kernel `k(X', S)` of other rows X' (by row block), kept from one model's
    /// predictions for the next model on this factor that predicts the same rows: the krr
    /// baseline scores the test rows okl just scored, and their n'×r kernel was 0.14 s of a
    /// 2.7 s tmc2007 run. Taken by that second use, and dropped with the cached spectrum.
    shared: Mutex<Option<SharedRows>>,
}

/// `k(X', S)` by row block, with the fingerprint of the rows X' it was computed for.
#[derive(Debug)]
struct SharedRows {
    rows: u64,
    blocks: Vec<Array2<f64>>,
}

impl TrainingFeatures {
    /// Shared, for a model and the spectrum cached for the krr baseline.
    pub fn kept(x: ArrayView2<f64>, z: Array2<f64>) -> Arc<Self> {
        Arc::new(TrainingFeatures {
            rows: fingerprint_of(x),
            z,
            shared: Mutex::new(None),
        })
    }

    /// The landmark kernel of the rows fingerprinted `rows`, if a model kept it; taken.
    fn take_shared(&self, rows: u64) -> Option<Vec<Array2<f64>>> {
        let mut held = self.shared.lock().ok()?;
        match held.take() {
            Some(s) if s.rows == rows => Some(s.blocks),
            other => {
                *held = other;
                None
            }
        }
    }

    fn share(&self, rows: u64, blocks: Vec<Array2<f64>>) {
        if let Ok(mut held) = self.shared.lock() {
            *held = Some(SharedRows { rows, blocks });
        }
    }

    /// Drop a landmark kernel no second model took.
    pub(crate) fn forget_shared(&self) {
        if let Ok(mut held) = self.shared.lock() {
            *held = None;
        }
    }

    /// Z when `x` is the training rows (their shape and fingerprint), else None.
    pub fn of(&self, x: ArrayView2<f64>) -> Option<ArrayView2<'_, f64>> {
        (x.nrows() == self.z.nrows() && fingerprint_of(x) == self.rows).then(|| self.z.view())
    }
}

/// Whether `a` and `b` hold the same values bit for bit: rows a model was fitted on.
fn same_bits(a: ArrayView2<f64>, b: ArrayView2<f64>) -> bool {
    a.dim() == b.dim() && Zip::from(&a).and(&b).all(|x, y| x.to_bits() == y.to_bits())
}

/// The fingerprint of rows `x`: which rows a kept kernel or Z belongs to.
fn fingerprint_of(x: ArrayView2<f64>) -> u64 {
    let mut f = Fingerprint::new();
    f.array(x);
    f.finish()
}

impl FeatureExpansion {
    pub(crate) const KIND: &'static str = "feature-expansion";

    /// `z(x)ᵀ β` through `map`, with the factor's own rows and Z when the fit still holds them.
    pub(crate) fn new(
        map: FeatureMap,
        coef: Coef,
        training: Option<Arc<TrainingFeatures>>,
    ) -> Self {
        FeatureExpansion {
            map,
            coef,
            training,
            on_landmarks: OnceLock::new(),
        }
    }

    /// `z(x)ᵀ β = k(x, S) L_S⁻ᵀ β`: with `L_S⁻ᵀ β` (r×m) solved once, a row costs one kernel
    /// row and one product instead of a triangular solve of r² per row as well — half of a
    /// test set's prediction time at r = 1000. Solving β costs r² per output column, so it is
    /// done when the rows outnumber β's columns (or it is already there), and only when β has
    /// at most r columns: the solved copy is then no larger than L_S, which the memory
    /// estimates already hold (with 10⁵ outputs it would be a second β). The model's
    /// coefficients, and what the session saves, stay β.
    fn through_landmarks(&self, rows: usize, l_s: &Array2<f64>) -> Result<Option<&Coef>> {
        if let Some(c) = self.on_landmarks.get() {
            return Ok(Some(c));
        }
        let width = match &self.coef {
            Coef::Dense(c) => c.ncols(),
            Coef::Factored { a, .. } => a.ncols(),
        };
        if rows < width || width > l_s.nrows() {
            return Ok(None);
        }
        let solved = match &self.coef {
            Coef::Dense(c) => Coef::Dense(solve_lower_t(l_s.view(), c.view())?),
            Coef::Factored { a, b } => Coef::Factored {
                a: solve_lower_t(l_s.view(), a.view())?,
                b: b.clone(),
            },
        };
        Ok(Some(self.on_landmarks.get_or_init(|| solved)))
    }

    pub(crate) fn from_parts(mut parts: ModelParts) -> Result<Self> {
        let map = map_from_parts(&mut parts)?;
        let coef = Coef::from_parts(&mut parts)?;
        if let FeatureMap::Nystrom { l_s, .. } = &map {
            if coef.nrows() != l_s.nrows() {
                return Err(parts.mismatch(&format!(
                    "{} landmarks but {} rows of coefficients",
                    l_s.nrows(),
                    coef.nrows()
                )));
            }
        }
        Ok(FeatureExpansion::new(map, coef, None))
    }
}

/// `k(X', S) c` by row block, the blocks of `k(X', S)` taken from or left for the other model
/// on the factor `t` (see `TrainingFeatures::shared`). Called only when X' is at most one
/// block per thread: those blocks are in flight together anyway, so keeping them adds nothing
/// to the predictions' peak.
fn shared_landmark_kernel(
    t: &TrainingFeatures,
    x: ArrayView2<f64>,
    (kernel, x_landmarks): (&Kernel, ArrayView2<f64>),
    c: &Coef,
    mut out: Array2<f64>,
) -> Result<Array2<f64>> {
    let rows = fingerprint_of(x);
    let (blocks, keep) = match t.take_shared(rows) {
        Some(blocks) => (blocks, false),
        None => {
            let starts: Vec<usize> = (0..x.nrows()).step_by(PREDICT_ROWS).collect();
            let blocks = starts
                .into_par_iter()
                .map(|start| {
                    let end = (start + PREDICT_ROWS).min(x.nrows());
                    cross_gram(kernel, x.slice(s![start..end, ..]), x_landmarks)
                })
                .collect::<Result<Vec<_>>>()?;
            (blocks, true)
        }
    };
    let pairs: Vec<_> = out
        .axis_chunks_iter_mut(Axis(0), PREDICT_ROWS)
        .zip(&blocks)
        .collect();
    pairs
        .into_par_iter()
        .for_each(|(mut block, k)| block.assign(&c.apply(k.view())));
    if keep {
        t.share(rows, blocks);
    }
    Ok(out)
}

/// A feature map's parts: `feature_map` (`linear` or `nystrom`); for Nyström its `kernel`, the
/// landmarks' scaled inputs (`landmarks`, r×d) and `L_S` (`l_s`, r×r).
pub(crate) fn with_map(parts: ModelParts, map: &FeatureMap) -> ModelParts {
    match map {
        FeatureMap::Linear => parts.with_setting("feature_map", &"linear"),
        FeatureMap::Nystrom {
            kernel,
            x_landmarks,
            l_s,
        } => parts
            .with_setting("feature_map", &"nystrom")
            .with_setting("kernel", kernel)
            .with_array("landmarks", x_landmarks.clone())
            .with_array("l_s", l_s.clone()),
    }
}

/// The feature map back from `with_map`'s parts, its shapes checked.
pub(crate) fn map_from_parts(parts: &mut ModelParts) -> Result<FeatureMap> {
    let which: String = parts.setting("feature_map")?;
    match which.as_str() {
        "linear" => Ok(FeatureMap::Linear),
        "nystrom" => {
            let kernel = parts.setting("kernel")?;
            let x_landmarks = parts.take_array("landmarks")?;
            let l_s = parts.take_array("l_s")?;
            let r = x_landmarks.nrows();
            if l_s.dim() != (r, r) {
                return Err(parts.mismatch(&format!("{r} landmarks but L_S is {:?}", l_s.dim())));
            }
            Ok(FeatureMap::Nystrom {
                kernel,
                x_landmarks,
                l_s,
            })
        }
        other => Err(parts.mismatch(&format!("unknown feature map `{other}`"))),
    }
}

/// The number of input columns a feature map reads (`None` for the linear map, whose
/// coefficients say it).
pub(crate) fn map_features(map: &FeatureMap) -> Option<usize> {
    match map {
        FeatureMap::Linear => None,
        FeatureMap::Nystrom { x_landmarks, .. } => Some(x_landmarks.ncols()),
    }
}

/// Rows per block when predicting through a feature map: keeps the n×r features of a large
/// input from ever being whole in memory.
pub(crate) const PREDICT_ROWS: usize = 4096;

impl Model for FeatureExpansion {
    fn predict(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        let mut out = Array2::<f64>::zeros((x.nrows(), self.coef.ncols()));
        if let Some(z) = self.training.as_ref().and_then(|t| t.of(x)) {
            let pairs: Vec<_> = out
                .axis_chunks_iter_mut(Axis(0), PREDICT_ROWS)
                .zip(z.axis_chunks_iter(Axis(0), PREDICT_ROWS))
                .collect();
            pairs
                .into_par_iter()
                .for_each(|(mut block, z)| block.assign(&self.coef.apply(z)));
            return Ok(out);
        }
        let on_landmarks = match &self.map {
            FeatureMap::Nystrom {
                kernel,
                x_landmarks,
                l_s,
            } => self
                .through_landmarks(x.nrows(), l_s)?
                .map(|c| (kernel, x_landmarks, c)),
            FeatureMap::Linear => None,
        };
        if let (Some((kernel, x_landmarks, c)), Some(t)) = (on_landmarks, &self.training) {
            if super::input::kept_for_baseline(t)
                && x.nrows() <= PREDICT_ROWS * rayon::current_num_threads()
            {
                return shared_landmark_kernel(t, x, (kernel, x_landmarks.view()), c, out);
            }
        }
        let blocks: Vec<_> = out
            .axis_chunks_iter_mut(Axis(0), PREDICT_ROWS)
            .enumerate()
            .collect();
        blocks
            .into_par_iter()
            .try_for_each(|(b, mut block)| -> Result<()> {
                let start = b * PREDICT_ROWS;
                let rows = x.slice(s![start..start + block.nrows(), ..]);
                let y = match on_landmarks {
                    Some((kernel, x_landmarks, c)) => {
                        c.apply(cross_gram(kernel, rows, x_landmarks.view())?.view())
                    }
                    None => self.coef.apply(self.map.features(rows)?.view()),
                };
                block.assign(&y);
                Ok(())
            })?;
        Ok(out)
    }

    fn parts(&self) -> ModelParts {
        self.coef
            .clone()
            .into_parts(with_map(ModelParts::new(Self::KIND), &self.map))
    }

    fn into_parts(self: Box<Self>) -> ModelParts {
        let map = with_map(ModelParts::new(Self::KIND), &self.map);
        self.coef.into_parts(map)
    }

    fn n_features(&self) -> Option<usize> {
        map_features(&self.map).or(Some(self.coef.nrows()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::load_model;
    use crate::util::rng::Rng;

    fn random(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
        let mut rng = Rng::new(seed);
        Array2::from_shape_simple_fn((rows, cols), || rng.normal())
    }

    #[test]
    fn a_product_stays_factored_only_where_that_is_smaller() {
        let (a, b) = (random(30, 2, 1), random(40, 2, 2));
        assert!(matches!(Coef::product(a, b), Coef::Factored { .. }));
        let (a, b) = (random(3, 2, 1), random(2, 2, 2));
        assert!(matches!(Coef::product(a, b), Coef::Dense(_)));
    }

    #[test]
    fn a_factored_expansion_predicts_as_the_dense_product_and_round_trips() {
        let (a, b) = (random(30, 2, 1), random(40, 2, 2));
        let x = random(30, 3, 3);
        let x_new = random(7, 3, 4);
        let kernel = Kernel::Gaussian { sigma: 1.5 };
        let dense = KernelExpansion {
            kernel,
            x_train: x.clone(),
            coef: matmul(a.view(), b.t()).into(),
            fitted: None,
        };
        let factored = KernelExpansion {
            kernel,
            x_train: x,
            coef: Coef::product(a, b),
            fitted: None,
        };
        let want = dense.predict(x_new.view()).unwrap();
        let got = factored.predict(x_new.view()).unwrap();
        let diff = (&got - &want).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(diff < 1e-12, "{diff}");

        let parts = factored.parts();
        let names: Vec<&str> = parts.arrays.iter().map(|(n, _)| n.as_str()).collect();
        assert!(
            names.contains(&"coef_a") && !names.contains(&"coef"),
            "{names:?}"
        );
        let back = load_model(parts).unwrap();
        assert_eq!(back.predict(x_new.view()).unwrap(), got);

        let mut torn = factored.parts();
        torn.arrays.retain(|(n, _)| n != "coef_b");
        let e = load_model(torn).err().unwrap().to_string();
        assert!(e.contains("coef_b"), "{e}");
    }

    #[test]
    fn the_training_rows_are_predicted_from_the_fits_z_and_only_they() {
        use crate::kernels::{input_factor, Landmarks};
        let x = random(700, 3, 5);
        let kernel = Kernel::Gaussian { sigma: 1.2 };
        let f = input_factor(&kernel, x.view(), 60, Landmarks::Rpcholesky, 1, &mut |_| {
            Ok(())
        })
        .unwrap();
        let beta = random(f.rank(), 4, 6);
        let through_map = FeatureExpansion::new(f.map.clone(), beta.clone().into(), None);
        let kept = FeatureExpansion::new(
            f.map.clone(),
            beta.into(),
            Some(TrainingFeatures::kept(x.view(), f.z.clone())),
        );
        // Z β on the training rows: the feature map's values to rounding.
        let want = through_map.predict(x.view()).unwrap();
        let got = kept.predict(x.view()).unwrap();
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff = (&got - &want).iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(diff <= 1e-10 * scale, "{diff} of {scale}");
        // Other rows, even one value apart, go through the map.
        let mut moved = x.clone();
        moved[[699, 2]] += 1e-9;
        assert!(kept.training.as_ref().unwrap().of(moved.view()).is_none());
        assert_eq!(
            kept.predict(moved.view()).unwrap(),
            through_map.predict(moved.view()).unwrap()
        );
        // Never saved: the parts are the map's and the coefficients'.
        let names: Vec<String> = kept.parts().arrays.into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["landmarks", "l_s", "coef"], "{names:?}");
    }

    /// Two models on one factor (okl's and its krr baseline's): the second takes the landmark
    /// kernel of the rows the first predicted, and predicts what it would alone.
    #[test]
    fn a_second_model_on_the_factor_takes_the_landmark_kernel_the_first_kept() {
        let x = random(300, 4, 21);
        let f = gaussian_factor(x.view(), 40);
        let FeatureMap::Nystrom {
            kernel: k,
            x_landmarks,
            ..
        } = &f.map
        else {
            panic!("a Nyström factor")
        };
        let t = TrainingFeatures::kept(x.view(), f.z.clone());
        let r = f.rank();
        let (c1, c2) = (Coef::Dense(random(r, 3, 22)), Coef::Dense(random(r, 3, 23)));
        // more rows than one block, so the kept kernel is several blocks in order
        let rows = random(PREDICT_ROWS + 77, 4, 24);
        let alone = |c: &Coef| {
            c.apply(
                cross_gram(k, rows.view(), x_landmarks.view())
                    .unwrap()
                    .view(),
            )
        };
        let zeros = || Array2::zeros((rows.nrows(), 3));
        let landmarks = (k, x_landmarks.view());
        let first = shared_landmark_kernel(&t, rows.view(), landmarks, &c1, zeros()).unwrap();
        assert_eq!(first, alone(&c1));
        assert!(
            t.shared.lock().unwrap().is_some(),
            "kept for the second model"
        );
        let second = shared_landmark_kernel(&t, rows.view(), landmarks, &c2, zeros()).unwrap();
        assert_eq!(second, alone(&c2));
        assert!(
            t.shared.lock().unwrap().is_none(),
            "taken by the second model"
        );
        // Other rows never take a kernel kept for these.
        let _ = shared_landmark_kernel(&t, rows.view(), landmarks, &c1, zeros()).unwrap();
        let other = random(50, 4, 25);
        let got = shared_landmark_kernel(&t, other.view(), landmarks, &c2, Array2::zeros((50, 3)));
        let want = c2.apply(
            cross_gram(k, other.view(), x_landmarks.view())
                .unwrap()
                .view(),
        );
        assert_eq!(got.unwrap(), want);
        t.forget_shared();
        assert!(t.shared.lock().unwrap().is_none());
    }

    /// A Gaussian (σ = 0.9) RPCholesky factor of rank at most `r` on `x`.
    fn gaussian_factor(x: ArrayView2<f64>, r: usize) -> crate::kernels::InputFactor {
        use crate::kernels::{input_factor, Landmarks};
        let kernel = Kernel::Gaussian { sigma: 0.9 };
        input_factor(&kernel, x, r, Landmarks::Rpcholesky, 3, &mut |_| Ok(())).unwrap()
    }

    /// `k(x, S) (L_S⁻ᵀ β)` is `z(x)ᵀ β` for dense and factored β, taken once the rows
    /// outnumber β's columns; fewer rows go through the features, and the solved β stays unset,
    /// as it does for a β wider than the rank (its solved copy would be a second β).
    #[test]
    fn predictions_through_the_landmarks_equal_the_features_route() {
        let x = random(500, 4, 8);
        let f = gaussian_factor(x.view(), 80);
        let r = f.rank();
        let dense = Coef::Dense(random(r, 6, 9));
        let factored = Coef::Factored {
            a: random(r, 2, 10),
            b: random(30, 2, 11),
        };
        for coef in [dense, factored] {
            let width = match &coef {
                Coef::Dense(c) => c.ncols(),
                Coef::Factored { a, .. } => a.ncols(),
            };
            let model = FeatureExpansion::new(f.map.clone(), coef.clone(), None);
            let few = random(width - 1, 4, 12);
            let want = coef.apply(f.map.features(few.view()).unwrap().view());
            assert_eq!(model.predict(few.view()).unwrap(), want);
            assert!(model.on_landmarks.get().is_none());
            let many = random(PREDICT_ROWS + 300, 4, 13);
            let want = coef.apply(f.map.features(many.view()).unwrap().view());
            let got = model.predict(many.view()).unwrap();
            assert!(model.on_landmarks.get().is_some());
            let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let diff = (&got - &want).iter().fold(0.0f64, |m, v| m.max(v.abs()));
            assert!(diff <= 1e-9 * scale, "{diff} of {scale}");
            // Saved as β, not as the solved coefficients.
            let back = load_model(model.parts()).unwrap();
            assert_eq!(back.predict(many.view()).unwrap(), got);
        }
        let wide = Coef::Dense(random(r, r + 1, 14));
        let model = FeatureExpansion::new(f.map.clone(), wide.clone(), None);
        let many = random(PREDICT_ROWS + 300, 4, 15);
        let want = wide.apply(f.map.features(many.view()).unwrap().view());
        assert_eq!(model.predict(many.view()).unwrap(), want);
        assert!(model.on_landmarks.get().is_none());
    }
}
