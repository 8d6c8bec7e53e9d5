//! The Krylov route: okl with a linear kernel on sparse rows, solved without K's n×n
//! eigendecomposition (docs/methods.md §6).
//!
//! okl's coefficients solve `K C L + λC = Y` (eq. 6, Dinuzzo et al. 2011). With
//! `L = V diag(t) Vᵀ` each rotated column is a shifted system `(t_k K + λI) c_k = Y v_k`, and
//! every right-hand side lies in span(Y). Shifted systems share their Krylov spaces, so one
//! orthonormal basis Q of the block Krylov space `span{Y, KY, K²Y, …}` serves every shift: the
//! Galerkin solution in span(Q) is what conjugate gradients on each system reaches after as
//! many products. On Q the problem is okl with `T = QᵀKQ` (q×q) in place of K, and
//! `T = W diag(s) Wᵀ` makes `U = QW` a thin eigenbasis of the `InputSpectrum` form every okl
//! solver reads — unchanged, since `CᵀKC = C̃ᵀ diag(s) C̃` holds exactly on span(Q).
//!
//! The basis grows until, by the block Lanczos relation `KQ = QT + Q₊ B Eᵀ`, the Galerkin
//! residual `t ‖B x_last(t)‖` is below `KRYLOV_TOL` at every shift up to a guess t of L's
//! largest eigenvalue, or until the space is invariant (q = n at the latest). okl solves on it;
//! when the solved L's largest eigenvalue passes the guess, the basis grows for twice that and
//! okl solves again (`okl::solve_on_krylov`). okl's own bound `‖L‖_F ≤ ‖Y‖_F/√λ`
//! (Q(L, C) ≤ Q(0, 0) = ‖Y‖²/(2λ) and Q ≥ ‖L‖²/2) caps the guess, but as a guess it is loose:
//! measured on a 4 500-row text-like table it was 671 where ‖L‖_F was 1.24, and a basis grown
//! for it needed 590 columns. The fit then measures its true residual `‖KCL + λC − Y‖/‖Y‖`
//! with one more product. On packed sparse rows a product `KV` costs O(nnz · m)
//! (`kernels::packed::LinearGram`); the reorthogonalisation costs O(n q m) a step.

use ndarray::{s, Array1, Array2, ArrayView2, Axis, ShapeBuilder};

use super::input::{Basis, InputSpectrum};
use super::{check_cancel, Observer};
use crate::linalg::{cholesky, eigh, frobenius, matmul, matmul_tn, symmetrize, Eigenvectors};
use crate::Result;

/// The relative residual the basis is grown to at every shift tested. Rounding sets a floor
/// near 1e-8 when λ is small beside ‖tK‖ (measured: 5e-8 at q = 590 of 4 500, then no lower
/// until the space was all of ℝⁿ), so the target sits just above it.
pub(crate) const KRYLOV_TOL: f64 = 1e-7;
/// A column whose norm falls below this fraction of its norm before projection is in the span
/// already (numerically): it is dropped (deflation).
const DEFLATE: f64 = 1e-12;
/// The basis is tested each time it grows by this factor (a test costs a few q³/3 Choleskys).
const TEST_GROWTH: f64 = 1.3;
/// Shifts tested, as fractions of the largest.
const SHIFT_FRACTIONS: [f64; 5] = [1.0, 0.3, 0.1, 0.01, 0.001];

/// `K V` for the route's kernel.
pub(crate) type Apply<'a> = dyn Fn(ArrayView2<f64>) -> Result<Array2<f64>> + 'a;

/// What the session records about the basis.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(crate) struct KrylovRecord {
    /// Columns q of the basis.
    pub dim: usize,
    /// Products `K V` with a block of m columns or fewer.
    pub products: usize,
    /// The largest Galerkin residual at the tested shifts, relative to ‖Y‖_F.
    pub galerkin_residual: f64,
    /// The space became invariant under K (the solve is exact up to rounding).
    pub invariant: bool,
    /// The largest shift t the basis was grown for.
    pub shift: f64,
    /// Seconds spent building the basis.
    pub seconds: f64,
}

