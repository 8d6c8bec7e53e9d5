//! `ovk predict SESSION --data FILE [--out FILE|-]`: the saved model on new rows, written by
//! the rules of `session::output` (never into the store or the session, never over the rows
//! predicted or the session's data; `--force` to replace another file).

use std::path::Path;

use ovk_core::session::{self, output, OutputRules, Store};
use ovk_core::train::{predict_file, write_predictions};
use ovk_core::Result;

pub fn predict(
    arg: &str,
    data: &Path,
    out: &Path,
    force: bool,
    sessions: Option<&Path>,
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
    let table = predict_file(&dir, data)?;
    write_predictions(&table, &planned)?;
    if table.filled_rows > 0 {
        errln!(
            "note: {} row(s) had missing feature cells filled in as in training (numeric: the \
             training mean; text: the most frequent value)",
            table.filled_rows
        );
    }
    if planned.is_file() {
        errln!(
            "wrote {} ({} rows, {} outputs)",
            out.display(),
            table.n_rows(),
            table.output_names.len()
        );
    }
    Ok(0)
}
