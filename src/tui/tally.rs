//! Where a fit's trace and its summary disagree, and why both are right, so the panes can say
//! so instead of showing two numbers for one thing. A trace may hold records that are no
//! iteration (mvml's initial point; the λ of lowrank-okl's path where B = 0 is optimal and set
//! without iterating), and its last objective need not be the returned model's (okl's bcd
//! re-solves C for the final L after its last record; lowrank-okl keeps its path's best λ,
//! not its last).

use ovk_core::methods::MethodName;
use ovk_core::session::SessionRecord;

use super::widgets::{count, fmt_num};

/// "the trace's 235 records include 1 λ set without iterating (B = 0 optimal there)" when the
/// trace has more records than the fit counted iterations.
pub fn extra_records(r: &SessionRecord) -> Option<String> {
    let extra = r.trace.len().checked_sub(r.iterations).filter(|&n| n > 0)?;
    let what = if r.config.method == MethodName::LowRankOkl {
        format!("{extra} λ of the path set without iterating (B = 0 is optimal there)")
    } else if extra == 1 && r.trace.first().is_some_and(|t| t.iter == 0) {
        "the initial point (iter 0)".to_string()
    } else {
        format!("{} not counted as iterations", count(extra, "record"))
    };
    Some(format!(
        "the trace's {} include {what}",
        count(r.trace.len(), "record")
    ))
}

/// "the trace's last record, 1.23e6, precedes C re-solved for the final L" when the trace ends
/// on another objective than the returned model's.
pub fn last_objective_differs(r: &SessionRecord) -> Option<String> {
    let (last, kept) = (r.trace.last()?.objective, r.objective?);
    if (last - kept).abs() <= 1e-9 * kept.abs().max(last.abs()) {
        return None;
    }
    let solver = r.read_details().solver();
    let why = match (r.config.method, solver) {
        (MethodName::Okl, Some("bcd")) => "precedes C re-solved for the final L",
        (MethodName::LowRankOkl, _) => "is at the path's last λ, this at the λ kept",
        _ => "is not the returned model's",
    };
    Some(format!("the trace's last record, {}, {why}", fmt_num(last)))
}