/// The block Krylov space of Y under K, grown on demand.
pub(crate) struct KrylovSpace<'a> {
    apply: &'a Apply<'a>,
    y: ArrayView2<'a, f64>,
    y_norm: f64,
    /// The basis Q (n × capacity, column-major: a prefix of columns is contiguous).
    q_mat: Array2<f64>,
    /// T = QᵀKQ (capacity²; its leading q×q block is filled).
    t_mat: Array2<f64>,
    q: usize,
    /// Y = Q₀R₀.
    r0: Array2<f64>,
    /// The last block's columns.
    last: std::ops::Range<usize>,
    /// The next block (orthonormal, against Q) and its coupling B: `KQ_last − Q(QᵀKQ_last) =
    /// next · B`.
    next: Array2<f64>,
    coupling: Array2<f64>,
    record: KrylovRecord,
}

impl<'a> KrylovSpace<'a> {
    /// The space's first block, `Q₀R₀ = Y`.
    pub fn new(apply: &'a Apply<'a>, y: ArrayView2<'a, f64>) -> Self {
        let (n, m) = y.dim();
        let cap = (4 * m).min(n);
        let y0 = y.to_owned();
        let reference = column_norms(&y0);
        let (next, r0) = orthonormalize(y0, &reference);
        KrylovSpace {
            apply,
            y,
            y_norm: frobenius(&y),
            q_mat: Array2::zeros((n, cap).f()),
            t_mat: Array2::zeros((cap, cap)),
            q: 0,
            r0,
            last: 0..0,
            coupling: Array2::zeros((next.ncols(), 0)),
            next,
            record: KrylovRecord {
                dim: 0,
                products: 0,
                galerkin_residual: 0.0,
                invariant: false,
                shift: 0.0,
                seconds: 0.0,
            },
        }
    }

    /// Grow the basis until the Galerkin residual is below `KRYLOV_TOL` at every shift up to
    /// `t_max` (`SHIFT_FRACTIONS` of it), or the space is invariant.
    pub fn grow_for(&mut self, t_max: f64, lambda: f64, obs: &mut dyn Observer) -> Result<()> {
        let clock = std::time::Instant::now();
        let n = self.y.nrows();
        // Shift 1 too: krr's system, which the pipeline's baseline solves on this basis.
        let shifts: Vec<f64> = SHIFT_FRACTIONS
            .iter()
            .map(|f| f * t_max)
            .chain(std::iter::once(1.0))
            .collect();
        self.record.shift = self.record.shift.max(t_max);
        let mut next_test = self.q;
        loop {
            check_cancel(obs)?;
            let bq = self.next.ncols();
            if bq == 0 {
                self.record.invariant = true;
                self.record.galerkin_residual = 0.0;
                break;
            }
            if self.q + bq > n {
                // Q spans ℝⁿ up to rounding, and the next block is rounding: stop, and say
                // what is left.
                if self.q > 0 {
                    self.record.galerkin_residual = self.galerkin_residual(&shifts, lambda)?;
                }
                break;
            }
            if self.q > 0 && self.q >= next_test {
                let residual = self.galerkin_residual(&shifts, lambda)?;
                self.record.galerkin_residual = residual;
                next_test = ((self.q as f64 * TEST_GROWTH) as usize).max(self.q + 1);
                if residual <= KRYLOV_TOL {
                    break;
                }
            }
            self.extend()?;
        }
        self.record.dim = self.q;
        self.record.seconds += clock.elapsed().as_secs_f64();
        Ok(())
    }

