//! Symmetric tridiagonal reduction `A = Q T Qᵀ` (Householder: `sytrd` for large matrices, faer's
//! below), kept for many shifted solves `(s T + c I) x = b` at O(N) each: half an
//! eigendecomposition when a Sylvester equation needs only one of its two sides diagonal
//! (Golub, Nash, Van Loan 1979).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd::tridiag::{tridiag_in_place, tridiag_in_place_scratch};
use faer::{Mat, MatMut};
use ndarray::{Array2, ArrayView2, ArrayViewMut2, Axis};
use rayon::prelude::*;

use super::convert::{leave_avx_state, view, view_mut};
use super::decomp::{par_from, BLOCKED_TRIDIAGONAL_FROM, PARALLEL_EIGH_FROM};
use crate::{OvkError, Result};

/// `A = Q T Qᵀ`: T tridiagonal (`diag`, `sub[i] = T[i+1, i]`), Q orthogonal, kept as faer's
/// Householder reflectors (never formed).
pub(crate) struct Tridiagonal {
    /// The reduced matrix, held as its transpose: `reduced_t.t()` is column-major (faer's
    /// layout) with the reflectors' vectors below its subdiagonal. Row-major storage of the
    /// transpose is what lets a row-major symmetric matrix be reduced in its own memory.
    reduced_t: Array2<f64>,
    /// The block reflectors' triangular factors.
    coeffs: Mat<f64>,
    /// T's diagonal.
    pub diag: Vec<f64>,
    /// T's subdiagonal.
    pub sub: Vec<f64>,
}

/// Reduce a symmetric matrix (its lower triangle is read) to tridiagonal form.
pub(crate) fn tridiagonal(a: ArrayView2<f64>) -> Result<Tridiagonal> {
    check(&a)?;
    let n = a.nrows();
    let mut reduced_t = Array2::<f64>::zeros((n, n));
    let mut lower = reduced_t.view_mut().reversed_axes();
    view_mut(&mut lower).copy_from_triangular_lower(view(&a));
    reduce(reduced_t)
}

/// `tridiagonal` in `a`'s own memory, which it consumes: no n×n copy (512 MB at n = 8000). `a`
/// must be exactly symmetric, as `kernels::gram` makes it: for a row-major `a` the reduction
/// reads its upper triangle.
pub(crate) fn tridiagonal_in_place(a: Array2<f64>) -> Result<Tridiagonal> {
    check(&a.view())?;
    debug_assert!(
        a.nrows() < 2 || a[[1, 0]] == a[[0, 1]],
        "tridiagonal_in_place: the matrix is not symmetric"
    );
    let a = if a.is_standard_layout() {
        a
    } else {
        a.as_standard_layout().into_owned()
    };
    reduce(a)
}

fn check(a: &ArrayView2<f64>) -> Result<()> {
    if a.ncols() != a.nrows() {
        return Err(OvkError::internal(
            "tridiagonal reduction of a non-square matrix",
        ));
    }
    if a.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::numerical(
            "tridiagonal reduction: the matrix has NaN or infinite entries (check the data for \
             huge values, or the kernel width σ)",
        ));
    }
    Ok(())
}

/// Reduce the column-major matrix `reduced_t.t()` (standard layout, lower triangle read);
/// `Cancelled` on an abandoned `interruptible` worker, which `sytrd` leaves between panels.
fn reduce(mut reduced_t: Array2<f64>) -> Result<Tridiagonal> {
    let n = reduced_t.nrows();
    let bs = block_size(n);
    let mut coeffs = Mat::<f64>::zeros(bs, n.saturating_sub(1));
    let par = par_from(n, PARALLEL_EIGH_FROM);
    {
        let mut at = reduced_t.view_mut().reversed_axes();
        let reduced = view_mut(&mut at);
        if n >= BLOCKED_TRIDIAGONAL_FROM {
            super::sytrd::tridiagonalize(reduced, coeffs.as_mut(), par);
            leave_avx_state();
            super::interruptible::stop_if_abandoned()?;
        } else if n >= 2 {
            let mut mem =
                MemBuffer::new(tridiag_in_place_scratch::<f64>(n, par, Default::default()));
            tridiag_in_place(
                reduced,
                coeffs.as_mut(),
                par,
                MemStack::new(&mut mem),
                Default::default(),
            );
            leave_avx_state();
        }
    }
    // reduced[(i, j)] = reduced_t[[j, i]]
    let diag = (0..n).map(|i| reduced_t[[i, i]]).collect();
    let sub = (0..n.saturating_sub(1))
        .map(|i| reduced_t[[i, i + 1]])
        .collect();
    Ok(Tridiagonal {
        reduced_t,
        coeffs,
        diag,
        sub,
    })
}

/// Rows of `coeffs`: the reflectors' block size, faer's choice for n (`sytrd` writes the same
/// layout).
pub(super) fn block_size(n: usize) -> usize {
    faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n, n)
}

