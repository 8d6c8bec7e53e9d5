//! A symmetric matrix's eigenvectors kept factored, `U = Q V`: Q the tridiagonal reduction's
//! Householder reflectors, V the tridiagonal matrix's eigenvectors. Forming U is the
//! back-transformation, about 2n³ flops (a quarter of an eigh's time at n = 4000–8000); the
//! exact route only ever applies U or Uᵀ to n×m blocks (m outputs) or to a few rows of
//! `K(x, X)`, which through the factors costs O(n² m).

use faer::diag::Diag;
use ndarray::{Array1, Array2, ArrayView2};

use super::convert::view_mut;
use super::decomp::{matmul, matmul_tn, par_from, solve_tridiagonal, PARALLEL_EIGH_FROM};
use super::tridiag::{tridiagonal_in_place, Tridiagonal};
use crate::Result;

/// The eigenvectors U (n × q) of a symmetric matrix, applied without being formed where they
/// came factored.
pub struct Eigenvectors(Form);

enum Form {
    /// U itself (a Krylov basis's, n × q).
    Dense(Array2<f64>),
    /// `U = Q V`, V stored transposed (row-major Vᵀ is V column-major, as faer writes it).
    Factored { q: Tridiagonal, vt: Array2<f64> },
}

impl std::fmt::Debug for Eigenvectors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let form = match self.0 {
            Form::Dense(_) => "dense",
            Form::Factored { .. } => "factored",
        };
        write!(f, "Eigenvectors({}×{}, {form})", self.nrows(), self.ncols())
    }
}

/// `A = U diag(values) Uᵀ`, values nondecreasing, for an exactly symmetric `a` (as
/// `kernels::gram` makes it), reduced in its own memory: the n×n blocks alive at the end are
/// the reflectors (in `a`'s memory) and V, against eigh's A, U and a copy of U.
pub fn eigh_factored(a: Array2<f64>) -> Result<(Array1<f64>, Eigenvectors)> {
    let q = tridiagonal_in_place(a)?;
    super::interruptible::stop_if_abandoned()?;
    let n = q.n();
    let mut vt = Array2::<f64>::zeros((n, n));
    let mut s = Diag::<f64>::zeros(n);
    if n > 0 {
        let mut v = vt.view_mut().reversed_axes();
        solve_tridiagonal(
            &q,
            s.as_mut(),
            view_mut(&mut v),
            par_from(n, PARALLEL_EIGH_FROM),
        )?;
    }
    let s = s.column_vector();
    let values = Array1::from_iter((0..n).map(|i| s[i]));
    Ok((values, Eigenvectors(Form::Factored { q, vt })))
}

impl Eigenvectors {
    /// A basis held whole.
    pub fn dense(u: Array2<f64>) -> Self {
        Eigenvectors(Form::Dense(u))
    }

    /// Rows of U (the matrix's order).
    pub fn nrows(&self) -> usize {
        match &self.0 {
            Form::Dense(u) => u.nrows(),
            Form::Factored { vt, .. } => vt.nrows(),
        }
    }

    /// Columns of U (its eigenvectors).
    pub fn ncols(&self) -> usize {
        match &self.0 {
            Form::Dense(u) => u.ncols(),
            Form::Factored { vt, .. } => vt.ncols(),
        }
    }

    /// `U x`.
    pub fn apply(&self, x: ArrayView2<f64>) -> Array2<f64> {
        match &self.0 {
            Form::Dense(u) => matmul(u.view(), x),
            Form::Factored { q, vt } => {
                let mut w = matmul(vt.t(), x);
                q.apply(&mut w, false);
                w
            }
        }
    }

    /// `Uᵀ y`.
    pub fn apply_t(&self, y: ArrayView2<f64>) -> Array2<f64> {
        match &self.0 {
            Form::Dense(u) => matmul_tn(u.view(), y),
            Form::Factored { q, vt } => {
                let mut w = y.to_owned();
                q.apply(&mut w, true);
                matmul(vt.view(), w.view())
            }
        }
    }

