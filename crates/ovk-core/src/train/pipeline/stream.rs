//! The streamed route: krr, okl and lowrank-okl on a factor of the input kernel with the table
//! read in row batches and the factor Z (n×r) never stored — the route past memory. With squared
//! loss a fit on a factor needs only ZᵀZ (r×r), ZᵀY (r×m) and ‖Y‖² (`methods::input`), so the
//! file is read three times, one batch of rows at a time (`data::batches`):
//! 1. **statistics**: the split (each row's side drawn from a hash of its index and the seed),
//!    the training rows' feature moments (the scaler), the targets' kind, and a uniform sample
//!    of training rows (reservoir sampling) — σ's median, the landmarks and the training
//!    metrics come from it;
//! 2. **sums**: `z(x)` for each training batch, accumulating ZᵀZ, ZᵀY and ‖Y‖² — apart over a
//!    validation part (drawn by another hash) when the method chooses λ on one, as lowrank-okl's
//!    path does: its validation MSE needs only that part's sums;
//! 3. **predictions**: the test rows through the fitted model and the krr baseline's.
//!
//! The fit is the in-memory factor route's, on the same spectrum. What differs, and is said in
//! the session's notes: the split is a per-row draw (the test part's size varies by a few
//! rows), the landmarks are picked among the sample's rows, and the training metrics are the
//! sample's.

use std::path::Path;
use std::time::Instant;

use ndarray::{s, Array2, ArrayView2};

use super::admit::{Admitted, Guidance};
use super::baseline::Baseline;
use super::fit::Fitted;
use super::record::{self, Stages};
use super::score::Scored;
use super::{Ended, WARNING};
use crate::data::batches::{column_names, for_each_batch, CSV_CHUNK_BYTES, PARQUET_SLICE_ROWS};
use crate::data::{
    select_columns, ClassCoding, DatasetInfo, Prepared, Scale, Scaler, StreamChoice, Task,
};
use crate::kernels::{
    check_fits_or, format_bytes, input_factor, kernel_diagonal, usable_bytes, FeatureMap, Kernel,
    KernelName,
};
use crate::linalg::{add_gram_tn_lower, add_matmul_tn, matmul, mirror_lower, select_rows};
use crate::methods::input::{FactorSummary, FactorSums, InputSpectrum};
use crate::methods::{
    self, check_cancel, mats, Method, MethodName, Observer, Params, Phase, Problem, ProblemShape,
    Route, LOADING_BYTES, RUNTIME_BYTES,
};
use crate::metrics;
use crate::session::{MetricMap, Metrics};
use crate::train::faults::watched_by;
use crate::train::RunConfig;
use crate::util::choice::Choice;
use crate::util::rng::Rng;
use crate::{OvkError, Result};

/// Training rows kept in memory as the sample: this many per factor column, at least
/// `SAMPLE_MIN` (σ's median and the landmarks need a few thousand).
const SAMPLE_PER_RANK: usize = 20;
const SAMPLE_MIN: usize = 20_000;

/// What the streamed route reads: the file's columns in their roles.
struct Plan {
    features: Vec<String>,
    targets: Vec<String>,
    /// `--test-column`, read beside them.
    test_column: Option<String>,
}

impl Plan {
    /// Every column a batch holds, in order: features, targets, then the test column.
    fn columns(&self) -> Vec<String> {
        let mut c = self.features.clone();
        c.extend(self.targets.iter().cloned());
        c.extend(self.test_column.iter().cloned());
        c
    }
    fn d(&self) -> usize {
        self.features.len()
    }
    fn m(&self) -> usize {
        self.targets.len()
    }
}

/// Whether `config` runs streamed: `Ok(Some(why))` when it does, `Ok(None)` when it takes the
/// in-memory route, an error when `--stream yes` cannot be honoured.
pub(super) fn chosen(method: &dyn Method, config: &RunConfig) -> Result<Option<String>> {
    match config.data.stream {
        StreamChoice::No => Ok(None),
        StreamChoice::Yes => {
            plan_of(method, config)?;
            Ok(Some("--stream yes".into()))
        }
        StreamChoice::Auto => {
            if refusal(method, config).is_some() {
                return Ok(None);
            }
            // The file is only peeked at here (its header, or a Parquet footer, and a row
            // count): the in-memory route reads it safely when it is not streamed.
            let Some((names, n)) = peek(&config.data.path) else {
                return Ok(None);
            };
            let Ok(plan) = plan_from(config, &names) else {
                return Ok(None);
            };
            let Some(usable) = usable_bytes()? else {
                return Ok(None);
            };
            let n_test = ((n as f64 * config.data.test_fraction).round() as usize).min(n);
            let shape = shape(config, &plan, n - n_test, n_test);
            let rank = match shape.route(n - n_test) {
                Ok(Route::LowRank { rank, .. }) => rank,
                Ok(Route::Primal) => shape.d,
                _ => return Ok(None),
            };
            let in_memory = in_memory_bytes(method, config, &shape)?;
            let sample = (SAMPLE_PER_RANK * rank).max(SAMPLE_MIN).min(shape.n_train);
            let streamed = streamed_bytes(method, config, &shape, rank, sample)?;
            Ok((in_memory > usable && streamed <= usable).then(|| {
                format!(
                    "the in-memory route needs about {} for about {n} rows and {} is available: \
                     the table is read in row batches and the factor Z is never stored (about \
                     {}; --stream no to refuse instead)",
                    format_bytes(in_memory),
                    format_bytes(usable),
                    format_bytes(streamed)
                )
            }))
        }
    }
}

