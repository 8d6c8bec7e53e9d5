//! Per-view kernels with σ from the median (or mean) pairwise distance of the view's training
//! rows. The distances come from one matrix product (`sq_dists`), and for a distance-based
//! kernel the same matrix gives the exact Gram — far cheaper than a pairwise loop per view
//! plus a separate Gram on six views of mfeat.

use ndarray::Array2;

use super::ViewSigma;
use crate::kernels::{gram, sq_dists, Kernel, KernelSpec, Sigma};
use crate::linalg::select_rows;
use crate::{OvkError, Result};

/// Above this many rows the width uses evenly spaced rows, at most this many (as
/// `kernels::median_distance` does with 2000): the median of 10⁶ pairwise distances moves by
/// well under a percent from that of 4·10⁶, and a Nyström fit need not pay O(n²) for it.
pub(crate) const WIDTH_MAX_ROWS: usize = 1000;

/// The view's resolved kernel and, when `want_gram`, its exact Gram matrix.
pub(crate) fn view_kernel(
    spec: &KernelSpec,
    xl: &Array2<f64>,
    heuristic: ViewSigma,
    name: &str,
    want_gram: bool,
) -> Result<(Kernel, Option<Array2<f64>>)> {
    let n = xl.nrows();
    let heuristic_width = spec.name.uses_sigma() && spec.sigma == Sigma::Median;
    let mut dists: Option<Array2<f64>> = None;
    let kernel = if heuristic_width {
        let step = n.div_ceil(WIDTH_MAX_ROWS).max(1);
        let rows: Vec<usize> = (0..n).step_by(step).collect();
        // the exact route needs every distance for its Gram anyway; a Nyström fit only those
        // of the width's rows (at n = 2000 they were 40 % of the whole fit)
        let d = if want_gram || step == 1 {
            sq_dists(xl.view())
        } else {
            sq_dists(select_rows(xl.view(), &rows).view())
        };
        let at = |i: usize| if d.nrows() == n { rows[i] } else { i };
        let mut pairs: Vec<f64> = Vec::with_capacity(rows.len() * rows.len().saturating_sub(1) / 2);
        for i in 0..rows.len() {
            for j in i + 1..rows.len() {
                pairs.push(d[[at(i), at(j)]].sqrt());
            }
        }
        let width = match heuristic {
            ViewSigma::Mean => mean(&pairs),
            ViewSigma::Median => median(&mut pairs),
        };
        if !(width.is_finite() && width > 0.0) {
            return Err(OvkError::input(format!(
                "view '{name}': the {heuristic} distance between training rows is 0 (all rows \
                 equal?); give --sigma a number"
            )));
        }
        if d.nrows() == n {
            dists = Some(d);
        }
        let mut s = spec.clone();
        s.sigma = Sigma::Value(width);
        s.resolve(xl.view())?
    } else {
        spec.resolve(xl.view()).map_err(|e| match e {
            e @ OvkError::Input { .. } => e.reworded(|msg| format!("view '{name}': {msg}")),
            other => other,
        })?
    };
    let k = match (want_gram, dists) {
        (false, _) => None,
        (true, Some(d)) => {
            let mut k = d.mapv(|v| kernel.of_inner_or_dist(v));
            // sq_dists is symmetric up to rounding: make K exactly symmetric
            for i in 0..n {
                for j in 0..i {
                    let v = 0.5 * (k[[i, j]] + k[[j, i]]);
                    k[[i, j]] = v;
                    k[[j, i]] = v;
                }
            }
            Some(k)
        }
        (true, None) => Some(gram(&kernel, xl.view())?),
    };
    Ok((kernel, k))
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The median with the even-count average, as `kernels::median_distance`.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let len = v.len();
    let mid = len / 2;
    let (lower, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *m;
    if len % 2 == 1 {
        upper
    } else {
        0.5 * (lower.iter().copied().fold(f64::NEG_INFINITY, f64::max) + upper)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{mean_distance, median_distance};
    use crate::util::rng::Rng;

    #[test]
    fn widths_and_gram_match_the_shared_heuristics() {
        let mut r = Rng::new(9);
        let x = Array2::from_shape_fn((31, 4), |_| r.normal());
        let spec = KernelSpec::default();
        for (h, expect) in [
            (ViewSigma::Median, median_distance(x.view())),
            (ViewSigma::Mean, mean_distance(x.view())),
        ] {
            let (k, g) = view_kernel(&spec, &x, h, "v", true).unwrap();
            let Kernel::Gaussian { sigma } = k else {
                panic!("{k:?}")
            };
            assert!(
                (sigma - expect).abs() < 1e-12 * expect,
                "{h}: {sigma} vs {expect}"
            );
            let g = g.unwrap();
            let exact = gram(&k, x.view()).unwrap();
            assert!((&g - &exact).iter().all(|d| d.abs() < 1e-12));
            assert_eq!(g, g.t());
        }
    }

    #[test]
    fn above_the_cap_both_routes_take_the_same_rows_width() {
        let mut r = Rng::new(4);
        let n = WIDTH_MAX_ROWS + 301;
        let x = Array2::from_shape_fn((n, 2), |_| r.normal());
        let spec = KernelSpec::default();
        let (exact, g) = view_kernel(&spec, &x, ViewSigma::Median, "v", true).unwrap();
        let (nys, none) = view_kernel(&spec, &x, ViewSigma::Median, "v", false).unwrap();
        assert!(g.is_some() && none.is_none());
        let (Kernel::Gaussian { sigma: a }, Kernel::Gaussian { sigma: b }) = (exact, nys) else {
            panic!("not Gaussian")
        };
        assert_eq!(a, b);
        // evenly spaced rows: the width is the median over those rows only
        let rows: Vec<usize> = (0..n).step_by(n.div_ceil(WIDTH_MAX_ROWS)).collect();
        let sub = median_distance(select_rows(x.view(), &rows).view());
        assert!((a - sub).abs() < 1e-12 * sub, "{a} vs {sub}");
    }
}
