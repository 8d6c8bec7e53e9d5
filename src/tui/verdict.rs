//! A finished fit in words, said the same in the status line, the badge, the Run pane and a
//! replay: its headline metric, its iterations, and — never left to the Results pane alone —
//! that it stopped before converging.

use ovk_core::methods::params::common;
use ovk_core::session::SessionRecord;
use ovk_core::train::RunOutcome;

use super::widgets::{count, fmt_num};

/// "test accuracy 0.9712, 37 iterations", then " — not converged (hit max_iter 3)" when so.
pub fn headline(o: &RunOutcome) -> String {
    let r = &o.record;
    let (key, _) = ovk_core::metrics::primary(r.task);
    let metric = r
        .metrics
        .test
        .get_key_value(key)
        .or_else(|| r.metrics.test.iter().next())
        // fmt_num: a small mse is not "0.0000"
        .map(|(k, v)| format!("test {k} {}, ", fmt_num(*v)))
        .unwrap_or_default();
    let stopped = not_converged(r).map_or_else(String::new, |w| format!(" — {w}"));
    format!("{metric}{}{stopped}", count(r.iterations, "iteration"))
}

/// "not converged (hit max_iter 3)" for a fit that stopped before its tolerance was met (the
/// cap named when it was the iteration count that stopped it); `None` when it converged.
pub fn not_converged(r: &SessionRecord) -> Option<String> {
    if r.converged {
        return None;
    }
    Some(match r.params.opt_usize(&common::MAX_ITER) {
        Ok(Some(cap)) if r.iterations == cap => {
            format!("not converged (hit max_iter {cap})")
        }
        _ => "not converged (Notes say why)".into(),
    })
}
