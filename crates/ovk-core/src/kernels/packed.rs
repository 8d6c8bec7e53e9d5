//! Sparse feature rows, packed so that they travel through the engine as an ordinary matrix.
//!
//! A text-like table (6 000 rows × 47 236 features, 0.2 % non-zero) is 2.3 GB dense but a few
//! megabytes sparse. Every kernel ovk offers is a function of inner products and norms, so
//! sparse rows never need to be densified; yet every method, model and saved session carries
//! its inputs as a dense `Array2`. The rows are therefore packed, one per matrix row:
//!
//! `[TAG, nnz, ‖x̃‖², x̃ᵀμ̃, ‖μ̃‖², i₁ … i_w, v₁ … v_w]`
//!
//! where `x̃ = x / s` is the row divided by the training standard deviations, `μ̃ = μ / s` the
//! scaled training means, `w` the widest row's non-zero count (shorter rows are padded with
//! zeros, ignored past `nnz`), `iₖ` ascending column indices and `vₖ` the scaled values. The
//! standardised row `x̃ − μ̃` is dense, but its geometry is not:
//!
//! - inner product `(x̃ − μ̃)ᵀ(z̃ − μ̃) = x̃ᵀz̃ − x̃ᵀμ̃ − z̃ᵀμ̃ + ‖μ̃‖²`,
//! - squared distance `‖x̃ − z̃‖² = ‖x̃‖² + ‖z̃‖² − 2 x̃ᵀz̃` (centring cancels),
//!
//! so a kernel on packed rows equals the kernel on the standardised dense rows, and `x̃ᵀz̃`
//! costs one pass over the shared non-zeros (an inverted index of the reference rows).
//! `TAG` (−f64::MAX) in the first column marks a packed matrix: no prepared input reaches it
//! (`data::MAX_MAGNITUDE` refuses values beyond 1e150).

use ndarray::{Array2, ArrayView1, ArrayView2, Axis};
use rayon::prelude::*;

use super::spec::{cosine, Kernel};
use crate::{OvkError, Result};

/// The first entry of every packed row.
pub(crate) const TAG: f64 = -f64::MAX;
/// Entries before the indices: TAG, nnz, ‖x̃‖², x̃ᵀμ̃, ‖μ̃‖².
const HEAD: usize = 5;
/// Rows per parallel block of inner products.
const BLOCK_ROWS: usize = 128;
/// Relative size below which a squared distance from inner products is recomputed exactly.
const NEAR: f64 = 1e-6;

/// Whether `x` holds packed sparse rows.
pub(crate) fn is_packed(x: ArrayView2<f64>) -> bool {
    x.ncols() >= HEAD && x.nrows() > 0 && x[[0, 0]] == TAG
}

/// Whether a single row is packed.
#[inline]
pub(crate) fn is_packed_row(r: &[f64]) -> bool {
    r.len() >= HEAD && r[0] == TAG
}

/// One packed row, read back.
#[derive(Clone, Copy)]
struct Row<'a> {
    /// Column indices (as f64, exact below 2⁵³).
    idx: &'a [f64],
    /// Scaled values x̃ at those indices.
    val: &'a [f64],
    /// ‖x̃‖².
    n2: f64,
    /// x̃ᵀμ̃.
    a: f64,
    /// ‖μ̃‖².
    c: f64,
}

fn row_of(r: &[f64]) -> Row<'_> {
    let w = (r.len() - HEAD) / 2;
    let nnz = r[1] as usize;
    Row {
        idx: &r[HEAD..HEAD + nnz],
        val: &r[HEAD + w..HEAD + w + nnz],
        n2: r[2],
        a: r[3],
        c: r[4],
    }
}

