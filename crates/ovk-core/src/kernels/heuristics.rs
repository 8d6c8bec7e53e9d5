//! Data-driven kernel widths.

use std::cmp::Ordering;

use ndarray::{s, ArrayView2};
use rayon::prelude::*;

use crate::linalg::{matmul, select_rows};

/// Above this many rows the median is taken over a fixed, evenly spaced subsample of pairs:
/// the exact median of ℓ²/2 distances would cost more than the fit it serves.
const MEDIAN_MAX_ROWS: usize = 2000;

/// Median Euclidean distance between distinct training rows (the "median heuristic").
/// Pairs of identical rows count (distance 0), pairs of a row with itself do not.
pub fn median_distance(x: ArrayView2<f64>) -> f64 {
    let n = x.nrows();
    let step = n.div_ceil(MEDIAN_MAX_ROWS).max(1);
    let rows: Vec<usize> = (0..n).step_by(step).collect();
    let sub = select_rows(x, &rows);
    let m = sub.nrows();
    let pairs = m * m.saturating_sub(1) / 2;
    if pairs == 0 {
        return 0.0;
    }
    let mid = pairs / 2;
    // The k-th smallest distance is the square root of the k-th smallest squared distance.
    let ks: Vec<usize> = if pairs % 2 == 1 {
        vec![mid]
    } else {
        vec![mid - 1, mid]
    };
    let d: Vec<f64> = match screened_order_stats(sub.view(), &ks) {
        Some(squared) => squared.iter().map(|s| s.sqrt()).collect(),
        None => order_stats(&mut pair_distances(sub.view()), &ks, f64::total_cmp),
    };
    match d.as_slice() {
        [upper] => *upper,
        [lower, upper] => 0.5 * (lower + upper),
        _ => unreachable!("one or two order statistics"),
    }
}

/// The order statistics `ks` of `v` under `cmp` (the largest, and at most the one before it).
fn order_stats<T: Copy>(v: &mut [T], ks: &[usize], cmp: fn(&T, &T) -> Ordering) -> Vec<T> {
    let top = *ks.last().expect("at least one order statistic");
    let (below, kth, _) = v.select_nth_unstable_by(top, cmp);
    let kth = *kth;
    ks.iter()
        .map(|&k| {
            debug_assert!(k == top || k + 1 == top);
            if k == top {
                kth
            } else {
                *below.iter().max_by(|a, b| cmp(a, b)).expect("k < top")
            }
        })
        .collect()
}

/// Rows of `sub` per block product in [`screened_order_stats`]: 1 MiB of inner products per
/// block at m = 2000, so the screen holds no more than the serial route's list of distances.
const SCREEN_ROWS: usize = 64;

