//! Numerical faults of a fit, turned into messages that name the likely cause and the fix.
//! Every method's fit runs under `fit_watched`: a trace record with a non-finite objective
//! stops the fit at once (like a cancel), and a numerical error raised deep inside a method
//! (a failed Cholesky, a singular shifted system) is completed with the flags that fix it for
//! that method and their current values.

use crate::methods::{Fit, Method, Observer, Params, Phase, Problem, TraceRecord};
use crate::OvkError;

/// A finished fit with the trace and notes it reported.
pub(super) struct Watched {
    pub fit: Fit,
    pub trace: Vec<TraceRecord>,
    pub notes: Vec<String>,
}

/// A fit that did not finish (cancelled, diverged, failed): the error, with the trace and
/// notes it reported until then (a cancelled run keeps them in its record).
pub(crate) struct Unfinished {
    pub error: OvkError,
    pub trace: Vec<TraceRecord>,
    pub notes: Vec<String>,
}

/// Run `method.fit` with its progress forwarded to `obs`, stopping it on a non-finite objective.
pub(super) fn fit_watched(
    method: &dyn Method,
    problem: &Problem,
    params: &Params,
    obs: &mut dyn Observer,
) -> std::result::Result<Watched, Unfinished> {
    watched_by(method, params, obs, |tap| method.fit(problem, params, tap))
}

/// `fit_watched` for a fit that `fit` runs some other way (a streamed factor's spectrum).
pub(super) fn watched_by(
    method: &dyn Method,
    params: &Params,
    obs: &mut dyn Observer,
    fit: impl FnOnce(&mut dyn Observer) -> crate::Result<crate::methods::Fit>,
) -> std::result::Result<Watched, Unfinished> {
    let mut tap = Tap {
        inner: obs,
        records: Vec::new(),
        notes: Vec::new(),
        diverged: None,
    };
    let result = fit(&mut tap);
    let checked = match (tap.diverged.take(), result) {
        (Some(rec), _) if !tap.inner.is_cancelled() => Err(diverged(method, params, &rec)),
        (_, Err(e)) => Err(complete(method, params, e)),
        (_, Ok(fit)) => match fit.objective {
            Some(q) if !q.is_finite() => Err(diverged(
                method,
                params,
                &TraceRecord {
                    iter: fit.iterations,
                    objective: q,
                    ..Default::default()
                },
            )),
            _ => Ok(fit),
        },
    };
    match checked {
        Ok(fit) => Ok(Watched {
            fit,
            trace: tap.records,
            notes: tap.notes,
        }),
        Err(error) => Err(Unfinished {
            error,
            trace: tap.records,
            notes: tap.notes,
        }),
    }
}

/// Forwards everything to the face's observer, keeps the trace and notes for the session, and
/// turns a non-finite objective into a stop.
struct Tap<'a> {
    inner: &'a mut dyn Observer,
    records: Vec<TraceRecord>,
    notes: Vec<String>,
    /// The first record whose objective was NaN or infinite; the fit is told to stop.
    diverged: Option<TraceRecord>,
}

impl Observer for Tap<'_> {
    fn phase(&mut self, phase: Phase, total: Option<usize>) {
        self.inner.phase(phase, total);
    }
    fn record(&mut self, rec: &TraceRecord) {
        if !rec.objective.is_finite() {
            // Neither kept nor forwarded: a NaN never reaches a chart or a session.
            self.diverged.get_or_insert_with(|| rec.clone());
            return;
        }
        self.records.push(rec.clone());
        self.inner.record(rec);
    }
    fn step(&mut self, done: usize, total: usize) {
        self.inner.step(done, total);
    }
    fn note(&mut self, msg: &str) {
        self.notes.push(msg.to_string());
        self.inner.note(msg);
    }
    fn is_cancelled(&self) -> bool {
        self.diverged.is_some() || self.inner.is_cancelled()
    }
}