fn row_at(x: ArrayView2<'_, f64>, i: usize) -> Row<'_> {
    let r: ArrayView1<'_, f64> = x.index_axis_move(Axis(0), i);
    // Rows of a standard-layout matrix are contiguous; packed matrices are always built so.
    row_of(r.to_slice().expect("packed rows are contiguous"))
}

/// Pack sparse rows `(indices, values)` (indices ascending) with the training moments: each
/// value becomes `v / s[i]`, and `μ̃ = μ / s` enters through `x̃ᵀμ̃` and `‖μ̃‖²`. `width` is at
/// least the widest row's non-zero count (a model's rows and new rows may differ in width).
pub(crate) fn pack<'a>(
    rows: impl ExactSizeIterator<Item = (&'a [u32], &'a [f64])>,
    width: usize,
    mean: &[f64],
    std: &[f64],
) -> Array2<f64> {
    let mu_t: Vec<f64> = mean.iter().zip(std).map(|(m, s)| m / s).collect();
    let c: f64 = mu_t.iter().map(|v| v * v).sum();
    let mut x = Array2::<f64>::zeros((rows.len(), HEAD + 2 * width));
    for (mut out, (idx, val)) in x.rows_mut().into_iter().zip(rows) {
        let (mut n2, mut a) = (0.0, 0.0);
        out[0] = TAG;
        out[1] = idx.len() as f64;
        for (k, (&i, &v)) in idx.iter().zip(val).enumerate() {
            let v = v / std[i as usize];
            n2 += v * v;
            a += v * mu_t[i as usize];
            out[HEAD + k] = f64::from(i);
            out[HEAD + width + k] = v;
        }
        out[2] = n2;
        out[3] = a;
        out[4] = c;
    }
    x
}

/// Columns of packed rows `width` wide.
pub(crate) fn columns_for(width: usize) -> usize {
    HEAD + 2 * width
}

/// The widest packed row's non-zero count.
pub(crate) fn width_of(x: ArrayView2<f64>) -> usize {
    (x.ncols() - HEAD) / 2
}

/// The bits of what a row holds, its padding left out: a packed row equals itself in a
/// matrix of any width. A dense row is all of it.
pub(crate) fn content_bits(r: &[f64]) -> Vec<u64> {
    let bits = |v: &[f64]| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    if !is_packed_row(r) {
        return bits(r);
    }
    let row = row_of(r);
    [bits(&r[..HEAD]), bits(row.idx), bits(row.val)].concat()
}

/// x̃ᵀz̃ of two packed rows: a merge of their ascending indices.
fn dot(x: Row, z: Row) -> f64 {
    let (mut p, mut q, mut s) = (0, 0, 0.0);
    while p < x.idx.len() && q < z.idx.len() {
        match x.idx[p].total_cmp(&z.idx[q]) {
            std::cmp::Ordering::Less => p += 1,
            std::cmp::Ordering::Greater => q += 1,
            std::cmp::Ordering::Equal => {
                s += x.val[p] * z.val[q];
                p += 1;
                q += 1;
            }
        }
    }
    s
}

/// ‖x̃ − z̃‖² summed over the union of two rows' indices (no cancellation).
fn sq_dist_direct(x: Row, z: Row) -> f64 {
    let (mut p, mut q, mut s) = (0, 0, 0.0);
    while p < x.idx.len() || q < z.idx.len() {
        let d = if q == z.idx.len() || (p < x.idx.len() && x.idx[p] < z.idx[q]) {
            p += 1;
            x.val[p - 1]
        } else if p == x.idx.len() || z.idx[q] < x.idx[p] {
            q += 1;
            z.val[q - 1]
        } else {
            p += 1;
            q += 1;
            x.val[p - 1] - z.val[q - 1]
        };
        s += d * d;
    }
    s
}

/// The value a kernel takes from a pair's inner product: centred for inner-product kernels,
/// the squared distance for distance-based ones (with the near-pair recomputation).
#[inline]
fn of_pair(kernel: &Kernel, x: Row, z: Row, xz: f64) -> f64 {
    // (x̃ − μ̃)ᵀ(z̃ − μ̃) = x̃ᵀz̃ − x̃ᵀμ̃ − z̃ᵀμ̃ + ‖μ̃‖²
    let centred = xz - x.a - z.a + x.c;
    if kernel.is_distance_based() {
        kernel.of_inner_or_dist(sq_dist(x, z, xz))
    } else if *kernel == Kernel::Cosine {
        cosine(centred, centred_norm2(x), centred_norm2(z))
    } else {
        kernel.of_inner_or_dist(centred)
    }
}

