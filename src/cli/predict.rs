//! `ovk predict SESSION --data FILE [--out FILE|-]`: the saved model on new rows, written by
//! the rules of `session::output` (never into the store or the session, never over the rows
//! predicted or the session's data; `--force` to replace another file).

use std::path::Path;

use ovk_core::kernels::format_bytes;
use ovk_core::session::{self, output, OutputRules, Store};
use ovk_core::train::Prediction;
use ovk_core::Result;

pub fn predict(
    arg: &str,
    data: &Path,
    out: &Path,
    force: bool,
    sessions: Option<&Path>,
    batch_rows: Option<usize>,
) -> Result<i32> {
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
    // Checked before the (possibly long) prediction, so a refused --out costs nothing.
    let planned = output::plan(out, &rules)?;
    let p = Prediction::prepare(&dir, data)?;
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
    p.write_blocks(batching.rows, &planned)?;
    if p.filled_rows() > 0 {
        errln!(
            "note: {} row(s) had missing feature cells filled in as in training (numeric: the \
             training mean; text: the most frequent value)",
            p.filled_rows()
        );
    }
    if planned.is_file() {
        errln!(
            "wrote {} ({} rows, {} outputs)",
            out.display(),
            p.n_rows(),
            p.output_names().len()
        );
    }
    Ok(0)
}
