//! Paired tests of two configurations scored on the same cross-validation folds: the paired t
//! test and the Wilcoxon signed-rank test, two-sided. Folds share training rows, so their
//! scores are not independent and both tests are optimistic about significance (Nadeau &
//! Bengio, "Inference for the generalization error", 2003); a report states that beside them.

use serde::{Deserialize, Serialize};

/// The two tests on one metric's per-fold differences (a − b).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedTest {
    /// Folds with a value in both runs.
    pub n: usize,
    /// Mean of the differences a − b.
    pub mean_difference: f64,
    /// Sample standard deviation of the differences a − b.
    pub sd_difference: f64,
    /// Paired t statistic and its two-sided p-value (n − 1 degrees of freedom); NaN when the
    /// differences do not vary.
    pub t: f64,
    /// Two-sided p-value of `t`.
    pub t_p: f64,
    /// Wilcoxon signed-rank statistic W+ (sum of the ranks of positive differences, zeros
    /// dropped) and its two-sided p-value: exact for up to 25 nonzero differences without
    /// ties, else the normal approximation with tie and continuity corrections.
    pub w: f64,
    /// Two-sided p-value of `w`.
    pub w_p: f64,
}

/// Both tests on the paired values `a[i]`, `b[i]` (pairs with a NaN are dropped).
pub fn paired_tests(a: &[f64], b: &[f64]) -> PairedTest {
    let d: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(x, y)| x - y)
        .filter(|v| v.is_finite())
        .collect();
    let n = d.len();
    let mean = if n > 0 {
        d.iter().sum::<f64>() / n as f64
    } else {
        f64::NAN
    };
    let sd = if n > 1 {
        (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        f64::NAN
    };
    let (t, t_p) = if n > 1 && sd > 0.0 {
        let t = mean / (sd / (n as f64).sqrt());
        (t, 2.0 * student_t_sf(t.abs(), (n - 1) as f64))
    } else {
        (f64::NAN, f64::NAN)
    };
    let (w, w_p) = wilcoxon(&d);
    PairedTest {
        n,
        mean_difference: mean,
        sd_difference: sd,
        t,
        t_p,
        w,
        w_p,
    }
}

/// W+ and its two-sided p-value for the differences `d`.
fn wilcoxon(d: &[f64]) -> (f64, f64) {
    let mut nz: Vec<f64> = d.iter().copied().filter(|v| *v != 0.0).collect();
    let n = nz.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    nz.sort_by(|x, y| x.abs().total_cmp(&y.abs()));
    // Average ranks of tied |d|, and the tie correction Σ(t³ − t).
    let mut ranks = vec![0.0; n];
    let mut ties = 0.0;
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && nz[j + 1].abs() == nz[i].abs() {
            j += 1;
        }
        let avg = (i + j) as f64 / 2.0 + 1.0;
        ranks[i..=j].fill(avg);
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let w_plus: f64 = nz
        .iter()
        .zip(&ranks)
        .filter(|(v, _)| **v > 0.0)
        .map(|(_, r)| r)
        .sum();
    let total = (n * (n + 1)) as f64 / 2.0;
    let p = if ties == 0.0 && n <= 25 {
        exact_signed_rank_p(w_plus.round() as usize, n)
    } else {
        let mu = total / 2.0;
        let var = (n * (n + 1) * (2 * n + 1)) as f64 / 24.0 - ties / 48.0;
        if var <= 0.0 {
            return (w_plus, f64::NAN);
        }
        let z = ((w_plus - mu).abs() - 0.5).max(0.0) / var.sqrt();
        2.0 * normal_sf(z)
    };
    (w_plus, p.min(1.0))
}

