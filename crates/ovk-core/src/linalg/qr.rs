//! Thin QR factorisation `A = Q R` (Q with orthonormal columns), on faer's Householder QR.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder;
use faer::{Conj, MatMut, MatRef, Par};
use ndarray::{s, Array2, ArrayView2};

use super::convert::{faer_to_array, view, view_mut};
use crate::{OvkError, Result};

/// `A = Q R` with `Q` n×k (orthonormal columns) and `R` k×c upper trapezoidal, k = min(n, c).
#[derive(Debug, Clone)]
pub struct ThinQr {
    /// Q (n×k), orthonormal columns.
    pub q: Array2<f64>,
    /// R (k×c), upper trapezoidal.
    pub r: Array2<f64>,
}

/// Thin QR of an n×c matrix. Costs O(n c k); only the thin factor is ever formed, so a tall
/// matrix (n = 10⁵ rows) never produces an n×n `Q`.
pub fn qr_thin(a: ArrayView2<f64>) -> Result<ThinQr> {
    if a.iter().any(|v| !v.is_finite()) {
        return Err(OvkError::numerical(
            "QR factorisation: the matrix has NaN or infinite entries (check the data for huge \
             values)",
        ));
    }
    let qr = view(&a).qr();
    let q = faer_to_array(qr.compute_thin_Q().as_ref());
    let r = faer_to_array(qr.thin_R());
    Ok(ThinQr { q, r })
}

/// `A = Q R` with Q kept as its Householder reflectors: for callers that need R and `Qᵀ B`
/// for a few columns B, never Q itself — forming a thin Q costs as much again as the
/// factorisation.
pub(crate) struct Reflectors {
    qr: faer::linalg::solvers::Qr<f64>,
}

impl Reflectors {
    /// Factor an n×c matrix (n ≥ c).
    pub fn new(a: ArrayView2<f64>) -> Result<Self> {
        if a.iter().any(|v| !v.is_finite()) {
            return Err(OvkError::numerical(
                "QR factorisation: the matrix has NaN or infinite entries (check the data for \
                 huge values)",
            ));
        }
        if a.nrows() < a.ncols() {
            return Err(OvkError::internal(format!(
                "QR with reflectors needs a tall matrix, not {}×{}",
                a.nrows(),
                a.ncols()
            )));
        }
        Ok(Reflectors { qr: view(&a).qr() })
    }

    /// R (c×c, upper triangular).
    pub fn r(&self) -> Array2<f64> {
        faer_to_array(self.qr.thin_R())
    }

    /// The thin `Qᵀ B` (c×k) for an n×k matrix B.
    pub(crate) fn qt(&self, b: ArrayView2<f64>) -> Array2<f64> {
        let c = self.qr.Q_basis().ncols();
        let mut m = b.to_owned();
        self.apply(&mut m, true);
        m.slice(s![..c, ..]).to_owned()
    }

    /// The thin `Q B` (n×k) for a c×k matrix B.
    pub fn q(&self, b: ArrayView2<f64>) -> Array2<f64> {
        let (n, c) = self.qr.Q_basis().shape();
        let mut m = Array2::zeros((n, b.ncols()));
        m.slice_mut(s![..c, ..]).assign(&b);
        self.apply(&mut m, false);
        m
    }

    /// `M ← Qᵀ M` (`transpose`) or `M ← Q M`, Q as the full n×n product of reflectors.
    fn apply(&self, m: &mut Array2<f64>, transpose: bool) {
        let basis = self.qr.Q_basis();
        let coeff = self.qr.Q_coeff();
        let (n, k) = m.dim();
        if basis.ncols() == 0 || k == 0 {
            return;
        }
        // both directions need the same workspace: one block of the reflectors times M
        let mut buf = MemBuffer::new(
            householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(
                n,
                coeff.nrows(),
                k,
            ),
        );
        type Apply =
            fn(MatRef<'_, f64>, MatRef<'_, f64>, Conj, MatMut<'_, f64>, Par, &mut MemStack);
        let apply: Apply = if transpose {
            householder::apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj
        } else {
            householder::apply_block_householder_sequence_on_the_left_in_place_with_conj
        };
        let mut mv = m.view_mut();
        apply(
            basis,
            coeff,
            Conj::No,
            view_mut(&mut mv),
            faer::get_global_parallelism(),
            MemStack::new(&mut buf),
        );
        super::convert::leave_avx_state();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn reflectors_give_the_thin_factors_without_forming_q() {
        let a = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.5], [0.5, -1.0], [2.0, 0.0]];
        let b = array![[1.0], [-2.0], [0.5], [3.0], [1.5]];
        let thin = qr_thin(a.view()).unwrap();
        let refl = Reflectors::new(a.view()).unwrap();
        // the same factorisation (faer's Householder signs), so R and Qᵀb agree entrywise
        let r = refl.r();
        assert!((&r - &thin.r).iter().all(|d| d.abs() < 1e-12));
        let qtb = refl.qt(b.view());
        assert_eq!(qtb.dim(), (2, 1));
        assert!((&qtb - &thin.q.t().dot(&b)).iter().all(|d| d.abs() < 1e-12));
        // Qᵀ A = R, and Q R = A
        assert!((&refl.qt(a.view()) - &r).iter().all(|d| d.abs() < 1e-12));
        assert!((&refl.q(r.view()) - &a).iter().all(|d| d.abs() < 1e-12));
        assert!((&refl.q(qtb.view()) - &thin.q.dot(&qtb))
            .iter()
            .all(|d| d.abs() < 1e-12));
        assert!(Reflectors::new(a.t()).is_err());
        // no columns: nothing to rotate into
        let none = Reflectors::new(a.slice(s![.., ..0])).unwrap();
        assert_eq!(none.r().dim(), (0, 0));
        assert_eq!(none.qt(b.view()).dim(), (0, 1));
        assert_eq!(none.q(qtb.slice(s![..0, ..])).dim(), (5, 1));
    }

    #[test]
    fn thin_qr_reconstructs_tall_and_wide() {
        let tall = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.5], [0.5, -1.0]];
        for a in [tall.clone(), tall.t().to_owned()] {
            let f = qr_thin(a.view()).unwrap();
            let k = a.nrows().min(a.ncols());
            assert_eq!(f.q.dim(), (a.nrows(), k));
            assert_eq!(f.r.dim(), (k, a.ncols()));
            let rec = f.q.dot(&f.r);
            assert!((&rec - &a).iter().all(|d| d.abs() < 1e-12));
            let qtq = f.q.t().dot(&f.q);
            assert!((&qtq - &Array2::<f64>::eye(k))
                .iter()
                .all(|d| d.abs() < 1e-12));
            for i in 0..k {
                for j in 0..i.min(a.ncols()) {
                    assert!(f.r[[i, j]].abs() < 1e-14, "R not upper triangular");
                }
            }
        }
    }
}
