//! Frobenius norms and the Frobenius inner product, for arrays of any shape.

use ndarray::{ArrayBase, Data, Dimension, Zip};

/// `‖A‖²_F = Σ a²`.
pub(crate) fn frobenius_sq<S: Data<Elem = f64>, D: Dimension>(a: &ArrayBase<S, D>) -> f64 {
    a.iter().map(|v| v * v).sum()
}

/// `‖A‖_F`.
pub fn frobenius<S: Data<Elem = f64>, D: Dimension>(a: &ArrayBase<S, D>) -> f64 {
    frobenius_sq(a).sqrt()
}

/// `⟨A, B⟩_F = Σ a b = tr(Aᵀ B)` of two arrays of the same shape.
pub fn inner<S: Data<Elem = f64>, T: Data<Elem = f64>, D: Dimension>(
    a: &ArrayBase<S, D>,
    b: &ArrayBase<T, D>,
) -> f64 {
    let mut acc = 0.0;
    Zip::from(a).and(b).for_each(|x, y| acc += x * y);
    acc
}
