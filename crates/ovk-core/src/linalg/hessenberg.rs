//! Orthogonal Hessenberg reduction `A = U H Uᵀ` of a general square matrix, kept for many
//! shifted solves `(s A + c I) x = b`: each costs O(N²) once the O(N³) reduction is done.
//! This is the classical way to solve a Sylvester equation whose left matrix is not symmetric
//! (Golub, Nash, Van Loan 1979) and stays exact when `A` is singular. U is kept as faer's
//! Householder reflectors and applied to the N×m blocks that need it, never formed: forming
//! it was an N×N×N product of its own, a third of vvmr's exact decomposition.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::hessenberg::{hessenberg_in_place, hessenberg_in_place_scratch};
use faer::Mat;
use ndarray::{Array2, ArrayView2, ArrayViewMut2, ShapeBuilder};
use rayon::prelude::*;

use super::convert::{faer_to_array, leave_avx_state, view, view_mut};
use super::decomp::{par_from, PARALLEL_EIGH_FROM};
use super::norm::dot;
use crate::{OvkError, Result};

/// `A = U H Uᵀ` with `U` orthogonal and `H` upper Hessenberg (zeros below the subdiagonal).
#[derive(Debug, Clone)]
pub struct Hessenberg {
    /// The reduced matrix, row-major (the shifted solves read H by rows): H on and above the
    /// subdiagonal, the reflectors' vectors below it.
    reduced: Array2<f64>,
    /// The block reflectors' triangular factors.
    coeffs: Mat<f64>,
}

/// Reduce a square matrix to Hessenberg form by Householder reflections (faer, blocked); `a` is
/// consumed, so that it is freed as soon as faer holds its copy.
pub(crate) fn hessenberg(a: Array2<f64>) -> Result<Hessenberg> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(OvkError::internal(format!(
            "Hessenberg reduction of a non-square {}×{} matrix",
            n,
            a.ncols()
        )));
    }
    if a.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::numerical(
            "Hessenberg reduction: the matrix has NaN or infinite entries (check the data for \
             huge values, or the kernel width σ)",
        ));
    }
    if n <= 2 {
        return Ok(Hessenberg {
            reduced: a.as_standard_layout().into_owned(),
            coeffs: Mat::zeros(0, n.saturating_sub(1)),
        });
    }
    let par = par_from(n, PARALLEL_EIGH_FROM);
    let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n - 1, n - 1);
    let req = hessenberg_in_place_scratch::<f64>(n, bs, par, Default::default());
    let mut buf = MemBuffer::new(req);
    let stack = MemStack::new(&mut buf);
    let mut h = Mat::<f64>::zeros(n, n);
    h.copy_from(view(&a.view()));
    drop(a);
    let mut coeffs = Mat::<f64>::zeros(bs, n - 1);
    hessenberg_in_place(h.as_mut(), coeffs.as_mut(), par, stack, Default::default());
    leave_avx_state();
    let reduced = faer_to_array(h.as_ref());
    Ok(Hessenberg { reduced, coeffs })
}

impl Hessenberg {
    fn n(&self) -> usize {
        self.reduced.nrows()
    }

    /// H, formed (tests and diagnostics; the solves read it in place).
    pub fn h(&self) -> Array2<f64> {
        let mut h = self.reduced.clone();
        for ((i, j), v) in h.indexed_iter_mut() {
            if i > j + 1 {
                *v = 0.0;
            }
        }
        h
    }

    /// `x ← U x` (`transpose`: `x ← Uᵀ x`), U applied from its reflectors: O(N²) per column.
    /// `U = I ⊕ Û`, so row 0 is left alone.
    pub fn apply_u(&self, mut x: ArrayViewMut2<f64>, transpose: bool) {
        let n = self.n();
        assert_eq!(
            x.nrows(),
            n,
            "Hessenberg: U applied to a matrix of another height"
        );
        // below 3 rows there is no reflector: U = I
        if n <= 2 || x.ncols() == 0 {
            return;
        }
        let reduced = self.reduced.view();
        super::reflectors::apply_reflectors(
            view(&reduced),
            self.coeffs.as_ref(),
            view_mut(&mut x),
            transpose,
        );
    }