/// Two-sided exact p-value of W+ = `w` with `n` untied nonzero differences: the number of sign
/// patterns whose rank sum is as far from n(n+1)/4 as `w`, over 2ⁿ.
fn exact_signed_rank_p(w: usize, n: usize) -> f64 {
    let total = n * (n + 1) / 2;
    // counts[s] = number of subsets of {1..n} summing to s.
    let mut counts = vec![0f64; total + 1];
    counts[0] = 1.0;
    for k in 1..=n {
        for s in (k..=total).rev() {
            counts[s] += counts[s - k];
        }
    }
    let lo = w.min(total - w);
    let tail: f64 = counts[..=lo].iter().sum();
    (2.0 * tail / 2f64.powi(n as i32)).min(1.0)
}

/// P(T > t) for Student's t with `df` degrees of freedom, t ≥ 0.
pub(crate) fn student_t_sf(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    0.5 * regularized_incomplete_beta(df / 2.0, 0.5, x)
}

/// P(Z > z) for a standard normal.
pub(crate) fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, |error| < 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

/// I_x(a, b), by the continued fraction of Numerical Recipes (Lentz's method).
pub(crate) fn regularized_incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x), x > 0 (Lanczos, g = 7, 9 terms: ~15 digits).
pub(crate) fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // reflection
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_distribution_matches_tables() {
        // two-sided 5 % critical values: t(4) = 2.776, t(9) = 2.262, t(29) = 2.045
        for (t, df) in [(2.776_445, 4.0), (2.262_157, 9.0), (2.045_230, 29.0)] {
            let p = 2.0 * student_t_sf(t, df);
            assert!((p - 0.05).abs() < 1e-5, "df {df}: {p}");
        }
        assert!((student_t_sf(0.0, 7.0) - 0.5).abs() < 1e-12);
        assert!((normal_sf(1.959_964) - 0.025).abs() < 1e-6);
    }

    #[test]
    fn ln_gamma_is_log_factorial() {
        for n in 1..20u32 {
            let f: f64 = (1..n).map(f64::from).product();
            assert!((ln_gamma(n as f64) - f.ln()).abs() < 1e-10, "{n}");
        }
    }

    #[test]
    fn paired_t_matches_a_hand_computation() {
        // d = [1, 2, 3, 4, 5]: mean 3, sd √2.5, t = 3/(√2.5/√5) = 4.2426, df 4 → p = 0.01324
        let a = [2.0, 4.0, 6.0, 8.0, 10.0];
        let b = [1.0, 2.0, 3.0, 4.0, 5.0];
        let r = paired_tests(&a, &b);
        assert_eq!(r.n, 5);
        assert!((r.t - 4.242_640_687).abs() < 1e-8, "{}", r.t);
        assert!((r.t_p - 0.013_236).abs() < 1e-5, "{}", r.t_p);
        // all five differences positive: W+ = 15, exact two-sided p = 2/32
        assert_eq!(r.w, 15.0);
        assert!((r.w_p - 0.0625).abs() < 1e-12, "{}", r.w_p);
    }

    #[test]
    fn wilcoxon_exact_counts_and_symmetry() {
        // n = 3, W+ = 0 or 6: p = 2·1/8
        assert!((exact_signed_rank_p(0, 3) - 0.25).abs() < 1e-12);
        assert!((exact_signed_rank_p(6, 3) - 0.25).abs() < 1e-12);
        // the middle of the distribution is p = 1
        assert_eq!(exact_signed_rank_p(3, 3), 1.0);
        let a = [0.3, -0.1, 0.4, 0.2, -0.5, 0.6];
        let z = [0.0; 6];
        let (fwd, back) = (paired_tests(&a, &z), paired_tests(&z, &a));
        assert!((fwd.w_p - back.w_p).abs() < 1e-12 && (fwd.t_p - back.t_p).abs() < 1e-12);
    }

    #[test]
    fn equal_runs_have_no_test() {
        let r = paired_tests(&[0.8, 0.8, 0.8], &[0.8, 0.8, 0.8]);
        assert!(r.t_p.is_nan() && r.w_p.is_nan());
        assert_eq!(r.mean_difference, 0.0);
    }
}
