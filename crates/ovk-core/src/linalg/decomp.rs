//! Symmetric eigendecomposition, Cholesky and LU solves, and products — ndarray in, ndarray out.

use faer::linalg::matmul::triangular::BlockStructure;
use faer::linalg::solvers::{Solve, SolveCore};
use faer::{Accum, Mat, Side};
use ndarray::{Array1, Array2, ArrayView2, ArrayViewMut2};

use super::convert::{faer_to_array, leave_avx_state, view, view_mut};
use crate::{OvkError, Result};

/// `A = U diag(values) Uᵀ`, eigenvalues in nondecreasing order.
#[derive(Debug, Clone)]
pub struct SymEigen {
    /// The eigenvalues, nondecreasing.
    pub values: Array1<f64>,
    /// The eigenvectors U, one per column in the order of `values`.
    pub vectors: Array2<f64>,
}

/// Eigendecomposition of a symmetric matrix (only the lower triangle is read).
pub fn eigh(a: ArrayView2<f64>) -> Result<SymEigen> {
    check_square(&a, "eigendecomposition")?;
    check_finite(&a, "eigendecomposition")?;
    let evd = view(&a)
        .self_adjoint_eigen(Side::Lower)
        .map_err(|e| OvkError::numerical(format!("symmetric eigendecomposition failed: {e:?}")))?;
    let s = evd.S().column_vector();
    let values = Array1::from_iter((0..s.nrows()).map(|i| s[i]));
    Ok(SymEigen {
        values,
        vectors: faer_to_array(evd.U()),
    })
}

/// Cholesky factor of a symmetric positive definite matrix, kept for repeated solves.
pub struct Cholesky(faer::linalg::solvers::Llt<f64>);

/// The Cholesky factor of a symmetric positive definite `a`; a numerical error when it is not.
pub fn cholesky(a: ArrayView2<f64>) -> Result<Cholesky> {
    check_square(&a, "Cholesky factorisation")?;
    check_finite(&a, "Cholesky factorisation")?;
    let llt = view(&a).llt(Side::Lower);
    leave_avx_state();
    llt.map(Cholesky).map_err(|_| {
        OvkError::numerical(
            "matrix is not positive definite (Cholesky failed); increase the regularisation λ",
        )
    })
}

impl Cholesky {
    /// Solve `A X = B`.
    pub fn solve(&self, b: ArrayView2<f64>) -> Array2<f64> {
        let mut x = Mat::<f64>::zeros(b.nrows(), b.ncols());
        x.copy_from(view(&b));
        self.0.solve_in_place(x.as_mut());
        faer_to_array(x.as_ref())
    }
}

/// LU factorisation with partial pivoting of a general square matrix.
pub struct Lu(faer::linalg::solvers::PartialPivLu<f64>);

/// The LU factorisation of `a`; an error when `a` is not square or not finite.
pub fn lu(a: ArrayView2<f64>) -> Result<Lu> {
    check_square(&a, "LU factorisation")?;
    check_finite(&a, "LU factorisation")?;
    let lu = view(&a).partial_piv_lu();
    leave_avx_state();
    Ok(Lu(lu))
}

impl Lu {
    /// Solve `A X = B`.
    pub fn solve(&self, b: ArrayView2<f64>) -> Array2<f64> {
        let mut x = Mat::<f64>::zeros(b.nrows(), b.ncols());
        x.copy_from(view(&b));
        self.0.solve_in_place_with_conj(faer::Conj::No, x.as_mut());
        faer_to_array(x.as_ref())
    }
}

/// `A B` through faer's matrix product (faster than ndarray's for the sizes ovk meets).
pub fn matmul(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
    assert_eq!(a.ncols(), b.nrows(), "matmul: inner dimensions differ");
    let mut c = Mat::<f64>::zeros(a.nrows(), b.ncols());
    faer::linalg::matmul::matmul(
        c.as_mut(),
        Accum::Replace,
        view(&a),
        view(&b),
        1.0,
        faer::get_global_parallelism(),
    );
    faer_to_array(c.as_ref())
}

/// `C = A B` into an existing buffer (any layout): for loops that would otherwise allocate
/// (and page-fault) a fresh large product every round.
pub(crate) fn matmul_into(c: &mut ArrayViewMut2<f64>, a: ArrayView2<f64>, b: ArrayView2<f64>) {
    assert_eq!(a.ncols(), b.nrows(), "matmul: inner dimensions differ");
    assert_eq!(
        c.dim(),
        (a.nrows(), b.ncols()),
        "matmul: output shape differs"
    );
    faer::linalg::matmul::matmul(
        view_mut(c),
        Accum::Replace,
        view(&a),
        view(&b),
        1.0,
        faer::get_global_parallelism(),
    );
    leave_avx_state();
}

