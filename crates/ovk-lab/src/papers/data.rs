//! Tables the experiments derive (subsets, official splits as a column, generated mixtures):
//! read a plain numeric CSV, write one atomically, and the run configurations' common parts.

use std::path::{Path, PathBuf};

use ndarray::Array2;

use ovk_core::data::DataConfig;
use ovk_core::kernels::{InputRank, KernelName, KernelSpec, Sigma};
use ovk_core::methods::Params;
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

/// Read the first `limit` rows (all when None) of a numeric CSV.
pub fn read_csv(path: &Path, limit: Option<usize>) -> Result<Csv> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| OvkError::io(format!("reading {}", path.display()), e))?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = lines
        .next()
        .ok_or_else(|| OvkError::input(format!("{}: empty file", path.display())))?
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .collect();
    let mut data = Vec::new();
    let mut n = 0;
    for (i, line) in lines.enumerate() {
        if limit.is_some_and(|l| n >= l) {
            break;
        }
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != header.len() {
            return Err(OvkError::input(format!(
                "{}: line {} has {} cells, the header {}",
                path.display(),
                i + 2,
                cells.len(),
                header.len()
            )));
        }
        for c in cells {
            data.push(c.trim().parse::<f64>().map_err(|_| {
                OvkError::input(format!(
                    "{}: line {}: '{c}' is not a number",
                    path.display(),
                    i + 2
                ))
            })?);
        }
        n += 1;
    }
    let rows = Array2::from_shape_vec((n, header.len()), data)
        .map_err(|e| OvkError::internal(e.to_string()))?;
    Ok(Csv { header, rows })
}

/// Write a CSV through a temporary file and a rename (never a half-written table). The
/// experiments' data are deterministic, so a file already there with other contents is not one
/// `ovk paper` wrote: it is refused, never replaced.
pub fn write_csv(path: &Path, header: &[String], rows: &Array2<f64>) -> Result<()> {
    let mut text = header.join(",");
    text.push('\n');
    for row in rows.rows() {
        for (j, v) in row.iter().enumerate() {
            if j > 0 {
                text.push(',');
            }
            text.push_str(&format!("{v}"));
        }
        text.push('\n');
    }
    if let Ok(old) = std::fs::read(path) {
        if old == text.as_bytes() {
            return Ok(());
        }
        return Err(OvkError::input(format!(
            "{}: a file ovk paper did not write is already there; move it, or pass --sessions \
             with another folder (the experiment's data go beside the store, in paper-data/)",
            path.display()
        )));
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let io = |e| OvkError::io(format!("writing {}", tmp.display()), e);
    std::fs::write(&tmp, text.as_bytes()).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        OvkError::io(
            format!("renaming {} to {}", tmp.display(), path.display()),
            e,
        )
    })
}

/// A run of `method` on `path` with a kernel and parameters.
pub fn config(
    path: PathBuf,
    method: &str,
    kernel: KernelSpec,
    params: Params,
    name: String,
) -> RunConfig {
    RunConfig {
        data: DataConfig::new(path),
        method: method.into(),
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
