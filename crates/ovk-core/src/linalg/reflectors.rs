//! The Householder reflectors a reduction leaves below its subdiagonal (faer's layout: the
//! tridiagonal reduction's and the Hessenberg reduction's alike), applied to a block without
//! forming the orthogonal matrix: `Q = I ⊕ Q̂`, so row 0 of the block is left alone.

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::householder;
use faer::{Conj, MatMut, MatRef};

use super::convert::leave_avx_state;
use super::decomp::{par_from, PARALLEL_EIGH_FROM};

/// `x ← Q x` (`transpose`: `x ← Qᵀ x`) for the n×n `reduced` matrix holding the reflectors'
/// vectors below its subdiagonal and `coeffs` their block triangular factors.
pub(super) fn apply_reflectors(
    reduced: MatRef<'_, f64>,
    coeffs: MatRef<'_, f64>,
    x: MatMut<'_, f64>,
    transpose: bool,
) {
    let n = reduced.nrows();
    if n < 2 || x.ncols() == 0 {
        return;
    }
    let (k, bs) = (x.ncols(), coeffs.nrows());
    let req =
        StackReq::any_of(&[
            householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<f64>(
                n - 1,
                bs,
                k,
            ),
            householder::apply_block_householder_sequence_transpose_on_the_left_in_place_scratch::<
                f64,
            >(n - 1, bs, k),
        ]);
    let mut mem = MemBuffer::new(req);
    let stack = MemStack::new(&mut mem);
    let basis = reduced.submatrix(1, 0, n - 1, n - 1);
    let target = x.subrows_mut(1, n - 1);
    let apply = if transpose {
        householder::apply_block_householder_sequence_transpose_on_the_left_in_place_with_conj
    } else {
        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj
    };
    let par = par_from(n, PARALLEL_EIGH_FROM);
    apply(basis, coeffs, Conj::No, target, par, stack);
    leave_avx_state();
}

/// `q ← Q`, formed from the reflectors: q is set to the identity and the blocks are applied
/// last to first, each only to the trailing block it can change (the columns before a block
/// are still unit vectors there). About 4/3 n³ flops, where `apply_reflectors` on the identity
/// takes 2n³ (LAPACK's `orgtr` order).
pub(super) fn form_q(reduced: MatRef<'_, f64>, coeffs: MatRef<'_, f64>, mut q: MatMut<'_, f64>) {
    let n = reduced.nrows();
    q.fill(0.0);
    for i in 0..n {
        q[(i, i)] = 1.0;
    }
    if n < 3 {
        return; // no reflector below the subdiagonal: Q = I
    }
    let (size, bs) = (n - 1, coeffs.nrows());
    let mut mem = MemBuffer::new(
        householder::apply_block_householder_on_the_left_in_place_scratch::<f64>(size, bs, size),
    );
    let stack = MemStack::new(&mut mem);
    let basis = reduced.submatrix(1, 0, size, size);
    let mut hat = q.submatrix_mut(1, 1, size, size);
    let par = par_from(n, PARALLEL_EIGH_FROM);
    // faer's blocks start at multiples of bs; the last one holds what is left.
    let mut j = size;
    let mut width = match size % bs {
        0 => bs,
        w => w,
    };
    while j > 0 {
        let j0 = j - width;
        householder::apply_block_householder_on_the_left_in_place_with_conj(
            basis.get(j0.., j0..j),
            coeffs.get(.., j0..j).subrows(0, width),
            Conj::No,
            hat.as_mut().get_mut(j0.., j0..),
            par,
            stack,
        );
        j = j0;
        width = bs;
    }
    leave_avx_state();
}