    /// Solve `(scales[j]·A + shift·I) xⱼ = bⱼ` for every column j of `b`, reusing the one
    /// reduction: `xⱼ = U (scales[j]·H + shift·I)⁻¹ Uᵀ bⱼ`, O(N²) per column, the columns in
    /// parallel (each with a packed triangular buffer of its own).
    pub(crate) fn solve_shifted(
        &self,
        scales: &[f64],
        shift: f64,
        b: ArrayView2<f64>,
    ) -> Result<Array2<f64>> {
        let n = self.n();
        if b.nrows() != n || b.ncols() != scales.len() {
            return Err(OvkError::internal(format!(
                "shifted Hessenberg solve: {}×{} right-hand side for a {n}×{n} matrix and {} \
                 shifts",
                b.nrows(),
                b.ncols(),
                scales.len()
            )));
        }
        // column-major: faer's layout for the reflectors, and each column's solve reads it whole
        let mut x = Array2::<f64>::zeros((n, b.ncols()).f());
        x.assign(&b);
        self.apply_u(x.view_mut(), true); // Uᵀ B
                                          // max |h_ij| off the diagonal: the norm of s·H + c·I is then O(N) per shift
        let mut off_max = 0.0f64;
        for ((i, j), v) in self.reduced.indexed_iter() {
            if i != j && i <= j + 1 {
                off_max = off_max.max(v.abs());
            }
        }
        let h = self
            .reduced
            .as_slice()
            .expect("the reduced matrix is row-major and contiguous");
        let columns = x
            .as_slice_memory_order_mut()
            .expect("a fresh column-major block is contiguous");
        let solved: Vec<Result<()>> = columns
            .par_chunks_mut(n)
            .zip(scales.par_iter())
            .map_init(
                || SolveBuffers::new(n),
                |buf, (col, &s)| solve_shifted_hessenberg(h, n, off_max, (s, shift), buf, col),
            )
            .collect();
        solved.into_iter().collect::<Result<()>>()?;
        self.apply_u(x.view_mut(), false); // U X
        Ok(x.as_standard_layout().into_owned())
    }
}

/// One thread's buffers for [`solve_shifted_hessenberg`]: the carried row, the carried row at
/// the start of every segment of steps, and one segment's rows of the triangular factor.
struct SolveBuffers {
    carry: Vec<f64>,
    checkpoints: Vec<f64>,
    segment: Vec<f64>,
}

impl SolveBuffers {
    fn new(n: usize) -> Self {
        let seg = segment_len(n);
        let segments = n.saturating_sub(1).div_ceil(seg);
        SolveBuffers {
            carry: vec![0.0; n],
            checkpoints: vec![0.0; checkpoint_offset(n, seg, segments)],
            segment: vec![0.0; seg * n],
        }
    }
}

/// Steps per segment: about √(n/2), which makes the checkpoints (n²/(2·seg) values) and one
/// segment's rows (seg·n) equally small — 1.9 MB at n = 3000, where the whole triangular
/// factor is 36 MB and each solve would stream it to memory and back.
fn segment_len(n: usize) -> usize {
    (n / 2).isqrt().max(32)
}

/// Where segment g's checkpoint (the carried row's entries k₀..n at step k₀ = g·seg) starts.
fn checkpoint_offset(n: usize, seg: usize, g: usize) -> usize {
    g * n - seg * g * g.saturating_sub(1) / 2
}

/// `(s H + c I) x = b` for upper Hessenberg `H` (row-major, `h` its n² values) by Gaussian
/// elimination with partial pivoting between adjacent rows (the only rows that hold a nonzero
/// in the pivot column); `b` is overwritten with `x`. Row k+1 of `s H + c I` is read from H when
/// step k needs it and only the eliminated row is carried, so step k yields row k of the
/// triangular factor. The factor is not kept: the forward pass saves the carried row at the
/// start of every segment of steps, and the back substitution, segment by segment from the
/// last, recomputes that segment's rows from its checkpoint — twice the elimination's
/// arithmetic, but every row is read and written in cache instead of memory. `off_max` is
/// `max |h_ij|` over i ≠ j (the norm that scales the singularity test). Only H's part of `h`
/// is read (on and above the subdiagonal), so the reflectors may sit below it.
fn solve_shifted_hessenberg(
    h: &[f64],
    n: usize,
    off_max: f64,
    (s, c): (f64, f64),
    buf: &mut SolveBuffers,
    b: &mut [f64],
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let mut norm = if n > 1 { s.abs() * off_max } else { 0.0 };
    for i in 0..n {
        norm = norm.max((s * h[i * n + i] + c).abs());
    }
    let tiny = norm * f64::EPSILON * n as f64;
    let seg = segment_len(n);
    let SolveBuffers {
        carry,
        checkpoints,
        segment,
    } = buf;
    for (j, v) in carry.iter_mut().enumerate() {
        *v = s * h[j] + if j == 0 { c } else { 0.0 };
    }
    let mut saved = 0;
    for k in 0..n - 1 {
        if k % seg == 0 {
            checkpoints[saved..saved + n - k].copy_from_slice(&carry[k..]);
            saved += n - k;
        }
        let row = &mut segment[(k % seg) * n..(k % seg) * n + n - k];
        let (swap, l) = eliminate(
            &h[(k + 1) * n + k..(k + 2) * n],
            (s, c),
            &mut carry[k..],
            row,
        );
        if row[0].abs() <= tiny {
            return Err(singular());
        }
        if swap {
            b.swap(k, k + 1);
        }
        if l != 0.0 {
            b[k + 1] -= l * b[k];
        }
    }
    let last = carry[n - 1];
    if last.abs() <= tiny {
        return Err(singular());
    }
    b[n - 1] /= last;
    for g in (0..(n - 1).div_ceil(seg)).rev() {
        let (k0, k1) = (g * seg, ((g + 1) * seg).min(n - 1));
        let at = checkpoint_offset(n, seg, g);
        carry[k0..].copy_from_slice(&checkpoints[at..at + n - k0]);
        for k in k0..k1 {
            let row = &mut segment[(k - k0) * n..(k - k0) * n + n - k];
            eliminate(
                &h[(k + 1) * n + k..(k + 2) * n],
                (s, c),
                &mut carry[k..],
                row,
            );
        }
        for i in (k0..k1).rev() {
            let row = &segment[(i - k0) * n..(i - k0) * n + n - i];
            b[i] = (b[i] - dot(&row[1..], &b[i + 1..])) / row[0];
        }
    }
    Ok(())
}