    /// Add the pending block to Q, multiply it by K and orthogonalise the product into the
    /// next pending block.
    fn extend(&mut self) -> Result<()> {
        let (n, q) = (self.y.nrows(), self.q);
        let block = std::mem::replace(&mut self.next, Array2::zeros((n, 0)));
        let bq = block.ncols();
        if q + bq > self.q_mat.ncols() {
            let cols = (2 * self.q_mat.ncols()).max(q + bq).min(n);
            self.q_mat = grown(&self.q_mat, q, cols);
            self.t_mat = grown_square(&self.t_mat, q, cols);
        }
        self.q_mat.slice_mut(s![.., q..q + bq]).assign(&block);
        let mut w = (self.apply)(block.view())?;
        self.record.products += 1;
        let (q, basis) = (q + bq, self.q_mat.slice(s![.., ..q + bq]));
        let reference = column_norms(&w);
        // Twice is enough (Giraud et al. 2005): one pass loses orthogonality as K's spectrum
        // spreads. The first pass's projection is T's new column block Qᵀ(KQ_j), mirrored
        // into its row block.
        for pass in 0..2 {
            let h = matmul_tn(basis, w.view());
            w -= &matmul(basis, h.view());
            if pass == 0 {
                self.t_mat.slice_mut(s![..q, q - bq..q]).assign(&h);
                self.t_mat
                    .slice_mut(s![q - bq..q, ..q - bq])
                    .assign(&h.slice(s![..q - bq, ..]).t());
            }
        }
        (self.next, self.coupling) = orthonormalize(w, &reference);
        self.last = q - bq..q;
        self.q = q;
        Ok(())
    }

    /// The largest Galerkin residual `t ‖B x_last(t)‖_F / ‖Y‖_F` over the shifts, where
    /// `(tT + λI) x = E₁R₀` is the projected system.
    fn galerkin_residual(&self, shifts: &[f64], lambda: f64) -> Result<f64> {
        if self.coupling.nrows() == 0 {
            return Ok(0.0);
        }
        let q = self.q;
        let t_q = self.t_mat.slice(s![..q, ..q]);
        let mut rhs = Array2::<f64>::zeros((q, self.r0.ncols()));
        rhs.slice_mut(s![..self.r0.nrows(), ..]).assign(&self.r0);
        let mut worst = 0.0f64;
        for &t in shifts {
            let mut a = &t_q * t;
            a.diag_mut().mapv_inplace(|v| v + lambda);
            let x = cholesky(symmetrize(&a).view())?.solve(rhs.view());
            let x_last = x.slice(s![self.last.clone(), ..]);
            worst = worst.max(t * frobenius(&matmul(self.coupling.view(), x_last)));
        }
        Ok(worst / self.y_norm.max(f64::MIN_POSITIVE))
    }

    /// Whether the basis can grow no further: the space is invariant, or Q spans ℝⁿ.
    pub fn complete(&self) -> bool {
        self.record.invariant || self.q + self.next.ncols() > self.y.nrows()
    }

    /// What the basis did so far.
    pub fn record(&self) -> &KrylovRecord {
        &self.record
    }

    /// okl's spectrum on the basis: `T = W diag(s) Wᵀ`, `U = QW`, `Ỹ = UᵀY`.
    pub fn spectrum(&self) -> Result<InputSpectrum> {
        let (n, q) = (self.y.nrows(), self.q);
        let (values, vectors) = if q == 0 {
            (Array1::zeros(0), Array2::zeros((0, 0)))
        } else {
            let e = eigh(symmetrize(&self.t_mat.slice(s![..q, ..q]).to_owned()).view())?;
            (e.values, e.vectors)
        };
        let clamped = values.iter().copied().fold(0.0, f64::min);
        let u = matmul(self.q_mat.slice(s![.., ..q]), vectors.view());
        let yt = matmul_tn(u.view(), self.y);
        let yt_sq: f64 = yt.iter().map(|v| v * v).sum();
        Ok(InputSpectrum {
            s: values.mapv(|v| v.max(0.0)),
            clamped,
            yt,
            null_sq: (self.y_norm * self.y_norm - yt_sq).max(0.0),
            basis: Basis::Eigen(std::sync::Arc::new(Eigenvectors::dense(u))),
            n,
        })
    }
}