/// The order statistics `ks` (ascending, as [`order_stats`] takes them) of the squared
/// distances `Σₖ (x_a − x_b)²` over the pairs a < b of `sub`'s rows — each the serial sum over
/// the coordinates in order, so the median is the one `pair_distances` gives, bit for bit —
/// without summing m²/2 pairs one by one (0.23 s of tmc2007's load at m = 2000, d = 500).
///
/// Every pair is first expanded as `ŝ = ‖x_a‖² + ‖x_b‖² − 2 x_aᵀx_b` from row-block products
/// and kept in single precision (`a`, half the serial route's list, and its copy for the
/// selection the other half). Each serial sum s lies in `[lo(a), hi(a)]` with
/// `lo(a) = a − c|a| − E`, `hi(a) = a + c|a| + E`: E bounds the expansion's rounding (with a
/// margin of 3), c the single rounding. Both maps are increasing, so the k-th smallest s lies
/// in `[lo(a₍ₖ₎), hi(a₍ₖ₎)]`: a pair with `hi(a) < lo(a₍ₖ₁₎)` is certainly below every wanted
/// statistic, one with `lo(a) > hi(a₍ₖ₂₎)` certainly above. Only the pairs between are summed
/// serially — those near the median, ties included. `None` (take the serial route) for
/// packed rows, or values that are not finite or whose squares pass single precision's range.
fn screened_order_stats(sub: ArrayView2<f64>, ks: &[usize]) -> Option<Vec<f64>> {
    if super::packed::is_packed(sub) {
        return None;
    }
    let (m, d) = sub.dim();
    let norms: Vec<f64> = sub.rows().into_iter().map(|r| r.dot(&r)).collect();
    let largest = norms.iter().copied().fold(0.0, f64::max);
    if norms.iter().any(|v| !v.is_finite()) || largest >= f64::from(f32::MAX) / 4.0 {
        return None;
    }
    let mut approx = vec![0.0f32; m * m.saturating_sub(1) / 2];
    // Rows [start, end)'s pairs (a, b > a) are one contiguous stretch of the pair list.
    let offset = |a: usize| a * m - a * (a + 1) / 2;
    let mut stretches = Vec::new();
    let mut rest = approx.as_mut_slice();
    for start in (0..m).step_by(SCREEN_ROWS) {
        let end = (start + SCREEN_ROWS).min(m);
        let (stretch, tail) = rest.split_at_mut(offset(end) - offset(start));
        stretches.push((start, end, stretch));
        rest = tail;
    }
    stretches.into_par_iter().for_each(|(start, end, stretch)| {
        let g = matmul(sub.slice(s![start..end, ..]), sub.t());
        let mut at = 0;
        for a in start..end {
            for b in a + 1..m {
                stretch[at] = (norms[a] + norms[b] - 2.0 * g[[a - start, b]]) as f32;
                at += 1;
            }
        }
    });
    let e = 16.0 * (d as f64 + 4.0) * f64::EPSILON * largest;
    let c = f64::from(f32::EPSILON); // 2⁻²³: twice single rounding's relative bound
    let lo = |a: f32| f64::from(a) - c * f64::from(a).abs() - e;
    let hi = |a: f32| f64::from(a) + c * f64::from(a).abs() + e;
    let wanted = order_stats(&mut approx.clone(), ks, f32::total_cmp);
    let (first, last) = (lo(wanted[0]), hi(wanted[wanted.len() - 1]));
    let mut below = 0;
    let mut band = Vec::new();
    let mut at = 0;
    for a in 0..m {
        for b in a + 1..m {
            let v = approx[at];
            if hi(v) < first {
                below += 1;
            } else if lo(v) <= last {
                band.push((a, b));
            }
            at += 1;
        }
    }
    drop(approx);
    let mut exact: Vec<f64> = band
        .par_iter()
        .map(|&(a, b)| {
            let mut sum = 0.0;
            for (p, q) in sub.row(a).iter().zip(sub.row(b).iter()) {
                let t = p - q;
                sum += t * t;
            }
            sum
        })
        .collect();
    let within: Vec<usize> = ks
        .iter()
        .map(|&k| k.checked_sub(below))
        .collect::<Option<_>>()?;
    if within.last().is_some_and(|&k| k >= exact.len()) {
        return None;
    }
    Some(order_stats(&mut exact, &within, f64::total_cmp))
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

    /// The median of the serial distances, sorted: what the screened route must give bit for bit.
    fn sorted_median(x: ArrayView2<f64>) -> f64 {
        let mut d = pair_distances(x);
        d.sort_by(f64::total_cmp);
        let mid = d.len() / 2;
        if d.len() % 2 == 1 {
            d[mid]
        } else {
            0.5 * (d[mid - 1] + d[mid])
        }
    }

    #[test]
    fn the_screened_median_is_the_serial_one_bit_for_bit() {
        let mut rng = crate::util::rng::Rng::new(11);
        let cases: Vec<ndarray::Array2<f64>> = vec![
            // continuous, odd and even pair counts
            ndarray::Array2::from_shape_simple_fn((40, 7), || rng.normal()),
            ndarray::Array2::from_shape_simple_fn((45, 7), || rng.normal()),
            // binary features: integer squared distances, ties across the median
            ndarray::Array2::from_shape_simple_fn((300, 50), || f64::from(rng.normal() > 0.8)),
            // far from the origin: the expansion cancels, its bound widens the band
            ndarray::Array2::from_shape_simple_fn((64, 5), || 1e6 + rng.normal()),
            // repeated rows: distance 0 pairs
            ndarray::Array2::from_shape_fn((50, 3), |(i, j)| ((i % 4) * (j + 1)) as f64),
            // wider than the screening block, so several row blocks share the pair list
            ndarray::Array2::from_shape_simple_fn((600, 4), || rng.normal()),
        ];
        for x in &cases {
            let want = sorted_median(x.view());
            let got = median_distance(x.view());
            let pairs = x.nrows() * (x.nrows() - 1) / 2;
            assert!(screened_order_stats(x.view(), &[pairs / 2]).is_some());
            assert_eq!(
                got.to_bits(),
                want.to_bits(),
                "{:?}: {got} vs {want}",
                x.dim()
            );
        }
    }

    #[test]
    fn median_of_even_count_averages() {
        // 4 points at 0,1,2,4 → distances 1,2,4,1,3,2 → sorted 1,1,2,2,3,4 → median 2
        let x = array![[0.0], [1.0], [2.0], [4.0]];
        assert_eq!(median_distance(x.view()), 2.0);
    }
}
