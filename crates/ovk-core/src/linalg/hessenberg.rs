//! Orthogonal Hessenberg reduction `A = U H Uᵀ` of a general square matrix, kept for many
//! shifted solves `(s A + c I) x = b`: each costs O(N²) once the O(N³) reduction is done.
//! This is the classical way to solve a Sylvester equation whose left matrix is not symmetric
//! (Golub, Nash, Van Loan 1979) and stays exact when `A` is singular.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::evd::hessenberg::{hessenberg_in_place, hessenberg_in_place_scratch};
use faer::linalg::householder;
use faer::{Conj, Mat, Par};
use ndarray::{Array2, ArrayView2};

use super::convert::{faer_to_array, view};
use super::decomp::matmul;
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
    let par = Par::Seq;
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
    /// reduction: `xⱼ = U (scales[j]·H + shift·I)⁻¹ Uᵀ bⱼ`, O(N²) per column.
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
        let mut xt = Array2::<f64>::zeros(bt.dim());
        let mut work = vec![0.0; n * n];
        let mut rhs = vec![0.0; n];
        for (j, &s) in scales.iter().enumerate() {
            for (r, v) in rhs.iter_mut().zip(bt.column(j)) {
                *r = *v;
            }
            solve_shifted_hessenberg(&self.h, s, shift, &mut work, &mut rhs)?;
            for (x, r) in xt.column_mut(j).iter_mut().zip(&rhs) {
                *x = *r;
            }
        }
        Ok(matmul(self.u.view(), xt.view()))
    }
}

/// `(s H + c I) x = b` for upper Hessenberg `H` by Gaussian elimination with partial pivoting
/// between adjacent rows (the only rows that hold a nonzero in the pivot column); `b` is
/// overwritten with `x`. `work` is an n×n row-major buffer.
fn solve_shifted_hessenberg(
    h: &Array2<f64>,
    s: f64,
    c: f64,
    work: &mut [f64],
    b: &mut [f64],
) -> Result<()> {
    let n = h.nrows();
    let mut norm = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            let v = if j + 1 >= i { s * h[[i, j]] } else { 0.0 } + if i == j { c } else { 0.0 };
            work[i * n + j] = v;
            norm = norm.max(v.abs());
        }
    }
    let tiny = norm * f64::EPSILON * n as f64;
    for k in 0..n.saturating_sub(1) {
        let (top, rest) = work.split_at_mut((k + 1) * n);
        let row_k = &mut top[k * n..];
        let row_k1 = &mut rest[..n];
        if row_k1[k].abs() > row_k[k].abs() {
            for j in k..n {
                std::mem::swap(&mut row_k[j], &mut row_k1[j]);
            }
            b.swap(k, k + 1);
        }
        let pivot = row_k[k];
        if pivot.abs() <= tiny {
            return Err(singular());
        }
        let l = row_k1[k] / pivot;
        if l != 0.0 {
            for j in k + 1..n {
                row_k1[j] -= l * row_k[j];
            }
            b[k + 1] -= l * b[k];
        }
    }
    for i in (0..n).rev() {
        let row = &work[i * n..(i + 1) * n];
        let mut acc = b[i];
        for j in i + 1..n {
            acc -= row[j] * b[j];
        }
        if row[i].abs() <= tiny {
            return Err(singular());
        }
        b[i] = acc / row[i];
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
