//! Householder reduction of a symmetric matrix to tridiagonal form, blocked as LAPACK's
//! dsytrd/dlatrd (lower triangle), leaving its result exactly as faer's `tridiag_in_place` does
//! (reflectors below the subdiagonal, block factors in `coeffs`) so that faer's tridiagonal
//! eigensolver and back-transformation apply unchanged.
//!
//! Why not faer's own: it applies each column's rank-2 update to the whole trailing triangle
//! at once, reading and writing n³/6 entries over the reduction. Here a panel of `NB` columns
//! is reduced against the trailing matrix as it stood at the panel's start, which each column
//! only reads (one symmetric matrix-vector product, [`symv_lower`]); the trailing matrix is
//! written once per panel, by one rank-2·NB product on faer's GEMM. On this machine's 2 cores
//! (2026-11-27) the reduction took 2.3–2.7 s against faer's 4.4–4.6 s at n = 3000, 6.6–7.0 s
//! against 8.7–11.4 s at n = 4000 and 50 s against 67 s at n = 8000; the product itself runs
//! at the memory's speed (17 GB/s on two threads, where OpenBLAS's dsymv reads 8.7 GB/s).

use faer::linalg::householder;
use faer::linalg::matmul::triangular::{self, BlockStructure};
use faer::reborrow::*;
use faer::{Accum, Mat, MatMut, MatRef, Par};

/// Columns reduced per panel. At n = 4000, 32, 48 and 64 gave reductions within the runs'
/// spread of each other (6.9–7.5 s); 128 was slower (8.3 s: the panel's own products grow
/// with it while the trailing GEMM gains little).
const NB: usize = 48;

/// The product splits over threads from this trailing size on. Not tuned: at n = 1000 two
/// threads already read 1.4× faster than one, and below a few hundred rows the split's
/// partial vectors cost more than they save.
const PARALLEL_SYMV_FROM: usize = 512;

