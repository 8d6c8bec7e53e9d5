//! The formats the multi-output community publishes its data in, beside CSV and Parquet:
//! Weka / Mulan / MEKA ARFF (`.arff`) and LIBSVM / svmlight (`.svm`, `.libsvm`, `.svmlight`).
//! Each is read into the same columns as a CSV file, through the same file checks.

use std::path::Path;

use super::raw::RawTable;
use crate::error::input_at;
use crate::Result;

/// A research data format, chosen by extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResearchFormat {
    Arff,
    Libsvm,
}

/// The extensions of the research formats, lower case (the workbench lists such files).
pub const RESEARCH_EXTENSIONS: [&str; 4] = ["arff", "svm", "libsvm", "svmlight"];

/// The research format `path`'s extension names, if any.
pub(crate) fn research_format_of(path: &Path) -> Option<ResearchFormat> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "arff" => Some(ResearchFormat::Arff),
        "svm" | "libsvm" | "svmlight" => Some(ResearchFormat::Libsvm),
        _ => None,
    }
}

/// Read every column of an ARFF or LIBSVM file, and hash the very bytes parsed.
pub(crate) fn read_research(path: &Path, format: ResearchFormat) -> Result<RawTable> {
    let (_, meta) = super::files::open_regular(path, "data")?;
    super::load::check_read_fits(path, meta.len(), "use a smaller file (subsample its rows)")?;
    let what = match format {
        ResearchFormat::Arff => "ARFF",
        ResearchFormat::Libsvm => "LIBSVM",
    };
    let bytes = super::files::read_text_file(path, u64::MAX, what)?;
    if bytes.iter().all(|b| b.is_ascii_whitespace()) {
        return Err(input_at(path, "the file is empty"));
    }
    let (sha256, table) = rayon::join(
        || super::prepare::sha256_bytes(&bytes),
        || match format {
            ResearchFormat::Arff => super::arff::read_arff(path, &bytes),
            ResearchFormat::Libsvm => super::libsvm::read_libsvm(path, &bytes),
        },
    );
    let mut table = table?;
    table.sha256 = sha256;
    table.size = bytes.len() as u64;
    Ok(table)
}