impl Tridiagonal {
    pub(super) fn n(&self) -> usize {
        self.diag.len()
    }

    /// `x ← Q x` (`transpose`: `x ← Qᵀ x`), Q applied from its reflectors.
    pub(crate) fn apply(&self, x: &mut Array2<f64>, transpose: bool) {
        self.apply_view(x.view_mut(), transpose);
    }

    /// `apply` on a view of any layout (a column-major one, the transpose of a row-major
    /// block, is faer's own and the fastest).
    pub(crate) fn apply_view(&self, mut x: ArrayViewMut2<f64>, transpose: bool) {
        let n = self.n();
        assert_eq!(
            x.nrows(),
            n,
            "tridiagonal: Q applied to a matrix of another height"
        );
        if n < 2 || x.ncols() == 0 {
            return;
        }
        self.apply_to(view_mut(&mut x), transpose);
    }

    /// `apply` on a faer matrix (eigh's eigenvectors never leave faer before it).
    pub(super) fn apply_to(&self, x: MatMut<'_, f64>, transpose: bool) {
        let reduced = self.reduced_t.t();
        super::reflectors::apply_reflectors(view(&reduced), self.coeffs.as_ref(), x, transpose);
    }

    /// `Qᵀ`, formed in standard layout. Cheaper than applying `Qᵀ` to the identity (4/3 n³
    /// flops against 2n³): Q is accumulated from its reflectors, skipping what stays the
    /// identity, into the column-major view of the result, which is Qᵀ read row by row.
    pub(crate) fn q_transposed(&self) -> Array2<f64> {
        let n = self.n();
        let mut qt = Array2::<f64>::zeros((n, n));
        let mut q = qt.view_mut().reversed_axes();
        let reduced = self.reduced_t.t();
        super::reflectors::form_q(view(&reduced), self.coeffs.as_ref(), view_mut(&mut q));
        qt
    }

    /// `‖T‖_F`, from the diagonal and the subdiagonal (counted twice, T is symmetric).
    pub(crate) fn t_frobenius(&self) -> f64 {
        let sq = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>();
        (sq(&self.diag) + 2.0 * sq(&self.sub)).sqrt()
    }

    /// `T x` for every column of `x`, O(N) each.
    pub(crate) fn mul_t(&self, x: ArrayView2<f64>) -> Array2<f64> {
        let n = self.n();
        let mut out = Array2::<f64>::zeros(x.dim());
        for i in 0..n {
            let mut row = out.row_mut(i);
            row.scaled_add(self.diag[i], &x.row(i));
            if i > 0 {
                row.scaled_add(self.sub[i - 1], &x.row(i - 1));
            }
            if i + 1 < n {
                row.scaled_add(self.sub[i], &x.row(i + 1));
            }
        }
        out
    }

    /// Column j of `x` ← `(shifts[j] T + c I)⁻¹` column j, by the LDLᵀ recurrence of the
    /// tridiagonal matrix (no pivoting: it must be positive definite, as `s T + c I` is for a
    /// PSD T, s ≥ 0, c > 0); a numerical error if a pivot is not positive. The recurrences of
    /// [`SOLVE_BLOCK`] columns advance together, row by row (each column's arithmetic is its
    /// own, in the same order): x is walked along its rows, not down strided columns.
    pub(crate) fn solve_shifted(&self, x: &mut Array2<f64>, shifts: &[f64], c: f64) -> Result<()> {
        let n = self.n();
        assert_eq!(
            x.dim(),
            (n, shifts.len()),
            "tridiagonal solve: shapes differ"
        );
        let not_definite = || {
            OvkError::numerical(
                "a shifted tridiagonal system is not positive definite; increase the \
                 regularisation λ",
            )
        };
        // Blocks of columns are independent: one task each, on every core (at n = 3000 the
        // n solves are about n² divisions).
        let blocks: Vec<_> = x
            .axis_chunks_iter_mut(Axis(1), SOLVE_BLOCK)
            .zip(shifts.chunks(SOLVE_BLOCK))
            .collect();
        blocks
            .into_par_iter()
            .try_for_each(|(xb, s)| self.solve_block(xb, s, c).ok_or_else(not_definite))
    }

