//! The memory a table of `rows × columns` cells takes once read (every reader holds each cell
//! as an optional f64 or text), refused up front when it would not fit: a sparse file names
//! 47 236 columns in a few bytes per row.

use std::path::Path;

use crate::Result;

/// Bytes per cell held while reading (an `Option<f64>`; text cells are counted as such too).
const BYTES_PER_CELL: u64 = 16;

/// Refuse a table of `rows × columns` cells that would not fit in memory.
pub(crate) fn check_cells_fit(path: &Path, rows: u64, columns: u64) -> Result<()> {
    crate::kernels::check_fits_or(
        rows.saturating_mul(columns).saturating_mul(BYTES_PER_CELL),
        &format!(
            "{}: reading {columns} columns × {rows} rows",
            path.display()
        ),
        "subsample its rows, or keep only the features you need",
    )
}
