//! Data-driven kernel widths.

use ndarray::ArrayView2;
use rayon::prelude::*;

use crate::linalg::select_rows;

/// Above this many rows the median is taken over a fixed, evenly spaced subsample of pairs:
/// the exact median of ℓ²/2 distances would cost more than the fit it serves.
const MEDIAN_MAX_ROWS: usize = 2000;

/// Median Euclidean distance between distinct training rows (the "median heuristic").
/// Pairs of identical rows count (distance 0), pairs of a row with itself do not.
pub fn median_distance(x: ArrayView2<f64>) -> f64 {
    let mut d = pair_distances(x);
    if d.is_empty() {
        return 0.0;
    }
    let mid = d.len() / 2;
    let (_, m, _) = d.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *m;
    if d.len() % 2 == 1 {
        upper
    } else {
        let lower = d[..mid].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        0.5 * (lower + upper)
    }
}

/// Mean Euclidean distance between distinct training rows (MVML's per-view default); the
/// reference MVML's widths are tested against.
#[cfg(test)]
pub(crate) fn mean_distance(x: ArrayView2<f64>) -> f64 {
    let d = pair_distances(x);
    if d.is_empty() {
        0.0
    } else {
        d.iter().sum::<f64>() / d.len() as f64
    }
}

fn pair_distances(x: ArrayView2<f64>) -> Vec<f64> {
    let n = x.nrows();
    let step = n.div_ceil(MEDIAN_MAX_ROWS).max(1);
    let rows: Vec<usize> = (0..n).step_by(step).collect();
    if super::packed::is_packed(x) {
        // Sparse rows: one inverted-index product over the subsample, not a merge per pair.
        let d2 = super::packed::sq_dists(select_rows(x, &rows).view());
        let m = rows.len();
        return (0..m)
            .flat_map(|a| (a + 1..m).map(move |b| (a, b)))
            .map(|(a, b)| d2[[a, b]].sqrt())
            .collect();
    }
    let sub = select_rows(x, &rows); // standard layout: row a is data[a d..(a + 1) d]
    let (m, d) = sub.dim();
    let data = sub.as_slice().expect("a selection is in standard layout");
    // Row a's pairs (a, b > a) fill their own segment of the list, rows in parallel: the list
    // is the serial loop's, pair for pair, allocated once.
    let mut out = vec![0.0; m * m.saturating_sub(1) / 2];
    let mut segments = Vec::with_capacity(m);
    let mut rest = out.as_mut_slice();
    for a in 0..m {
        let (seg, tail) = rest.split_at_mut(m - a - 1);
        segments.push(seg);
        rest = tail;
    }
    segments
        .into_par_iter()
        .enumerate()
        .for_each(|(a, seg)| distances_after(data, (m, d), a, seg));
    out
}

/// Pairs compared at once by [`distances_after`].
const LANES: usize = 4;

/// `out[b − a − 1] = ‖x_a − x_b‖` for every row b > a of the row-major m×d `x`. Each sum runs
/// over the coordinates in order (the serial `(p − q)²` fold, bit for bit); `LANES` rows b
/// share one pass over row a.
fn distances_after(x: &[f64], (m, d): (usize, usize), a: usize, out: &mut [f64]) {
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let ra = row(a);
    let mut b = a + 1;
    while b + LANES <= m {
        let rb: [&[f64]; LANES] = std::array::from_fn(|l| row(b + l));
        let mut sum = [0.0f64; LANES];
        for (k, p) in ra.iter().enumerate() {
            for l in 0..LANES {
                let t = p - rb[l][k];
                sum[l] += t * t;
            }
        }
        for (l, s) in sum.iter().enumerate() {
            out[b + l - a - 1] = s.sqrt();
        }
        b += LANES;
    }
    for b in b..m {
        let s: f64 = ra.iter().zip(row(b)).map(|(p, q)| (p - q) * (p - q)).sum();
        out[b - a - 1] = s.sqrt();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn median_of_three_points_on_a_line() {
        // distances 1, 2, 3 → median 2
        let x = array![[0.0], [1.0], [3.0]];
        assert_eq!(median_distance(x.view()), 2.0);
        assert_eq!(mean_distance(x.view()), 2.0);
    }

    #[test]
    fn pair_distances_are_the_serial_loops_bit_for_bit() {
        let mut state = 7u64;
        let x = ndarray::Array2::from_shape_fn((37, 9), |_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 11) as f64 / (1u64 << 53) as f64 * 6.0 - 3.0
        });
        let mut serial = Vec::new();
        for i in 0..x.nrows() {
            for j in i + 1..x.nrows() {
                let s: f64 = x
                    .row(i)
                    .iter()
                    .zip(x.row(j))
                    .map(|(p, q)| (p - q) * (p - q))
                    .sum();
                serial.push(s.sqrt());
            }
        }
        let got = pair_distances(x.view());
        assert_eq!(got.len(), serial.len());
        assert!(got
            .iter()
            .zip(&serial)
            .all(|(a, b)| a.to_bits() == b.to_bits()));
    }

    #[test]
    fn median_of_even_count_averages() {
        // 4 points at 0,1,2,4 → distances 1,2,4,1,3,2 → sorted 1,1,2,2,3,4 → median 2
        let x = array![[0.0], [1.0], [2.0], [4.0]];
        assert_eq!(median_distance(x.view()), 2.0);
    }
}
