//! Thin QR factorisation `A = Q R` (Q with orthonormal columns), on faer's Householder QR.

use ndarray::{Array2, ArrayView2};

use super::convert::{faer_to_array, view};
use crate::{OvkError, Result};

/// `A = Q R` with `Q` n×k (orthonormal columns) and `R` k×c upper trapezoidal, k = min(n, c).
#[derive(Debug, Clone)]
pub struct ThinQr {
    pub q: Array2<f64>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

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
