//! Tables the experiments derive (subsets, official splits as a column, generated mixtures):
//! read a numeric table, write a CSV whole or not at all, and the run configurations' common parts.

use std::path::{Path, PathBuf};

use ndarray::Array2;

use ovk_core::data::{write_table, DataConfig, Format, OutColumn};
use ovk_core::kernels::{InputRank, KernelName, KernelSpec, Sigma};
use ovk_core::methods::{MethodName, Params};
use ovk_core::session::{output, OutputRules};
use ovk_core::train::RunConfig;
use ovk_core::{OvkError, Result};

/// A header and numeric rows (the shared datasets' format: no quoting, no missing cells).
pub struct Csv {
    pub header: Vec<String>,
    pub rows: Array2<f64>,
}

impl Csv {
    pub fn column(&self, name: &str) -> Result<usize> {
        self.header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| OvkError::input(format!("the table has no column '{name}'")))
    }
}

/// Read the first `limit` rows (all when None) of a numeric table (CSV or Parquet), through
/// ovk's one table reader: a bad file is an input error naming the file, row and column.
pub fn read_csv(path: &Path, limit: Option<usize>) -> Result<Csv> {
    let (header, rows) = ovk_core::data::read_numeric_table(path)?;
    let n = limit.map_or(rows.nrows(), |l| l.min(rows.nrows()));
    let rows = rows.slice(ndarray::s![..n, ..]).to_owned();
    Ok(Csv { header, rows })
}

/// Write a CSV of `header` and `rows` (`write_columns`).
pub fn write_numeric_csv(path: &Path, header: &[String], rows: &Array2<f64>) -> Result<()> {
    let columns: Vec<(String, OutColumn)> = header
        .iter()
        .zip(rows.columns())
        .map(|(h, c)| (h.clone(), OutColumn::Numbers(c.to_vec())))
        .collect();
    write_columns(path, &columns)
}

/// Write a CSV with ovk's one table writer, whole or not at all (`session::output`). The
/// experiments' data are deterministic, so a file already there with other contents is not one
/// `ovk paper` wrote: it is refused, never replaced.
pub fn write_columns(path: &Path, columns: &[(String, OutColumn)]) -> Result<()> {
    let mut text = Vec::new();
    write_table(&mut text, Format::Csv { separator: b',' }, columns)
        .map_err(|e| OvkError::io(format!("writing {}", path.display()), e))?;
    write_own(path, &text)
}

/// Write a matrix as `.npy` (a precomputed Gram), whole or not at all, as `write_columns`.
pub fn write_npy(path: &Path, a: &Array2<f64>) -> Result<()> {
    use ndarray_npy::WriteNpyExt;
    let mut bytes = Vec::new();
    a.write_npy(&mut bytes)
        .map_err(|e| OvkError::internal(format!("writing {}: {e}", path.display())))?;
    write_own(path, &bytes)
}

/// `bytes` to `path`, whole or not at all; the same bytes already there are kept, other
/// contents are refused (see `write_columns`).
fn write_own(path: &Path, text: &[u8]) -> Result<()> {
    if let Ok(old) = std::fs::read(path) {
        if old == text {
            return Ok(());
        }
        return Err(OvkError::input(format!(
            "{}: a file ovk paper did not write is already there; move it, or pass --sessions \
             with another folder (the experiment's data go beside the store, in paper-data/)",
            path.display()
        )));
    }
    output::plan(path, &OutputRules::new(false))?.write(text)
}

/// A run of `method` on `path` with a kernel and parameters.
pub fn config(
    path: PathBuf,
    method: MethodName,
    kernel: KernelSpec,
    params: Params,
    name: String,
) -> RunConfig {
    RunConfig {
        data: DataConfig::new(path),
        method,
        kernel,
        params,
        name: Some(name),
        cv: None,
        select_on: Default::default(),
    }
}

pub fn gaussian(sigma: Option<f64>) -> KernelSpec {
    KernelSpec {
        name: KernelName::Gaussian,
        sigma: sigma.map_or(Sigma::Median, Sigma::Value),
        ..KernelSpec::default()
    }
}

pub fn linear() -> KernelSpec {
    KernelSpec {
        name: KernelName::Linear,
        input_rank: InputRank::Exact,
        ..KernelSpec::default()
    }
}