#[inline]
fn sq_dist(x: Row, z: Row, xz: f64) -> f64 {
    let d2 = x.n2 + z.n2 - 2.0 * xz;
    if d2 < NEAR * (x.n2 + z.n2) {
        sq_dist_direct(x, z)
    } else {
        d2
    }
}

/// ‖x̃ − μ̃‖² of a packed row.
#[inline]
fn centred_norm2(x: Row) -> f64 {
    (x.n2 - 2.0 * x.a + x.c).max(0.0)
}

/// k(x, z) for two packed rows.
pub(crate) fn eval(kernel: &Kernel, x: &[f64], z: &[f64]) -> f64 {
    let (x, z) = (row_of(x), row_of(z));
    of_pair(kernel, x, z, dot(x, z))
}

/// k(x, x) of one packed row.
pub(crate) fn self_value(kernel: &Kernel, x: &[f64]) -> f64 {
    let x = row_of(x);
    of_pair(kernel, x, x, x.n2)
}

/// The reference rows by column: for column index k, the (row, value) pairs holding it.
struct InvertedIndex {
    start: Vec<usize>,
    rows: Vec<u32>,
    vals: Vec<f64>,
}

impl InvertedIndex {
    fn of(z: ArrayView2<f64>) -> InvertedIndex {
        let n_cols = (0..z.nrows())
            .filter_map(|j| row_at(z, j).idx.last().map(|&i| i as usize + 1))
            .max()
            .unwrap_or(0);
        let mut start = vec![0usize; n_cols + 1];
        for j in 0..z.nrows() {
            for &i in row_at(z, j).idx {
                start[i as usize + 1] += 1;
            }
        }
        for k in 0..n_cols {
            start[k + 1] += start[k];
        }
        let nnz = start[n_cols];
        let (mut rows, mut vals) = (vec![0u32; nnz], vec![0.0; nnz]);
        let mut next = start.clone();
        for j in 0..z.nrows() {
            let r = row_at(z, j);
            for (&i, &v) in r.idx.iter().zip(r.val) {
                let at = &mut next[i as usize];
                rows[*at] = j as u32;
                vals[*at] = v;
                *at += 1;
            }
        }
        InvertedIndex { start, rows, vals }
    }

    /// `acc[j] += Σ_k x̃_k z̃_jk` over row x's non-zeros.
    fn accumulate(&self, x: Row, acc: &mut [f64]) {
        for (&i, &v) in x.idx.iter().zip(x.val) {
            let i = i as usize;
            if i + 1 >= self.start.len() {
                continue;
            }
            let r = self.start[i]..self.start[i + 1];
            for (&j, &w) in self.rows[r.clone()].iter().zip(&self.vals[r]) {
                acc[j as usize] += v * w;
            }
        }
    }
}

fn check_both(x: ArrayView2<f64>, z: ArrayView2<f64>) -> Result<()> {
    if is_packed(x) == is_packed(z) || x.nrows() == 0 || z.nrows() == 0 {
        Ok(())
    } else {
        Err(OvkError::internal(
            "a kernel between packed sparse rows and dense rows",
        ))
    }
}

/// What a kernel reads of a pair of rows.
#[derive(Clone, Copy, PartialEq)]
enum Measure {
    /// The centred inner product `(x̃ − μ̃)ᵀ(z̃ − μ̃)`.
    Inner,
    /// The squared distance `‖x̃ − z̃‖²`.
    SqDist,
    /// The centred inner product over the centred norms (the cosine kernel).
    Cosine,
}

