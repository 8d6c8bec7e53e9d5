//! Limited-memory BFGS (Nocedal & Wright, *Numerical Optimization*, Alg. 7.4/7.5) for smooth
//! unconstrained minimisation of `f : ℝⁿ → ℝ`, given as a closure returning `(f(x), ∇f(x))`.
//!
//! The line search brackets and zooms with safeguarded cubic interpolation until the strong Wolfe
//! conditions hold (N&W Alg. 3.5/3.6). Near a minimum the decrease of f drops below rounding, and
//! the Armijo test then fails on noise; a trial whose value is within `value_eps·|f|` of the
//! start and whose slope has dropped is accepted instead (Hager & Zhang's approximate Wolfe
//! idea), so the gradient can still be driven down to the precision the caller asks for.
//!
//! The caller decides convergence through a monitor called once per iteration (it may also
//! cancel, by returning an error); an absolute gradient tolerance is available for simple uses.
//! A trial returning a non-finite value is treated as "too far" and the step shrinks.

use std::collections::VecDeque;

use super::norm::dot;
use crate::{OvkError, Result};

/// Settings of [`lbfgs`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct LbfgsOptions {
    /// Number of stored correction pairs (sₖ, yₖ).
    pub memory: usize,
    /// Iteration cap (line searches that succeed).
    pub max_iter: usize,
    /// Stop when ‖∇f‖₂ ≤ `grad_tol` (0 leaves the decision to the monitor).
    pub(crate) grad_tol: f64,
    /// Function evaluations allowed per line search.
    pub(crate) max_evals_per_search: usize,
    /// Sufficient-decrease constant c₁ of the Wolfe conditions.
    pub c1: f64,
    /// Curvature constant c₂ of the strong Wolfe conditions.
    pub(crate) c2: f64,
    /// Relative slack on f below which a decrease counts as rounding noise.
    pub(crate) value_eps: f64,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            memory: 10,
            max_iter: 1000,
            grad_tol: 0.0,
            max_evals_per_search: 40,
            c1: 1e-4,
            c2: 0.9,
            value_eps: 1e-12,
        }
    }
}

/// What the monitor sees after each accepted step.
#[derive(Debug)]
pub(crate) struct Progress<'a> {
    /// 1-based iteration number.
    pub iter: usize,
    /// The current iterate.
    pub x: &'a [f64],
    /// The objective at `x`.
    pub value: f64,
    /// The gradient at `x`.
    pub grad: &'a [f64],
    /// Step length α taken along the search direction.
    pub step: f64,
    /// Function evaluations so far (all line searches).
    pub evaluations: usize,
}

/// The monitor's verdict after an iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Control {
    Continue,
    Stop,
}

/// Why the minimiser returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LbfgsStatus {
    /// The monitor returned [`Control::Stop`].
    Stopped,
    /// ‖∇f‖₂ ≤ `grad_tol` (or the gradient is exactly zero at the start).
    GradTol,
    /// `max_iter` iterations were taken.
    MaxIter,
    /// No step along steepest descent decreased f: x is at the limit of the arithmetic.
    LineSearchFailed,
}

#[derive(Debug, Clone)]
pub(crate) struct LbfgsResult {
    pub x: Vec<f64>,
    pub value: f64,
    pub grad: Vec<f64>,
    pub iterations: usize,
    pub evaluations: usize,
    pub status: LbfgsStatus,
}

