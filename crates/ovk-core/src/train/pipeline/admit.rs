//! Stage 2, admit: what the run will cost before it starts — the memory it needs (refused
//! when it would not fit, with the way out), the floor time of the route taken, and the notes
//! that go with both.

use crate::data::Prepared;
use crate::kernels::{check_fits_or, format_bytes, InputRank};
use crate::methods::input::AUTO_RANK;
use crate::methods::{mats, Method, Params, ProblemShape, Route, LOADING_BYTES, RUNTIME_BYTES};
use crate::train::{estimate, RunConfig};
use crate::Result;

/// A run admitted: its estimated peak, the guidance shown before the fit, and the notes.
pub(super) struct Admitted {
    pub estimate: u64,
    /// The process's resident set before the run loaded anything (`Memory`'s base).
    pub base_rss: Option<u64>,
    pub guidance: Guidance,
    pub notes: Vec<String>,
}

/// The shape of the problem `prepared` poses to `config`'s method.
pub(super) fn shape_of(prepared: &Prepared, config: &RunConfig) -> ProblemShape {
    let (linear, sparse_linear) =
        crate::methods::linear_kind(config.kernel.name, prepared.x_train.view());
    ProblemShape {
        n_train: prepared.x_train.nrows(),
        n_labeled: prepared.labeled.iter().filter(|&&b| b).count(),
        n_test: prepared.x_test.nrows(),
        d: prepared.x_train.ncols(),
        m: prepared.y_train.ncols(),
        views: prepared.views.len(),
        input_rank: config.kernel.input_rank,
        landmarks: config.kernel.landmarks,
        linear,
        sparse_linear,
    }
}

/// Refuse a run that would not fit in memory; otherwise say what it will cost.
pub(super) fn admit(
    method: &dyn Method,
    shape: &ProblemShape,
    config: &RunConfig,
) -> Result<Admitted> {
    let route = method.input_route(shape)?;
    // --target-scale keeps the data's own targets beside the scaled ones the fit sees
    let kept_targets = if config.data.target_scale.is_none() {
        0
    } else {
        mats(1, shape.n_train + shape.n_test, shape.m)
    };
    let estimate = peak_estimate(method, shape, &config.params)?.saturating_add(kept_targets);
    let guidance = Guidance::for_run(method, shape, route, &config.params)?;
    let advice = match smaller_rank(method, shape, route, &config.params, estimate)? {
        Some((rank, bytes)) => format!(
            "--input-rank {rank} fits (about {}); or {}",
            format_bytes(bytes),
            guidance.memory_advice(method)
        ),
        None => guidance.memory_advice(method),
    };
    let advice = match super::stream::advice(method, shape, route, config) {
        Some(streamed) => format!("{streamed}; or {advice}"),
        None => advice,
    };
    check_fits_or(
        estimate,
        &format!(
            "{} on {} training rows ({} labeled, {} outputs)",
            method.name(),
            shape.n_train,
            shape.n_labeled,
            shape.m
        ),
        &advice,
    )?;
    let mut notes = guidance.notes();
    notes.extend(crate::train::unused::unused_settings(config, method));
    Ok(Admitted {
        estimate,
        base_rss: None,
        guidance,
        notes,
    })
}

/// When a low-rank run would not fit: the largest of its rank halved (down to 50) whose peak
/// would, with that peak — Z (n×r) is what grows with the rows.
fn smaller_rank(
    method: &dyn Method,
    shape: &ProblemShape,
    route: Route,
    params: &Params,
    estimate: u64,
) -> Result<Option<(usize, u64)>> {
    let Route::LowRank { rank, .. } = route else {
        return Ok(None);
    };
    let Some(usable) = crate::kernels::usable_bytes()? else {
        return Ok(None);
    };
    if estimate <= usable {
        return Ok(None);
    }
    let mut r = rank / 2;
    while r >= 50 {
        let smaller = ProblemShape {
            input_rank: InputRank::Rank(r),
            ..*shape
        };
        let bytes = peak_estimate(method, &smaller, params)?;
        if bytes <= usable {
            return Ok(Some((r, bytes)));
        }
        r /= 2;
    }
    Ok(None)
}