/// `‖K C L + λC − Y‖_F / ‖Y‖_F`: eq. (6)'s residual, measured with one product.
pub(crate) fn sylvester_residual(
    apply: &Apply,
    c: ArrayView2<f64>,
    l: ArrayView2<f64>,
    lambda: f64,
    y: ArrayView2<f64>,
) -> Result<f64> {
    let kc = apply(c)?;
    let r = matmul(kc.view(), l) + &c * lambda - y;
    let y_norm = frobenius(&y);
    Ok(frobenius(&r) / y_norm.max(f64::MIN_POSITIVE))
}

/// Orthonormal columns spanning `w` (modified Gram–Schmidt, twice), the columns that fall
/// below `DEFLATE` of their `reference` norm dropped, and B with `w = block · B`.
fn orthonormalize(w: Array2<f64>, reference: &Array1<f64>) -> (Array2<f64>, Array2<f64>) {
    let (n, b) = w.dim();
    let mut kept: Vec<Array1<f64>> = Vec::with_capacity(b);
    let mut coef = Array2::<f64>::zeros((b, b));
    for (j, col) in w.axis_iter(Axis(1)).enumerate() {
        let mut v = col.to_owned();
        for _ in 0..2 {
            for (i, qi) in kept.iter().enumerate() {
                let h = qi.dot(&v);
                v.scaled_add(-h, qi);
                coef[[i, j]] += h;
            }
        }
        let norm = v.dot(&v).sqrt();
        if norm > DEFLATE * reference[j] && norm > 0.0 {
            coef[[kept.len(), j]] = norm;
            kept.push(v / norm);
        }
    }
    let mut block = Array2::<f64>::zeros((n, kept.len()));
    for (mut c, v) in block.axis_iter_mut(Axis(1)).zip(&kept) {
        c.assign(v);
    }
    let rows = kept.len();
    (block, coef.slice(s![..rows, ..]).to_owned())
}

fn column_norms(w: &Array2<f64>) -> Array1<f64> {
    w.map_axis(Axis(0), |c| c.dot(&c).sqrt())
}

/// `t_mat` (square) with room for `cols`, its leading q×q block kept.
fn grown_square(t_mat: &Array2<f64>, q: usize, cols: usize) -> Array2<f64> {
    let mut out = Array2::<f64>::zeros((cols, cols));
    out.slice_mut(s![..q, ..q])
        .assign(&t_mat.slice(s![..q, ..q]));
    out
}