/// Minimise `f` from `x0`. `f(x)` returns the value and the gradient (same length as x);
/// `monitor` is called after every accepted step — just after `f` was last evaluated at the
/// accepted point, except when a failed search falls back to its best trial.
pub(crate) fn lbfgs<F, M>(
    x0: Vec<f64>,
    mut f: F,
    mut monitor: M,
    opts: &LbfgsOptions,
) -> Result<LbfgsResult>
where
    F: FnMut(&[f64]) -> (f64, Vec<f64>),
    M: FnMut(&Progress) -> Result<Control>,
{
    let mut x = x0;
    let (mut value, mut grad) = f(&x);
    let mut evaluations = 1;
    if grad.len() != x.len() {
        return Err(OvkError::internal(format!(
            "L-BFGS: gradient has length {} for {} variables",
            grad.len(),
            x.len()
        )));
    }
    if !value.is_finite() || grad.iter().any(|g| !g.is_finite()) {
        return Err(OvkError::numerical(
            "L-BFGS: the objective or its gradient is not finite at the starting point",
        ));
    }
    let done = |g: &[f64]| {
        let n = norm(g);
        n == 0.0 || n <= opts.grad_tol
    };
    let result = |x, value, grad, iterations, evaluations, status| LbfgsResult {
        x,
        value,
        grad,
        iterations,
        evaluations,
        status,
    };
    if done(&grad) {
        return Ok(result(x, value, grad, 0, evaluations, LbfgsStatus::GradTol));
    }
    let mut history: VecDeque<Pair> = VecDeque::with_capacity(opts.memory);
    for iter in 1..=opts.max_iter {
        let trial = loop {
            let mut d = two_loop(&grad, &history);
            let mut slope = dot(&grad, &d);
            if slope >= 0.0 || !slope.is_finite() {
                history.clear();
                d = grad.iter().map(|g| -g).collect();
                slope = -dot(&grad, &grad);
            }
            // Without curvature pairs the direction is −∇f: start with a unit-length step.
            let alpha0 = if history.is_empty() {
                (1.0 / norm(&d)).min(1.0)
            } else {
                1.0
            };
            let search = Search {
                x: &x,
                d: &d,
                value0: value,
                slope0: slope,
                opts,
            };
            match search.run(&mut f, alpha0, &mut evaluations) {
                Some(t) => break Some(t),
                None if !history.is_empty() => history.clear(),
                None => break None,
            }
        };
        let Some(t) = trial else {
            return Ok(result(
                x,
                value,
                grad,
                iter - 1,
                evaluations,
                LbfgsStatus::LineSearchFailed,
            ));
        };
        let s: Vec<f64> = t.x.iter().zip(&x).map(|(a, b)| a - b).collect();
        let y: Vec<f64> = t.grad.iter().zip(&grad).map(|(a, b)| a - b).collect();
        let sy = dot(&s, &y);
        // Keep the pair only when it carries positive curvature (keeps H positive definite).
        if sy > 1e-12 * norm(&s) * norm(&y) && sy.is_finite() {
            if history.len() == opts.memory.max(1) {
                history.pop_front();
            }
            history.push_back(Pair {
                rho: 1.0 / sy,
                s,
                y,
            });
        }
        x = t.x;
        value = t.value;
        grad = t.grad;
        let control = monitor(&Progress {
            iter,
            x: &x,
            value,
            grad: &grad,
            step: t.alpha,
            evaluations,
        })?;
        if control == Control::Stop {
            return Ok(result(
                x,
                value,
                grad,
                iter,
                evaluations,
                LbfgsStatus::Stopped,
            ));
        }
        if done(&grad) {
            return Ok(result(
                x,
                value,
                grad,
                iter,
                evaluations,
                LbfgsStatus::GradTol,
            ));
        }
    }
    Ok(result(
        x,
        value,
        grad,
        opts.max_iter,
        evaluations,
        LbfgsStatus::MaxIter,
    ))
}

struct Pair {
    s: Vec<f64>,
    y: Vec<f64>,
    rho: f64,
}

/// d = −H∇f by the two-loop recursion (N&W Alg. 7.4), H₀ = (sᵀy / yᵀy) I.
fn two_loop(grad: &[f64], history: &VecDeque<Pair>) -> Vec<f64> {
    let mut q: Vec<f64> = grad.to_vec();
    let mut alphas = Vec::with_capacity(history.len());
    for p in history.iter().rev() {
        let a = p.rho * dot(&p.s, &q);
        axpy(-a, &p.y, &mut q);
        alphas.push(a);
    }
    if let Some(p) = history.back() {
        let gamma = 1.0 / (p.rho * dot(&p.y, &p.y));
        q.iter_mut().for_each(|v| *v *= gamma);
    }
    for (p, a) in history.iter().zip(alphas.iter().rev()) {
        let b = p.rho * dot(&p.y, &q);
        axpy(a - b, &p.s, &mut q);
    }
    q.iter_mut().for_each(|v| *v = -*v);
    q
}

