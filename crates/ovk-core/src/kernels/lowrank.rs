//! One low-rank factor of the input kernel, `K ≈ Z Zᵀ` with Z n×r, built without ever forming
//! K — the route every method takes past a few thousand training rows (docs/methods.md §6).
//!
//! Landmarks S are chosen by randomly pivoted Cholesky (Chen, Epperly, Tropp, Webber,
//! "Randomly pivoted Cholesky", 2022) in its blocked form with rejection (Epperly, Tropp,
//! Webber, "Embrace rejection", 2024): each round samples a block of pivots with probability
//! ∝ the residual diagonal d, and accepts each in turn with probability (its residual after the
//! block's earlier pivots) / (its d when sampled) — the same distribution as one-at-a-time
//! sampling. The decision needs only the candidates' own b×b block of the residual kernel; the
//! n-long columns are computed, in one product, for the accepted pivots alone (the paper's
//! accelerated form: at n = 10⁵, r = 1000 the factor took 5.3 s instead of 6.7–7.7 s with the
//! same landmarks, when every candidate's column had been computed first). Uniform sampling
//! runs the same block loop on a shuffled order and accepts every numerically new pivot.
//!
//! The result is a Nyström factor: `Z = K[:, S] L_S⁻ᵀ` with `L_S = Z[S, :]` lower triangular
//! (`K[S, S] = L_S L_Sᵀ`), so new points map through `z(x) = L_S⁻¹ k(S, x)` and
//! `K̃(x, X) = z(x)ᵀ Zᵀ`. Its quality is the relative trace error `(tr K − ‖Z‖²_F) / tr K`,
//! which needs only K's diagonal.

use std::ops::Range;

