//! Stage 2, admit: what the run will cost before it starts — the memory it needs (refused
//! when it would not fit, with the way out), the floor time of the route taken, and the notes
//! that go with both.

use crate::data::Prepared;
use crate::kernels::{check_fits_or, format_bytes, InputRank};
use crate::methods::input::AUTO_RANK;
use crate::methods::{
    mats, Method, Params, ProblemShape, Route, LOADING_BYTES, LOADING_PEAK_BYTES, RUNTIME_BYTES,
};
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

/// What the run adds to the process it starts in: the larger of the loading's peak and the
/// fit's. Loading holds the table it read beside the rows it becomes, and the coded targets
/// beside their training and test parts: two copies of the rows and two more of the targets
/// (VmRSS traced through `ovk run`: 236 MiB on tmc2007, 22 targets, against 247 counted;
/// 615 MiB on delicious, 983 targets, against 615). It releases the table before the fit
/// (`pipeline::prepare`). The fit holds the prepared rows (the problem takes them, it does not
/// copy them), the method's own copies of its rows (`Method::row_copy_bytes`) and its own
/// peak. A flat two copies of the rows beside every method had read 1.16–1.19× the measured
/// peak where a method copies none (vvmr and lowrank-okl on a factor) or copies only its
/// training part.
pub(super) fn peak_estimate(method: &dyn Method, s: &ProblemShape, params: &Params) -> Result<u64> {
    let rows = mats(1, s.n_train + s.n_test, s.d + s.m);
    let targets = mats(1, s.n_train + s.n_test, s.m);
    let loading = rows
        .saturating_add(targets)
        .saturating_mul(2)
        .saturating_add(LOADING_PEAK_BYTES);
    let fit = method
        .peak_bytes(s, params)?
        .saturating_add(method.row_copy_bytes(s, params)?)
        .saturating_add(rows)
        .saturating_add(LOADING_BYTES + RUNTIME_BYTES);
    Ok(loading.max(fit))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::{InputRank, Landmarks};
    use crate::methods::{find, MethodName};

    fn shape(n_train: usize, n_labeled: usize, input_rank: InputRank) -> ProblemShape {
        ProblemShape {
            n_train,
            n_labeled,
            n_test: 1000,
            d: 50,
            m: 5,
            views: 0,
            input_rank,
            landmarks: Landmarks::default(),
            linear: false,
            sparse_linear: false,
        }
    }

    /// The fit's peak counts the prepared rows once and each method's own copies once: okl on a
    /// factor copies nothing when every row is labeled and its labeled part when some are not;
    /// the loading's peak, larger than a small fit's, wins over it.
    #[test]
    fn the_estimate_counts_each_copy_of_the_rows_once() {
        let params = Params::new();
        let okl = find(MethodName::Okl);
        let full = shape(20_000, 20_000, InputRank::Rank(100));
        let part = shape(20_000, 10_000, InputRank::Rank(100));
        let rows = mats(1, 21_000, 55);
        let fit = |s: &ProblemShape| {
            okl.peak_bytes(s, &params).unwrap() + rows + LOADING_BYTES + RUNTIME_BYTES
        };
        assert_eq!(peak_estimate(okl, &full, &params).unwrap(), fit(&full));
        assert_eq!(
            peak_estimate(okl, &part, &params).unwrap(),
            fit(&part) + mats(1, 10_000, 55)
        );
        // krr on a few wide rows: loading is the peak.
        let krr = find(MethodName::Krr);
        let small = ProblemShape {
            d: 2000,
            ..shape(100, 100, InputRank::Exact)
        };
        let (all, targets) = (mats(1, 1100, 2005), mats(1, 1100, 5));
        assert_eq!(
            peak_estimate(krr, &small, &params).unwrap(),
            2 * (all + targets) + LOADING_PEAK_BYTES
        );
    }
}
