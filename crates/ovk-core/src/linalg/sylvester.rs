//! Matrix equations in an eigenbasis: the Sylvester equation `K C L + λ C = Y` with both
//! coefficient matrices symmetric, and the symmetric Lyapunov equation `M X + X M = R`.

use ndarray::{Array1, Array2, ArrayView1, ArrayView2, Zip};

use super::decomp::{eigh, matmul, matmul_tn};
use crate::Result;

/// Solve `K C L + λ C = Y` given `K = U diag(s) Uᵀ` and `L = V diag(t) Vᵀ`:
/// `C = U [ (Uᵀ Y V) ⊘ (s tᵀ + λ) ] Vᵀ` — docs/methods.md §1, O(ℓ²m + ℓm²).
pub(crate) fn sylvester_sym_eig(
    u: ArrayView2<f64>,
    s: ArrayView1<f64>,
    v: ArrayView2<f64>,
    t: ArrayView1<f64>,
    y: ArrayView2<f64>,
    lambda: f64,
) -> Array2<f64> {
    let yt = matmul(matmul_tn(u, y).view(), v); // Uᵀ Y V
    let w = divide_by_spectrum(yt.view(), s, t, lambda);
    matmul(matmul(u, w.view()).view(), v.t())
}

/// Solve `K C L + λ C = Y` for symmetric K and L through both eigendecompositions.
pub fn sylvester_sym(
    k: ArrayView2<f64>,
    l: ArrayView2<f64>,
    y: ArrayView2<f64>,
    lambda: f64,
) -> Result<Array2<f64>> {
    let (ek, el) = (eigh(k)?, eigh(l)?);
    Ok(sylvester_sym_eig(
        ek.vectors.view(),
        ek.values.view(),
        el.vectors.view(),
        el.values.view(),
        y,
        lambda,
    ))
}

/// `W ⊘ (s tᵀ + λ)`, the diagonal solve shared by every eigenbasis Sylvester step.
pub(crate) fn divide_by_spectrum(
    w: ArrayView2<f64>,
    s: ArrayView1<f64>,
    t: ArrayView1<f64>,
    lambda: f64,
) -> Array2<f64> {
    let mut out = w.to_owned();
    Zip::indexed(&mut out).for_each(|(i, j), x| *x /= s[i] * t[j] + lambda);
    out
}

/// Solve the symmetric Lyapunov equation `M X + X M = R` for symmetric positive definite `M`
/// and symmetric `R`: `X = W [ (Wᵀ R W) ⊘ (dᵢ + dⱼ) ] Wᵀ` with `M = W diag(d) Wᵀ`
/// (docs/methods.md §1, the exact symmetric L-update). The result is exactly symmetrised.
pub(crate) fn lyapunov_sym(m: ArrayView2<f64>, r: ArrayView2<f64>) -> Result<Array2<f64>> {
    let e = eigh(m)?;
    let w = &e.vectors;
    let d: &Array1<f64> = &e.values;
    let mut rt = matmul(matmul_tn(w.view(), r).view(), w.view());
    Zip::indexed(&mut rt).for_each(|(i, j), x| *x /= d[i] + d[j]);
    let x = matmul(matmul(w.view(), rt.view()).view(), w.t());
    Ok(symmetrize(&x))
}

/// `(A + Aᵀ) / 2`.
pub(crate) fn symmetrize(a: &Array2<f64>) -> Array2<f64> {
    (a + &a.t()) * 0.5
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn sylvester_solves_equation() {
        let k = array![[2.0, 0.5, 0.1], [0.5, 1.5, 0.3], [0.1, 0.3, 1.0]];
        let l = array![[1.0, 0.2], [0.2, 0.5]];
        let y = array![[1.0, 0.0], [0.5, 1.0], [-1.0, 2.0]];
        let lambda = 0.3;
        let c = sylvester_sym(k.view(), l.view(), y.view(), lambda).unwrap();
        let res = k.dot(&c).dot(&l) + &c * lambda - &y;
        assert!(res.iter().all(|d| d.abs() < 1e-12), "{res:?}");
    }

    #[test]
    fn lyapunov_solves_equation() {
        let m = array![[3.0, 0.5], [0.5, 2.0]];
        let r = array![[1.0, 0.3], [0.3, -0.5]];
        let x = lyapunov_sym(m.view(), r.view()).unwrap();
        let res = m.dot(&x) + x.dot(&m) - &r;
        assert!(res.iter().all(|d| d.abs() < 1e-12));
    }
}
