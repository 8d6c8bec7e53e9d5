//! `ovk predict SESSION --data FILE [--out FILE|-]`: the saved model on new rows.

use std::path::Path;

use crate::session::Store;
use crate::train::{predict_file, write_predictions};
use crate::Result;

pub fn predict(arg: &str, data: &Path, out: &Path, sessions: Option<&Path>) -> Result<i32> {
    let dir = match Path::new(arg).is_dir() {
        true => Path::new(arg).to_path_buf(),
        false => Store::open(sessions)?.resolve(arg)?,
    };
    let table = predict_file(&dir, data)?;
    write_predictions(&table, out)?;
    if !crate::data::is_stdout(out) {
        eprintln!(
            "wrote {} ({} rows, {} outputs)",
            out.display(),
            table.n_rows(),
            table.output_names.len()
        );
    }
    Ok(0)
}
