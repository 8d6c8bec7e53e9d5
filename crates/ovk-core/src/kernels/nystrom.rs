//! Nyström factors: `K ≈ U Uᵀ` with `U = K(X, X_S) W^{†1/2}` from p sampled columns, where
//! `W = K(X_S, X_S)` (Huusari et al., eqs. 13–15). The pseudo-inverse square root drops the
//! eigenvalues of W that are numerically zero, so a rank-deficient sample stays finite.

use ndarray::{Array1, Array2, ArrayView2, Axis};

use super::gram::{cross_gram, gram};
use super::spec::Kernel;
use crate::linalg::{eigh, matmul, select_rows};
use crate::{OvkError, Result};

/// A Nyström factorisation of one Gram matrix.
#[derive(Debug, Clone)]
pub struct NystromFactor {
    /// Indices (rows of the training inputs) of the sampled columns.
    pub landmarks: Vec<usize>,
    /// `U = K(X, X_S) W^{†1/2}`, n×p.
    pub u: Array2<f64>,
    /// `W^{†1/2}`, p×p: maps `k(x, X_S)` to the factor's coordinates for new points.
    pub(crate) w_pinv_sqrt: Array2<f64>,
    /// Numerical rank of W (columns of U that carry information).
    pub rank: usize,
}

impl NystromFactor {
    /// Factor coordinates of new points: `k(x, X_S) W^{†1/2}` (rows of the approximate `U`).
    pub fn project(
        &self,
        kernel: &Kernel,
        x_new: ArrayView2<f64>,
        x_landmarks: ArrayView2<f64>,
    ) -> Result<Array2<f64>> {
        let k = cross_gram(kernel, x_new, x_landmarks)?;
        Ok(matmul(k.view(), self.w_pinv_sqrt.view()))
    }
}

/// Nyström factor of `K(x, x)` from the columns `landmarks`.
pub fn nystrom(kernel: &Kernel, x: ArrayView2<f64>, landmarks: &[usize]) -> Result<NystromFactor> {
    if landmarks.is_empty() {
        return Err(OvkError::input(
            "the Nyström sample is empty; raise the Nyström fraction",
        ));
    }
    if let Some(&bad) = landmarks.iter().find(|&&i| i >= x.nrows()) {
        return Err(OvkError::internal(format!(
            "Nyström landmark {bad} is outside the {} training rows",
            x.nrows()
        )));
    }
    let xs = select_rows(x.view(), landmarks);
    let c = cross_gram(kernel, x, xs.view())?;
    let w = gram(kernel, xs.view())?;
    let e = eigh(w.view())?;
    let top = e.values.iter().copied().fold(0.0_f64, f64::max);
    let cut = top * 1e-12 * landmarks.len() as f64;
    // W^{†1/2} = V diag(1/√s) Vᵀ over the eigenvalues above the cut.
    let inv_sqrt: Array1<f64> = e.values.mapv(|s| {
        if s > cut && s > 0.0 {
            1.0 / s.sqrt()
        } else {
            0.0
        }
    });
    let rank = inv_sqrt.iter().filter(|&&v| v > 0.0).count();
    let vs = &e.vectors * &inv_sqrt.view().insert_axis(Axis(0));
    let w_pinv_sqrt = matmul(vs.view(), e.vectors.t());
    let u = matmul(c.view(), w_pinv_sqrt.view());
    Ok(NystromFactor {
        landmarks: landmarks.to_vec(),
        u,
        w_pinv_sqrt,
        rank,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::rng::Rng;

    /// Random points of shape `(n, d)`, a Gaussian kernel of width σ, and their Gram matrix.
    fn points_and_gram(
        r: &mut Rng,
        dim: (usize, usize),
        sigma: f64,
    ) -> (Array2<f64>, Kernel, Array2<f64>) {
        let x = Array2::from_shape_fn(dim, |_| r.normal());
        let kern = Kernel::Gaussian { sigma };
        let k = gram(&kern, x.view()).unwrap();
        (x, kern, k)
    }

    #[test]
    fn all_columns_reproduce_the_gram() {
        let mut r = Rng::new(3);
        let (x, kern, k) = points_and_gram(&mut r, (12, 3), 1.5);
        let idx = r.sample(12, 12);
        let f = nystrom(&kern, x.view(), &idx).unwrap();
        let approx = f.u.dot(&f.u.t());
        let err = (&approx - &k).iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        assert!(err < 1e-8, "max error {err}");
        // new points through the same map agree with the exact cross-Gram · K⁻¹ · K = cross-Gram
        let xs = x.select(Axis(0), &idx);
        let proj = f.project(&kern, x.view(), xs.view()).unwrap();
        assert!((&proj - &f.u).iter().all(|v| v.abs() < 1e-10));
    }

    #[test]
    fn few_columns_give_a_psd_underestimate() {
        let (x, kern, k) = points_and_gram(&mut Rng::new(5), (20, 2), 1.0);
        let f = nystrom(&kern, x.view(), &[0, 3, 7]).unwrap();
        let diff = &k - &f.u.dot(&f.u.t());
        // K − UUᵀ is a Schur complement: PSD, so its diagonal is ≥ 0 and the sampled rows vanish.
        assert!(diff.diag().iter().all(|&d| d > -1e-10));
        assert!(diff[[3, 3]].abs() < 1e-10 && diff[[3, 7]].abs() < 1e-10);
        assert_eq!(f.rank, 3);
    }
}
