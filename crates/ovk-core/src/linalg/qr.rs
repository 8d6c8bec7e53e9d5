//! Thin QR factorisation `A = Q R` (Q with orthonormal columns), on faer's Householder QR.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::householder;
use faer::linalg::qr::no_pivoting::factor as qr_factor;
use faer::{Conj, Mat, MatMut, MatRef, Par};
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
    let h = Householder::factor(a);
    let (n, k) = h.basis.shape();
    let mut q = Array2::<f64>::zeros((n, k));
    for i in 0..k {
        q[[i, i]] = 1.0;
    }
    h.apply(&mut q, false);
    Ok(ThinQr {
        q,
        r: faer_to_array(h.r.as_ref()),
    })
}

/// `A = Q R` with Q kept as its Householder reflectors: for callers that need R and `Qᵀ B`
/// for a few columns B, never Q itself — forming a thin Q costs as much again as the
/// factorisation.
pub(crate) struct Reflectors {
    h: Householder,
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
        Ok(Reflectors {
            h: Householder::factor(a),
        })
    }

    /// R (c×c, upper triangular).
    pub fn r(&self) -> Array2<f64> {
        faer_to_array(self.h.r.as_ref())
    }

    /// The thin `Qᵀ B` (c×k) for an n×k matrix B.
    pub(crate) fn qt(&self, b: ArrayView2<f64>) -> Array2<f64> {
        let c = self.h.basis.ncols();
        let mut m = b.to_owned();
        self.h.apply(&mut m, true);
        m.slice(s![..c, ..]).to_owned()
    }

    /// The thin `Q B` (n×k) for a c×k matrix B.
    pub fn q(&self, b: ArrayView2<f64>) -> Array2<f64> {
        let (n, c) = self.h.basis.shape();
        let mut m = Array2::zeros((n, b.ncols()));
        m.slice_mut(s![..c, ..]).assign(&b);
        self.h.apply(&mut m, false);
        m
    }
}

/// Two threads pay for a QR only on large matrices: measured 2026-11-27 (2 cores, load about
/// 1.4) a 2-thread QR was 5.5× slower than one thread at 50×50, 2.5× at 400×400, 1.2× at
/// 800×800 and at 10 000×50, even at 10⁵×100, and 0.83× at 2 000×2 000 — so from about
/// 2·10⁹ of n·c·min(n, c).
const PARALLEL_QR_FROM: usize = 2_000_000_000;

/// faer's blocked Householder QR, run with this size's parallelism: the reflectors (a unit lower
/// trapezoidal n×k basis and their block coefficients) and R (k×c), k = min(n, c).
struct Householder {
    basis: Mat<f64>,
    coeff: Mat<f64>,
    r: Mat<f64>,
    par: Par,
}

impl Householder {
    fn factor(a: ArrayView2<f64>) -> Self {
        let (n, c) = a.dim();
        let k = n.min(c);
        let work = n.saturating_mul(c).saturating_mul(k);
        let par = super::decomp::par_from(work, PARALLEL_QR_FROM);
        let mut qr = Mat::<f64>::zeros(n, c);
        qr.copy_from(view(&a));
        let block = qr_factor::recommended_block_size::<f64>(n, c);
        let mut coeff = Mat::<f64>::zeros(block, k);
        let mut mem = MemBuffer::new(qr_factor::qr_in_place_scratch::<f64>(
            n,
            c,
            block,
            par,
            Default::default(),
        ));
        qr_factor::qr_in_place(
            qr.as_mut(),
            coeff.as_mut(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
        super::convert::leave_avx_state();
        // R above the diagonal of the first k rows; the reflectors below it, unit diagonal.
        let r = Mat::<f64>::from_fn(k, c, |i, j| if i <= j { qr[(i, j)] } else { 0.0 });
        let basis = Mat::<f64>::from_fn(n, k, |i, j| match i.cmp(&j) {
            std::cmp::Ordering::Less => 0.0,
            std::cmp::Ordering::Equal => 1.0,
            std::cmp::Ordering::Greater => qr[(i, j)],
        });
        Householder {
            basis,
            coeff,
            r,
            par,
        }
    }

    /// `M ← Qᵀ M` (`transpose`) or `M ← Q M`, Q as the full n×n product of reflectors.
    fn apply(&self, m: &mut Array2<f64>, transpose: bool) {
        let (basis, coeff) = (self.basis.as_ref(), self.coeff.as_ref());
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
            self.par,
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
