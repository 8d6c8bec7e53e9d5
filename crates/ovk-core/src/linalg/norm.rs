//! Frobenius norms and the Frobenius inner product, for arrays of any shape, and the dot
//! product of two slices.

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

/// `Σ a_i b_i` over the shorter slice's length, in four independent partial sums: the compiler
/// may not reorder a floating-point sum, so a single accumulator runs at one add per cycle;
/// four stay in vector registers.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f64 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}