use super::gram::cross_gram;
use super::memory::{check_fits, dense_bytes};
use super::spec::Kernel;
use crate::linalg::{matmul_acc, select_rows, solve_rows_lower_in_place};
use crate::util::choice::choice_enum;
use crate::util::rng::Rng;
use crate::{OvkError, Result};
use ndarray::{s, Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

/// Pivots sampled per round: large enough for an efficient product, small enough that few are
/// rejected.
const BLOCK: usize = 120;
/// Rows per parallel task when updating the n×b residual columns.
const ROW_CHUNK: usize = 4096;
/// A pivot whose residual is below this fraction of the largest diagonal entry adds nothing
/// but rounding: it is rejected, which keeps `L_S` well conditioned.
const PIVOT_FLOOR: f64 = 1e-12;
/// Sampling stops once the residual trace is below this fraction of tr K (Z is then exact).
const EXACT_TRACE: f64 = 1e-14;
/// Rounds in a row that may accept nothing before sampling gives up.
const MAX_EMPTY_ROUNDS: usize = 50;

choice_enum! {
    /// How the landmarks are chosen.
    #[derive(Default)]
    pub enum Landmarks: "landmarks" {
        /// Randomly pivoted Cholesky: sampled ∝ the residual diagonal (default; near-optimal).
        #[default]
        Rpcholesky = "rpcholesky",
        /// Uniformly at random without replacement (the classical Nyström sample).
        Uniform = "uniform",
    }
}

impl Landmarks {
    pub(crate) fn is_default(&self) -> bool {
        *self == Landmarks::default()
    }
}

/// How new points are mapped to the factor's r coordinates.
#[derive(Debug, Clone, PartialEq)]
pub enum FeatureMap {
    /// The linear kernel's own features, `z(x) = x`: exact, no landmarks.
    Linear,
    /// Nyström: `z(x) = L_S⁻¹ k(S, x)`.
    Nystrom {
        /// The input kernel k.
        kernel: Kernel,
        /// The landmarks' (scaled) inputs, r×d, in pivot order.
        x_landmarks: Array2<f64>,
        /// `L_S`, r×r lower triangular with `K[S, S] = L_S L_Sᵀ`.
        l_s: Array2<f64>,
    },
}

impl FeatureMap {
    /// Rows `z(xᵢ)ᵀ` for the rows of `x` (n_new×r).
    pub fn features(&self, x: ArrayView2<f64>) -> Result<Array2<f64>> {
        match self {
            FeatureMap::Linear => Ok(x.to_owned()),
            FeatureMap::Nystrom {
                kernel,
                x_landmarks,
                l_s,
            } => {
                let mut c = cross_gram(kernel, x, x_landmarks.view())?; // k(x, S), n_new×r
                solve_rows_lower_in_place(l_s.view(), c.view_mut())?; // k(x, S) L_S⁻ᵀ
                Ok(c)
            }
        }
    }

    /// Number of coordinates r.
    pub fn dim(&self, d: usize) -> usize {
        match self {
            FeatureMap::Linear => d,
            FeatureMap::Nystrom { l_s, .. } => l_s.nrows(),
        }
    }
}

/// `K ≈ Z Zᵀ` on the training rows, with the map that extends it to new points.
#[derive(Debug, Clone)]
pub struct InputFactor {
    /// Z, n×r.
    pub z: Array2<f64>,
    /// The map that gives new points' rows of Z.
    pub map: FeatureMap,
    /// The landmarks' training-row indices, in pivot order (empty for the linear kernel).
    pub landmarks: Vec<usize>,
    /// `(tr K − ‖Z‖²_F) / tr K`: 0 for an exact factor.
    pub trace_error: f64,
    /// The rank asked for; `rank()` may be smaller when K's numerical rank is.
    pub(crate) requested: usize,
    /// How the landmarks were chosen; `None` for an exact factor (linear kernel in the primal).
    pub how: Option<Landmarks>,
}

impl InputFactor {
    /// The rank r of the factor (columns of Z).
    pub fn rank(&self) -> usize {
        self.z.ncols()
    }

    /// The linear kernel in the primal: `Z = X` exactly (`K = X Xᵀ`), no approximation.
    pub fn linear(x: ArrayView2<f64>) -> Self {
        InputFactor {
            z: x.to_owned(),
            map: FeatureMap::Linear,
            landmarks: Vec::new(),
            trace_error: 0.0,
            requested: x.ncols(),
            how: None,
        }
    }
}

/// `k(xᵢ, xᵢ)` for every row.
pub(crate) fn kernel_diagonal(kernel: &Kernel, x: ArrayView2<f64>) -> Vec<f64> {
    x.rows()
        .into_iter()
        .map(|r| {
            if *kernel == Kernel::Precomputed {
                return r[1 + r[0] as usize];
            }
            if let Some(r) = r.as_slice().filter(|r| super::packed::is_packed_row(r)) {
                return super::packed::self_value(kernel, r);
            }
            let v = if kernel.is_distance_based() {
                0.0
            } else if *kernel == Kernel::Cosine {
                let n = r.dot(&r);
                super::spec::cosine(n, n, n)
            } else {
                r.dot(&r)
            };
            kernel.of_inner_or_dist(v)
        })
        .collect()
}

/// Build a rank-≤`rank` Nyström factor of `K(x, x)`. `progress(done)` is called after each
/// round with the number of landmarks so far; an error from it (cancellation) stops the build.
pub fn input_factor(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    rank: usize,
    how: Landmarks,
    seed: u64,
    progress: &mut dyn FnMut(usize) -> Result<()>,
) -> Result<InputFactor> {
    let n = x.nrows();
    if rank == 0 {
        return Err(OvkError::input("--input-rank must be at least 1"));
    }
    if n == 0 {
        return Err(OvkError::input(
            "the low-rank input kernel needs at least one training row",
        ));
    }
    let r_max = rank.min(n);
    check_fits(
        dense_bytes(n, r_max).saturating_add(dense_bytes(n, BLOCK.min(r_max)).saturating_mul(2)),
        &format!("the {n}×{r_max} low-rank factor of the input kernel"),
    )?;
    let diag = kernel_diagonal(kernel, x);
    if diag.iter().any(|v| !v.is_finite() || *v < 0.0) {
        return Err(OvkError::numerical(
            "the kernel's diagonal k(x, x) is negative or not finite on the training rows; \
             the kernel is not positive semi-definite here",
        ));
    }
    let trace: f64 = diag.iter().sum();
    let d_max = diag.iter().copied().fold(0.0, f64::max);
    if trace <= 0.0 {
        return Err(OvkError::input(
            "the kernel is 0 on every training row (all-zero inputs with a linear kernel?)",
        ));
    }

    let mut rng = Rng::new(seed ^ 0x6c6f_7772_616e_6b21);
    let mut order = match how {
        Landmarks::Uniform => rng.sample(n, n),
        Landmarks::Rpcholesky => Vec::new(),
    };
    order.reverse(); // popped from the back

    let mut d = diag.clone();
    let mut z = Array2::<f64>::zeros((n, r_max));
    let mut pivots: Vec<usize> = Vec::with_capacity(r_max);
    let mut empty_rounds = 0;
    while pivots.len() < r_max {
        let residual: f64 = d.iter().sum();
        if residual <= EXACT_TRACE * trace {
            break;
        }
        let want = BLOCK.min(r_max - pivots.len());
        let candidates = match how {
            Landmarks::Rpcholesky => sample_by_weight(&d, want, &mut rng),
            Landmarks::Uniform => {
                let take = want.min(order.len());
                (0..take).filter_map(|_| order.pop()).collect()
            }
        };
        if candidates.is_empty() {
            break;
        }
        let k = pivots.len();
        // The candidates' own block of the residual decides which are accepted; only theirs
        // get n-long columns (accelerated RPCholesky, Epperly, Tropp, Webber 2024).
        let h = candidate_block(kernel, x, &z.slice(s![.., ..k]), &candidates)?;
        let (pos, l_a) = accept_pivots(&h, &candidates, &d, how, d_max, &mut rng);
        if pos.is_empty() {
            empty_rounds += 1;
            if empty_rounds >= MAX_EMPTY_ROUNDS || how == Landmarks::Uniform && order.is_empty() {
                break;
            }
            continue;
        }
        empty_rounds = 0;
        // New columns: G[:, A] L_A⁻ᵀ, with L_A the Cholesky factor of the accepted block,
        // computed and solved in Z's own columns: a separate n×a block was fresh memory every
        // round (at n = 10⁶ the kernel's zeroing of its pages took a fifth of the run).
        let accepted: Vec<usize> = pos.iter().map(|&p| candidates[p]).collect();
        let a = pos.len();
        let (z_k, mut rest) = z.view_mut().split_at(Axis(1), k);
        let mut cols = rest.slice_mut(s![.., ..a]);
        residual_columns_into(
            kernel,
            x,
            &z_k.view(),
            &accepted,
            Some(&l_a),
            cols.view_mut(),
        )?;
        for (i, di) in d.iter_mut().enumerate() {
            let row = cols.row(i);
            *di = (*di - row.dot(&row)).max(0.0);
        }
        for &p in &pos {
            let i = candidates[p];
            d[i] = 0.0;
            pivots.push(i);
        }
        progress(pivots.len())?;
        if how == Landmarks::Uniform && order.is_empty() {
            break;
        }
    }

    let r = pivots.len();
    if r == 0 {
        return Err(OvkError::numerical(
            "the low-rank factor found no usable landmark (the kernel is numerically 0)",
        ));
    }
    let z = if r == r_max {
        z
    } else {
        z.slice(s![.., ..r]).to_owned()
    };
    let norm_sq: f64 = z.iter().map(|v| v * v).sum();
    let trace_error = ((trace - norm_sq) / trace).max(0.0);
    // L_S = Z[S, :]: lower triangular in pivot order up to rounding; the solve reads only the
    // lower triangle.
    let mut l_s = select_rows(z.view(), &pivots);
    for i in 0..r {
        for j in i + 1..r {
            l_s[[i, j]] = 0.0;
        }
    }
    if l_s.diag().iter().any(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(OvkError::numerical(
            "the low-rank factor lost positive-definiteness (a landmark's pivot is not \
             positive); try --landmarks uniform or a smaller --input-rank",
        ));
    }
    Ok(InputFactor {
        map: FeatureMap::Nystrom {
            kernel: *kernel,
            x_landmarks: select_rows(x.view(), &pivots),
            l_s,
        },
        z,
        landmarks: pivots,
        trace_error,
        requested: rank,
        how: Some(how),
    })
}

/// Up to `b` distinct indices drawn i.i.d. with probability ∝ `d`, in draw order.
fn sample_by_weight(d: &[f64], b: usize, rng: &mut Rng) -> Vec<usize> {
    let mut cumulative = Vec::with_capacity(d.len());
    let mut total = 0.0;
    for &v in d {
        total += v.max(0.0);
        cumulative.push(total);
    }
    let mut out: Vec<usize> = Vec::with_capacity(b);
    for _ in 0..b {
        let u = rng.uniform() * total;
        let i = cumulative.partition_point(|&c| c <= u).min(d.len() - 1);
        if d[i] > 0.0 && !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// `G = K[:, C] − Z_k Z_k[C, :]ᵀ`: the residual kernel columns of the candidates C (n×|C|),
/// in parallel row chunks.
fn residual_columns(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    z_k: &ArrayView2<f64>,
    candidates: &[usize],
) -> Result<Array2<f64>> {
    let mut g = Array2::<f64>::zeros((x.nrows(), candidates.len()));
    residual_columns_into(kernel, x, z_k, candidates, None, g.view_mut())?;
    Ok(g)
}

/// `residual_columns` into `out` (any layout: Z's own columns), each row chunk then solved in
/// place, `G ← G L⁻ᵀ`, when `l` is given — while the chunk is still in cache.
fn residual_columns_into(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    z_k: &ArrayView2<f64>,
    candidates: &[usize],
    l: Option<&Array2<f64>>,
    out: ArrayViewMut2<f64>,
) -> Result<()> {
    let xc = select_rows(x.view(), candidates);
    let zc = select_rows(z_k.view(), candidates); // |C|×k
    par_row_chunks(out, |rows, mut block| {
        block.assign(&cross_gram(
            kernel,
            x.slice(s![rows.clone(), ..]),
            xc.view(),
        )?);
        if z_k.ncols() > 0 {
            matmul_acc(block.view_mut(), z_k.slice(s![rows, ..]), zc.t(), -1.0);
        }
        match l {
            Some(l) => solve_rows_lower_in_place(l.view(), block),
            None => Ok(()),
        }
    })
}

/// `H = K[C, C] − Z_k[C, :] Z_k[C, :]ᵀ`: the residual kernel among the candidates C (|C|×|C|),
/// `residual_columns` restricted to the candidates' own rows.
fn candidate_block(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    z_k: &ArrayView2<f64>,
    candidates: &[usize],
) -> Result<Array2<f64>> {
    let (xc, zc) = (
        select_rows(x.view(), candidates),
        select_rows(z_k.view(), candidates),
    );
    let own: Vec<usize> = (0..candidates.len()).collect();
    residual_columns(kernel, xc.view(), &zc.view(), &own)
}

/// Partial Cholesky of the candidates' block `H = G[C, C]` in draw order with rejection:
/// candidate j's residual after the block's accepted pivots is `h_jj − Σ l_ja²`; RPCholesky
/// accepts it with probability residual / d_j (d at sampling time), uniform sampling whenever
/// it is numerically positive. Returns the accepted positions in C and their factor L_A.
fn accept_pivots(
    h: &Array2<f64>,
    candidates: &[usize],
    d: &[f64],
    how: Landmarks,
    d_max: f64,
    rng: &mut Rng,
) -> (Vec<usize>, Array2<f64>) {
    let c = candidates.len();
    let mut pos: Vec<usize> = Vec::new();
    let mut l = Array2::<f64>::zeros((c, c));
    for j in 0..c {
        let a = pos.len();
        // l_ja = (h_{j,pos[a]} − Σ_{b<a} l_jb l_ab) / l_aa for the accepted a.
        for ai in 0..a {
            let mut v = h[[pos[ai], j]];
            for bi in 0..ai {
                v -= l[[a, bi]] * l[[ai, bi]];
            }
            l[[a, ai]] = v / l[[ai, ai]];
        }
        let taken: f64 = (0..a).map(|ai| l[[a, ai]] * l[[a, ai]]).sum();
        let res = h[[j, j]] - taken;
        let keep = res > PIVOT_FLOOR * d_max
            && match how {
                Landmarks::Rpcholesky => rng.uniform() * d[candidates[j]] < res,
                Landmarks::Uniform => true,
            };
        if keep {
            l[[a, a]] = res.sqrt();
            pos.push(j);
        } else {
            l.row_mut(a).fill(0.0);
        }
    }
    let a = pos.len();
    (pos, l.slice(s![..a, ..a]).to_owned())
}

/// Fill `out` by chunks of `ROW_CHUNK` rows in parallel: `fill(rows, block)` writes the rows
/// `rows` into `block`.
fn par_row_chunks(
    mut out: ArrayViewMut2<f64>,
    fill: impl Fn(Range<usize>, ArrayViewMut2<f64>) -> Result<()> + Sync,
) -> Result<()> {
    let chunks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), ROW_CHUNK).collect();
    chunks
        .into_par_iter()
        .enumerate()
        .try_for_each(|(c, block)| {
            let start = c * ROW_CHUNK;
            fill(start..start + block.nrows(), block)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::gram;
    use crate::util::choice::Choice;

    fn points(n: usize, d: usize, seed: u64) -> Array2<f64> {
        let mut r = Rng::new(seed);
        Array2::from_shape_fn((n, d), |_| r.normal())
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0_f64, |m, v| m.max(v.abs()))
    }

    #[test]
    fn full_rank_reproduces_the_gram_and_the_feature_map() {
        let x = points(40, 3, 1);
        for &how in Landmarks::ALL {
            for kern in [
                Kernel::Gaussian { sigma: 2.0 },
                Kernel::Laplacian { sigma: 1.5 },
                Kernel::Cosine,
            ] {
                let k = gram(&kern, x.view()).unwrap();
                let f = input_factor(&kern, x.view(), 40, how, 7, &mut |_| Ok(())).unwrap();
                let err = max_abs(&(&f.z.dot(&f.z.t()) - &k));
                assert!(err < 1e-8, "{how:?} {kern:?}: ZZᵀ off by {err}");
                // z(x) on the training rows is Z itself.
                let zx = f.map.features(x.view()).unwrap();
                assert!(max_abs(&(&zx - &f.z)) < 1e-6, "{how:?} {kern:?}");
                assert!(f.trace_error < 1e-10);
            }
        }
    }

    #[test]
    fn trace_error_is_the_exact_relative_trace_of_the_residual() {
        let x = points(60, 2, 2);
        let kern = Kernel::Gaussian { sigma: 0.5 };
        let k = gram(&kern, x.view()).unwrap();
        let f = input_factor(&kern, x.view(), 12, Landmarks::Rpcholesky, 3, &mut |_| {
            Ok(())
        })
        .unwrap();
        assert_eq!(f.rank(), 12);
        let resid = &k - &f.z.dot(&f.z.t());
        let brute = resid.diag().sum() / k.diag().sum();
        assert!(
            (f.trace_error - brute).abs() < 1e-12,
            "{} vs {brute}",
            f.trace_error
        );
        // The residual of a Nyström factor is PSD (a Schur complement) and vanishes on S.
        assert!(resid.diag().iter().all(|&v| v > -1e-10));
        for &i in &f.landmarks {
            assert!(resid.row(i).iter().all(|v| v.abs() < 1e-9));
        }
        // New points: K̃(x, X) = z(x)ᵀ Zᵀ equals the Nyström formula K(x,S) K[S,S]⁻¹ K(S,X).
        let xn = points(5, 2, 9);
        let dense = {
            let xs = x.select(Axis(0), &f.landmarks);
            let kss = gram(&kern, xs.view()).unwrap();
            let kxs = cross_gram(&kern, xn.view(), xs.view()).unwrap();
            let ksx = cross_gram(&kern, xs.view(), x.view()).unwrap();
            let inv = crate::linalg::cholesky(kss.view())
                .unwrap()
                .solve(ksx.view());
            kxs.dot(&inv)
        };
        let via = f.map.features(xn.view()).unwrap().dot(&f.z.t());
        assert!(max_abs(&(&via - &dense)) < 1e-8);
    }

    #[test]
    fn rpcholesky_beats_uniform_on_clustered_data() {
        // Two tight clusters of very different sizes: uniform sampling wastes landmarks on the
        // big one, RPCholesky's residual-proportional sampling covers both.
        let mut r = Rng::new(4);
        let x = Array2::from_shape_fn((400, 2), |(i, _)| {
            let centre = if i < 360 { 0.0 } else { 8.0 };
            centre + 0.3 * r.normal() + (i % 7) as f64 * 0.5
        });
        let kern = Kernel::Gaussian { sigma: 0.7 };
        let rp = input_factor(&kern, x.view(), 20, Landmarks::Rpcholesky, 1, &mut |_| {
            Ok(())
        })
        .unwrap();
        let un = input_factor(&kern, x.view(), 20, Landmarks::Uniform, 1, &mut |_| Ok(())).unwrap();
        assert!(
            rp.trace_error < un.trace_error,
            "rpcholesky {} vs uniform {}",
            rp.trace_error,
            un.trace_error
        );
    }

    #[test]
    fn a_low_rank_kernel_stops_at_its_rank() {
        // A linear kernel on 3 features has rank 3, whatever rank is asked for.
        let x = points(50, 3, 5);
        let f = input_factor(
            &Kernel::Linear,
            x.view(),
            20,
            Landmarks::Rpcholesky,
            0,
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(f.rank(), 3);
        assert!(f.trace_error < 1e-12);
        let k = gram(&Kernel::Linear, x.view()).unwrap();
        assert!(max_abs(&(&f.z.dot(&f.z.t()) - &k)) < 1e-9);
    }

    #[test]
    fn duplicated_points_are_never_two_landmarks() {
        let base = points(10, 2, 6);
        let x = ndarray::concatenate(Axis(0), &[base.view(), base.view(), base.view()]).unwrap();
        let kern = Kernel::Gaussian { sigma: 1.0 };
        for &how in Landmarks::ALL {
            let f = input_factor(&kern, x.view(), 30, how, 2, &mut |_| Ok(())).unwrap();
            assert!(f.rank() <= 10, "{how:?}: rank {}", f.rank());
            assert!(f.z.iter().all(|v| v.is_finite()));
        }
    }

    #[test]
    fn a_numerically_rank_one_kernel_gives_a_finite_factor_not_nan() {
        // σ far above the data's spread: K ≈ 11ᵀ up to 1e-10, numerically rank one or two.
        let x = points(200, 3, 12) * 1e-4;
        for &how in Landmarks::ALL {
            let f = input_factor(
                &Kernel::Gaussian { sigma: 10.0 },
                x.view(),
                50,
                how,
                1,
                &mut |_| Ok(()),
            )
            .unwrap();
            assert!(f.rank() < 10, "{how:?}: rank {}", f.rank());
            assert!(f.z.iter().all(|v| v.is_finite()), "{how:?}");
            let zx = f.map.features(x.view()).unwrap();
            assert!(zx.iter().all(|v| v.is_finite()), "{how:?}");
            assert!(f.trace_error < 1e-9, "{how:?}: {}", f.trace_error);
        }
    }

    #[test]
    fn progress_can_cancel_and_rank_zero_is_refused() {
        let x = points(300, 2, 8);
        let kern = Kernel::Gaussian { sigma: 1.0 };
        let err = input_factor(&kern, x.view(), 250, Landmarks::Rpcholesky, 0, &mut |_| {
            Err(OvkError::Cancelled)
        })
        .unwrap_err();
        assert!(matches!(err, OvkError::Cancelled));
        assert!(input_factor(&kern, x.view(), 0, Landmarks::Uniform, 0, &mut |_| Ok(())).is_err());
    }
}