    /// [`Tridiagonal::solve_shifted`] on one block of at most [`SOLVE_BLOCK`] columns; None if
    /// a pivot is not positive.
    fn solve_block(&self, mut xb: ArrayViewMut2<f64>, s: &[f64], c: f64) -> Option<()> {
        let (n, w) = (self.n(), s.len());
        // delta[i][jj]: the pivots of the block's columns; near: the row just solved.
        let mut delta = vec![0.0; n * w];
        let mut near = vec![0.0; w];
        for i in 0..n {
            let (done, rest) = delta.split_at_mut(i * w);
            let di = &mut rest[..w];
            for (jj, (xv, dv)) in xb.row_mut(i).iter_mut().zip(di.iter_mut()).enumerate() {
                let mut d = s[jj] * self.diag[i] + c;
                if i > 0 {
                    let e = s[jj] * self.sub[i - 1];
                    let l = e / done[(i - 1) * w + jj];
                    d -= l * e;
                    *xv -= l * near[jj];
                }
                if d.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
                    return None;
                }
                *dv = d;
                near[jj] = *xv;
            }
        }
        for i in (0..n).rev() {
            let di = &delta[i * w..i * w + w];
            for (jj, xv) in xb.row_mut(i).iter_mut().enumerate() {
                let mut v = *xv;
                if i + 1 < n {
                    v -= s[jj] * self.sub[i] * near[jj];
                }
                *xv = v / di[jj];
                near[jj] = *xv;
            }
        }
        Some(())
    }
}

/// Columns whose tridiagonal recurrences [`Tridiagonal::solve_shifted`] runs side by side.
const SOLVE_BLOCK: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_abandoned_worker_stops_reducing_and_eigh_says_cancelled() {
        // the blocked reduction (n ≥ BLOCKED_TRIDIAGONAL_FROM) and faer's below it
        let big = sym(BLOCKED_TRIDIAGONAL_FROM, 7);
        let out = crate::linalg::interruptible::as_abandoned(|| tridiagonal(big.view()));
        assert!(matches!(out, Err(OvkError::Cancelled)));
        let out = crate::linalg::interruptible::as_abandoned(|| crate::linalg::eigh(big.view()));
        assert!(matches!(out, Err(OvkError::Cancelled)));
        let small = sym(40, 8);
        let out = crate::linalg::interruptible::as_abandoned(|| crate::linalg::eigh(small.view()));
        assert!(out.is_ok(), "faer's own eigh runs to its end");
        // and the same calls finish when nothing was cancelled
        assert!(tridiagonal(big.view()).is_ok());
    }

    fn sym(n: usize, seed: u64) -> Array2<f64> {
        let mut s = seed;
        let a = Array2::from_shape_fn((n, n), |_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        });
        a.t().dot(&a)
    }

    #[test]
    fn reduction_reconstructs_and_shifted_solves_solve() {
        // 1600: the blocked reduction (`sytrd`)
        for n in [1, 2, 5, 70, 1600] {
            let a = sym(n, n as u64);
            let t = tridiagonal(a.view()).unwrap();
            // Q T Qᵀ = A, with Q and Qᵀ applied from the reflectors
            let mut tm = Array2::<f64>::zeros((n, n));
            for i in 0..n {
                tm[[i, i]] = t.diag[i];
                if i + 1 < n {
                    tm[[i + 1, i]] = t.sub[i];
                    tm[[i, i + 1]] = t.sub[i];
                }
            }
            let mut qt = tm.clone();
            t.apply(&mut qt, false); // Q T
            let mut rec = qt.t().to_owned();
            t.apply(&mut rec, false); // Q (Q T)ᵀ = Q T Qᵀ
            let err = (&rec - &a).iter().fold(0.0f64, |m, d| m.max(d.abs()));
            assert!(err < 1e-12, "n = {n}: {err:e}");
            let mut qt = Array2::<f64>::eye(n);
            t.apply(&mut qt, true);
            let formed = t.q_transposed();
            assert!(formed.is_standard_layout());
            assert!(
                (&formed - &qt).iter().all(|d| d.abs() < 1e-13),
                "n = {n}: Qᵀ"
            );
            let mut round = a.clone();
            t.apply(&mut round, true);
            t.apply(&mut round, false);
            assert!((&round - &a).iter().all(|d| d.abs() < 1e-12));
            let ta = tm.dot(&a);
            let scale = ta.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            assert!((&t.mul_t(a.view()) - &ta)
                .iter()
                .all(|d| d.abs() < 1e-12 * scale));
            let shifts: Vec<f64> = (0..n).map(|j| 0.5 + j as f64).collect();
            let b = sym(n, 99 + n as u64);
            let mut x = b.clone();
            t.solve_shifted(&mut x, &shifts, 0.3).unwrap();
            // Each column's recurrence is its own: solved alone, it comes back bit for bit.
            let checked = shifts.iter().enumerate().step_by(n.div_ceil(40));
            for (j, &s) in checked.clone() {
                let mut alone = b.column(j).to_owned().insert_axis(ndarray::Axis(1));
                t.solve_shifted(&mut alone, &[s], 0.3).unwrap();
                assert!(alone
                    .iter()
                    .zip(x.column(j))
                    .all(|(p, q)| p.to_bits() == q.to_bits()));
            }
            for (j, &s) in checked {
                let mut m = &tm * s;
                m.diag_mut().mapv_inplace(|v| v + 0.3);
                let r = m.dot(&x.column(j)) - b.column(j);
                assert!(r.iter().all(|d| d.abs() < 1e-10), "n = {n}, column {j}");
            }
        }
    }
}