/// `map(measure(xᵢ, zⱼ))` for every pair, in parallel row blocks. Each row is three plain
/// passes — the inverted-index products, the measure, the map — so the per-pair work is a
/// vectorisable loop and the map (an `exp`) runs apart from the sparse gathers.
fn pairwise(
    x: ArrayView2<f64>,
    z: ArrayView2<f64>,
    measure: Measure,
    map: impl Fn(f64) -> f64 + Sync,
) -> Result<Array2<f64>> {
    check_both(x, z)?;
    let (n, m) = (x.nrows(), z.nrows());
    let mut out = Array2::<f64>::zeros((n, m));
    if n == 0 || m == 0 {
        return Ok(out);
    }
    let index = InvertedIndex::of(z);
    let zrows: Vec<Row> = (0..m).map(|j| row_at(z, j)).collect();
    let zn2: Vec<f64> = zrows.iter().map(|r| r.n2).collect();
    let za: Vec<f64> = zrows.iter().map(|r| r.a).collect();
    let zcn: Vec<f64> = zrows.iter().map(|&r| centred_norm2(r)).collect();
    let blocks: Vec<_> = out.axis_chunks_iter_mut(Axis(0), BLOCK_ROWS).collect();
    blocks
        .into_par_iter()
        .enumerate()
        .for_each(|(b, mut block)| {
            let mut acc = vec![0.0; m];
            for (k, mut orow) in block.rows_mut().into_iter().enumerate() {
                let xi = row_at(x, b * BLOCK_ROWS + k);
                acc.fill(0.0);
                index.accumulate(xi, &mut acc);
                let o = orow
                    .as_slice_mut()
                    .expect("a fresh matrix's rows are contiguous");
                match measure {
                    Measure::Inner => {
                        let shift = xi.c - xi.a;
                        for ((o, &p), &a) in o.iter_mut().zip(&acc).zip(&za) {
                            *o = p - a + shift;
                        }
                    }
                    Measure::Cosine => {
                        let (shift, xn) = (xi.c - xi.a, centred_norm2(xi));
                        for (j, (o, &p)) in o.iter_mut().zip(&acc).enumerate() {
                            *o = cosine(p - za[j] + shift, xn, zcn[j]);
                        }
                    }
                    Measure::SqDist => {
                        for ((o, &p), &n2) in o.iter_mut().zip(&acc).zip(&zn2) {
                            *o = xi.n2 + n2 - 2.0 * p;
                        }
                        // ‖x‖² + ‖z‖² − 2xᵀz cancels for near-equal rows: sum those directly.
                        for (j, o) in o.iter_mut().enumerate() {
                            if *o < NEAR * (xi.n2 + zn2[j]) {
                                *o = sq_dist_direct(xi, zrows[j]);
                            }
                        }
                    }
                }
                clear_upper_vector_state();
                for v in o.iter_mut() {
                    *v = map(*v);
                }
            }
        });
    Ok(out)
}

/// `vzeroupper`, where the CPU has AVX. Measured here: without it each `exp` of the map
/// pass cost about 57 ns instead of 5 (75 % of a sparse krr run; the 4 800 × 4 800 Gaussian
/// Gram took 2.2 s, with it 0.32 s) — the stall of SSE code meeting vector registers whose
/// upper halves wide (AVX-512) code on the same thread left dirty. Clearing them once per
/// row costs nothing measurable.
#[inline]
fn clear_upper_vector_state() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: vzeroupper only zeroes the upper halves of the vector registers, which no
        // live value of this function holds across it.
        unsafe { std::arch::asm!("vzeroupper", options(nomem, nostack, preserves_flags)) };
    }
}

/// K[i, j] = k(xᵢ, zⱼ) for packed rows.
pub(crate) fn cross_gram(
    kernel: &Kernel,
    x: ArrayView2<f64>,
    z: ArrayView2<f64>,
) -> Result<Array2<f64>> {
    let measure = if kernel.is_distance_based() {
        Measure::SqDist
    } else if *kernel == Kernel::Cosine {
        Measure::Cosine
    } else {
        Measure::Inner
    };
    pairwise(x, z, measure, |v| kernel.of_inner_or_dist(v))
}