    /// `G U` for rows G (t × n), e.g. `K(x_new, X) U`.
    pub fn right_apply(&self, mut g: Array2<f64>) -> Array2<f64> {
        match &self.0 {
            Form::Dense(u) => matmul(g.view(), u.view()),
            Form::Factored { q, vt } => {
                // G Q = (Qᵀ Gᵀ)ᵀ, and Gᵀ of a row-major G is column-major: Q's own layout.
                q.apply_view(g.view_mut().reversed_axes(), true);
                matmul(g.view(), vt.t())
            }
        }
    }

    /// U itself (n × q), formed when it was factored (the tests' reference: no fit needs it).
    #[cfg(test)]
    pub(crate) fn to_dense(&self) -> Array2<f64> {
        match &self.0 {
            Form::Dense(u) => u.clone(),
            Form::Factored { q, vt } => {
                let mut u = vt.t().as_standard_layout().into_owned();
                q.apply(&mut u, false);
                u
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::decomp::BLOCKED_TRIDIAGONAL_FROM;
    use crate::linalg::eigh;

    fn symmetric(n: usize, seed: u64) -> Array2<f64> {
        let mut rng = crate::util::rng::Rng::new(seed);
        let g = Array2::from_shape_fn((n, n), |_| rng.normal());
        let mut a = &g + &g.t();
        a.diag_mut().mapv_inplace(|v| v + 0.1);
        a
    }

    fn worst(a: &Array2<f64>, b: &Array2<f64>) -> f64 {
        assert_eq!(a.dim(), b.dim());
        (a - b).iter().fold(0.0f64, |m, d| m.max(d.abs()))
    }

    /// Factored on both sides of the blocked reduction's threshold: the values are eigh's, U
    /// is orthogonal and diagonalises A, and each way of applying it agrees with U formed.
    #[test]
    fn the_factored_basis_is_the_eigenbasis_applied_every_way() {
        for n in [1, 2, 9, 130, BLOCKED_TRIDIAGONAL_FROM + 11] {
            let a = symmetric(n, n as u64 + 3);
            let full = eigh(a.view()).unwrap();
            let (values, u) = eigh_factored(a.clone()).unwrap();
            assert_eq!((u.nrows(), u.ncols()), (n, n));
            let scale = n as f64;
            let off = (&values - &full.values)
                .iter()
                .fold(0.0f64, |m, d| m.max(d.abs()));
            assert!(off < 1e-11 * scale, "n = {n}: eigenvalues off by {off:e}");
            let dense = u.to_dense();
            let au = matmul(a.view(), dense.view());
            let residual = worst(&au, &(&dense * &values));
            assert!(
                residual < 1e-10 * scale,
                "n = {n}: |AU − UΛ| = {residual:e}"
            );
            let utu = matmul_tn(dense.view(), dense.view());
            assert!(worst(&utu, &Array2::eye(n)) < 1e-11 * scale, "n = {n}");
            let x = Array2::from_shape_fn((n, 3), |(i, j)| ((i * 7 + j * 5) % 13) as f64 - 6.0);
            assert!(worst(&u.apply(x.view()), &dense.dot(&x)) < 1e-10 * scale);
            assert!(worst(&u.apply_t(x.view()), &dense.t().dot(&x)) < 1e-10 * scale);
            let g = Array2::from_shape_fn((5, n), |(i, j)| ((i * 3 + j * 11) % 17) as f64 - 8.0);
            assert!(worst(&u.right_apply(g.clone()), &g.dot(&dense)) < 1e-10 * scale);
            // A dense basis applies the same way.
            let d = Eigenvectors::dense(dense.clone());
            assert!(worst(&d.apply(x.view()), &u.apply(x.view())) < 1e-10 * scale);
            assert!(worst(&d.apply_t(x.view()), &u.apply_t(x.view())) < 1e-10 * scale);
            assert!(worst(&d.right_apply(g.clone()), &u.right_apply(g)) < 1e-10 * scale);
        }
    }

    #[test]
    fn non_finite_entries_are_refused() {
        let mut a = symmetric(4, 1);
        a[[2, 1]] = f64::NAN;
        a[[1, 2]] = f64::NAN;
        assert!(matches!(
            eigh_factored(a),
            Err(crate::OvkError::Numerical(_))
        ));
    }
}