/// One trial point x + αd of a line search.
struct Trial {
    alpha: f64,
    value: f64,
    slope: f64,
    x: Vec<f64>,
    grad: Vec<f64>,
}

struct Search<'a> {
    x: &'a [f64],
    d: &'a [f64],
    value0: f64,
    slope0: f64,
    opts: &'a LbfgsOptions,
}

impl Search<'_> {
    fn eval<F: FnMut(&[f64]) -> (f64, Vec<f64>)>(
        &self,
        f: &mut F,
        alpha: f64,
        evaluations: &mut usize,
    ) -> Trial {
        let x: Vec<f64> = self
            .x
            .iter()
            .zip(self.d)
            .map(|(xi, di)| xi + alpha * di)
            .collect();
        let (value, grad) = f(&x);
        *evaluations += 1;
        let slope = dot(&grad, self.d);
        let finite = value.is_finite() && slope.is_finite();
        Trial {
            alpha,
            value: if finite { value } else { f64::INFINITY },
            slope: if finite { slope } else { f64::NAN },
            x,
            grad,
        }
    }

    /// Armijo, or a change of f within rounding.
    fn sufficient(&self, t: &Trial) -> bool {
        t.value <= self.value0 + self.opts.c1 * t.alpha * self.slope0
            || t.value <= self.value0 + self.opts.value_eps * self.value0.abs()
    }

    fn curvature(&self, t: &Trial) -> bool {
        t.slope.abs() <= -self.opts.c2 * self.slope0
    }

    /// N&W Alg. 3.5: grow α until the minimum along d is bracketed, then zoom.
    fn run<F: FnMut(&[f64]) -> (f64, Vec<f64>)>(
        &self,
        f: &mut F,
        alpha0: f64,
        evaluations: &mut usize,
    ) -> Option<Trial> {
        let mut budget = self.opts.max_evals_per_search.max(2);
        let mut prev = Trial {
            alpha: 0.0,
            value: self.value0,
            slope: self.slope0,
            x: Vec::new(),
            grad: Vec::new(),
        };
        let mut alpha = alpha0;
        let mut first = true;
        while budget > 0 {
            budget -= 1;
            let t = self.eval(f, alpha, evaluations);
            if !t.value.is_finite() || !self.sufficient(&t) || (!first && t.value >= prev.value) {
                return self.zoom(f, prev, t, budget, evaluations);
            }
            if self.curvature(&t) {
                return Some(t);
            }
            if t.slope >= 0.0 {
                return self.zoom(f, t, prev, budget, evaluations);
            }
            first = false;
            alpha *= 4.0;
            prev = t;
        }
        accept_best(prev, self.value0)
    }

    /// N&W Alg. 3.6: `lo` satisfies sufficient decrease and has the lower value; the minimum
    /// lies between `lo` and `hi`.
    fn zoom<F: FnMut(&[f64]) -> (f64, Vec<f64>)>(
        &self,
        f: &mut F,
        mut lo: Trial,
        mut hi: Trial,
        mut budget: usize,
        evaluations: &mut usize,
    ) -> Option<Trial> {
        while budget > 0 {
            budget -= 1;
            let width = (hi.alpha - lo.alpha).abs();
            if width <= 1e-16 * lo.alpha.abs().max(hi.alpha.abs()) {
                break;
            }
            let alpha = interpolate(&lo, &hi);
            let t = self.eval(f, alpha, evaluations);
            if !t.value.is_finite() || !self.sufficient(&t) || t.value >= lo.value {
                hi = t;
            } else {
                if self.curvature(&t) {
                    return Some(t);
                }
                if t.slope * (hi.alpha - lo.alpha) >= 0.0 {
                    hi = lo;
                }
                lo = t;
            }
        }
        accept_best(lo, self.value0)
    }
}