/// Reduce `a` (n×n, its lower triangle read) in place to `Qᵀ A Q = T`: T's diagonal and
/// subdiagonal on `a`'s, the reflectors' vectors below the subdiagonal, and their block
/// triangular factors in `coeffs` (bs × (n − 1), bs its row count) — faer's layout. On an
/// abandoned `interruptible` worker it returns between panels with the work unfinished.
pub(crate) fn tridiagonalize(mut a: MatMut<'_, f64>, mut coeffs: MatMut<'_, f64>, par: Par) {
    let n = a.nrows();
    assert!(a.ncols() == n && coeffs.ncols() == n.saturating_sub(1));
    if n < 2 {
        return;
    }
    // faer's τ per reflector (its reflector is I − v vᵀ/τ; LAPACK's τ is 1/τ here).
    let mut tau = vec![0.0f64; n - 1];
    let (mut v, mut w) = (Mat::<f64>::zeros(n, NB), Mat::<f64>::zeros(n, NB));
    let (mut lhs, mut rhs) = (Mat::<f64>::zeros(n, 2 * NB), Mat::<f64>::zeros(n, 2 * NB));
    let mut y = vec![0.0f64; n];
    let mut parts = Vec::new();
    let mut j0 = 0;
    while j0 < n {
        // An abandoned worker stops between panels, the reduction half done: the caller
        // (`tridiag::reduce`) returns `Cancelled` instead of the matrix.
        if super::interruptible::abandoned() {
            return;
        }
        let jb = NB.min(n - j0);
        let m = n - j0;
        v.as_mut().submatrix_mut(0, 0, m, jb).fill(0.0);
        w.as_mut().submatrix_mut(0, 0, m, jb).fill(0.0);
        for i in 0..jb {
            let c = j0 + i;
            // The column as the earlier columns of this panel leave it (dlatrd's first step).
            {
                let col = contiguous_mut(a.rb_mut().col_mut(c).subrows_mut(c, n - c));
                for p in 0..i {
                    let vp = &column(v.as_ref(), p)[c - j0..m];
                    let wp = &column(w.as_ref(), p)[c - j0..m];
                    axpy2(col, vp, -wp[0], wp, -vp[0]);
                }
            }
            if c + 1 == n {
                break;
            }
            let (r, len) = (c + 1, n - c - 1);
            let tau_l = {
                let (mut head, tail) = a
                    .rb_mut()
                    .col_mut(c)
                    .subrows_mut(r, len)
                    .split_at_row_mut(1);
                let info = householder::make_householder_in_place(&mut head[0], tail);
                tau[c] = info.tau;
                // τ = ∞ when the column is already reduced: no reflection.
                info.tau.recip()
            };
            {
                let vc = &mut contiguous_mut(v.as_mut().col_mut(i))[r - j0..m];
                vc[0] = 1.0;
                for (k, e) in vc[1..].iter_mut().enumerate() {
                    *e = a[(r + 1 + k, c)];
                }
            }
            let vi = &column(v.as_ref(), i)[r - j0..m];
            let yi = &mut y[..len];
            // w = τ (A₂₂ v − V Wᵀv − W Vᵀv), then w − ½τ (wᵀv) v (dlatrd).
            symv_lower(a.rb().submatrix(r, r, len, len), vi, yi, par, &mut parts);
            for p in 0..i {
                let vp = &column(v.as_ref(), p)[r - j0..m];
                let wp = &column(w.as_ref(), p)[r - j0..m];
                let (t1, t2) = (dot(wp, vi), dot(vp, vi));
                axpy2(yi, vp, -t1, wp, -t2);
            }
            yi.iter_mut().for_each(|e| *e *= tau_l);
            let alpha = -0.5 * tau_l * dot(yi, vi);
            let wc = &mut contiguous_mut(w.as_mut().col_mut(i))[r - j0..m];
            for ((wk, yk), vk) in wc.iter_mut().zip(yi.iter()).zip(vi) {
                *wk = alpha * vk + yk;
            }
        }
        let s = j0 + jb;
        if s < n {
            // A₂₂ ← A₂₂ − V Wᵀ − W Vᵀ as one product [V W] [W V]ᵀ, lower triangle only.
            let rows = n - s;
            let (vs, ws) = (
                v.as_ref().submatrix(s - j0, 0, rows, jb),
                w.as_ref().submatrix(s - j0, 0, rows, jb),
            );
            let (mut l, mut rt) = (
                lhs.as_mut().submatrix_mut(0, 0, rows, 2 * jb),
                rhs.as_mut().submatrix_mut(0, 0, rows, 2 * jb),
            );
            l.rb_mut().subcols_mut(0, jb).copy_from(vs);
            l.rb_mut().subcols_mut(jb, jb).copy_from(ws);
            rt.rb_mut().subcols_mut(0, jb).copy_from(ws);
            rt.rb_mut().subcols_mut(jb, jb).copy_from(vs);
            triangular::matmul(
                a.rb_mut().submatrix_mut(s, s, rows, rows),
                BlockStructure::TriangularLower,
                Accum::Add,
                l.rb(),
                BlockStructure::Rectangular,
                rt.rb().transpose(),
                BlockStructure::Rectangular,
                -1.0,
                par,
            );
        }
        j0 = s;
    }
    // The block reflectors' triangular factors, as faer's tridiag_in_place leaves them.
    let n1 = n - 1;
    let bs = coeffs.nrows();
    let vectors = a.rb().submatrix(1, 0, n1, n1);
    let mut j = 0;
    while j < n1 {
        let b = bs.min(n1 - j);
        let mut t = coeffs.rb_mut().submatrix_mut(0, j, b, b);
        for k in 0..b {
            t[(k, k)] = tau[j + k];
        }
        householder::upgrade_householder_factor(t, vectors.submatrix(j, j, n1 - j, b), b, 1, par);
        j += b;
    }
}

fn column<'a>(m: MatRef<'a, f64>, j: usize) -> &'a [f64] {
    m.col(j)
        .try_as_col_major()
        .expect("faer's columns are contiguous")
        .as_slice()
}

