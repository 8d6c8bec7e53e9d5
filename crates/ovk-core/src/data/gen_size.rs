//! Sizes typed on the command line (`gen gp-mix --outputs`, `bench data --n`) go through a
//! sane cap and the memory guard before anything is allocated for them.

use crate::kernels::{check_fits_or, dense_bytes};
use crate::{OvkError, Result};

/// Outputs `gen gp-mix` writes at most (lowrank-okl is shown on 10⁵).
pub(crate) const MAX_GEN_OUTPUTS: usize = 1_000_000;
/// Rows or columns a generated table has at most.
pub(crate) const MAX_GEN_ROWS: usize = 10_000_000;

/// Refuse a generated table of `rows` × `cols` numbers that is beyond the caps or would not fit
/// in memory (the matrices and their text).
pub fn check_table(rows_flag: &str, rows: usize, cols_flag: &str, cols: usize) -> Result<()> {
    for (flag, v, cap) in [
        (rows_flag, rows, MAX_GEN_ROWS),
        (cols_flag, cols, MAX_GEN_OUTPUTS),
    ] {
        if v > cap {
            return Err(OvkError::input(format!(
                "{flag} {v} is more than ovk generates (at most {cap})"
            )));
        }
    }
    // A few copies of the matrix, and its text at up to 24 bytes a number.
    let bytes = dense_bytes(rows, cols).saturating_mul(4 + 3);
    // Only what the user typed can be made smaller (gp-mix's grid is fixed).
    let flags: Vec<&str> = [rows_flag, cols_flag]
        .into_iter()
        .filter(|f| f.starts_with("--"))
        .collect();
    check_fits_or(
        bytes,
        &format!("generating {rows} × {cols} numbers"),
        &format!("give a smaller {}", flags.join(" or ")),
    )
}
