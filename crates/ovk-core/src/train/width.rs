//! Before a fit: an absolute kernel width far from the distances the kernel will see. A σ
//! chosen on raw features and run on standardised ones (or the reverse) silently turns the
//! Gram matrix into the identity or into a constant — on scene, σ = 4.3 (the raw median
//! distance) against a median of 22.6 after standard scaling cost 15 AUC points — so the run
//! says so, with the median beside it, and goes on.

use ndarray::{ArrayView2, Axis};

use crate::data::{Prepared, Scale, View};
use crate::kernels::{median_distance, KernelSpec, Sigma};
use crate::linalg::select_rows;
use crate::train::RunConfig;

/// A width more than this factor from the median distance (either way) is worth a word.
pub(crate) const FAR_FACTOR: f64 = 3.0;

/// Rows the median is taken over: enough for two significant digits, cheap beside any fit.
const SAMPLE_ROWS: usize = 400;

/// The warning for `spec`'s absolute σ on the training inputs `x` as the kernel sees them
/// (after `scale`), per view when there are views; None when σ is the median, the kernel has
/// no width, or σ is within `FAR_FACTOR` of the median distance.
pub(crate) fn width_warning(
    spec: &KernelSpec,
    x: ArrayView2<f64>,
    views: &[View],
    scale: Scale,
) -> Option<String> {
    let Sigma::Value(sigma) = spec.sigma else {
        return None;
    };
    if !spec.name.uses_sigma() || x.nrows() < 2 {
        return None;
    }
    let scaled = match scale {
        Scale::Standard => {
            "after standard scaling; a σ chosen on the raw features needs --scale none"
        }
        Scale::None => "features unscaled",
    };
    // (where, median distance) of each block of columns the kernel is applied to
    let medians: Vec<(String, f64)> = if views.is_empty() {
        vec![(String::new(), sampled_median(x))]
    } else {
        views
            .iter()
            .map(|v| {
                let cols = x.select(Axis(1), &v.columns);
                (format!(" in view {}", v.name), sampled_median(cols.view()))
            })
            .collect()
    };
    let far: Vec<String> = medians
        .iter()
        .filter(|(_, m)| *m > 0.0 && m.is_finite())
        .filter_map(|(place, median)| {
            let ratio = sigma / median;
            let how = if ratio > FAR_FACTOR {
                format!("{ratio:.1}× wider than")
            } else if ratio < 1.0 / FAR_FACTOR {
                format!("{:.1}× narrower than", 1.0 / ratio)
            } else {
                return None;
            };
            Some(format!("{how} the median distance {median:.3}{place}"))
        })
        .collect();
    if far.is_empty() {
        return None;
    }
    let narrow = far[0].contains("narrower");
    Some(format!(
        "σ = {sigma} is {} between training rows as the kernel sees them ({scaled}): the Gram \
         matrix is nearly {}; --sigma median takes the median",
        far.join(", "),
        if narrow { "the identity" } else { "constant" },
    ))
}

/// The median distance over at most `SAMPLE_ROWS` evenly spaced rows.
fn sampled_median(x: ArrayView2<f64>) -> f64 {
    let step = x.nrows().div_ceil(SAMPLE_ROWS).max(1);
    let rows: Vec<usize> = (0..x.nrows()).step_by(step).collect();
    median_distance(select_rows(x.view(), &rows).view())
}

/// The warnings of a sweep's grid, one per distinct absolute σ (and scaling) far from the
/// median distance: the data are prepared once per scaling. A configuration whose data cannot
/// be prepared is skipped here (the sweep reports it).
pub fn sweep_width_warnings(configs: &[RunConfig]) -> Vec<String> {
    let mut prepared: Vec<(Scale, Option<Prepared>)> = Vec::new();
    let mut seen: Vec<(u64, Scale)> = Vec::new();
    let mut out = Vec::new();
    for c in configs {
        let Sigma::Value(sigma) = c.kernel.sigma else {
            continue;
        };
        let key = (sigma.to_bits(), c.data.scale);
        if !c.kernel.name.uses_sigma() || seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let slot = match prepared.iter().position(|(s, _)| *s == c.data.scale) {
            Some(i) => i,
            None => {
                let p = c
                    .checked_method()
                    .and_then(|m| super::pipeline::prepare(m, c))
                    .ok();
                prepared.push((c.data.scale, p));
                prepared.len() - 1
            }
        };
        if let Some(p) = &prepared[slot].1 {
            out.extend(width_warning(
                &c.kernel,
                p.x_train.view(),
                &p.views,
                c.data.scale,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::KernelName;
    use ndarray::Array2;

    /// Points 0, c, …, 9c on a line.
    fn line(c: f64) -> Array2<f64> {
        Array2::from_shape_fn((10, 1), |(i, _)| c * i as f64)
    }

    fn spec(name: KernelName, sigma: Sigma) -> KernelSpec {
        KernelSpec {
            name,
            sigma,
            ..KernelSpec::default()
        }
    }

    #[test]
    fn a_width_far_from_the_median_is_named_with_the_median() {
        let x = line(10.0);
        let m = median_distance(x.view());
        let narrow = spec(KernelName::Gaussian, Sigma::Value(m / 5.0));
        let w = width_warning(&narrow, x.view(), &[], Scale::Standard).unwrap();
        assert!(w.contains("5.0× narrower"), "{w}");
        assert!(w.contains(&format!("{m:.3}")), "{w}");
        assert!(
            w.contains("--scale none") && w.contains("the identity"),
            "{w}"
        );
        let wide = spec(KernelName::Laplacian, Sigma::Value(4.0 * m));
        let w = width_warning(&wide, x.view(), &[], Scale::None).unwrap();
        assert!(w.contains("4.0× wider") && w.contains("constant"), "{w}");
    }

    #[test]
    fn a_width_near_the_median_or_the_median_itself_is_quiet() {
        let x = line(1.0);
        let m = median_distance(x.view());
        for s in [m / 2.9, m, 2.9 * m] {
            let k = spec(KernelName::Gaussian, Sigma::Value(s));
            assert_eq!(width_warning(&k, x.view(), &[], Scale::Standard), None);
        }
        let median = spec(KernelName::Gaussian, Sigma::Median);
        assert_eq!(width_warning(&median, x.view(), &[], Scale::Standard), None);
        // a kernel without a width ignores σ
        let poly = spec(KernelName::Polynomial, Sigma::Value(1e-6));
        assert_eq!(width_warning(&poly, x.view(), &[], Scale::Standard), None);
    }

    #[test]
    fn views_are_checked_one_by_one() {
        // view a spans 0..9, view b 0..900: σ = 3 suits a and is far too narrow for b
        let x = Array2::from_shape_fn((10, 2), |(i, j)| {
            i as f64 * if j == 0 { 1.0 } else { 100.0 }
        });
        let views = [
            View {
                name: "a".into(),
                columns: vec![0],
            },
            View {
                name: "b".into(),
                columns: vec![1],
            },
        ];
        let k = spec(KernelName::Gaussian, Sigma::Value(3.0));
        let w = width_warning(&k, x.view(), &views, Scale::None).unwrap();
        assert!(w.contains("in view b") && !w.contains("in view a"), "{w}");
    }
}
