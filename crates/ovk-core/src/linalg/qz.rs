//! The real generalized Schur (QZ) form of a matrix pencil, and the shifted quasi-triangular
//! solves it enables: a Bartels–Stewart solve of `Σ_j`-shifted systems `(a_j A + b B) x_j = r_j`
//! for many shifts at O(n²) each, without inverting `B` (so without losing the digits an
//! ill-conditioned `B` would cost).

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::evd::ComputeEigenvectors;
use faer::linalg::gevd::{gen_hessenberg, qz_real};
use faer::{Auto, Mat};
use ndarray::{s, Array2, ArrayView2};

use super::convert::{faer_to_array, view};
use super::decomp::{matmul, par_from};
use crate::{OvkError, Result};

/// Below this size the QZ iteration runs on one thread: measured on this machine (2 cores,
/// load 5–6, `OVK_THREADS` 2 against 1, 2026-11-27) two threads took 1.13× as long at n = 300,
/// 1.1–1.3× at 600 and 1.05–1.1× at 1000; larger sizes were not measured (over 30 s each).
const PARALLEL_QZ_FROM: usize = 2000;

/// `A = Q S Zᵀ`, `B = Q T Zᵀ` with `S` upper quasi-triangular (1×1 and 2×2 diagonal blocks),
/// `T` upper triangular, `Q`, `Z` orthogonal.
#[derive(Debug, Clone)]
pub(crate) struct GeneralizedSchur {
    pub s: Array2<f64>,
    pub t: Array2<f64>,
    pub q: Array2<f64>,
    pub z: Array2<f64>,
}

/// QZ decomposition of the pencil `(A, B)`; `B` must be upper triangular (e.g. diagonal or I).
pub(crate) fn generalized_schur(
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
) -> Result<GeneralizedSchur> {
    let n = a.nrows();
    if a.ncols() != n || b.nrows() != n || b.ncols() != n {
        return Err(OvkError::internal(
            "generalized Schur of non-square matrices",
        ));
    }
    if a.iter().chain(b.iter()).any(|v| !v.is_finite()) {
        return Err(OvkError::numerical(
            "generalized Schur: the matrices have NaN or infinite entries",
        ));
    }
    for i in 0..n {
        for j in 0..i {
            if b[[i, j]] != 0.0 {
                return Err(OvkError::internal(
                    "generalized Schur: B must be upper triangular",
                ));
            }
        }
    }
    let mut sa = Mat::<f64>::zeros(n, n);
    sa.copy_from(view(&a));
    let mut tb = Mat::<f64>::zeros(n, n);
    tb.copy_from(view(&b));
    let mut q = Mat::<f64>::identity(n, n);
    let mut z = Mat::<f64>::identity(n, n);
    if n > 0 {
        let par = par_from(n, PARALLEL_QZ_FROM);
        let hess_params = <gen_hessenberg::GeneralizedHessenbergParams as Auto<f64>>::auto();
        let qz_params = <faer::linalg::gevd::GeneralizedSchurParams as Auto<f64>>::auto();
        let req = StackReq::any_of(&[
            gen_hessenberg::generalized_hessenberg_scratch::<f64>(n, hess_params),
            qz_real::hessenberg_to_qz_scratch::<f64>(n, par, qz_params),
        ]);
        let mut mem = MemBuffer::new(req);
        let stack = MemStack::new(&mut mem);
        gen_hessenberg::generalized_hessenberg(
            sa.as_mut(),
            tb.as_mut(),
            Some(q.as_mut()),
            Some(z.as_mut()),
            par,
            stack,
            hess_params,
        );
        let mut alphar = Mat::<f64>::zeros(n, 1);
        let mut alphai = Mat::<f64>::zeros(n, 1);
        let mut beta = Mat::<f64>::zeros(n, 1);
        qz_real::hessenberg_to_qz(
            sa.as_mut(),
            tb.as_mut(),
            Some(q.as_mut()),
            Some(z.as_mut()),
            alphar.col_mut(0),
            alphai.col_mut(0),
            beta.col_mut(0),
            ComputeEigenvectors::Yes,
            par,
            qz_params,
            stack,
        );
    }
    let mut s_out = faer_to_array(sa.as_ref());
    let mut t_out = faer_to_array(tb.as_ref());
    // Below the first subdiagonal (S) and the diagonal (T) the factors hold scratch values.
    for i in 0..n {
        for j in 0..i {
            t_out[[i, j]] = 0.0;
            if i > j + 1 {
                s_out[[i, j]] = 0.0;
            }
        }
    }
    let out = GeneralizedSchur {
        s: s_out,
        t: t_out,
        q: faer_to_array(q.as_ref()),
        z: faer_to_array(z.as_ref()),
    };
    if out.s.iter().chain(out.q.iter()).any(|v| !v.is_finite()) {
        return Err(OvkError::numerical("the QZ iteration did not converge"));
    }
    Ok(out)
}

/// Rows per block of the blocked back substitution (the off-block part is two products).
const BLOCK: usize = 64;