/// A data file's column names and (about) its row count, without reading it whole or through
/// polars: a CSV's header line and its line ends in the first MiB scaled to the file's size; a
/// Parquet footer's. `None` when the file is not plainly a table (the in-memory route then
/// reads it and says why).
fn peek(path: &Path) -> Option<(Vec<String>, usize)> {
    use std::io::Read;
    const SAMPLE: usize = 1 << 20;
    match crate::data::format_of(path).ok()? {
        crate::data::Format::Parquet => {
            let names = column_names(path).ok()?;
            Some((names, crate::data::batches::parquet_rows(path).ok()?))
        }
        crate::data::Format::Csv { separator } => {
            let (f, meta) = crate::data::files::open_regular(path, "data").ok()?;
            let mut head = Vec::with_capacity(SAMPLE);
            f.take(SAMPLE as u64).read_to_end(&mut head).ok()?;
            if head.contains(&0) {
                return None;
            }
            let end = head.iter().position(|&b| b == b'\n')?;
            let header = std::str::from_utf8(&head[..end]).ok()?;
            let names = header
                .trim_end_matches('\r')
                .split(separator as char)
                .map(|c| c.trim().trim_matches('"').to_string())
                .collect();
            let body = &head[end + 1..];
            let lines = body.iter().filter(|&&b| b == b'\n').count();
            let rows = if head.len() as u64 == meta.len() {
                lines + usize::from(body.last().is_some_and(|&b| b != b'\n'))
            } else {
                let per_line = body.len() as f64 / lines.max(1) as f64;
                ((meta.len() - end as u64 - 1) as f64 / per_line) as usize
            };
            Some((names, rows))
        }
    }
}

/// Why `config` cannot run streamed, from its settings alone (the file unread), if it cannot.
fn refusal(method: &dyn Method, config: &RunConfig) -> Option<String> {
    let streamed = MethodName::parse(method.name()).is_ok_and(|n| methods::STREAMED.contains(&n));
    if !streamed {
        let names: Vec<&str> = methods::STREAMED.iter().map(|m| m.name()).collect();
        return Some(format!(
            "{} has no streamed route (only {} do: squared loss on a factor of the input kernel)",
            method.name(),
            names.join(", ")
        ));
    }
    let d = &config.data;
    let unsupported = [
        (
            d.class.is_some(),
            "a class column (multi-class) needs its levels before the first batch",
        ),
        (d.views.is_some(), "views are for multi-view methods"),
        (
            d.labeled.is_some(),
            "--labeled is for semi-supervised methods",
        ),
        (
            d.cv.is_some() || d.outer.is_some() || config.cv.is_some(),
            "cross-validation folds need the rows in memory",
        ),
        (
            d.train_rows.is_some(),
            "a training subset (successive halving) is drawn in memory",
        ),
        (
            config.select_on.is_test(),
            "--select-on test scores the path on the test rows, which are read after the fit",
        ),
        (
            d.drop_missing || d.impute_missing,
            "missing cells are refused, not dropped or imputed",
        ),
        (
            !d.target_scale.is_none(),
            "--target-scale is not streamed yet",
        ),
        (
            config.kernel.name == KernelName::Precomputed,
            "a precomputed Gram matrix is n×n in memory",
        ),
        (
            config.kernel.input_rank == crate::kernels::InputRank::Exact
                && config.kernel.name != KernelName::Linear,
            "the exact input kernel is an n×n matrix; give --input-rank R (a rank-R factor)",
        ),
    ];
    if let Some((_, why)) = unsupported.iter().find(|(on, _)| *on) {
        return Some(why.to_string());
    }
    if crate::data::format_of(&d.path).is_err() {
        return Some(format!(
            "{} is not CSV, TSV or Parquet (the formats read in batches)",
            d.path.display()
        ));
    }
    None
}

/// What the guard adds to its advice when a run on a factor would not fit in memory: the
/// streamed route with its own estimate, where the run can take it.
pub(super) fn advice(
    method: &dyn Method,
    shape: &ProblemShape,
    route: Route,
    config: &RunConfig,
) -> Option<String> {
    let r = match route {
        Route::LowRank { rank, .. } => rank,
        Route::Primal => shape.d,
        Route::Exact | Route::Krylov => crate::methods::input::AUTO_RANK.min(shape.n_labeled),
    };
    if refusal(method, config).is_some() {
        return None;
    }
    let sample = (SAMPLE_PER_RANK * r).max(SAMPLE_MIN).min(shape.n_train);
    let flags = match route {
        Route::LowRank { .. } | Route::Primal => "--stream yes".to_string(),
        Route::Exact | Route::Krylov => format!("--stream yes --input-rank {r}"),
    };
    let bytes = streamed_bytes(method, config, shape, r, sample).ok()?;
    Some(format!(
        "{flags} reads the rows in batches and never stores the factor Z: about {}",
        format_bytes(bytes)
    ))
}

fn refused(why: String) -> OvkError {
    OvkError::input(format!(
        "--stream yes: {why}; use --stream no (the in-memory route) or change the run"
    ))
}

/// The columns a streamed run reads, or why it cannot be streamed.
fn plan_of(method: &dyn Method, config: &RunConfig) -> Result<Plan> {
    if let Some(why) = refusal(method, config) {
        return Err(refused(why));
    }
    plan_from(config, &column_names(&config.data.path)?)
}