/// `q_mat` with room for `cols` columns, its first `q` kept (column-major, so a prefix of
/// columns is one contiguous block).
fn grown(q_mat: &Array2<f64>, q: usize, cols: usize) -> Array2<f64> {
    let mut out = Array2::<f64>::zeros((q_mat.nrows(), cols).f());
    out.slice_mut(s![.., ..q]).assign(&q_mat.slice(s![.., ..q]));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::okl::{qn, Spectral};
    use crate::methods::{Clock, Silent};
    use crate::util::rng::Rng;

    /// K = X Xᵀ for X (n×d) with d < n, so K has rank d and the Krylov space of Y is invariant
    /// well before n; and Y (n×m).
    fn problem(n: usize, d: usize, m: usize, seed: u64) -> (Array2<f64>, Array2<f64>) {
        let mut rng = Rng::new(seed);
        let x = Array2::from_shape_fn((n, d), |(_, j)| rng.normal() * (1.0 + j as f64));
        let y = Array2::from_shape_fn((n, m), |_| rng.normal());
        (x.dot(&x.t()), y)
    }

    fn max_abs(a: &Array2<f64>) -> f64 {
        a.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    }

    #[test]
    fn the_basis_is_orthonormal_and_t_is_k_projected_on_it() {
        let (k, y) = problem(80, 30, 3, 1);
        let apply = |v: ArrayView2<f64>| Ok(k.dot(&v));
        let mut space = KrylovSpace::new(&apply, y.view());
        for _ in 0..6 {
            space.extend().unwrap();
        }
        let q = space.q;
        assert_eq!(q, 18);
        let basis = space.q_mat.slice(s![.., ..q]).to_owned();
        let eye = Array2::<f64>::eye(q);
        assert!(max_abs(&(basis.t().dot(&basis) - &eye)) < 1e-12);
        let t = basis.t().dot(&k).dot(&basis);
        let got = space.t_mat.slice(s![..q, ..q]).to_owned();
        assert!(max_abs(&(&got - &t)) < 1e-10 * max_abs(&t));
        // Y = Q₀R₀.
        let y0 = basis.slice(s![.., ..3]).dot(&space.r0);
        assert!(max_abs(&(&y0 - &y)) < 1e-12 * max_abs(&y));
    }

    #[test]
    fn the_galerkin_estimate_is_the_true_residual_of_the_projected_solve() {
        let (k, y) = problem(80, 30, 3, 2);
        let apply = |v: ArrayView2<f64>| Ok(k.dot(&v));
        let mut space = KrylovSpace::new(&apply, y.view());
        for _ in 0..4 {
            space.extend().unwrap();
        }
        let (q, lambda) = (space.q, 0.5);
        let basis = space.q_mat.slice(s![.., ..q]).to_owned();
        for t in [0.01, 1.0, 7.0] {
            // c = Q (tT + λI)⁻¹ QᵀY, and its residual against K itself.
            let mut a = space.t_mat.slice(s![..q, ..q]).to_owned() * t;
            a.diag_mut().mapv_inplace(|v| v + lambda);
            let x = cholesky(a.view()).unwrap().solve(basis.t().dot(&y).view());
            let c = basis.dot(&x);
            let r = k.dot(&c) * t + &c * lambda - &y;
            let truth = frobenius(&r) / frobenius(&y);
            let estimate = space.galerkin_residual(&[t], lambda).unwrap();
            assert!(
                truth > 1e-6,
                "the space is still far from invariant: {truth}"
            );
            assert!(
                (estimate - truth).abs() < 1e-8 * truth,
                "{estimate} vs {truth}"
            );
        }
    }

    #[test]
    fn the_space_ends_invariant_at_k_s_rank_and_okl_on_it_equals_okl_on_k_s_eigenbasis() {
        let (k, y) = problem(60, 12, 3, 3);
        let lambda = 0.2;
        let apply = |v: ArrayView2<f64>| Ok(k.dot(&v));
        let mut space = KrylovSpace::new(&apply, y.view());
        space.grow_for(1e6, lambda, &mut Silent).unwrap();
        // Y's reach under K: span(Y) plus K's 12-dimensional range.
        assert!(space.record().invariant);
        assert!(space.q <= 12 + 3, "q = {}", space.q);
        let on_krylov =
            Spectral::from_input(space.spectrum().unwrap(), frobenius(&y), lambda).unwrap();
        let exact = Spectral::new(k.view(), y.view(), lambda).unwrap();
        let clock = Clock::start();
        let a = qn::run(&on_krylov, 1e-12, 2000, &mut Silent, &clock).unwrap();
        let b = qn::run(&exact, 1e-12, 2000, &mut Silent, &clock).unwrap();
        assert!(max_abs(&(&a.l - &b.l)) < 1e-7 * max_abs(&b.l));
        let (ca, cb) = (on_krylov.coefficients(&a.ct), exact.coefficients(&b.ct));
        assert!(max_abs(&(&ca - &cb)) < 1e-7 * max_abs(&cb));
        let r = sylvester_residual(&apply, ca.view(), a.l.view(), lambda, y.view()).unwrap();
        assert!(r < 1e-9, "{r}");
    }
}