/// Solve `(a_j S + b T) y_j = r_j` for every column j of `r`, with `S` upper quasi-triangular
/// and `T` upper triangular (a QZ form): a blocked back substitution, O(n²) per column.
pub(crate) fn solve_shifted_quasi_triangular(
    s_mat: ArrayView2<f64>,
    t_mat: ArrayView2<f64>,
    a: &[f64],
    b: f64,
    r: ArrayView2<f64>,
) -> Result<Array2<f64>> {
    let n = s_mat.nrows();
    let m = r.ncols();
    let mut y = r.to_owned();
    let mut hi = n;
    while hi > 0 {
        let mut lo = hi.saturating_sub(BLOCK);
        // Never split a 2×2 diagonal block between two row blocks.
        if lo > 0 && s_mat[[lo, lo - 1]] != 0.0 {
            lo -= 1;
        }
        if hi < n {
            // Subtract the already-solved rows hi.. : a_j (S₁₂ Y₂)_j + b (T₁₂ Y₂)_j.
            let y2 = y.slice(s![hi.., ..]).to_owned();
            let sy = matmul(s_mat.slice(s![lo..hi, hi..]), y2.view());
            let ty = matmul(t_mat.slice(s![lo..hi, hi..]), y2.view());
            let mut y1 = y.slice_mut(s![lo..hi, ..]);
            for ((i, j), v) in y1.indexed_iter_mut() {
                *v -= a[j] * sy[[i, j]] + b * ty[[i, j]];
            }
        }
        back_substitute_block(s_mat, t_mat, a, b, &mut y, lo, hi)?;
        hi = lo;
    }
    let _ = m;
    Ok(y)
}

/// Unblocked back substitution on rows lo..hi (their coupling to later rows already removed).
fn back_substitute_block(
    s_mat: ArrayView2<f64>,
    t_mat: ArrayView2<f64>,
    a: &[f64],
    b: f64,
    y: &mut Array2<f64>,
    lo: usize,
    hi: usize,
) -> Result<()> {
    let m = y.ncols();
    let coef = |i: usize, k: usize, j: usize| a[j] * s_mat[[i, k]] + b * t_mat[[i, k]];
    let mut i = hi;
    while i > lo {
        let two = i - 1 > lo && s_mat[[i - 1, i - 2]] != 0.0;
        if !two {
            let r = i - 1;
            for j in 0..m {
                let mut acc = y[[r, j]];
                for k in r + 1..hi {
                    acc -= coef(r, k, j) * y[[k, j]];
                }
                let d = coef(r, r, j);
                if d == 0.0 {
                    return Err(singular());
                }
                y[[r, j]] = acc / d;
            }
            i -= 1;
        } else {
            let (r0, r1) = (i - 2, i - 1);
            for j in 0..m {
                let mut acc0 = y[[r0, j]];
                let mut acc1 = y[[r1, j]];
                for k in r1 + 1..hi {
                    acc0 -= coef(r0, k, j) * y[[k, j]];
                    acc1 -= coef(r1, k, j) * y[[k, j]];
                }
                let (m00, m01) = (coef(r0, r0, j), coef(r0, r1, j));
                let (m10, m11) = (coef(r1, r0, j), coef(r1, r1, j));
                let det = m00 * m11 - m01 * m10;
                if det == 0.0 {
                    return Err(singular());
                }
                y[[r0, j]] = (m11 * acc0 - m01 * acc1) / det;
                y[[r1, j]] = (m00 * acc1 - m10 * acc0) / det;
            }
            i -= 2;
        }
    }
    Ok(())
}

fn singular() -> OvkError {
    OvkError::numerical(
        "a shifted system of the Sylvester solve is singular; increase the regularisation λ",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn qz_reconstructs_and_solves() {
        let a = array![
            [2.0, 0.5, 0.1, 0.3],
            [0.4, 1.5, 0.3, -0.2],
            [0.1, -0.7, 1.0, 0.5],
            [0.3, 0.2, -0.9, 0.4]
        ];
        let b = Array2::from_diag(&array![1.0, 2.0, 0.5, 3.0]);
        let g = generalized_schur(a.view(), b.view()).unwrap();
        let ra = g.q.dot(&g.s).dot(&g.z.t());
        let rb = g.q.dot(&g.t).dot(&g.z.t());
        assert!((&ra - &a).iter().all(|d| d.abs() < 1e-12), "{ra:?}");
        assert!((&rb - &b).iter().all(|d| d.abs() < 1e-12), "{rb:?}");
        let shifts = [0.5, 2.0, 3.0];
        let r = array![
            [1.0, 0.0, 2.0],
            [0.0, 1.0, 1.0],
            [1.0, 1.0, 0.0],
            [0.5, 0.0, 1.0]
        ];
        let rt = g.q.t().dot(&r);
        let y = solve_shifted_quasi_triangular(g.s.view(), g.t.view(), &shifts, 0.7, rt.view())
            .unwrap();
        let x = g.z.dot(&y);
        for (j, &aj) in shifts.iter().enumerate() {
            let mj = &a * aj + &b * 0.7;
            let res = mj.dot(&x.column(j)) - r.column(j);
            assert!(res.iter().all(|d| d.abs() < 1e-12), "{res:?}");
        }
    }
}