/// The columns in their roles, among the file's `names`.
fn plan_from(config: &RunConfig, names: &[String]) -> Result<Plan> {
    let refuse = refused;
    let d = &config.data;
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let Some(target_sel) = &d.targets else {
        return Err(refuse("name the target columns with --targets".into()));
    };
    let targets: Vec<String> = select_columns(&d.path, &refs, target_sel)?
        .into_iter()
        .map(|i| names[i].clone())
        .collect();
    let test_column = d.test_column.clone();
    if let Some(t) = &test_column {
        if !names.contains(t) {
            return Err(OvkError::input(format!(
                "{}: --test-column `{t}` is not a column",
                d.path.display()
            )));
        }
    }
    let features: Vec<String> = match &d.features {
        Some(sel) => select_columns(&d.path, &refs, sel)?
            .into_iter()
            .map(|i| names[i].clone())
            .collect(),
        None => names
            .iter()
            .filter(|n| !targets.contains(n) && test_column.as_ref() != Some(*n))
            .cloned()
            .collect(),
    };
    if features.is_empty() {
        return Err(refuse("no feature column is left".into()));
    }
    if let Some(both) = features.iter().find(|f| targets.contains(f)) {
        return Err(OvkError::input(format!(
            "`{both}` is both a feature and a target"
        )));
    }
    Ok(Plan {
        features,
        targets,
        test_column,
    })
}

/// The in-memory route's peak for `n` rows: the read (the file's bytes and polars' columns) and
/// the run's own estimate.
fn in_memory_bytes(method: &dyn Method, config: &RunConfig, shape: &ProblemShape) -> Result<u64> {
    let file = std::fs::metadata(&config.data.path).map_or(0, |m| m.len());
    let run = super::admit::peak_estimate(method, shape, &config.params)?;
    Ok(run.max(file.saturating_mul(2)))
}

fn shape(config: &RunConfig, plan: &Plan, n_train: usize, n_test: usize) -> ProblemShape {
    ProblemShape {
        n_train,
        n_labeled: n_train,
        n_test,
        d: plan.d(),
        m: plan.m(),
        views: 0,
        input_rank: config.kernel.input_rank,
        landmarks: config.kernel.landmarks,
        linear: config.kernel.name == KernelName::Linear,
        sparse_linear: false,
    }
}

/// Peak bytes of the streamed route. Held throughout: the r×r and r×m sums with the
/// eigenproblem, the sample, the test part's targets and predictions (the method's and the
/// baseline's) and the split's row lists. On top, the larger of the landmark phase (the sample's
/// factor, dropped once its map is taken) and a batch in flight: a Parquet slice or CSV chunk
/// decoded by polars, as a matrix and as its scaled training rows, with the features z(x) of one
/// block; and the loader's and the fit's fixed costs. Measured within 0.99–1.10 of the peak at
/// 10⁶ rows, CSV and Parquet, okl and lowrank-okl (docs/performance.md, streaming).
pub(crate) fn stream_peak_bytes(
    s: &ProblemShape,
    r: usize,
    sample: usize,
    path: &Path,
    fit_bytes: u64,
) -> u64 {
    let rows = s.n_train + s.n_test;
    let n = rows as u64;
    // A batch's rows: a Parquet slice, or the lines of a CSV chunk (the file's mean line length
    // from its size); with a CSV chunk's bytes and their copy with the header in front.
    let (b, text) = match crate::data::format_of(path) {
        Ok(crate::data::Format::Csv { .. }) => {
            let size = std::fs::metadata(path).map_or(0, |m| m.len());
            let line = (size / n.max(1)).max(1);
            let b = usize::try_from(CSV_CHUNK_BYTES as u64 / line + 1).unwrap_or(usize::MAX);
            (b.min(rows), 2 * CSV_CHUNK_BYTES as u64)
        }
        _ => (PARQUET_SLICE_ROWS.min(rows), 0),
    };
    let held = mats(6, r, r)
        .saturating_add(fit_bytes)
        .saturating_add(mats(1, sample, s.d + s.m))
        .saturating_add(mats(3, s.n_test, s.m))
        // row lists and their JSON in the session
        .saturating_add(n.saturating_mul(8 + 12));
    let landmarks = crate::methods::input::factor_peak_bytes(sample, r, s.m, 0);
    let batch = mats(3, b, s.d + s.m + 1)
        .saturating_add(mats(3, FEATURE_ROWS.min(b), r))
        .saturating_add(text);
    held.saturating_add(landmarks.max(batch))
        .saturating_add(LOADING_BYTES + RUNTIME_BYTES)
}

/// `stream_peak_bytes` for `method` as `config` sets it up.
fn streamed_bytes(
    method: &dyn Method,
    config: &RunConfig,
    shape: &ProblemShape,
    r: usize,
    sample: usize,
) -> Result<u64> {
    let name = MethodName::parse(method.name())?;
    let fit = methods::streamed_fit_bytes(name, r, shape.m, &config.params)?;
    Ok(stream_peak_bytes(shape, r, sample, &config.data.path, fit))
}

/// A batch's rows are mapped to z(x) this many at a time: the n×r blocks stay small (65 MB at
/// r = 1000) while their products keep matrix-product speed.
const FEATURE_ROWS: usize = 8192;

/// Add the coded rows `c` into `sums` (their z(x) a block of rows at a time); returns their
/// share of the trace error's two sums, `Σ k(x, x)` and `‖Z‖²`.
fn add_rows(
    map: &FeatureMap,
    kernel: &Kernel,
    c: &Coded,
    sums: &mut FactorSums,
) -> Result<(f64, f64)> {
    let n = c.y.nrows();
    let mut z_sq = 0.0;
    for lo in (0..n).step_by(FEATURE_ROWS) {
        let rows = lo..(lo + FEATURE_ROWS).min(n);
        let (x, y) = (c.x.slice(s![rows.clone(), ..]), c.y.slice(s![rows, ..]));
        let z = map.features(x)?;
        add_gram_tn_lower(&mut sums.ztz, z.view()); // ZᵀZ
        add_matmul_tn(&mut sums.zty, z.view(), y); // ZᵀY
        z_sq += z.iter().map(|v| v * v).sum::<f64>();
    }
    sums.y_sq += c.y.iter().map(|v| v * v).sum::<f64>();
    sums.n += n;
    Ok((kernel_diagonal(kernel, c.x.view()).iter().sum(), z_sq))
}

