//! Gathering rows of a matrix into a new one.
//!
//! `ndarray`'s `select(Axis(0), …)` builds one view per index and concatenates them: about
//! 0.06 s for 10⁶ indices of a one-column matrix, where the copy itself is a few milliseconds.

use ndarray::{Array2, ArrayView2, Axis};
use rayon::prelude::*;

/// Rows per parallel task: below two blocks the gather runs on the calling thread.
const BLOCK: usize = 4096;

/// The rows `rows` of `a`, in that order (an index may repeat), as a standard-layout matrix.
/// Panics on an index out of range, as indexing does.
pub fn select_rows<A: Copy + Send + Sync>(a: ArrayView2<A>, rows: &[usize]) -> Array2<A> {
    let d = a.ncols();
    if let Some(&bad) = rows.iter().find(|&&i| i >= a.nrows()) {
        panic!("row {bad} of a {}-row matrix", a.nrows());
    }
    let Some(src) = a.as_slice().filter(|_| d > 0) else {
        // A non-standard layout (a transposed view, a column slice) copies row by row.
        let mut out = Vec::with_capacity(rows.len() * d);
        for &i in rows {
            out.extend(a.index_axis(Axis(0), i).iter().copied());
        }
        return Array2::from_shape_vec((rows.len(), d), out).expect("rows × d values");
    };
    let mut out = Vec::with_capacity(rows.len() * d);
    if rows.len() < 2 * BLOCK {
        for &i in rows {
            out.extend_from_slice(&src[i * d..(i + 1) * d]);
        }
    } else {
        let spare = &mut out.spare_capacity_mut()[..rows.len() * d];
        spare
            .par_chunks_mut(BLOCK * d)
            .zip(rows.par_chunks(BLOCK))
            .for_each(|(block, idx)| {
                for (dst, &i) in block.chunks_mut(d).zip(idx) {
                    for (o, &v) in dst.iter_mut().zip(&src[i * d..(i + 1) * d]) {
                        o.write(v);
                    }
                }
            });
        // SAFETY: every one of the rows.len() · d slots was written just above (the chunks
        // of `spare` and of `rows` pair up one row of d values to one index).
        unsafe { out.set_len(rows.len() * d) };
    }
    Array2::from_shape_vec((rows.len(), d), out).expect("rows × d values")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{s, Array2};

    fn numbered(n: usize, d: usize) -> Array2<f64> {
        Array2::from_shape_fn((n, d), |(i, j)| (i * 1000 + j) as f64)
    }

    #[test]
    fn rows_match_ndarray_select_in_every_layout_and_size() {
        for (n, d) in [(5, 3), (20_000, 4), (9000, 1), (3, 0)] {
            let a = numbered(n, d);
            let idx: Vec<usize> = (0..n).rev().step_by(3).chain([0, 0, n - 1]).collect();
            let want = a.select(Axis(0), &idx);
            assert_eq!(select_rows(a.view(), &idx), want, "{n}×{d}");
            // A transposed view and a column slice take the row-by-row route.
            let t = a.t().to_owned();
            assert_eq!(select_rows(t.t(), &idx), want, "{n}×{d} transposed");
            if d > 1 {
                let cols = a.slice(s![.., 1..]);
                assert_eq!(
                    select_rows(cols, &idx),
                    cols.select(Axis(0), &idx),
                    "{n}×{d} sliced"
                );
            }
        }
        assert_eq!(select_rows(numbered(4, 2).view(), &[]).dim(), (0, 2));
    }

    #[test]
    #[should_panic(expected = "row 4 of a 4-row matrix")]
    fn an_index_out_of_range_panics() {
        select_rows(numbered(4, 2).view(), &[1, 4]);
    }
}
