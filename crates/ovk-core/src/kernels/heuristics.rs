//! Data-driven kernel widths.

use ndarray::ArrayView2;

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
        let d2 = super::packed::sq_dists(x.select(ndarray::Axis(0), &rows).view());
        let m = rows.len();
        return (0..m)
            .flat_map(|a| (a + 1..m).map(move |b| (a, b)))
            .map(|(a, b)| d2[[a, b]].sqrt())
            .collect();
    }
    let mut d = Vec::with_capacity(rows.len() * rows.len().saturating_sub(1) / 2);
    for (a, &i) in rows.iter().enumerate() {
        for &j in &rows[a + 1..] {
            let s: f64 = x
                .row(i)
                .iter()
                .zip(x.row(j))
                .map(|(p, q)| (p - q) * (p - q))
                .sum();
            d.push(s.sqrt());
        }
    }
    d
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
    fn median_of_even_count_averages() {
        // 4 points at 0,1,2,4 → distances 1,2,4,1,3,2 → sorted 1,1,2,2,3,4 → median 2
        let x = array![[0.0], [1.0], [2.0], [4.0]];
        assert_eq!(median_distance(x.view()), 2.0);
    }
}