fn contiguous_mut(c: faer::ColMut<'_, f64>) -> &mut [f64] {
    c.try_as_col_major_mut()
        .expect("faer's columns are contiguous")
        .as_slice_mut()
}

/// `y = A x` for symmetric A stored in its lower triangle, each stored entry read once; on
/// `par`'s threads when A is large, each thread on a band of columns of equal area with its own
/// partial `y` (kept in `parts`).
pub(crate) fn symv_lower(
    a: MatRef<'_, f64>,
    x: &[f64],
    y: &mut [f64],
    par: Par,
    parts: &mut Vec<Vec<f64>>,
) {
    let n = a.nrows();
    y.fill(0.0);
    let threads = par.degree().min(n / 64).max(1);
    if threads < 2 || n < PARALLEL_SYMV_FROM {
        symv_columns(a, x, y, 0..n);
        return;
    }
    // Column j holds n − j entries: band k ends where the triangle's area reaches (k+1)/t.
    let ends: Vec<usize> = (1..=threads)
        .map(|k| {
            let left = (1.0 - k as f64 / threads as f64).sqrt();
            (n - (n as f64 * left) as usize).min(n)
        })
        .collect();
    parts.resize_with(threads - 1, Vec::new);
    for p in parts.iter_mut() {
        p.clear();
        p.resize(n, 0.0);
    }
    rayon::scope(|scope| {
        let mut start = ends[0];
        for (k, part) in parts.iter_mut().enumerate() {
            let band = start..ends[k + 1];
            start = band.end;
            scope.spawn(move |_| symv_columns(a, x, part, band));
        }
        symv_columns(a, x, y, 0..ends[0]);
    });
    for part in parts.iter() {
        y.iter_mut().zip(part).for_each(|(e, p)| *e += p);
    }
}

/// Whether this CPU runs the AVX2 + FMA paths (cached by std after the first call).
fn avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// `a b + c`: one rounding where FMA is compiled in, a multiply and an add elsewhere (a
/// `mul_add` without the instruction is a slow library call).
type Fma = fn(f64, f64, f64) -> f64;
const PLAIN: Fma = |a, b, c| a * b + c;

/// `y += A[:, cols] x[cols] + A[:, cols]ᵀ x` over the stored lower part of the columns `cols`.
fn symv_columns(a: MatRef<'_, f64>, x: &[f64], y: &mut [f64], cols: std::ops::Range<usize>) {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the features the function is compiled for were detected.
        unsafe { avx2::symv_columns(a, x, y, cols) };
        return;
    }
    symv_columns_with(a, x, y, cols, PLAIN)
}