/// The error for a fit whose objective became `rec.objective`.
fn diverged(method: &dyn Method, params: &Params, rec: &TraceRecord) -> OvkError {
    let has_step = step_key(method).is_some();
    let cause = if has_step && rec.step.is_some() {
        "the step size diverged, or λ is too small for an ill-conditioned Gram matrix"
    } else {
        "λ too small for a singular or ill-conditioned Gram matrix (duplicated points, a linear \
         kernel with more points than features, a very large or very small σ)"
    };
    let at = match rec.lambda {
        Some(l) => format!(" at iteration {} (λ = {l:e})", rec.iter),
        None => format!(" at iteration {}", rec.iter),
    };
    OvkError::numerical(format!(
        "{}: the objective became {}{at}, so the fit was stopped. Likely cause: {cause}. \
         Fix: {}",
        method.name(),
        rec.objective,
        fix(method, params)
    ))
}

/// A numerical error from inside `method`, completed with the method's own fix.
fn complete(method: &dyn Method, params: &Params, e: OvkError) -> OvkError {
    match e {
        OvkError::Numerical(msg) => {
            let hint = fix(method, params);
            if msg.contains(&hint) {
                OvkError::Numerical(msg)
            } else {
                OvkError::Numerical(format!(
                    "{msg}. For {}, a singular or ill-conditioned Gram matrix (duplicated \
                     points, a linear kernel with more points than features, an extreme σ) \
                     needs more regularisation: {hint}",
                    method.name()
                ))
            }
        }
        other => other,
    }
}

/// The regularisation key of a method (vvmr calls its λ γ_A).
fn regulariser_key(method: &dyn Method) -> Option<&'static str> {
    ["lambda", "gamma_a"]
        .into_iter()
        .find(|k| method.params().iter().any(|s| s.key == *k))
}

fn step_key(method: &dyn Method) -> Option<&'static str> {
    ["mu", "eta_step", "step"]
        .into_iter()
        .find(|k| method.params().iter().any(|s| s.key == *k))
}