/// The weights W of a streamed fit's model `z(x)ᵀ W`: r×m, or kept as the two factors of
/// lowrank-okl's `A Bᵀ` (r×p and m×p), whose product would be r×m where p is small.
struct Weights {
    w: Array2<f64>,
    b: Option<Array2<f64>>,
}

impl Weights {
    /// `z W` for the rows `z` of the factor's features.
    fn apply(&self, z: ArrayView2<f64>) -> Array2<f64> {
        let zw = matmul(z, self.w.view());
        match &self.b {
            Some(b) => matmul(zw.view(), b.t()),
            None => zw,
        }
    }
}

/// The weights of a streamed fit's model `z(x)ᵀ W`: `ZᵀC` (krr), `ZᵀC L` (okl) or `ZᵀA · Bᵀ`
/// (lowrank-okl), from the matrices the fit saved — checked against the model itself on `probe`
/// rows, so a method whose model is anything else is an internal error, not a wrong prediction.
fn streamed_weights(
    fit: &crate::methods::Fit,
    map: &FeatureMap,
    probe: ArrayView2<f64>,
) -> Result<Weights> {
    let named = |n: &str| fit.matrices.iter().find(|(k, _)| k == n).map(|(_, a)| a);
    let c = named("feature_coefficients")
        .ok_or_else(|| OvkError::internal("a streamed fit without feature_coefficients"))?;
    let w = match (named("factor_b"), named("output_kernel")) {
        (Some(b), _) => Weights {
            w: c.clone(),
            b: Some(b.clone()),
        },
        (None, Some(l)) => Weights {
            w: matmul(c.view(), l.view()),
            b: None,
        },
        (None, None) => Weights {
            w: c.clone(),
            b: None,
        },
    };
    let probe = probe.slice(s![..probe.nrows().min(256), ..]);
    let (direct, model) = (
        w.apply(map.features(probe)?.view()),
        fit.model.predict(probe)?,
    );
    let scale = model.iter().fold(0.0f64, |a, v| a.max(v.abs())).max(1e-300);
    let gap = direct
        .iter()
        .zip(&model)
        .fold(0.0f64, |a, (p, q)| a.max((p - q).abs()));
    if gap > 1e-9 * scale {
        return Err(OvkError::internal(format!(
            "a streamed fit's weights predict {gap:e} away from its model"
        )));
    }
    Ok(w)
}

/// Training rows and their moments, the test rows, and the sample: pass 1's findings.
struct Statistics {
    rows: usize,
    train_rows: Vec<usize>,
    test_rows: Vec<usize>,
    /// The training rows' feature moments.
    moments: Moments,
    /// Every target cell is 0 or 1.
    binary: bool,
    /// Sampled training rows (features then targets, unscaled and uncoded).
    sample: Vec<Vec<f64>>,
}

/// Whether data row `row` is a test row: a draw from a hash of the row and the seed (the
/// in-memory split shuffles all rows, which a single pass cannot).
fn in_test(seed: u64, row: usize, fraction: f64) -> bool {
    drawn(seed, row, fraction)
}

/// Whether training row `row` is in the validation part of a method that chooses on one: a draw
/// of its own, salted apart from the test draw.
fn in_validation(seed: u64, row: usize, fraction: f64) -> bool {
    drawn(seed ^ 0x7a11_da7e_5eed_0001, row, fraction)
}

/// A uniform draw in [0, 1) from a hash of `row` and `seed`, below `fraction`.
fn drawn(seed: u64, row: usize, fraction: f64) -> bool {
    let mut z = seed ^ (row as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    // splitmix64's finaliser
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 11) as f64) / ((1u64 << 53) as f64) < fraction
}

/// Each batch row's side: test (true) or training.
fn sides(config: &RunConfig, plan: &Plan, first: usize, block: ArrayView2<f64>) -> Vec<bool> {
    match &plan.test_column {
        Some(_) => block
            .column(block.ncols() - 1)
            .iter()
            .map(|&v| v != 0.0)
            .collect(),
        None => (0..block.nrows())
            .map(|i| in_test(config.data.seed, first + i, config.data.test_fraction))
            .collect(),
    }
}

fn pass_statistics(
    config: &RunConfig,
    plan: &Plan,
    sample_size: usize,
    total: usize,
    obs: &mut dyn Observer,
) -> Result<Statistics> {
    let (d, m) = (plan.d(), plan.m());
    let mut st = Statistics {
        rows: 0,
        train_rows: Vec::new(),
        test_rows: Vec::new(),
        moments: Moments::new(d),
        binary: true,
        sample: Vec::new(),
    };
    let mut rng = Rng::new(config.data.seed ^ 0x5354_5245_414D); // "STREAM"
    let mut seen = 0usize;
    let rows = for_each_batch(&config.data.path, &plan.columns(), |first, block| {
        check_cancel(obs)?;
        let test = sides(config, plan, first, block.view());
        let train: Vec<usize> = (0..block.nrows()).filter(|&i| !test[i]).collect();
        st.binary &= block
            .slice(s![.., d..d + m])
            .iter()
            .all(|&v| v == 0.0 || v == 1.0);
        for (i, &t) in test.iter().enumerate() {
            if t {
                st.test_rows.push(first + i);
            } else {
                st.train_rows.push(first + i);
            }
        }
        st.moments.merge(block.view(), &train);
        // Reservoir sampling (Vitter's algorithm R): each training row kept with equal chance.
        let row = |i: usize| block.row(i).slice(s![..d + m]).to_vec();
        for &i in &train {
            if st.sample.len() < sample_size {
                st.sample.push(row(i));
            } else {
                let j = rng.below(seen + 1);
                if j < sample_size {
                    st.sample[j] = row(i);
                }
            }
            seen += 1;
        }
        let done = first + block.nrows();
        obs.step(done, total.max(done));
        Ok(true)
    })?;
    st.rows = rows;
    Ok(st)
}

