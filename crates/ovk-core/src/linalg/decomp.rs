//! Symmetric eigendecomposition, Cholesky and LU solves, and products — ndarray in, ndarray out.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::cholesky::llt::factor as llt;
use faer::linalg::matmul::triangular::BlockStructure;
use faer::linalg::solvers::SolveCore;
use faer::linalg::{evd, triangular_solve};
use faer::{Accum, Mat, Par};
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
    let n = a.nrows();
    let par = par_from(n, PARALLEL_EIGH_FROM);
    let (mut u, mut s) = (Mat::<f64>::zeros(n, n), faer::diag::Diag::<f64>::zeros(n));
    if n >= BLOCKED_TRIDIAGONAL_FROM {
        eigh_blocked(a, s.as_mut(), u.as_mut(), par)?;
    } else {
        let mut mem = MemBuffer::new(evd::self_adjoint_evd_scratch::<f64>(
            n,
            evd::ComputeEigenvectors::Yes,
            par,
            Default::default(),
        ));
        evd::self_adjoint_evd(
            view(&a),
            s.as_mut(),
            Some(u.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(eigh_failed)?;
    }
    leave_avx_state();
    let s = s.column_vector();
    let values = Array1::from_iter((0..s.nrows()).map(|i| s[i]));
    Ok(SymEigen {
        values,
        vectors: faer_to_array(u.as_ref()),
    })
}

/// From this size the blocked reduction (`sytrd`) beats faer's: equal at n = 1500, 1.3–1.8×
/// faster from n = 2000 to 4000, slower at n = 1000 (2 threads, 2026-11-27).
pub(crate) const BLOCKED_TRIDIAGONAL_FROM: usize = 1500;

/// faer's `self_adjoint_evd` with the tridiagonal reduction swapped for `sytrd`'s (through
/// `tridiagonal`): reduce, solve the tridiagonal problem (divide and conquer), apply the
/// reflectors to its vectors.
fn eigh_blocked(
    a: ArrayView2<f64>,
    s: faer::diag::DiagMut<'_, f64>,
    mut u: faer::MatMut<'_, f64>,
    par: Par,
) -> Result<()> {
    let t = super::tridiagonal(a)?;
    super::interruptible::stop_if_abandoned()?;
    solve_tridiagonal(&t, s, u.as_mut(), par)?;
    super::interruptible::stop_if_abandoned()?;
    t.apply_to(u, false);
    Ok(())
}

/// `T = V diag(s) Vᵀ` for the tridiagonal T of a reduction (faer's divide and conquer): s
/// nondecreasing, V into `v`.
pub(super) fn solve_tridiagonal(
    t: &super::tridiag::Tridiagonal,
    s: faer::diag::DiagMut<'_, f64>,
    v: faer::MatMut<'_, f64>,
    par: Par,
) -> Result<()> {
    let n = t.n();
    let diag = faer::Col::<f64>::from_fn(n, |i| t.diag[i]);
    let sub = faer::Col::<f64>::from_fn(n, |i| t.sub.get(i).copied().unwrap_or(0.0));
    let mut mem = MemBuffer::new(evd::self_adjoint_evd_scratch::<f64>(
        n,
        evd::ComputeEigenvectors::Yes,
        par,
        Default::default(),
    ));
    evd::tridiagonal_self_adjoint_evd(
        diag.as_diagonal(),
        sub.as_diagonal(),
        s,
        Some(v),
        par,
        MemStack::new(&mut mem),
        Default::default(),
    )
    .map_err(eigh_failed)?;
    leave_avx_state();
    Ok(())
}

fn eigh_failed(e: evd::EvdError) -> OvkError {
    OvkError::numerical(format!("symmetric eigendecomposition failed: {e:?}"))
}

/// Cholesky factor L (lower triangular, `A = LLᵀ`) of a symmetric positive definite matrix,
/// kept for repeated solves.
pub struct Cholesky(Mat<f64>);

/// The Cholesky factor of a symmetric positive definite `a`; a numerical error when it is not.
pub fn cholesky(a: ArrayView2<f64>) -> Result<Cholesky> {
    check_square(&a, "Cholesky factorisation")?;
    check_finite(&a, "Cholesky factorisation")?;
    let n = a.nrows();
    let mut l = Mat::<f64>::zeros(n, n);
    l.copy_from_triangular_lower(view(&a));
    factor_lower_in_place(l.as_mut())?;
    Ok(Cholesky(l))
}

/// `A = L Lᵀ` in place: L overwrites A's lower triangle (any layout); a numerical error when A
/// is not positive definite.
fn factor_lower_in_place(mut a: faer::MatMut<'_, f64>) -> Result<()> {
    let n = a.nrows();
    let par = par_from(n, PARALLEL_CHOLESKY_FROM);
    let mut mem = MemBuffer::new(llt::cholesky_in_place_scratch::<f64>(
        n,
        par,
        Default::default(),
    ));
    let factored = llt::cholesky_in_place(
        a.as_mut(),
        Default::default(),
        par,
        MemStack::new(&mut mem),
        Default::default(),
    );
    leave_avx_state();
    factored.map(|_| ()).map_err(|_| {
        OvkError::numerical(
            "matrix is not positive definite (Cholesky failed); increase the regularisation λ",
        )
    })
}

impl Cholesky {
    /// Solve `A X = B`: `L Z = B`, then `Lᵀ X = Z`.
    pub fn solve(&self, b: ArrayView2<f64>) -> Array2<f64> {
        solve_with_factor(self.0.as_ref(), b)
    }
}

/// `(L Lᵀ)⁻¹ B` for a lower-triangular factor L (any layout; only its lower triangle is read).
fn solve_with_factor(l: faer::MatRef<'_, f64>, b: ArrayView2<f64>) -> Array2<f64> {
    let mut x = Mat::<f64>::zeros(b.nrows(), b.ncols());
    x.copy_from(view(&b));
    let par = par_from(l.nrows(), PARALLEL_CHOLESKY_FROM);
    triangular_solve::solve_lower_triangular_in_place(l, x.as_mut(), par);
    triangular_solve::solve_upper_triangular_in_place(l.transpose(), x.as_mut(), par);
    faer_to_array(x.as_ref())
}

/// `(A + λI)⁻¹ B` for a symmetric `A` (both triangles held) with `A + λI` positive definite,
/// factored in A's own memory, which it consumes: no n×n copy, where a copy of a Gram matrix
/// and faer's own copy of its lower triangle took 0.4 and 0.3 s at n = 8000 (512 MB each).
pub fn solve_shifted_in_place(
    mut a: Array2<f64>,
    lambda: f64,
    b: ArrayView2<f64>,
) -> Result<Array2<f64>> {
    check_square(&a.view(), "Cholesky factorisation")?;
    check_finite(&a.view(), "Cholesky factorisation")?;
    if a.nrows() != b.nrows() {
        return Err(OvkError::internal(format!(
            "a {}×{} system with {} right-hand rows",
            a.nrows(),
            a.ncols(),
            b.nrows()
        )));
    }
    a.diag_mut().mapv_inplace(|v| v + lambda);
    // A is symmetric, so the transposed view (column-major for a row-major A, faer's
    // preferred layout) is A itself.
    let mut at = a.view_mut().reversed_axes();
    let mut l = view_mut(&mut at);
    factor_lower_in_place(l.as_mut())?;
    Ok(solve_with_factor(l.as_ref(), b))
}

/// Below these sizes one thread beats two: measured on this machine (2 cores, load about 1.4,
/// `OVK_THREADS` 1 against 2, 2026-11-27) a 2-thread eigh was 2.0× slower at n = 100, 1.3× at
/// 400 and 1.07× at 800; a Cholesky factorisation 3.6×, 1.7× and 1.0×; a product of two
/// n×n matrices 6.4× at n = 50, 1.5× at 200 and 0.83× at 400. A 25-λ path of lowrank-okl on
/// 10⁵ outputs — thousands of small decompositions — took 3.8 s with two threads and 1.8 s
/// with one.
pub(crate) const PARALLEL_EIGH_FROM: usize = 1000;
const PARALLEL_CHOLESKY_FROM: usize = 1000;
/// Multiply-adds of a product (m·k·n) from which two threads pay.
const PARALLEL_PRODUCT_FROM: usize = 30_000_000;

/// faer's parallelism (`configure_parallelism`) for an operation of `size` at least `from`,
/// else one thread.
pub(crate) fn par_from(size: usize, from: usize) -> Par {
    if size >= from {
        faer::get_global_parallelism()
    } else {
        Par::Seq
    }
}

/// The parallelism of an (m×k)(k×n) product.
fn par_for_product(m: usize, k: usize, n: usize) -> Par {
    par_from(m.saturating_mul(k).saturating_mul(n), PARALLEL_PRODUCT_FROM)
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

/// `A B` through faer's matrix product (faster than ndarray's for the sizes ovk meets), written
/// straight into a row-major result: faer then solves the transposed product, whose operands
/// are column-major views of ovk's row-major ones. A column-major result copied out after took
/// 1.4× as long at 7077×1000·1000×1000 (2 threads).
pub fn matmul(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
    assert_eq!(a.ncols(), b.nrows(), "matmul: inner dimensions differ");
    let mut c = Array2::<f64>::zeros((a.nrows(), b.ncols()));
    matmul_into(&mut c.view_mut(), a, b);
    c
}

/// `C = A B` into an existing buffer (any layout): for loops that would otherwise allocate
/// (and page-fault) a fresh large product every round.
pub(crate) fn matmul_into(c: &mut ArrayViewMut2<f64>, a: ArrayView2<f64>, b: ArrayView2<f64>) {
    product(c.view_mut(), Accum::Replace, a, b, 1.0);
}

/// `C = α A B` (`Accum::Replace`) or `C += α A B` (`Accum::Add`) through faer, shapes checked.
fn product(
    mut c: ArrayViewMut2<f64>,
    accum: Accum,
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
    alpha: f64,
) {
    assert_eq!(a.ncols(), b.nrows(), "matmul: inner dimensions differ");
    assert_eq!(
        c.dim(),
        (a.nrows(), b.ncols()),
        "matmul: output shape differs"
    );
    faer::linalg::matmul::matmul(
        view_mut(&mut c),
        accum,
        view(&a),
        view(&b),
        alpha,
        par_for_product(a.nrows(), a.ncols(), b.ncols()),
    );
    leave_avx_state();
}

/// `L⁻ᵀ B` for a lower-triangular `L` (only its lower triangle is read): Lᵀ is upper triangular.
pub(crate) fn solve_lower_t(l: ArrayView2<f64>, b: ArrayView2<f64>) -> Result<Array2<f64>> {
    check_triangular(&l, b.nrows())?;
    let mut x = b.to_owned();
    faer::linalg::triangular_solve::solve_upper_triangular_in_place(
        view(&l.t()),
        view_mut(&mut x.view_mut()),
        par_for_product(l.nrows(), l.nrows(), b.ncols()),
    );
    leave_avx_state();
    Ok(x)
}

/// `G ← G L⁻ᵀ` in place for a lower-triangular `L` (only its lower triangle is read): each row
/// of G solved against L, as Nyström features `k(x, S) L_S⁻ᵀ` are. On a row-major G, Gᵀ is a
/// column-major right-hand side, so nothing is copied in or out.
pub(crate) fn solve_rows_lower_in_place(
    l: ArrayView2<f64>,
    mut g: ArrayViewMut2<f64>,
) -> Result<()> {
    check_triangular(&l, g.ncols())?;
    let par = par_for_product(l.nrows(), l.nrows(), g.nrows());
    let mut gt = g.view_mut().reversed_axes();
    faer::linalg::triangular_solve::solve_lower_triangular_in_place(
        view(&l),
        view_mut(&mut gt),
        par,
    );
    leave_avx_state();
    Ok(())
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
        par_for_product(k, a.nrows(), k),
    );
    let mut g = faer_to_array(c.as_ref());
    mirror_lower(&mut g);
    g
}

/// `A B` for a product known to be symmetric (`Uᵀ (L U)`, `U diag(f) Uᵀ`): only its lower
/// triangle is computed (half the multiply-adds of `matmul`), then mirrored.
pub(crate) fn matmul_symmetric(a: ArrayView2<f64>, b: ArrayView2<f64>) -> Array2<f64> {
    assert_eq!(a.ncols(), b.nrows(), "matmul: inner dimensions differ");
    assert_eq!(
        a.nrows(),
        b.ncols(),
        "matmul_symmetric: the product is not square"
    );
    let n = a.nrows();
    // Written straight into the result's memory, whose transpose is faer's column-major
    // layout: the product's lower triangle lands in the upper one, then is mirrored. No n×n
    // faer matrix to allocate and copy out (at n = 3000, 72 MB written twice).
    let mut g = Array2::<f64>::zeros((n, n));
    {
        let mut gt = g.view_mut().reversed_axes();
        faer::linalg::matmul::triangular::matmul(
            view_mut(&mut gt),
            BlockStructure::TriangularLower,
            Accum::Replace,
            view(&a),
            BlockStructure::Rectangular,
            view(&b),
            BlockStructure::Rectangular,
            1.0,
            par_for_product(n, a.ncols(), n),
        );
    }
    leave_avx_state();
    mirror_upper(&mut g);
    g
}

/// `acc += AᵀA` into `acc`'s lower triangle only (a streamed sum of row blocks; `mirror_lower`
/// completes it once the blocks are done).
pub(crate) fn add_gram_tn_lower(acc: &mut Array2<f64>, a: ArrayView2<f64>) {
    let k = a.ncols();
    assert_eq!(acc.dim(), (k, k), "add_gram_tn_lower: shape differs");
    let mut out = acc.view_mut();
    faer::linalg::matmul::triangular::matmul(
        view_mut(&mut out),
        BlockStructure::TriangularLower,
        Accum::Add,
        view(&a.t()),
        BlockStructure::Rectangular,
        view(&a),
        BlockStructure::Rectangular,
        1.0,
        par_for_product(k, a.nrows(), k),
    );
    leave_avx_state();
}

/// `acc += Aᵀ B` (a streamed sum of row blocks).
pub(crate) fn add_matmul_tn(acc: &mut Array2<f64>, a: ArrayView2<f64>, b: ArrayView2<f64>) {
    assert_eq!(a.nrows(), b.nrows(), "add_matmul_tn: row counts differ");
    matmul_acc(acc.view_mut(), a.t(), b, 1.0);
}

/// `C += α A B` in place (any layouts): no product allocated and then added.
pub(crate) fn matmul_acc(
    c: ArrayViewMut2<f64>,
    a: ArrayView2<f64>,
    b: ArrayView2<f64>,
    alpha: f64,
) {
    product(c, Accum::Add, a, b, alpha);
}

/// A square triangular `l` whose order is `len`, the length of what it solves for.
fn check_triangular(l: &ArrayView2<f64>, len: usize) -> Result<()> {
    check_square(l, "triangular solve")?;
    if l.nrows() != len {
        return Err(OvkError::internal(format!(
            "triangular solve of a {}×{} system for {len}-long solutions",
            l.nrows(),
            l.ncols()
        )));
    }
    Ok(())
}

/// Copy the upper triangle of a square matrix onto its lower one.
fn mirror_upper(g: &mut Array2<f64>) {
    for i in 0..g.nrows() {
        for j in 0..i {
            g[[i, j]] = g[[j, i]];
        }
    }
}

/// Copy the lower triangle of a square matrix onto its upper one.
pub(crate) fn mirror_lower(g: &mut Array2<f64>) {
    for i in 0..g.nrows() {
        for j in 0..i {
            g[[j, i]] = g[[i, j]];
        }
    }
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
    fn large_eigh_takes_the_blocked_reduction_and_is_exact() {
        // A spectrum known in advance: A = Q diag(λ) Qᵀ, Q from a QR of a random matrix.
        let n = BLOCKED_TRIDIAGONAL_FROM + 37;
        let mut s = 11u64;
        let g = Array2::from_shape_fn((n, n), |_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
        });
        let q = crate::linalg::qr_thin(g.view()).unwrap().q;
        let lambda = Array1::from_iter((0..n).map(|i| (i as f64 - 300.0) / 7.0));
        let a = matmul(q.view(), (&q * &lambda).t().view());
        let e = eigh(a.view()).unwrap();
        let worst = (&e.values - &lambda)
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(worst < 1e-9, "eigenvalues off by {worst:e}");
        let au = matmul(a.view(), e.vectors.view());
        let residual = (&au - &(&e.vectors * &e.values))
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(residual < 1e-9, "max |AU − UΛ| = {residual:e}");
        let utu = matmul(e.vectors.t(), e.vectors.view());
        let off = (&utu - &Array2::<f64>::eye(n))
            .iter()
            .fold(0.0f64, |m, d| m.max(d.abs()));
        assert!(off < 1e-11, "max |UᵀU − I| = {off:e}");
    }

    #[test]
    fn solves_agree() {
        let a = array![[4.0, 1.0], [1.0, 3.0]];
        let b = array![[1.0, 2.0], [0.0, 1.0]];
        let x1 = cholesky(a.view()).unwrap().solve(b.view());
        let x2 = lu(a.view()).unwrap().solve(b.view());
        assert!((&a.dot(&x1) - &b).iter().all(|d| d.abs() < 1e-12));
        assert!((&x1 - &x2).iter().all(|d| d.abs() < 1e-12));
        // (A + λI)⁻¹ B factored in A's memory, for a size faer factors on two threads too.
        for n in [2, PARALLEL_CHOLESKY_FROM + 3] {
            let a = Array2::from_shape_fn((n, n), |(i, j)| {
                (-((i as f64 - j as f64) / 40.0).powi(2)).exp()
            });
            let b = Array2::from_shape_fn((n, 3), |(i, j)| ((i * 3 + j) % 7) as f64 - 3.0);
            let x = solve_shifted_in_place(a.clone(), 0.5, b.view()).unwrap();
            let mut shifted = a.clone();
            shifted.diag_mut().mapv_inplace(|v| v + 0.5);
            let err = (&shifted.dot(&x) - &b)
                .iter()
                .fold(0.0_f64, |e, d| e.max(d.abs()));
            assert!(err < 1e-10, "n = {n}: {err}");
        }
        let indefinite = array![[1.0, 2.0], [2.0, 1.0]];
        assert!(matches!(
            solve_shifted_in_place(indefinite, 0.0, b.view()),
            Err(OvkError::Numerical(_))
        ));
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

    /// A product large enough that faer runs it in parallel, and a small one, on row-major,
    /// transposed and column-sliced operands: the row-major result and `C += α A B` in place
    /// agree with ndarray's.
    #[test]
    fn products_into_row_major_results_match_ndarray() {
        let wave = |(i, j): (usize, usize)| ((i * 7 + j * 3) % 11) as f64 - 4.5;
        for (m, k, n) in [(3, 2, 4), (300, 170, 90)] {
            let a = Array2::from_shape_fn((m, k + 5), wave);
            let bt = Array2::from_shape_fn((n, k), |(i, j)| wave((j, i)) * 0.5);
            let (a, b) = (a.slice(ndarray::s![.., 2..k + 2]), bt.t());
            let want = a.dot(&b);
            let got = matmul(a, b);
            assert!(got.is_standard_layout());
            let err = (&got - &want).iter().fold(0.0_f64, |e, d| e.max(d.abs()));
            assert!(err < 1e-9, "{m}×{k}×{n}: {err}");
            let mut c = Array2::from_shape_fn((m, n), wave);
            let mut want = c.clone();
            want.scaled_add(-2.0, &a.dot(&b));
            matmul_acc(c.view_mut(), a, b, -2.0);
            let err = (&c - &want).iter().fold(0.0_f64, |e, d| e.max(d.abs()));
            assert!(err < 1e-9, "{m}×{k}×{n}: {err}");
        }
    }

    /// `L⁻ᵀ B` and `G L⁻ᵀ` against the products they undo, on a lower-triangular L whose
    /// upper triangle holds garbage that must not be read.
    #[test]
    fn triangular_solves_undo_their_products() {
        for r in [4, 150] {
            let mut l = Array2::from_shape_fn((r, r), |(i, j)| ((i * 5 + j * 3) % 7) as f64 * 0.1);
            for i in 0..r {
                l[[i, i]] = 2.0 + (i % 3) as f64;
            }
            let lower =
                Array2::from_shape_fn((r, r), |(i, j)| if j <= i { l[[i, j]] } else { 0.0 });
            let b = Array2::from_shape_fn((r, 3), |(i, j)| (i + 2 * j) as f64 - 1.5);
            let x = solve_lower_t(l.view(), b.view()).unwrap(); // Lᵀ x = b
            let err = (&lower.t().dot(&x) - &b)
                .iter()
                .fold(0.0_f64, |e, d| e.max(d.abs()));
            assert!(err < 1e-10, "r = {r}: {err}");
            let g = Array2::from_shape_fn((700, r), |(i, j)| ((i * 3 + j) % 13) as f64 - 6.0);
            let mut y = g.clone();
            solve_rows_lower_in_place(l.view(), y.view_mut()).unwrap(); // y Lᵀ = g
            let err = (&y.dot(&lower.t()) - &g)
                .iter()
                .fold(0.0_f64, |e, d| e.max(d.abs()));
            assert!(err < 1e-9, "r = {r}: {err}");
        }
        let l = Array2::<f64>::eye(3);
        assert!(solve_lower_t(l.view(), Array2::zeros((4, 1)).view()).is_err());
        assert!(solve_rows_lower_in_place(l.view(), Array2::zeros((4, 2)).view_mut()).is_err());
    }

    #[test]
    fn cholesky_rejects_indefinite() {
        let a = array![[1.0, 2.0], [2.0, 1.0]];
        assert!(matches!(cholesky(a.view()), Err(OvkError::Numerical(_))));
    }
}
