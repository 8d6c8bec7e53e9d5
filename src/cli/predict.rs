//! `ovk predict SESSION --data FILE [--out FILE|-]`: the saved model on new rows, written by
//! the rules of `session::output` (never into the store or the session, never over the rows
//! predicted or the session's data; `--force` to replace another file).

use std::path::Path;

use ovk_core::kernels::format_bytes;
use ovk_core::session::{self, output, OutputRules, Store};
use ovk_core::train::{write_predictions, Prediction};
use ovk_core::Result;

/// `ovk predict`'s arguments.
pub struct PredictRequest<'a> {
    pub session: &'a str,
    pub data: &'a Path,
    pub out: &'a Path,
    pub force: bool,
    pub json: bool,
    pub sessions: Option<&'a Path>,
    pub batch_rows: Option<usize>,
    /// A precomputed-kernel session's new-rows Gram files (`--gram`, `--gram-view`).
    pub grams: Vec<ovk_core::kernels::GramFile>,
}

pub fn predict(r: PredictRequest) -> Result<i32> {
    let PredictRequest {
        session: arg,
        data,
        out,
        force,
        json,
        sessions,
        batch_rows,
        grams,
    } = r;
    let dir = match Path::new(arg).is_dir() {
        true => Path::new(arg).to_path_buf(),
        false => Store::open(sessions)?.resolve(arg)?,
    };
    let loaded = session::load(&dir)?;
    let mut rules = super::export::protecting(OutputRules::new(force), &loaded, sessions)?
        .protect_file(data, "the data file being predicted");
    if let Some(side) = ovk_core::data::sidecar_path(data) {
        rules = rules.protect_file(&side, "the sidecar of the data file being predicted");
    }
    // With --json, standard output carries the JSON: predictions go to a named --out only.
    let to_stdout = out == Path::new("-");
    // Checked before the (possibly long) prediction, so a refused --out costs nothing.
    let planned = match json && to_stdout {
        true => None,
        false => Some(output::plan(out, &rules)?),
    };
    let mut p = Prediction::prepare(&dir, data)?;
    if !grams.is_empty() || p.needs_gram() {
        p = p.with_gram(&grams)?;
    }
    let batching = p.batching(batch_rows)?;
    if let Some(whole) = batching.chosen_because {
        errln!(
            "note: the whole prediction ({} rows × {} outputs) needs about {}, more than the \
             memory guard allows; predicting and writing {} rows at a time (--batch-rows N \
             sets it)",
            p.n_rows(),
            p.output_names().len(),
            format_bytes(whole),
            batching.rows
        );
    }
    let (n_rows, n_outputs, filled_rows) = (p.n_rows(), p.output_names().len(), p.filled_rows());
    let scored = if batching.rows >= n_rows {
        let table = p.whole()?;
        if let Some(planned) = &planned {
            write_predictions(&table, planned)?;
        }
        table.scored
    } else {
        if p.holds_outputs() {
            errln!(
                "note: the file holds the outputs, but scoring needs the whole prediction in \
                 memory: predicted in blocks, not scored"
            );
        }
        if let Some(planned) = &planned {
            p.write_blocks(batching.rows, planned)?;
        }
        None
    };
    if json {
        let obj = serde_json::json!({
            "session": dir.display().to_string(),
            "data": data.display().to_string(),
            "rows": n_rows,
            "outputs": n_outputs,
            "metrics": scored.as_ref().map(|s| &s.metrics),
            "scored_rows": scored.as_ref().map(|s| s.rows.len() - s.trained_left_out),
            "training_rows_left_out": scored.as_ref().map(|s| s.trained_left_out),
            "filled_rows": filled_rows,
            "out": planned.as_ref().filter(|p| p.is_file()).map(|_| out.display().to_string()),
        });
        outln!("{obj}")?;
        return Ok(0);
    }
    if let Some(s) = &scored {
        let cells: Vec<String> = s
            .metrics
            .iter()
            .map(|(k, v)| format!("{k} {v:.4}"))
            .collect();
        if s.trained_left_out > 0 {
            errln!(
                "{} rows of this file trained the model (its training table, or rows equal \
                 to its training rows): they are left out of the score",
                s.trained_left_out
            );
        }
        errln!(
            "metrics on the {} of {} rows that hold every output{}: {}",
            s.rows.len() - s.trained_left_out,
            n_rows,
            if s.trained_left_out > 0 {
                " and did not train the model"
            } else {
                ""
            },
            cells.join("  ")
        );
    }
    if filled_rows > 0 {
        errln!(
            "note: {} row(s) had missing feature cells filled in as in training (numeric: the \
             training mean; text: the most frequent value)",
            filled_rows
        );
    }
    if planned.as_ref().is_some_and(|p| p.is_file()) {
        errln!(
            "wrote {} ({} rows, {} outputs)",
            out.display(),
            n_rows,
            n_outputs
        );
    }
    Ok(0)
}