/// Per feature column: the rows' count, mean and sum of squared deviations, merged one batch
/// at a time (Chan, Golub and LeVeque's pairwise update: no cancellation of large sums).
struct Moments {
    count: f64,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

impl Moments {
    fn new(d: usize) -> Self {
        Moments {
            count: 0.0,
            mean: vec![0.0; d],
            m2: vec![0.0; d],
        }
    }

    /// Merge rows `rows` of `block`'s first `mean.len()` columns.
    fn merge(&mut self, block: ArrayView2<f64>, rows: &[usize]) {
        let nb = rows.len() as f64;
        if nb == 0.0 {
            return;
        }
        for j in 0..self.mean.len() {
            let col = rows.iter().map(|&i| block[[i, j]]);
            let mean_b = col.clone().sum::<f64>() / nb;
            let m2_b: f64 = col.map(|v| (v - mean_b) * (v - mean_b)).sum();
            let both = self.count + nb;
            let delta = mean_b - self.mean[j];
            self.mean[j] += delta * nb / both;
            self.m2[j] += m2_b + delta * delta * self.count * nb / both;
        }
        self.count += nb;
    }

    /// The scaler these moments give: the in-memory scaler's mean and population std.
    fn scaler(&self, scale: Scale) -> Scaler {
        match scale {
            Scale::None => Scaler::identity(self.mean.len()),
            Scale::Standard => Scaler {
                mean: self.mean.clone(),
                std: self
                    .m2
                    .iter()
                    .map(|&q| {
                        let s = (q / self.count.max(1.0)).sqrt();
                        if s > 0.0 && s.is_finite() {
                            s
                        } else {
                            1.0
                        }
                    })
                    .collect(),
            },
        }
    }
}

/// The scaled features and coded targets of a block's rows `rows`.
struct Coded {
    x: Array2<f64>,
    y: Array2<f64>,
}

fn coded(
    block: ArrayView2<f64>,
    rows: &[usize],
    d: usize,
    m: usize,
    scaler: &Scaler,
    code: &dyn Fn(f64) -> f64,
) -> Coded {
    let picked = select_rows(block.view(), rows);
    let mut x = picked.slice(s![.., ..d]).to_owned();
    scaler.apply(&mut x);
    let y = picked.slice(s![.., d..d + m]).mapv(code);
    Coded { x, y }
}

/// The streamed run, start to finish.
pub(super) fn run(
    method: &dyn Method,
    config: &RunConfig,
    why: String,
    obs: &mut dyn Observer,
) -> Result<Ended> {
    let t_start = Instant::now();
    let base_rss = crate::kernels::rss_bytes();
    let name = MethodName::parse(method.name())?;
    let plan = plan_of(method, config)?;
    let (d, m) = (plan.d(), plan.m());
    let path = config.data.path.clone();

    // Pass 1: the split, the scaler, the sample.
    obs.phase(Phase::Loading, None);
    let rank_hint = match config.kernel.input_rank {
        crate::kernels::InputRank::Rank(r) => r,
        _ => crate::methods::input::AUTO_RANK,
    };
    let sample_size = (SAMPLE_PER_RANK * rank_hint).max(SAMPLE_MIN);
    // For the progress gauge: a Parquet footer's count, a CSV's estimate from its first MiB.
    let total = peek(&path).map_or(0, |(_, n)| n);
    let st = pass_statistics(config, &plan, sample_size, total, obs)?;
    let (n_train, n_test) = (st.train_rows.len(), st.test_rows.len());
    if n_train < 2 {
        return Err(OvkError::input(format!(
            "{}: the streamed split left {n_train} training row(s) of {}; lower --test-fraction",
            path.display(),
            st.rows
        )));
    }
    let scaler = st.moments.scaler(config.data.scale);
    let task = match config.data.task {
        Some(Task::Multiclass) => {
            return Err(OvkError::input(
                "--stream: a multi-class task needs a class column, which is not streamed",
            ))
        }
        Some(t) => t,
        None if m >= 2 && st.binary => Task::Multilabel,
        None => Task::Regression,
    };
    if task == Task::Multilabel && !st.binary {
        return Err(OvkError::input(format!(
            "{}: task multilabel needs 0/1 label columns",
            path.display()
        )));
    }
    let coding = config.data.class_coding;
    let off = match coding {
        ClassCoding::Pm1 => -1.0,
        ClassCoding::ZeroOne => 0.0,
    };
    let code = move |v: f64| match task {
        Task::Multilabel if v == 0.0 => off,
        _ => v,
    };
    let sample = Array2::from_shape_fn((st.sample.len(), d + m), |(i, j)| st.sample[i][j]);
    let all: Vec<usize> = (0..sample.nrows()).collect();
    let sample = coded(sample.view(), &all, d, m, &scaler, &code);
    let kernel = config.kernel.resolve(sample.x.view())?;
    let route = Route::resolve(
        config.kernel.input_rank,
        config.kernel.landmarks,
        config.kernel.name == KernelName::Linear,
        n_train,
        d,
    )?;
    let shape = shape(config, &plan, n_train, n_test);
    let rank = match route {
        Route::LowRank { rank, .. } => rank.min(sample.x.nrows()),
        Route::Primal => d,
        Route::Exact | Route::Krylov => {
            return Err(OvkError::input(format!(
                "--stream: the exact input kernel is an n×n matrix of the {n_train} training \
                 rows; give --input-rank R (a rank-R factor) to stream"
            )))
        }
    };
    let estimate = streamed_bytes(method, config, &shape, rank, sample.x.nrows())?;
    check_fits_or(
        estimate,
        &format!(
            "{} streamed on {n_train} training rows ({m} outputs)",
            method.name()
        ),
        "lower --input-rank",
    )?;
    let batches = match crate::data::format_of(&path)? {
        crate::data::Format::Parquet => format!("slices of {PARQUET_SLICE_ROWS} rows"),
        crate::data::Format::Csv { .. } => format!("chunks of {} MiB", CSV_CHUNK_BYTES >> 20),
    };
    let split = match &plan.test_column {
        Some(c) => format!("The test rows are those `{c}` marks ({n_test})"),
        None => format!(
            "The split draws each row's side from a hash of its index and the seed ({n_test} \
             test rows)"
        ),
    };
    let mut notes = vec![format!(
        "streamed: {why}; the file was read three times in {batches} \
         (statistics, sums, predictions). {split}; the landmarks and σ's median come from a \
         uniform sample of {} training rows, and the training metrics are that sample's",
        sample.x.nrows()
    )];
    if let Some(w) =
        crate::train::width_warning(&config.kernel, sample.x.view(), &[], config.data.scale)
    {
        notes.insert(0, format!("{WARNING}{w}"));
    }
    for n in &notes {
        obs.note(n);
    }
    let load_s = t_start.elapsed().as_secs_f64();

    // The factor's map, from the sample.
    let t_fit = Instant::now();
    let (map, landmarks, requested) = match route {
        Route::LowRank { landmarks, .. } => {
            obs.phase(Phase::Factor, Some(rank));
            let mut tick = |done: usize| -> Result<()> {
                obs.step(done, rank);
                check_cancel(obs)
            };
            let f = input_factor(
                &kernel,
                sample.x.view(),
                rank,
                landmarks,
                config.data.seed,
                &mut tick,
            )?;
            (f.map, Some(landmarks), rank)
        }
        _ => (FeatureMap::Linear, None, d),
    };
    let r = map.dim(d);

    // Pass 2: ZᵀZ, ZᵀY, ‖Y‖² — over the fit and validation parts apart when the method
    // chooses on a validation part — and the trace error's two sums.
    obs.phase(Phase::Sums, None);
    // The validation part's share and its sums, when the method chooses on one.
    let mut val_part =
        methods::streamed_validation(name, &config.params)?.map(|f| (f, FactorSums::zeros(r, m)));
    let val_fraction = val_part.as_ref().map(|&(f, _)| f);
    let mut sums = FactorSums::zeros(r, m);
    let (mut trace_k, mut z_sq) = (0.0, 0.0);
    let total = st.rows;
    for_each_batch(&path, &plan.columns(), |first, block| {
        check_cancel(obs)?;
        let test = sides(config, &plan, first, block.view());
        let held =
            |i: &usize| val_fraction.is_some_and(|f| in_validation(config.data.seed, first + i, f));
        let (val, fit): (Vec<usize>, Vec<usize>) =
            (0..block.nrows()).filter(|&i| !test[i]).partition(held);
        let val_sums = val_part.as_mut().map(|(_, v)| v);
        for (rows, part) in [(fit, Some(&mut sums)), (val, val_sums)] {
            if let (false, Some(part)) = (rows.is_empty(), part) {
                let c = coded(block.view(), &rows, d, m, &scaler, &code);
                let (t, z) = add_rows(&map, &kernel, &c, part)?;
                trace_k += t;
                z_sq += z;
            }
        }
        obs.step(first + block.nrows(), total);
        Ok(true)
    })?;
    check_cancel(obs)?;
    obs.phase(Phase::Decomposition, None);
    let summary = FactorSummary {
        route: route.name(),
        requested,
        rank: r,
        landmarks,
        trace_error: if trace_k > 0.0 {
            ((trace_k - z_sq) / trace_k).max(0.0)
        } else {
            0.0
        },
        seconds: t_fit.elapsed().as_secs_f64(),
    };
    mirror_lower(&mut sums.ztz);
    let held = match val_part {
        Some((f, mut val)) => {
            if val.n == 0 || sums.n == 0 {
                return Err(OvkError::input(format!(
                    "{}: --val-fraction {f} drew {} of the {n_train} training rows for \
                     validation and left {} to fit; both need at least one row",
                    method.name(),
                    val.n,
                    sums.n
                )));
            }
            mirror_lower(&mut val.ztz);
            let fit = InputSpectrum::from_sums(sums.clone(), map.clone(), summary.clone())?;
            sums.add(&val);
            Some(methods::HeldOut { fit, val })
        }
        None => None,
    };
    let y_norm = sums.y_sq.sqrt();
    let sp = InputSpectrum::from_sums(sums, map.clone(), summary)?;
    let problem = Problem::new(Array2::zeros((0, d)), Array2::zeros((0, m)), kernel)
        .with_task(task)
        .with_kernel_spec(config.kernel.clone())
        .with_seed(config.data.seed);
    let mut problem = problem;
    problem.feature_names = plan.features.clone();
    problem.output_names = plan.targets.clone();
    let watched = watched_by(method, &config.params, obs, |o| {
        methods::fit_streamed(name, &problem, sp.clone(), held, y_norm, &config.params, o)
    });
    let (fit, trace, fit_notes) = match watched {
        Ok(w) => (w.fit, w.trace, w.notes),
        Err(u) if matches!(u.error, OvkError::Cancelled) => return Err(OvkError::Cancelled),
        Err(u) => return Err(u.error),
    };
    let krr_params = match config.params.0.get("lambda") {
        Some(v) => Params::new().with("lambda", v.clone()),
        None => Params::new(),
    };
    let base = if name == MethodName::Krr {
        None
    } else {
        methods::fit_streamed(
            MethodName::Krr,
            &problem,
            sp,
            None,
            y_norm,
            &krr_params,
            &mut methods::Silent,
        )
        .ok()
    };
    let fit_s = t_fit.elapsed().as_secs_f64();

    // Pass 3: the test rows through both models. Both predict z(x)ᵀW on the same map, so each
    // block's z(x) — the pass's whole cost — is computed once for the two.
    obs.phase(Phase::Predicting, None);
    let t_pred = Instant::now();
    let w = streamed_weights(&fit, &map, sample.x.view())?;
    let w_base = base
        .as_ref()
        .map(|b| streamed_weights(b, &map, sample.x.view()))
        .transpose()?;
    let mut y_test = Vec::with_capacity(n_test * m);
    let mut pred = Vec::with_capacity(n_test * m);
    let mut pred_base = Vec::with_capacity(if base.is_some() { n_test * m } else { 0 });
    for_each_batch(&path, &plan.columns(), |first, block| {
        check_cancel(obs)?;
        let test = sides(config, &plan, first, block.view());
        let rows: Vec<usize> = (0..block.nrows()).filter(|&i| test[i]).collect();
        if !rows.is_empty() {
            let c = coded(block.view(), &rows, d, m, &scaler, &code);
            y_test.extend(c.y.iter());
            for lo in (0..rows.len()).step_by(FEATURE_ROWS) {
                let x = c.x.slice(s![lo..(lo + FEATURE_ROWS).min(rows.len()), ..]);
                let z = map.features(x)?;
                pred.extend(w.apply(z.view()).iter());
                if let Some(wb) = &w_base {
                    pred_base.extend(wb.apply(z.view()).iter());
                }
            }
        }
        obs.step(first + block.nrows(), total);
        Ok(true)
    })?;
    let as_matrix = |v: Vec<f64>| {
        Array2::from_shape_vec((v.len() / m.max(1), m), v)
            .map_err(|e| OvkError::internal(format!("streamed predictions: {e}")))
    };
    let (y_test, pred_test) = (as_matrix(y_test)?, as_matrix(pred)?);
    let score = |y: ArrayView2<f64>, yhat: ArrayView2<f64>| -> MetricMap {
        if y.nrows() == 0 {
            MetricMap::new()
        } else {
            metrics::scores(task, coding, y, yhat)
        }
    };
    let train_pred = fit.model.predict(sample.x.view())?;
    let scored_metrics = Metrics {
        train: score(sample.y.view(), train_pred.view()),
        test: score(y_test.view(), pred_test.view()),
        unlabeled: None,
    };
    let baseline_metrics = match &base {
        Some(b) => {
            let pb = as_matrix(pred_base)?;
            let tb = b.model.predict(sample.x.view())?;
            Some(Metrics {
                train: score(sample.y.view(), tb.view()),
                test: score(y_test.view(), pb.view()),
                unlabeled: None,
            })
        }
        None => None,
    };
    let predict_s = t_pred.elapsed().as_secs_f64();

    let mut details = serde_json::Map::new();
    details.insert(
        "stream".into(),
        serde_json::json!({
            "batches": batches,
            "rows": st.rows,
            "sample_rows": sample.x.nrows(),
            "passes": 3,
        }),
    );
    let mid = metrics::coding_midpoint(coding);
    let mut diag = serde_json::Map::new();
    for (part, y, yhat) in [
        ("train", sample.y.view(), train_pred.view()),
        ("test", y_test.view(), pred_test.view()),
    ] {
        if y.nrows() > 0 {
            if let Ok(v) = serde_json::to_value(metrics::diagnostics(task, y, yhat, mid)) {
                diag.insert(part.to_string(), v);
            }
        }
    }
    details.insert(
        crate::session::details::key::DIAGNOSTICS.into(),
        serde_json::Value::Object(diag),
    );
    let sha256 = crate::data::sha256_file(&path)?;
    let prepared = Prepared {
        x_train: Array2::zeros((0, d)),
        y_train: Array2::zeros((0, m)),
        y_unlabeled_true: Array2::zeros((0, m)),
        labeled: vec![true; n_train],
        x_test: Array2::zeros((0, d)),
        y_test: Array2::zeros((0, m)),
        train_rows: st.train_rows,
        test_rows: st.test_rows,
        feature_names: plan.features.clone(),
        output_names: plan.targets.clone(),
        class_values: None,
        task,
        views: Vec::new(),
        scaler,
        info: DatasetInfo {
            path: path.clone(),
            absolute_path: std::fs::canonicalize(&path).ok(),
            size: std::fs::metadata(&path).ok().map(|m| m.len()),
            sha256,
            rows: st.rows,
            features: plan.features.clone(),
            targets: plan.targets.clone(),
            packed_width: None,
        },
        feature_dtypes: vec!["f64".into(); d],
        class_column: None,
        categories: Vec::new(),
        imputed_rows: 0,
        fill: None,
        dropped_rows: 0,
        left_out: Vec::new(),
        grams: Vec::new(),
        gram_ids: None,
        notes: Vec::new(),
    };
    let guidance = Guidance::for_run(method, &shape, route, &config.params)?;
    let admitted = Admitted {
        estimate,
        base_rss,
        guidance,
        notes,
    };
    let stages = Stages {
        prepared,
        kernel,
        admitted,
        target_notes: Vec::new(),
        fitted: Fitted {
            problem,
            x_test: Array2::zeros((0, d)),
            y_test,
            fit,
            trace,
            notes: fit_notes,
            target_scaler: None,
            y_train_data: None,
            fit_s,
        },
        scored: Scored {
            metrics: scored_metrics,
            pred_test,
            details,
            predict_s,
        },
        baseline: Baseline {
            metrics: baseline_metrics,
            skipped: None,
            note: None,
        },
        clock: record::Clock {
            load_s,
            total_s: t_start.elapsed().as_secs_f64(),
        },
    };
    // The route taken is part of the run: a replay on a machine with more memory streams too,
    // so it draws the same split and sample.
    let mut recorded = config.clone();
    recorded.data.stream = StreamChoice::Yes;
    let outcome = record::record(method, &recorded, stages)?;
    Ok(Ended::Finished(Box::new(outcome)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{gram_tn, matmul_tn};

    fn rows(n: usize, d: usize, seed: u64) -> Array2<f64> {
        let mut rng = Rng::new(seed);
        Array2::from_shape_fn((n, d), |(_, j)| 1e3 * j as f64 + rng.normal())
    }

    #[test]
    fn moments_merged_by_batch_equal_the_in_memory_scaler() {
        let x = rows(1000, 4, 1);
        let mut mo = Moments::new(4);
        // uneven batches, one of them empty
        for (lo, hi) in [(0, 1), (1, 1), (1, 333), (333, 1000)] {
            let idx: Vec<usize> = (lo..hi).collect();
            mo.merge(x.view(), &idx);
        }
        let merged = mo.scaler(Scale::Standard);
        let whole = Scaler::fit(&x, Scale::Standard);
        for j in 0..4 {
            assert!((merged.mean[j] - whole.mean[j]).abs() < 1e-12 * whole.mean[j].abs().max(1.0));
            assert!((merged.std[j] - whole.std[j]).abs() < 1e-10 * whole.std[j]);
        }
    }

    #[test]
    fn sums_accumulated_by_block_give_the_in_memory_spectrum() {
        let (z, y) = (rows(500, 6, 2), rows(500, 3, 3));
        let mut sums = FactorSums {
            ztz: Array2::zeros((6, 6)),
            zty: Array2::zeros((6, 3)),
            y_sq: 0.0,
            n: 0,
        };
        for (lo, hi) in [(0, 7), (7, 250), (250, 500)] {
            let (zb, yb) = (z.slice(s![lo..hi, ..]), y.slice(s![lo..hi, ..]));
            add_gram_tn_lower(&mut sums.ztz, zb);
            add_matmul_tn(&mut sums.zty, zb, yb);
            sums.y_sq += yb.iter().map(|v| v * v).sum::<f64>();
            sums.n += hi - lo;
        }
        mirror_lower(&mut sums.ztz);
        let (g, zy) = (gram_tn(z.view()), matmul_tn(z.view(), y.view()));
        let rel = |a: &Array2<f64>, b: &Array2<f64>| {
            let scale = b.iter().fold(0.0f64, |s, v| s.max(v.abs()));
            a.iter()
                .zip(b)
                .fold(0.0f64, |s, (p, q)| s.max((p - q).abs()))
                / scale
        };
        assert!(rel(&sums.ztz, &g) < 1e-13, "ZᵀZ {}", rel(&sums.ztz, &g));
        assert!(rel(&sums.zty, &zy) < 1e-13, "ZᵀY {}", rel(&sums.zty, &zy));
        let summary = FactorSummary {
            route: "primal",
            requested: 6,
            rank: 6,
            landmarks: None,
            trace_error: 0.0,
            seconds: 0.0,
        };
        let streamed = InputSpectrum::from_sums(sums, FeatureMap::Linear, summary).unwrap();
        let factor = crate::kernels::InputFactor::linear(z.view());
        let memory = InputSpectrum::of_factor(factor, y.view(), "primal", 0.0).unwrap();
        assert_eq!(streamed.s.len(), memory.s.len());
        // eigenvalues to rounding against the largest (ZᵀZ's condition here is 10⁷)
        let top = memory.s.iter().copied().fold(0.0, f64::max);
        for (a, b) in streamed.s.iter().zip(&memory.s) {
            assert!((a - b).abs() < 1e-12 * top, "{a} against {b}");
        }
        assert!((streamed.null_sq - memory.null_sq).abs() < 1e-8 * memory.null_sq.max(1.0));
        assert_eq!(streamed.n, 500);
    }

    #[test]
    fn the_hashed_split_draws_each_side_at_its_fraction() {
        for fraction in [0.1, 0.25, 0.5] {
            let test = (0..100_000).filter(|&i| in_test(7, i, fraction)).count();
            let share = test as f64 / 1e5;
            // binomial sd at 10⁵ rows is below 0.0016: four of them
            assert!((share - fraction).abs() < 0.0064, "{fraction}: {share}");
        }
        // the seed moves it
        let a: Vec<bool> = (0..64).map(|i| in_test(1, i, 0.5)).collect();
        let b: Vec<bool> = (0..64).map(|i| in_test(2, i, 0.5)).collect();
        assert_ne!(a, b);
    }
}