/// `K(X, Z) V` for the linear kernel on packed rows (`LinearGram`).
pub(crate) fn linear_cross_apply(
    x: ArrayView2<f64>,
    z: ArrayView2<f64>,
    v: ArrayView2<f64>,
) -> Result<Array2<f64>> {
    LinearGram::new(z)?.apply(x, v)
}

/// Products with the linear kernel's matrix against reference rows Z, the kernel never
/// formed: with `X̃`, `Z̃` the scaled sparse rows and `aᵢ = x̃ᵢᵀμ̃`, the centred inner products
/// are `K(X, Z) = X̃Z̃ᵀ − a_X 1ᵀ − 1 a_Zᵀ + ‖μ̃‖² 11ᵀ`, so
/// `K V = X̃(Z̃ᵀV) − a_X(1ᵀV) − 1(a_ZᵀV) + ‖μ̃‖² 1(1ᵀV)`: O((nnz_X + nnz_Z) · b) for b columns.
/// Z̃ᵀV runs over Z's columns (the inverted index), so each output row is written once.
pub(crate) struct LinearGram<'a> {
    z: ArrayView2<'a, f64>,
    index: InvertedIndex,
    /// Z̃ᵀV's storage, kept between products (a fresh one costs its page faults each time).
    scratch: std::sync::Mutex<Vec<f64>>,
}

