//! Orthogonal Hessenberg reduction `A = U H Uᵀ` of a general square matrix, kept for many
//! shifted solves `(s A + c I) x = b`: each costs O(N²) once the O(N³) reduction is done.
//! This is the classical way to solve a Sylvester equation whose left matrix is not symmetric
//! (Golub, Nash, Van Loan 1979) and stays exact when `A` is singular.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::evd::hessenberg::{hessenberg_in_place, hessenberg_in_place_scratch};
use faer::linalg::householder;
use faer::{Conj, Mat};
use ndarray::{Array2, ArrayView2};
use rayon::prelude::*;

use super::convert::{faer_to_array, view};
use super::decomp::{matmul, par_from, PARALLEL_EIGH_FROM};
use crate::{OvkError, Result};

/// `A = U H Uᵀ` with `U` orthogonal and `H` upper Hessenberg (zeros below the subdiagonal).
#[derive(Debug, Clone)]
pub struct Hessenberg {
    /// H: upper Hessenberg.
    pub h: Array2<f64>,
    /// U: orthogonal.
    pub u: Array2<f64>,
}

/// Reduce a square matrix to Hessenberg form by Householder reflections (faer, blocked).
pub(crate) fn hessenberg(a: ArrayView2<f64>) -> Result<Hessenberg> {
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
            h: a.to_owned(),
            u: Array2::eye(n),
        });
    }
    let par = par_from(n, PARALLEL_EIGH_FROM);
    let bs = faer::linalg::qr::no_pivoting::factor::recommended_block_size::<f64>(n - 1, n - 1);
    let req = StackReq::any_of(&[
        hessenberg_in_place_scratch::<f64>(n, bs, par, Default::default()),
        householder::apply_block_householder_sequence_on_the_right_in_place_scratch::<f64>(
            n - 1,
            bs,
            n - 1,
        ),
    ]);
    let mut buf = MemBuffer::new(req);
    let stack = MemStack::new(&mut buf);
    let mut h = Mat::<f64>::zeros(n, n);
    h.copy_from(view(&a));
    let mut coeffs = Mat::<f64>::zeros(bs, n - 1);
    hessenberg_in_place(h.as_mut(), coeffs.as_mut(), par, stack, Default::default());
    // U = I ⊕ (reflections applied to the trailing (n−1)×(n−1) identity), as faer's own EVD does.
    let mut u = Mat::<f64>::identity(n, n);
    householder::apply_block_householder_sequence_on_the_right_in_place_with_conj(
        h.as_ref().submatrix(1, 0, n - 1, n - 1),
        coeffs.as_ref(),
        Conj::No,
        u.as_mut().submatrix_mut(1, 1, n - 1, n - 1),
        par,
        stack,
    );
    let mut h = faer_to_array(h.as_ref());
    for j in 0..n {
        for i in j + 2..n {
            h[[i, j]] = 0.0;
        }
    }
    Ok(Hessenberg {
        h,
        u: faer_to_array(u.as_ref()),
    })
}

impl Hessenberg {
    /// Solve `(scales[j]·A + shift·I) xⱼ = bⱼ` for every column j of `b`, reusing the one
    /// reduction: `xⱼ = U (scales[j]·H + shift·I)⁻¹ Uᵀ bⱼ`, O(N²) per column, the columns in
    /// parallel (each with a packed triangular buffer of its own).
    pub(crate) fn solve_shifted(
        &self,
        scales: &[f64],
        shift: f64,
        b: ArrayView2<f64>,
    ) -> Result<Array2<f64>> {
        let n = self.h.nrows();
        if b.nrows() != n || b.ncols() != scales.len() {
            return Err(OvkError::internal(format!(
                "shifted Hessenberg solve: {}×{} right-hand side for a {n}×{n} matrix and {} \
                 shifts",
                b.nrows(),
                b.ncols(),
                scales.len()
            )));
        }
        let bt = matmul(self.u.t(), b); // Uᵀ B
                                        // max |h_ij| off the diagonal: the norm of s·H + c·I is then O(N) per shift
        let mut off_max = 0.0f64;
        for ((i, j), v) in self.h.indexed_iter() {
            if i != j {
                off_max = off_max.max(v.abs());
            }
        }
        let columns: Vec<Result<Vec<f64>>> = scales
            .par_iter()
            .enumerate()
            .map_init(
                || (vec![0.0; n * (n + 1) / 2], vec![0.0; n]),
                |(upper, carry), (j, &s)| {
                    let mut x = bt.column(j).to_vec();
                    solve_shifted_hessenberg(&self.h, off_max, s, shift, upper, carry, &mut x)?;
                    Ok(x)
                },
            )
            .collect();
        let mut xt = Array2::<f64>::zeros(bt.dim());
        for (j, col) in columns.into_iter().enumerate() {
            for (x, r) in xt.column_mut(j).iter_mut().zip(col?) {
                *x = r;
            }
        }
        Ok(matmul(self.u.view(), xt.view()))
    }
}