/// "raise --lambda (now 1e-300)[, or lower the step --mu (now 1e6)]".
fn fix(method: &dyn Method, params: &Params) -> String {
    let resolved = params.resolve(method.params());
    let flag = |k: &str| format!("--{}", k.replace('_', "-"));
    let mut parts = Vec::new();
    if let Some(k) = regulariser_key(method) {
        parts.push(match resolved.get(k) {
            Some(v) => format!("raise {} (now {v})", flag(k)),
            None => format!("set a larger {} (the path went too low)", flag(k)),
        });
    }
    if let Some(k) = step_key(method) {
        if let Some(v) = resolved.get(k) {
            parts.push(format!("lower the step {} (now {v})", flag(k)));
        }
    }
    if parts.is_empty() {
        "check the data for extreme or duplicated values".to_string()
    } else {
        parts.join(", or ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::KernelSpec;
    use crate::methods::{params::common, Collect, KernelExpansion, ParamSpec, Value};
    use crate::Result;
    use ndarray::Array2;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Records objectives `1, 1/2, …` and NaN at iteration `nan_at`; counts the iterations it
    /// ran so a test can see the fit was stopped.
    struct Diverging {
        nan_at: usize,
        ran: AtomicUsize,
        honour_cancel: bool,
    }

    const PARAMS: &[ParamSpec] = &[common::LAMBDA];

    impl Method for Diverging {
        fn name(&self) -> &'static str {
            "diverging"
        }
        fn summary(&self) -> &'static str {
            ""
        }
        fn citation(&self) -> &'static str {
            ""
        }
        fn params(&self) -> &'static [ParamSpec] {
            PARAMS
        }
        fn fit(&self, p: &Problem, _: &Params, obs: &mut dyn Observer) -> Result<Fit> {
            for iter in 1..=20 {
                if self.honour_cancel {
                    crate::methods::check_cancel(obs)?;
                }
                self.ran.store(iter, Ordering::Relaxed);
                obs.step(iter, 20);
                let objective = if iter == self.nan_at {
                    f64::NAN
                } else {
                    1.0 / iter as f64
                };
                obs.record(&TraceRecord {
                    iter,
                    objective,
                    ..Default::default()
                });
            }
            let mut fit = Fit::new(Box::new(KernelExpansion {
                kernel: p.kernel,
                x_train: p.x.clone(),
                coef: Array2::zeros((p.n_train(), 1)).into(),
                fitted: None,
            }));
            fit.objective = Some(0.05);
            Ok(fit)
        }
    }

    fn problem() -> Problem {
        let x = Array2::from_shape_fn((4, 2), |(i, j)| (i + j) as f64);
        let kernel = KernelSpec::default().resolve(x.view()).unwrap();
        Problem::new(x, Array2::zeros((4, 1)), kernel).with_names(&["a", "b"], &["y"])
    }

    #[test]
    fn a_nan_objective_stops_the_fit_with_cause_and_fix() {
        let m = Diverging {
            nan_at: 5,
            ran: AtomicUsize::new(0),
            honour_cancel: true,
        };
        let params = Params::new().with("lambda", Value::Float(1e-300));
        let mut face = Collect::default();
        let Err(e) = fit_watched(&m, &problem(), &params, &mut face).map_err(|u| u.error) else {
            panic!("a NaN objective was accepted");
        };
        let msg = e.to_string();
        assert!(matches!(e, OvkError::Numerical(_)), "{e:?}");
        assert!(msg.contains("objective became NaN at iteration 5"), "{msg}");
        assert!(msg.contains("λ too small"), "{msg}");
        assert!(msg.contains("raise --lambda (now 1e-300)"), "{msg}");
        // Stopped at the next cancellation check, and the NaN record never reached the face.
        assert_eq!(m.ran.load(Ordering::Relaxed), 5);
        assert_eq!(face.records.len(), 4);
        assert!(face.records.iter().all(|r| r.objective.is_finite()));
    }

    #[test]
    fn a_nan_objective_is_refused_even_if_the_method_ignores_cancellation() {
        let m = Diverging {
            nan_at: 20,
            ran: AtomicUsize::new(0),
            honour_cancel: false,
        };
        let Err(e) = fit_watched(&m, &problem(), &Params::new(), &mut Collect::default())
            .map_err(|u| u.error)
        else {
            panic!("a NaN objective was accepted");
        };
        assert!(e.to_string().contains("raise --lambda (now 0.1)"), "{e}");
    }

    #[test]
    fn finite_objectives_pass_with_their_trace() {
        let m = Diverging {
            nan_at: 0,
            ran: AtomicUsize::new(0),
            honour_cancel: true,
        };
        let mut face = Collect::default();
        let w = fit_watched(&m, &problem(), &Params::new(), &mut face)
            .map_err(|u| u.error)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(w.trace.len(), 20);
        // steps inside a phase (landmarks, graph rows, a path's fits) reach the face too
        let want: Vec<(usize, usize)> = (1..=20).map(|k| (k, 20)).collect();
        assert_eq!(face.steps, want);
        assert_eq!(w.fit.objective, Some(0.05));
    }

    #[test]
    fn a_numerical_error_gains_the_methods_fix() {
        let vvmr = crate::methods::find(crate::methods::MethodName::Vvmr);
        let params = Params::new().with("gamma_a", Value::Float(1e-300));
        let e = complete(vvmr, &params, OvkError::numerical("the system is singular"));
        let msg = e.to_string();
        assert!(msg.starts_with("the system is singular. For vvmr"), "{msg}");
        assert!(msg.contains("raise --gamma-a (now 1e-300)"), "{msg}");
        let mvml = crate::methods::find(crate::methods::MethodName::Mvml);
        let msg = complete(mvml, &Params::new(), OvkError::numerical("x")).to_string();
        assert!(
            msg.contains("raise --lambda (now 0.1), or lower the step --mu (now 0.5)"),
            "{msg}"
        );
        // Other errors pass unchanged.
        assert!(matches!(
            complete(mvml, &Params::new(), OvkError::Cancelled),
            OvkError::Cancelled
        ));
    }
}