impl<'a> LinearGram<'a> {
    /// The products against packed rows `z`.
    pub(crate) fn new(z: ArrayView2<'a, f64>) -> Result<Self> {
        if z.nrows() > 0 && !is_packed(z) {
            return Err(OvkError::internal(
                "a packed linear product with dense rows",
            ));
        }
        Ok(LinearGram {
            z,
            index: InvertedIndex::of(z),
            scratch: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// `K(X, Z) V` for packed rows X (V has Z's rows).
    pub(crate) fn apply(&self, x: ArrayView2<f64>, v: ArrayView2<f64>) -> Result<Array2<f64>> {
        let (n_z, b) = v.dim();
        if self.z.nrows() != n_z || (x.nrows() > 0 && !is_packed(x)) {
            return Err(OvkError::internal(format!(
                "a packed linear product of {}×{} with {n_z} rows",
                x.nrows(),
                self.z.nrows()
            )));
        }
        let mut out = Array2::<f64>::zeros((x.nrows(), b));
        if b == 0 || n_z == 0 {
            return Ok(out);
        }
        let v = v.as_standard_layout();
        let v = v.as_slice().expect("standard layout");
        let cols = self.index.start.len() - 1;
        let mut guard = self.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let p = &mut *guard;
        p.clear();
        p.resize(cols * b, 0.0);
        // P = Z̃ᵀV, one row of P per column of Z̃.
        p.par_chunks_mut(b).enumerate().for_each(|(k, pk)| {
            let r = self.index.start[k]..self.index.start[k + 1];
            for (&j, &w) in self.index.rows[r.clone()].iter().zip(&self.index.vals[r]) {
                let vj = &v[j as usize * b..(j as usize + 1) * b];
                for (o, &vv) in pk.iter_mut().zip(vj) {
                    *o += w * vv;
                }
            }
        });
        let (mut sum_v, mut a_v) = (vec![0.0; b], vec![0.0; b]);
        for j in 0..n_z {
            let a = row_at(self.z, j).a;
            for ((s, av), &w) in sum_v.iter_mut().zip(&mut a_v).zip(&v[j * b..(j + 1) * b]) {
                *s += w;
                *av += a * w;
            }
        }
        let p = &*p;
        out.as_slice_mut()
            .expect("a fresh matrix is contiguous")
            .par_chunks_mut(b)
            .enumerate()
            .for_each(|(i, o)| {
                let r = row_at(x, i);
                // A new row's columns past the reference rows' last meet only zeros.
                for (&k, &val) in r
                    .idx
                    .iter()
                    .zip(r.val)
                    .filter(|(&k, _)| (k as usize) < cols)
                {
                    for (o, &pk) in o.iter_mut().zip(&p[k as usize * b..(k as usize + 1) * b]) {
                        *o += val * pk;
                    }
                }
                for j in 0..b {
                    o[j] += (r.c - r.a) * sum_v[j] - a_v[j];
                }
            });
        Ok(out)
    }
}

/// Squared distances between all packed rows of `x`, zero on the diagonal.
pub(crate) fn sq_dists(x: ArrayView2<f64>) -> Array2<f64> {
    let mut d = cross_sq_dists(x, x).expect("one matrix is packed alike");
    d.diag_mut().fill(0.0);
    // Symmetric up to rounding: take the upper triangle.
    let n = d.nrows();
    for i in 0..n {
        for j in 0..i {
            d[[i, j]] = d[[j, i]];
        }
    }
    d
}

/// Squared distances from every packed row of `x` to every packed row of `z`.
pub(crate) fn cross_sq_dists(x: ArrayView2<f64>, z: ArrayView2<f64>) -> Result<Array2<f64>> {
    pairwise(x, z, Measure::SqDist, |v| v.max(0.0))
}

/// ‖x̃ − z̃‖² of two packed rows, summed directly (no cancellation).
pub(crate) fn sq_dist_of_rows(x: ArrayView1<f64>, z: ArrayView1<f64>) -> f64 {
    let (x, z) = (x.to_slice(), z.to_slice());
    sq_dist_direct(
        row_of(x.expect("packed rows are contiguous")),
        row_of(z.expect("packed rows are contiguous")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, s};

    /// A sparse row: its column indices and values.
    type Sparse = (Vec<u32>, Vec<f64>);

    /// Four sparse rows over 6 columns, and their dense form.
    fn rows() -> (Vec<Sparse>, Array2<f64>) {
        let sparse = vec![
            (vec![0, 3], vec![1.0, 2.0]),
            (vec![1, 3, 5], vec![-1.0, 0.5, 4.0]),
            (vec![], vec![]),
            (vec![0, 1, 2, 3, 4, 5], vec![1.0, -1.0, 3.0, 0.5, 2.0, 4.0]),
        ];
        let mut dense = Array2::zeros((sparse.len(), 6));
        for (i, (idx, val)) in sparse.iter().enumerate() {
            for (&k, &v) in idx.iter().zip(val) {
                dense[[i, k as usize]] = v;
            }
        }
        (sparse, dense)
    }

    fn packed(sparse: &[Sparse], mean: &[f64], std: &[f64]) -> Array2<f64> {
        let w = sparse.iter().map(|r| r.0.len()).max().unwrap();
        pack(
            sparse.iter().map(|(i, v)| (i.as_slice(), v.as_slice())),
            w,
            mean,
            std,
        )
    }

    fn standardised(dense: &Array2<f64>, mean: &[f64], std: &[f64]) -> Array2<f64> {
        let mut x = dense.clone();
        for ((_, j), v) in x.indexed_iter_mut() {
            *v = (*v - mean[j]) / std[j];
        }
        x
    }

    #[test]
    fn the_linear_product_on_packed_rows_equals_the_centred_gram_times_v() {
        let (sparse, dense) = rows();
        let mean = [0.3, -0.2, 0.7, 0.9, 0.5, 2.0];
        let std = [1.5, 0.5, 2.0, 1.0, 0.25, 3.0];
        let p = packed(&sparse, &mean, &std);
        let xs = standardised(&dense, &mean, &std);
        let k = xs.dot(&xs.t());
        let v = array![[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25], [2.0, 1.0]];
        let kv = LinearGram::new(p.view())
            .unwrap()
            .apply(p.view(), v.view())
            .unwrap();
        let want = k.dot(&v);
        let err = (&kv - &want).iter().fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(
            err < 1e-12 * want.iter().fold(1.0f64, |m, d| m.max(d.abs())),
            "{err}"
        );
        // A column-major V reads the same.
        let vt = v.t().to_owned();
        let kv_f = LinearGram::new(p.view())
            .unwrap()
            .apply(p.view(), vt.t())
            .unwrap();
        assert_eq!(kv, kv_f);
        // New rows against reference rows, one of them reaching past the references' columns.
        let refs = packed(&sparse[..2], &mean, &std);
        let got = linear_cross_apply(p.view(), refs.view(), v.slice(s![..2, ..])).unwrap();
        let want = xs
            .dot(&xs.slice(s![..2, ..]).t())
            .dot(&v.slice(s![..2, ..]));
        let err = (&got - &want).iter().fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(
            err < 1e-12 * want.iter().fold(1.0f64, |m, d| m.max(d.abs())),
            "{err}"
        );
    }

    #[test]
    fn every_kernel_on_packed_rows_equals_it_on_the_standardised_dense_rows() {
        let (sparse, dense) = rows();
        let mean = [0.3, -0.2, 0.7, 0.9, 0.5, 2.0];
        let std = [1.5, 0.5, 2.0, 1.0, 0.25, 3.0];
        let p = packed(&sparse, &mean, &std);
        assert!(is_packed(p.view()));
        let d = standardised(&dense, &mean, &std);
        for kernel in [
            Kernel::Linear,
            Kernel::Gaussian { sigma: 1.7 },
            Kernel::Polynomial {
                degree: 3,
                coef0: 1.0,
            },
            Kernel::Laplacian { sigma: 2.5 },
            Kernel::Cosine,
        ] {
            let want = super::super::gram::cross_gram(&kernel, d.view(), d.view()).unwrap();
            let got = cross_gram(&kernel, p.view(), p.view()).unwrap();
            // Relative to the entry: a cubic's values reach the thousands.
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b.abs().max(1.0);
            assert!(
                want.iter().zip(&got).all(|(&w, &g)| close(g, w)),
                "{kernel}: {got} vs {want}"
            );
            for i in 0..p.nrows() {
                let single = eval(
                    &kernel,
                    p.row(i).to_slice().unwrap(),
                    p.row(i).to_slice().unwrap(),
                );
                assert!(close(single, want[[i, i]]), "{kernel}");
                let own = self_value(&kernel, p.row(i).to_slice().unwrap());
                assert!(close(own, want[[i, i]]), "{kernel}");
            }
        }
    }

    #[test]
    fn rows_of_other_widths_meet_and_distances_are_exact_for_equal_rows() {
        let (sparse, dense) = rows();
        let (mean, std) = ([0.0; 6], [1.0; 6]);
        let all = packed(&sparse, &mean, &std);
        let narrow = packed(&sparse[..2], &mean, &std);
        assert!(width_of(narrow.view()) < width_of(all.view()));
        let k = Kernel::Gaussian { sigma: 1.0 };
        let got = cross_gram(&k, narrow.view(), all.view()).unwrap();
        let want =
            super::super::gram::cross_gram(&k, dense.slice(s![..2, ..]), dense.view()).unwrap();
        assert!((&got - &want).iter().all(|e| e.abs() < 1e-14));
        let d = sq_dists(all.view());
        assert_eq!(d.diag().to_vec(), vec![0.0; 4]);
        assert_eq!(d[[0, 2]], 5.0);
        assert_eq!(d[[2, 0]], 5.0);
    }

    #[test]
    fn dense_rows_are_not_packed_and_mixing_is_refused() {
        let dense = array![[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]];
        assert!(!is_packed(dense.view()));
        let (sparse, _) = rows();
        let p = packed(&sparse, &[0.0; 6], &[1.0; 6]);
        assert!(cross_gram(&Kernel::Linear, p.view(), dense.view()).is_err());
    }
}
