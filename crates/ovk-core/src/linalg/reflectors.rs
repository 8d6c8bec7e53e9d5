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