/// `(s H + c I) x = b` for upper Hessenberg `H` by Gaussian elimination with partial pivoting
/// between adjacent rows (the only rows that hold a nonzero in the pivot column); `b` is
/// overwritten with `x`. Row k+1 of `s H + c I` is read from H when step k needs it and only
/// the eliminated row is carried (`carry`, length n), so each step writes one row of the
/// triangular factor into `upper` (packed by rows, n(n+1)/2) and nothing is filled in advance.
/// `off_max` is `max |h_ij|` over i ≠ j (the norm that scales the singularity test).
fn solve_shifted_hessenberg(
    h: &Array2<f64>,
    off_max: f64,
    s: f64,
    c: f64,
    upper: &mut [f64],
    carry: &mut [f64],
    b: &mut [f64],
) -> Result<()> {
    let n = h.nrows();
    if n == 0 {
        return Ok(());
    }
    let a = |i: usize, j: usize| s * h[[i, j]] + if i == j { c } else { 0.0 };
    let mut norm = if n > 1 { s.abs() * off_max } else { 0.0 };
    for i in 0..n {
        norm = norm.max(a(i, i).abs());
    }
    let tiny = norm * f64::EPSILON * n as f64;
    // start of row k in the packed triangle
    let row_start = |k: usize| k * n - k * k.saturating_sub(1) / 2;
    for (j, v) in carry.iter_mut().enumerate() {
        *v = a(0, j);
    }
    for k in 0..n - 1 {
        let start = row_start(k);
        let row = &mut upper[start..start + n - k];
        let next_k = a(k + 1, k);
        if next_k.abs() > carry[k].abs() {
            // row k+1 is the pivot row; the carried row becomes carry − l·(row k+1)
            b.swap(k, k + 1);
            let l = carry[k] / next_k;
            if next_k.abs() <= tiny {
                return Err(singular());
            }
            for j in k..n {
                let v = a(k + 1, j);
                row[j - k] = v;
                if l != 0.0 {
                    carry[j] -= l * v;
                }
            }
            if l != 0.0 {
                b[k + 1] -= l * b[k];
            }
        } else {
            let pivot = carry[k];
            if pivot.abs() <= tiny {
                return Err(singular());
            }
            let l = next_k / pivot;
            for j in k..n {
                row[j - k] = carry[j];
                let v = a(k + 1, j);
                carry[j] = if l != 0.0 { v - l * carry[j] } else { v };
            }
            if l != 0.0 {
                b[k + 1] -= l * b[k];
            }
        }
    }
    upper[row_start(n - 1)] = carry[n - 1];
    for i in (0..n).rev() {
        let start = row_start(i);
        let row = &upper[start..start + n - i];
        let mut acc = b[i];
        for j in i + 1..n {
            acc -= row[j - i] * b[j];
        }
        if row[0].abs() <= tiny {
            return Err(singular());
        }
        b[i] = acc / row[0];
    }
    Ok(())
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
        for n in [1, 2, 3, 7, 40] {
            let a = lcg_matrix(n, n, n as u64);
            let f = hessenberg(a.view()).unwrap();
            let rec = f.u.dot(&f.h).dot(&f.u.t());
            assert!((&rec - &a).iter().all(|d| d.abs() < 1e-12), "n = {n}");
            let id = f.u.t().dot(&f.u);
            assert!((&id - &Array2::<f64>::eye(n))
                .iter()
                .all(|d| d.abs() < 1e-12));
            for j in 0..n {
                for i in j + 2..n {
                    assert_eq!(f.h[[i, j]], 0.0);
                }
            }
        }
    }

    #[test]
    fn shifted_solves_match_lu() {
        let n = 30;
        let a = lcg_matrix(n, n, 3);
        let b = lcg_matrix(n, 3, 4);
        let scales = [0.5, 1.0, 2.5];
        let x = hessenberg(a.view())
            .unwrap()
            .solve_shifted(&scales, 0.7, b.view())
            .unwrap();
        for (j, &s) in scales.iter().enumerate() {
            let mut m = &a * s;
            m.diag_mut().mapv_inplace(|v| v + 0.7);
            let r = m.dot(&x.column(j)) - b.column(j);
            assert!(r.iter().all(|d| d.abs() < 1e-10), "column {j}");
        }
    }
}