/// The method's own peak plus the pipeline's copies of the data, the loader and the fit's
/// runtime: what the run adds to the process it starts in. Two copies of the rows: the
/// prepared rows (the problem takes them, it does not copy them), and the method's copy of its
/// rows or the loading's own peak (the table read beside the rows it becomes, 2.1 copies on
/// tmc2007), whichever is larger; the loading's freed memory is released before the fit
/// (`pipeline::prepare`). Three copies were counted while it stayed resident.
pub(super) fn peak_estimate(method: &dyn Method, s: &ProblemShape, params: &Params) -> Result<u64> {
    let rows = s.n_train + s.n_test;
    Ok(method
        .peak_bytes(s, params)?
        .saturating_add(mats(2, rows, s.d + s.m))
        .saturating_add(LOADING_BYTES + RUNTIME_BYTES))
}

/// What ovk tells the user before a fit: the floor time of the route taken and, where the exact
/// route is slow or too big, what a low-rank input kernel would cost instead.
pub(super) struct Guidance {
    n: usize,
    route: Route,
    seconds: f64,
    /// `seconds` phase by phase.
    pub phases: Vec<(crate::methods::Phase, f64)>,
    /// (rank, seconds, bytes) of the low-rank route, when the method has one and the exact
    /// route was taken.
    alternative: Option<(usize, f64, u64)>,
}

/// Beyond this floor time the exact route is worth a word.
const SLOW_SECONDS: f64 = 60.0;

impl Guidance {
    pub(super) fn for_run(
        method: &dyn Method,
        shape: &ProblemShape,
        route: Route,
        params: &Params,
    ) -> Result<Self> {
        let n = if method.semi_supervised() {
            shape.n_train
        } else {
            shape.n_labeled
        };
        let costed = method.costed_route(shape, params)?;
        let phases = estimate::phase_seconds(costed, n, shape, method.exact_eighs());
        let seconds = phases.iter().map(|(_, s)| s).sum();
        let mut alternative = None;
        if costed == Route::Exact && n > 1 {
            let rank = AUTO_RANK.min(n / 2).max(1);
            let low = ProblemShape {
                input_rank: InputRank::Rank(rank),
                ..*shape
            };
            if let Ok(r @ Route::LowRank { .. }) = method.costed_route(&low, params) {
                let secs = estimate::fit_seconds(r, n, shape, method.exact_eighs());
                let bytes = peak_estimate(method, &low, params)?;
                alternative = Some((rank, secs, bytes));
            }
        }
        Ok(Guidance {
            n,
            route,
            seconds,
            phases,
            alternative,
        })
    }

    fn notes(&self) -> Vec<String> {
        let mut out: Vec<String> = self.route.note(self.n).into_iter().collect();
        if let (Some((rank, secs, _)), true) = (self.alternative, self.seconds > SLOW_SECONDS) {
            out.push(format!(
                "the exact fit on {} training rows needs at least {} on this machine (one {}×{} \
                 eigendecomposition); --input-rank {rank} would take about {}",
                self.n,
                estimate::format_seconds(self.seconds),
                self.n,
                self.n,
                estimate::format_seconds(secs)
            ));
        }
        out
    }

    fn memory_advice(&self, method: &dyn Method) -> String {
        match self.alternative {
            Some((rank, secs, bytes)) => format!(
                "use a low-rank input kernel: --input-rank {rank} needs about {} and {}; or {}",
                format_bytes(bytes),
                estimate::format_seconds(secs),
                method.memory_advice()
            ),
            None => method.memory_advice().to_string(),
        }
    }

    pub(super) fn to_json(&self) -> serde_json::Value {
        // the input kernel's route (mvml's --nystrom is its own, in its details)
        serde_json::json!({
            "input_kernel": self.route.name(),
            "floor_seconds": self.seconds,
        })
    }
}