/// A search that ran out of evaluations still returns its best point if it decreased f.
fn accept_best(lo: Trial, value0: f64) -> Option<Trial> {
    (lo.alpha > 0.0 && lo.value < value0).then_some(lo)
}

/// Minimiser of the cubic through (α, f, f') at both ends (N&W eq. 3.59), kept at least a
/// tenth of the interval away from either end; bisection when the cubic is unusable.
fn interpolate(lo: &Trial, hi: &Trial) -> f64 {
    let (a, b) = (lo.alpha, hi.alpha);
    let bisect = 0.5 * (a + b);
    let guard = 0.1 * (b - a).abs();
    let (left, right) = (a.min(b) + guard, a.max(b) - guard);
    if !hi.value.is_finite() || !hi.slope.is_finite() {
        return bisect;
    }
    let d1 = lo.slope + hi.slope - 3.0 * (lo.value - hi.value) / (a - b);
    let disc = d1 * d1 - lo.slope * hi.slope;
    if disc < 0.0 {
        return bisect;
    }
    let d2 = (b - a).signum() * disc.sqrt();
    let c = b - (b - a) * (hi.slope + d2 - d1) / (hi.slope - lo.slope + 2.0 * d2);
    if c.is_finite() {
        c.clamp(left, right)
    } else {
        bisect
    }
}

// The two-loop recursion is dominated by dot products at a few thousand variables.
fn norm(a: &[f64]) -> f64 {
    dot(a, a).sqrt()
}

fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    y.iter_mut().zip(x).for_each(|(yi, xi)| *yi += a * xi);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rosenbrock(x: &[f64]) -> (f64, Vec<f64>) {
        let n = x.len();
        let mut v = 0.0;
        let mut g = vec![0.0; n];
        for i in 0..n - 1 {
            let a = x[i + 1] - x[i] * x[i];
            let b = 1.0 - x[i];
            v += 100.0 * a * a + b * b;
            g[i] += -400.0 * a * x[i] - 2.0 * b;
            g[i + 1] += 200.0 * a;
        }
        (v, g)
    }

    fn cont(_: &Progress) -> Result<Control> {
        Ok(Control::Continue)
    }

    #[test]
    fn quadratic_reaches_the_linear_solve() {
        // f = ½ xᵀAx − bᵀx, A SPD tridiagonal → x* solves A x = b.
        let n = 8;
        let a = |i: usize, j: usize| match i.abs_diff(j) {
            0 => 4.0 + i as f64,
            1 => -1.0,
            _ => 0.0,
        };
        let b: Vec<f64> = (0..n).map(|i| (i as f64).sin() + 1.0).collect();
        let f = |x: &[f64]| {
            let ax: Vec<f64> = (0..n)
                .map(|i| (0..n).map(|j| a(i, j) * x[j]).sum())
                .collect();
            (0.5 * dot(x, &ax) - dot(&b, x), {
                let mut g = ax;
                axpy(-1.0, &b, &mut g);
                g
            })
        };
        let opts = LbfgsOptions {
            grad_tol: 1e-12,
            ..Default::default()
        };
        let r = lbfgs(vec![0.0; n], f, cont, &opts).unwrap();
        assert_eq!(r.status, LbfgsStatus::GradTol);
        let res: f64 = (0..n)
            .map(|i| ((0..n).map(|j| a(i, j) * r.x[j]).sum::<f64>() - b[i]).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(res < 1e-11, "residual {res}");
        assert!(r.iterations <= 3 * n, "{} iterations", r.iterations);
    }

    #[test]
    fn rosenbrock_converges_with_monotone_values() {
        for n in [2usize, 10] {
            let mut x0 = vec![-1.2; n];
            x0.iter_mut().skip(1).step_by(2).for_each(|v| *v = 1.0);
            let mut values = vec![rosenbrock(&x0).0];
            let opts = LbfgsOptions {
                grad_tol: 1e-9,
                ..Default::default()
            };
            let r = lbfgs(
                x0,
                rosenbrock,
                |p: &Progress| {
                    values.push(p.value);
                    Ok(Control::Continue)
                },
                &opts,
            )
            .unwrap();
            assert_eq!(r.status, LbfgsStatus::GradTol, "n = {n}");
            assert!(r.x.iter().all(|v| (v - 1.0).abs() < 1e-7), "{:?}", r.x);
            assert!(
                values.windows(2).all(|w| w[1] <= w[0] + 1e-12 * w[0].abs()),
                "values increased: {values:?}"
            );
            assert!(r.iterations < 200, "n = {n}: {} iterations", r.iterations);
        }
    }

    #[test]
    fn monitor_stops_and_errors_propagate() {
        let opts = LbfgsOptions::default();
        let r = lbfgs(
            vec![-1.2, 1.0],
            rosenbrock,
            |p: &Progress| {
                Ok(if p.iter == 3 {
                    Control::Stop
                } else {
                    Control::Continue
                })
            },
            &opts,
        )
        .unwrap();
        assert_eq!((r.status, r.iterations), (LbfgsStatus::Stopped, 3));
        let e = lbfgs(
            vec![-1.2, 1.0],
            rosenbrock,
            |_: &Progress| Err(OvkError::Cancelled),
            &opts,
        );
        assert!(matches!(e, Err(OvkError::Cancelled)));
    }

    #[test]
    fn max_iter_is_reported() {
        let opts = LbfgsOptions {
            max_iter: 4,
            ..Default::default()
        };
        let r = lbfgs(vec![-1.2, 1.0], rosenbrock, cont, &opts).unwrap();
        assert_eq!((r.status, r.iterations), (LbfgsStatus::MaxIter, 4));
    }

    #[test]
    fn infinite_values_shrink_the_step() {
        // f(x) = x − ln x on x > 0 (∞ elsewhere), minimum at x = 1; the first steps overshoot
        // into x ≤ 0 from a start far to the right.
        let f = |x: &[f64]| {
            if x[0] <= 0.0 {
                (f64::INFINITY, vec![f64::NAN])
            } else {
                (x[0] - x[0].ln(), vec![1.0 - 1.0 / x[0]])
            }
        };
        let opts = LbfgsOptions {
            grad_tol: 1e-12,
            ..Default::default()
        };
        for x0 in [0.01, 50.0] {
            let r = lbfgs(vec![x0], f, cont, &opts).unwrap();
            assert!((r.x[0] - 1.0).abs() < 1e-10, "from {x0}: {:?}", r);
        }
    }

    #[test]
    fn non_finite_start_is_an_error() {
        let r = lbfgs(
            vec![0.0],
            |_: &[f64]| (f64::NAN, vec![0.0]),
            cont,
            &Default::default(),
        );
        assert!(matches!(r, Err(OvkError::Numerical(_))));
    }

    #[test]
    fn gradient_can_be_driven_below_value_rounding() {
        // A badly scaled quadratic with a huge constant: near x* the decrease of f is far below
        // ulp(f), so only the approximate-Wolfe acceptance lets ‖∇f‖ reach 1e-10.
        let f = |x: &[f64]| {
            let v = 1e8 + 0.5 * (x[0] * x[0] + 100.0 * x[1] * x[1]);
            (v, vec![x[0], 100.0 * x[1]])
        };
        let opts = LbfgsOptions {
            grad_tol: 1e-10,
            ..Default::default()
        };
        let r = lbfgs(vec![3.0, -2.0], f, cont, &opts).unwrap();
        assert_eq!(r.status, LbfgsStatus::GradTol);
        assert!(norm(&r.grad) <= 1e-10);
    }
}
