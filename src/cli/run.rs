//! `ovk run`: one fit, saved as a session.

use std::fmt::Write;
use std::path::Path;

use serde_json::json;

use super::options::{blame_config, build_run_config, read_config, RawOptions};
use super::progress::CliProgress;
use ovk_core::session::Store;
use ovk_core::{train, Result};

pub fn run(
    config: Option<&Path>,
    json: bool,
    flags: RawOptions,
    sessions: Option<&Path>,
) -> Result<i32> {
    let mut raw = match config {
        Some(path) => read_config(path)?,
        None => RawOptions::new(),
    };
    let from_file: Vec<String> = raw
        .keys()
        .filter(|k| !flags.contains_key(*k))
        .cloned()
        .collect();
    raw.extend(flags);
    let cfg = build_run_config(&raw).map_err(|e| blame_config(e, config, &from_file))?;
    let store = Store::open(sessions)?;

    let mut progress = CliProgress::new();
    progress.record_when_cancelled(&cfg, &store);
    let ended = train::run_to_end(&cfg, &mut progress);
    progress.finish();
    let ended = ended?;
    if !progress.claim_record() {
        // The watchdog is recording the run and ends the process.
        loop {
            std::thread::park();
        }
    }
    let outcome = match ended {
        train::Ended::Finished(o) => *o,
        train::Ended::Cancelled(record) => {
            let dir = store.save(&record, &[])?;
            errln!("cancelled: the run so far is recorded as {}", dir.display());
            return Ok(130);
        }
    };
    // Every finished fit is recorded, even when a signal came after its last check; the exit
    // status then says it was interrupted.
    let dir = store.save(&outcome.record, &outcome.matrices)?;
    if ovk_core::methods::check_cancel(&progress).is_err() {
        errln!(
            "interrupted after the fit finished: the session was saved as {}",
            dir.display()
        );
        return Ok(130);
    }
    let r = &outcome.record;

    // The report is written once, after the save: a reader that has gone (`ovk run --json |
    // true`) is no failure of the fit, which is saved.
    let mut text = String::new();
    macro_rules! w {
        ($($arg:tt)*) => {{
            let _ = writeln!(text, $($arg)*);
        }};
    }
    if json {
        let obj = json!({
            "session": dir.display().to_string(),
            "method": r.method,
            "iterations": r.iterations,
            "converged": r.converged,
            "objective": r.objective,
            "metrics": r.metrics,
            "baseline": r.baseline,
            "fit_seconds": r.timings.fit_s,
            "memory": r.read_details().memory_json(),
            "input_factor": r.read_details().input_factor_json(),
            "cv": r.cv,
            "cv_baseline": r.cv_baseline,
            "optimistic": r.optimistic,
            "split": r.split.id,
            "folds": r.split.folds.as_ref().map(|f| &f.id),
            "notes": r.notes,
        });
        w!("{obj}");
    } else {
        w!("session   {}", dir.display());
        w!(
            "method    {} ({} iterations, {}converged, objective {})",
            r.method,
            r.iterations,
            if r.converged { "" } else { "NOT " },
            r.objective
                .map_or_else(|| "not computed".to_string(), |q| format!("{q:.10e}"))
        );
        if let Some(cv) = &r.cv {
            let k = cv.values().next().map_or(0, |s| s.folds.len());
            let cells: Vec<String> = cv
                .iter()
                .map(|(name, s)| format!("{name} {:.4} ± {:.4}", s.mean, s.sd))
                .collect();
            w!(
                "cv        {} ({k} folds of the training part, mean ± sd)",
                cells.join("  ")
            );
        }
        for (part, m) in [("train", &r.metrics.train), ("test", &r.metrics.test)] {
            let cells: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v:.4}")).collect();
            let mark = match (&r.optimistic, part) {
                (Some(_), "test") => "  (optimistic: the test rows also chose)",
                _ => "",
            };
            if cells.is_empty() {
                w!("{part:<9} (no {part} rows)");
            } else {
                w!("{part:<9} {}{mark}", cells.join("  "));
            }
        }
        if let Some(b) = &r.baseline {
            let cells: Vec<String> = b.test.iter().map(|(k, v)| format!("{k} {v:.4}")).collect();
            w!("baseline  {} (krr, test)", cells.join("  "));
        }
        if let Some(f) = r.read_details().input_factor() {
            w!("input     {}", f.describe());
        }
        w!("fit       {:.3}s", r.timings.fit_s);
        for n in progress.unseen(&r.notes) {
            w!("note      {n}");
        }
    }
    if let Err(e) = super::console::stdout_bytes_io(text.as_bytes()) {
        errln!(
            "writing to standard output: {e}; the session was saved as {}",
            dir.display()
        );
        return Ok(if e.kind() == std::io::ErrorKind::BrokenPipe {
            0
        } else {
            2
        });
    }
    Ok(0)
}