/// `L⁻¹ B` for a lower-triangular `L` (only its lower triangle is read).
pub(crate) fn solve_lower(l: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
    check_square(&l, "triangular solve")?;
    if l.nrows() != b.nrows() {
        return Err(OvkError::internal(format!(
            "triangular solve of a {}×{} system with {} right-hand rows",
            l.nrows(),
            l.ncols(),
            b.nrows()
        )));
    }
    let mut x = Mat::<f64>::zeros(b.nrows(), b.ncols());
    x.copy_from(view(&b));
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(
        view(&l),
        x.as_mut(),
        faer::get_global_parallelism(),
    );
    Ok(faer_to_array(x.as_ref()))
}

/// `Aᵀ B` without materialising the transpose.
pub(crate) fn matmul_tn(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
    matmul(a.t(), b)
}

/// `AᵀA`, symmetric: only its lower triangle is computed (half the products of `matmul_tn`),
/// then mirrored.
pub fn gram_tn(a: ArrayView2<f64>) -> Array2<f64> {
    let k = a.ncols();
    let mut c = Mat::<f64>::zeros(k, k);
    faer::linalg::matmul::triangular::matmul(
        c.as_mut(),
        BlockStructure::TriangularLower,
        Accum::Replace,
        view(&a.t()),
        BlockStructure::Rectangular,
        view(&a),
        BlockStructure::Rectangular,
        1.0,
        faer::get_global_parallelism(),
    );
    let mut g = faer_to_array(c.as_ref());
    for i in 0..k {
        for j in 0..i {
            g[[j, i]] = g[[i, j]];
        }
    }
    g
}

fn check_square(a: &ArrayView2<f64>, what: &str) -> Result<()> {
    if a.nrows() != a.ncols() {
        return Err(OvkError::internal(format!(
            "{what} of a non-square {}×{} matrix",
            a.nrows(),
            a.ncols()
        )));
    }
    Ok(())
}

fn check_finite(a: &ArrayView2<f64>, what: &str) -> Result<()> {
    if a.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::numerical(format!(
            "{what}: the matrix has NaN or infinite entries (check the data for huge values, or \
             the kernel width σ)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn eigh_reconstructs() {
        let a = array![[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]];
        let e = eigh(a.view()).unwrap();
        let u = &e.vectors;
        let rec = u.dot(&Array2::from_diag(&e.values)).dot(&u.t());
        assert!((&rec - &a).iter().all(|d| d.abs() < 1e-12));
        assert!(e.values[0] <= e.values[1] && e.values[1] <= e.values[2]);
    }

    #[test]
    fn solves_agree() {
        let a = array![[4.0, 1.0], [1.0, 3.0]];
        let b = array![[1.0, 2.0], [0.0, 1.0]];
        let x1 = cholesky(a.view()).unwrap().solve(b.view());
        let x2 = lu(a.view()).unwrap().solve(b.view());
        assert!((&a.dot(&x1) - &b).iter().all(|d| d.abs() < 1e-12));
        assert!((&x1 - &x2).iter().all(|d| d.abs() < 1e-12));
    }

    #[test]
    fn matmul_matches_ndarray() {
        let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b = array![[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]];
        assert_eq!(matmul(a.view(), b.view()), a.dot(&b));
        assert_eq!(matmul_tn(a.view(), a.view()), a.t().dot(&a));
    }

    #[test]
    fn gram_tn_is_the_symmetric_product_for_tall_and_wide_inputs() {
        for (n, k) in [(7, 3), (3, 7), (130, 70)] {
            let a = Array2::from_shape_fn((n, k), |(i, j)| ((i * 7 + j * 3) % 11) as f64 - 4.5);
            let want = a.t().dot(&a);
            let got = gram_tn(a.view());
            let err = (&got - &want).iter().fold(0.0_f64, |m, d| m.max(d.abs()));
            assert!(err < 1e-9, "{n}×{k}: {err}");
            assert_eq!(got, got.t());
        }
    }

    #[test]
    fn cholesky_rejects_indefinite() {
        let a = array![[1.0, 2.0], [2.0, 1.0]];
        assert!(matches!(cholesky(a.view()), Err(OvkError::Numerical(_))));
    }
}