#[inline(always)]
fn symv_columns_with(
    a: MatRef<'_, f64>,
    x: &[f64],
    y: &mut [f64],
    cols: std::ops::Range<usize>,
    fma: Fma,
) {
    for j in cols {
        let col = &column(a, j)[j..];
        let (d, below) = col.split_first().expect("a column of a square matrix");
        let xj = x[j];
        let mut t = 0.0;
        for ((aij, xi), yi) in below.iter().zip(&x[j + 1..]).zip(&mut y[j + 1..]) {
            t = fma(*aij, *xi, t);
            *yi = fma(*aij, xj, *yi);
        }
        y[j] += d * xj + t;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use faer::MatRef;
    use std::arch::x86_64::*;

    /// Four columns at a time: four read streams, and `y` loaded and stored once per four
    /// columns. Written with intrinsics: the compiler's vectorisation of the same loop ran at a
    /// third of this speed (6.9 against 15–31 GB/s at n = 2000).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn symv_columns(
        a: MatRef<'_, f64>,
        x: &[f64],
        y: &mut [f64],
        cols: std::ops::Range<usize>,
    ) {
        let n = a.nrows();
        assert!(x.len() == n && y.len() == n && cols.end <= n && a.row_stride() == 1);
        let mut j = cols.start;
        while j + 4 <= cols.end {
            let c: [*const f64; 4] = std::array::from_fn(|q| a.ptr_at(0, j + q));
            // The 4×4 block on the diagonal, its lower triangle read.
            for q in 0..4 {
                y[j + q] += *c[q].add(j + q) * x[j + q];
                for p in q + 1..4 {
                    let apq = *c[q].add(j + p);
                    y[j + p] += apq * x[j + q];
                    y[j + q] += apq * x[j + p];
                }
            }
            let xq: [__m256d; 4] = std::array::from_fn(|q| _mm256_set1_pd(x[j + q]));
            let mut acc = [_mm256_setzero_pd(); 4];
            let (xp, yp) = (x.as_ptr(), y.as_mut_ptr());
            let mut i = j + 4;
            while i + 4 <= n {
                let xv = _mm256_loadu_pd(xp.add(i));
                let mut yv = _mm256_loadu_pd(yp.add(i));
                for q in 0..4 {
                    let aq = _mm256_loadu_pd(c[q].add(i));
                    acc[q] = _mm256_fmadd_pd(aq, xv, acc[q]);
                    yv = _mm256_fmadd_pd(aq, xq[q], yv);
                }
                _mm256_storeu_pd(yp.add(i), yv);
                i += 4;
            }
            let mut t = [0.0f64; 4];
            for q in 0..4 {
                let mut lanes = [0.0f64; 4];
                _mm256_storeu_pd(lanes.as_mut_ptr(), acc[q]);
                t[q] = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
            }
            while i < n {
                let mut yi = y[i];
                for q in 0..4 {
                    let aq = *c[q].add(i);
                    t[q] = aq.mul_add(x[i], t[q]);
                    yi = aq.mul_add(x[j + q], yi);
                }
                y[i] = yi;
                i += 1;
            }
            for q in 0..4 {
                y[j + q] += t[q];
            }
            j += 4;
        }
        super::symv_columns_with(a, x, y, j..cols.end, f64::mul_add);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn dot(x: &[f64], y: &[f64]) -> f64 {
        super::dot_with(x, y, f64::mul_add)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn axpy2(y: &mut [f64], u: &[f64], alpha: f64, v: &[f64], beta: f64) {
        super::axpy2_with(y, u, alpha, v, beta, f64::mul_add)
    }
}

/// `xᵀy`.
fn dot(x: &[f64], y: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the features the function is compiled for were detected.
        return unsafe { avx2::dot(x, y) };
    }
    dot_with(x, y, PLAIN)
}

/// Sixteen partial sums, so that the compiler keeps them in vector registers.
#[inline(always)]
fn dot_with(x: &[f64], y: &[f64], fma: Fma) -> f64 {
    let mut acc = [0.0f64; 16];
    let (xc, yc) = (x.chunks_exact(16), y.chunks_exact(16));
    let tail: f64 = xc
        .remainder()
        .iter()
        .zip(yc.remainder())
        .map(|(a, b)| a * b)
        .sum();
    for (a, b) in xc.zip(yc) {
        for l in 0..16 {
            acc[l] = fma(a[l], b[l], acc[l]);
        }
    }
    acc.iter().sum::<f64>() + tail
}

/// `y += α u + β v`.
fn axpy2(y: &mut [f64], u: &[f64], alpha: f64, v: &[f64], beta: f64) {
    #[cfg(target_arch = "x86_64")]
    if avx2_fma() {
        // SAFETY: the features the function is compiled for were detected.
        return unsafe { avx2::axpy2(y, u, alpha, v, beta) };
    }
    axpy2_with(y, u, alpha, v, beta, PLAIN)
}

#[inline(always)]
fn axpy2_with(y: &mut [f64], u: &[f64], alpha: f64, v: &[f64], beta: f64, fma: Fma) {
    for ((yk, uk), vk) in y.iter_mut().zip(u).zip(v) {
        *yk = fma(beta, *vk, fma(alpha, *uk, *yk));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::tridiag::block_size;
    use faer::dyn_stack::{MemBuffer, MemStack};
    use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};

    fn random_symmetric(n: usize, seed: u64) -> Mat<f64> {
        let mut s = seed;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        };
        let mut a = Mat::<f64>::zeros(n, n);
        for j in 0..n {
            for i in j..n {
                let v = next();
                a[(i, j)] = v;
                a[(j, i)] = v;
            }
        }
        a
    }

    /// faer's unblocked reduction of the same matrix: the same reflectors, so the same T.
    fn faer_reduction(a: &Mat<f64>, par: Par) -> (Mat<f64>, Mat<f64>) {
        let n = a.nrows();
        let (mut t, mut h) = (a.clone(), Mat::<f64>::zeros(block_size(n), n - 1));
        let mut mem = MemBuffer::new(tridiag_in_place_scratch::<f64>(n, par, Default::default()));
        tridiag_in_place(
            t.as_mut(),
            h.as_mut(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
        (t, h)
    }

    #[test]
    fn blocked_reduction_equals_faers_reflector_for_reflector() {
        // Sizes around a panel (NB = 48), past the two-thread product, and tiny ones.
        for (n, par) in [
            (2, Par::Seq),
            (3, Par::Seq),
            (47, Par::Seq),
            (48, Par::Seq),
            (49, Par::Seq),
            (97, Par::rayon(2)),
            (700, Par::rayon(2)),
        ] {
            let a = random_symmetric(n, n as u64);
            let (want, want_h) = faer_reduction(&a, par);
            let (mut got, mut got_h) = (a.clone(), Mat::<f64>::zeros(block_size(n), n - 1));
            tridiagonalize(got.as_mut(), got_h.as_mut(), par);
            let mut worst = 0.0f64;
            for j in 0..n {
                for i in j..n {
                    worst = worst.max((got[(i, j)] - want[(i, j)]).abs());
                }
            }
            // Each block's triangular factor: the upper triangle of its bs × bs square.
            let bs = block_size(n);
            for start in (0..n - 1).step_by(bs) {
                for k in 0..bs.min(n - 1 - start) {
                    for i in 0..=k {
                        let (g, w) = (got_h[(i, start + k)], want_h[(i, start + k)]);
                        worst = worst.max((g - w).abs());
                    }
                }
            }
            assert!(
                worst < 1e-10 * n as f64,
                "n = {n}: differs from faer's by {worst:e}"
            );
        }
    }

    #[test]
    fn an_already_reduced_column_is_left_alone() {
        // Block diagonal: the first column has no entry below its subdiagonal (τ = ∞).
        let n = 60;
        let mut a = random_symmetric(n, 7);
        for i in 2..n {
            a[(i, 0)] = 0.0;
            a[(0, i)] = 0.0;
        }
        let (want, _) = faer_reduction(&a, Par::Seq);
        let mut got = a.clone();
        tridiagonalize(
            got.as_mut(),
            Mat::<f64>::zeros(block_size(n), n - 1).as_mut(),
            Par::Seq,
        );
        for i in 0..n {
            assert!((got[(i, i)] - want[(i, i)]).abs() < 1e-12);
            assert!(got[(i, i)].is_finite());
        }
    }

    #[test]
    fn symmetric_product_reads_the_lower_triangle_right() {
        // Odd sizes hit the four-column kernel's tails; 1030 splits over two threads.
        for (n, par) in [
            (1, Par::Seq),
            (5, Par::Seq),
            (13, Par::Seq),
            (1030, Par::rayon(2)),
        ] {
            let a = random_symmetric(n, 3 + n as u64);
            let mut lower = a.clone();
            for j in 0..n {
                for i in 0..j {
                    lower[(i, j)] = f64::NAN; // never read
                }
            }
            let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.7).sin()).collect();
            let mut y = vec![0.0; n];
            symv_lower(lower.as_ref(), &x, &mut y, par, &mut Vec::new());
            for i in 0..n {
                let want: f64 = (0..n).map(|j| a[(i, j)] * x[j]).sum();
                assert!((y[i] - want).abs() < 1e-12 * n as f64, "n = {n}, row {i}");
            }
        }
    }
}