/// Step k of the elimination: `next` is row k+1 of H from column k, `carry` the carried row
/// from column k. Writes row k of the triangular factor into `row`, leaves the next carried row
/// in `carry`, and returns whether rows k and k+1 swapped and the multiplier l, which the
/// right-hand side needs too.
fn eliminate(next: &[f64], (s, c): (f64, f64), carry: &mut [f64], row: &mut [f64]) -> (bool, f64) {
    let len = row.len();
    let next_k = s * next[0];
    if next_k.abs() > carry[0].abs() {
        // row k+1 is the pivot row; the carried row becomes carry − l·(row k+1)
        let l = carry[0] / next_k;
        for (r, &v) in row.iter_mut().zip(next) {
            *r = s * v;
        }
        row[1] += c;
        if l != 0.0 {
            for (x, &r) in carry.iter_mut().zip(row.iter()) {
                *x -= l * r;
            }
        }
        (true, l)
    } else {
        // the carried row is the pivot row; row k+1 becomes the carried one, less l of it
        let l = next_k / carry[0];
        row.copy_from_slice(&carry[..len]);
        carry[0] = next_k - l * row[0];
        carry[1] = (s * next[1] + c) - l * row[1];
        for ((x, &r), &v) in carry[2..].iter_mut().zip(&row[2..]).zip(&next[2..]) {
            *x = s * v - l * r;
        }
        (false, l)
    }
}

fn singular() -> OvkError {
    OvkError::numerical(
        "the shifted system is numerically singular; increase the ambient regularisation",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg_matrix(n: usize, m: usize, seed: u64) -> Array2<f64> {
        let mut s = seed;
        Array2::from_shape_fn((n, m), |_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        })
    }

    #[test]
    fn reduction_reconstructs_and_is_orthogonal() {
        for n in [1, 2, 3, 7, 40, 150] {
            let a = lcg_matrix(n, n, n as u64);
            let f = hessenberg(a.clone()).unwrap();
            let mut u = Array2::<f64>::eye(n);
            f.apply_u(u.view_mut(), false);
            let h = f.h();
            let rec = u.dot(&h).dot(&u.t());
            assert!((&rec - &a).iter().all(|d| d.abs() < 1e-12), "n = {n}");
            let id = u.t().dot(&u);
            assert!((&id - &Array2::<f64>::eye(n))
                .iter()
                .all(|d| d.abs() < 1e-12));
            for j in 0..n {
                for i in j + 2..n {
                    assert_eq!(h[[i, j]], 0.0);
                }
            }
            // Uᵀ undoes U, on a row-major block as on faer's own layout
            let b = lcg_matrix(n, 3, 9);
            let mut x = b.clone();
            f.apply_u(x.view_mut(), false);
            assert!((&x - &u.dot(&b)).iter().all(|d| d.abs() < 1e-12));
            f.apply_u(x.view_mut(), true);
            assert!((&x - &b).iter().all(|d| d.abs() < 1e-12));
        }
    }

    #[test]
    fn shifted_solves_match_lu() {
        // 33 and 65 end on a whole segment of steps (32), 130 on a partial one, past faer's
        // block size so that several blocks of reflectors are applied; the shift keeps the
        // spectrum (a disc of radius about √(n/12)) off zero
        for n in [1, 2, 3, 33, 65, 130] {
            let a = lcg_matrix(n, n, 3) + Array2::<f64>::eye(n) * 5.0;
            let b = lcg_matrix(n, 3, 4);
            let scales = [0.5, 1.0, 2.5];
            let x = hessenberg(a.clone())
                .unwrap()
                .solve_shifted(&scales, 0.7, b.view())
                .unwrap();
            for (j, &s) in scales.iter().enumerate() {
                let mut m = &a * s;
                m.diag_mut().mapv_inplace(|v| v + 0.7);
                let r = m.dot(&x.column(j)) - b.column(j);
                assert!(r.iter().all(|d| d.abs() < 1e-10), "n = {n}, column {j}");
            }
        }
    }

    #[test]
    fn a_singular_shifted_system_is_refused() {
        // H = 0 with no shift: every pivot is zero
        let f = hessenberg(Array2::zeros((40, 40))).unwrap();
        let b = lcg_matrix(40, 1, 5);
        assert!(f.solve_shifted(&[1.0], 0.0, b.view()).is_err());
    }
}
