//! ndarray ↔ faer. Views share memory with the ndarray (any strides); results are copied out.

use faer::{MatMut, MatRef};
use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

/// Zero-copy faer view of an ndarray view (row-major, column-major or strided).
pub fn view<'a>(a: &ArrayView2<'a, f64>) -> MatRef<'a, f64> {
    let (r, c) = a.dim();
    let s = a.strides();
    // SAFETY: the view's pointer, shape and strides come from a live ndarray view with
    // lifetime 'a, so every addressed element is in bounds and outlives the MatRef.
    unsafe { MatRef::from_raw_parts(a.as_ptr(), r, c, s[0], s[1]) }
}

/// Zero-copy mutable faer view of an ndarray view.
pub(crate) fn view_mut<'a>(a: &'a mut ArrayViewMut2<'_, f64>) -> MatMut<'a, f64> {
    let (r, c) = a.dim();
    let s = a.strides().to_vec();
    // SAFETY: as in `view`; the exclusive borrow guarantees no aliasing.
    unsafe { MatMut::from_raw_parts_mut(a.as_mut_ptr(), r, c, s[0], s[1]) }
}

/// Copy a faer result into a row-major ndarray — the way back from faer, so it first leaves
/// faer's SIMD register state behind (`leave_avx_state`).
pub(crate) fn faer_to_array(m: MatRef<'_, f64>) -> Array2<f64> {
    leave_avx_state();
    let (r, c) = (m.nrows(), m.ncols());
    let mut out = Array2::<f64>::zeros((r, c));
    if r == 0 || c == 0 {
        return out;
    }
    // faer's results are column-major: copied tile by tile, so both sides stay in cache (an
    // element-by-element copy misses on every read once a column outgrows the cache: a
    // 150 × 10⁵ product spent longer being copied than multiplied).
    let dst = out.as_slice_mut().expect("a new array is contiguous");
    let copy = |(b, rows): (usize, &mut [f64])| {
        let i0 = b * TILE;
        let n_rows = rows.len() / c;
        for j0 in (0..c).step_by(TILE) {
            for j in j0..(j0 + TILE).min(c) {
                for di in 0..n_rows {
                    rows[di * c + j] = m[(i0 + di, j)];
                }
            }
        }
    };
    // Small results (the solvers' inner products) are not worth a parallel dispatch.
    if r * c < PARALLEL_CELLS {
        dst.chunks_mut(TILE * c).enumerate().for_each(copy);
    } else {
        dst.par_chunks_mut(TILE * c).enumerate().for_each(copy);
    }
    out
}

/// Side of the square tiles `faer_to_array` copies (64 × 64 doubles: 32 KiB).
const TILE: usize = 64;
/// Results of fewer cells are copied on the calling thread.
const PARALLEL_CELLS: usize = 1 << 18;

/// faer's AVX kernels can return with the upper halves of the YMM registers dirty; every
/// legacy-SSE instruction after that (ovk's own scalar loops, libm's `exp` in a Gram matrix)
/// then pays a false dependency. Measured here: 4·10⁶ `exp` took 0.53 s after a faer product
/// and 0.022 s after `vzeroupper`. Call this whenever control comes back from faer.
#[inline]
pub(crate) fn leave_avx_state() {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: AVX is present (checked above). `vzeroupper` zeroes the upper halves of the
        // YMM registers, which hold no live value here: this crate is compiled without AVX,
        // and the ABI does not preserve them across the call that just returned.
        unsafe { std::arch::x86_64::_mm256_zeroupper() };
    }
}
