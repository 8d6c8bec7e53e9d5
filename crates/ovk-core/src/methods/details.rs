//! The typed parts of a fit's `details` that methods write and the faces read back (through
//! `session::details::Details`): their keys, a saved matrix's axes, the input factor's summary.
//! `details` stays a JSON map on disk, so sessions saved before these types keep loading.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value as Json;

/// The keys of `details` that more than one part of ovk reads or writes.
pub mod key {
    /// Matrix name → [`MatrixAxes`](super::MatrixAxes).
    pub const AXES: &str = "axes";
    /// The view names of a multi-view fit, in view order.
    pub const VIEWS: &str = "views";
    /// View name → the Gaussian/Laplacian width the fit used for it.
    pub const VIEW_SIGMAS: &str = "view_sigmas";
    /// Each view's kernel as text, in view order.
    pub const VIEW_KERNELS: &str = "view_kernels";
    /// Part ("train", "test") → `PartDiagnostics` (`metrics`).
    pub const DIAGNOSTICS: &str = "diagnostics";
    /// The solver that fitted OKL ("bcd", "qn", …).
    pub(crate) const SOLVER: &str = "solver";
    /// A sweep's table, `SweepResult` (`session::sweep_table`).
    pub const SWEEP: &str = "sweep";
    /// A λ path's rows, one object per λ.
    pub const PATH: &str = "path";
    /// The λ a path kept.
    pub const LAMBDA: &str = "lambda";
    /// The rank a path kept.
    pub(crate) const RANK: &str = "rank";
    /// `Memory` (`session::details`): estimated and measured peaks.
    pub const MEMORY: &str = "memory";
    /// The low-rank input factor's summary.
    pub(crate) const INPUT_FACTOR: &str = "input_factor";
}

/// One labelled block of an axis: `size` consecutive entries named after `name`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AxisBlock {
    /// The block's name (a view's).
    pub name: String,
    /// How many entries the block spans.
    pub size: usize,
}

/// How one side of a saved matrix is labelled: a label per entry, or named blocks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeclaredAxis {
    /// One label per entry (numbers read as their text).
    #[serde(
        default,
        deserialize_with = "labels_as_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub labels: Option<Vec<String>>,
    /// Named blocks of entries, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<Vec<AxisBlock>>,
}

impl DeclaredAxis {
    /// An axis labelled entry by entry.
    pub fn labels(labels: Vec<String>) -> DeclaredAxis {
        DeclaredAxis {
            labels: Some(labels),
            blocks: None,
        }
    }

    /// An axis of named blocks.
    pub fn blocks(blocks: Vec<AxisBlock>) -> DeclaredAxis {
        DeclaredAxis {
            labels: None,
            blocks: Some(blocks),
        }
    }
}

/// The rows and columns of one saved matrix, as the fit declared them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MatrixAxes {
    /// The rows' labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<DeclaredAxis>,
    /// The columns' labels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cols: Option<DeclaredAxis>,
}

/// The low-rank input factor a fit used (or the primal route's exact one).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FactorRecord {
    /// "nystrom", "primal", … — how the factor was reached.
    pub route: String,
    /// The rank asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) requested_rank: Option<usize>,
    /// The rank reached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    /// How the landmarks were chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landmarks: Option<String>,
    /// tr(K − ZZᵀ) / tr(K).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_error: Option<f64>,
    /// Seconds spent building it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

impl FactorRecord {
    /// "primal": a linear kernel solved with Z = X, exactly.
    pub(crate) const PRIMAL: &'static str = "primal";

    /// One line for people: the factor's rank, landmarks and trace error.
    pub fn describe(&self) -> String {
        if self.route == Self::PRIMAL {
            return "linear kernel solved in the primal (Z = X, exact)".into();
        }
        let rank = self.rank.map_or_else(|| "?".to_string(), |r| r.to_string());
        format!(
            "rank-{rank} Nyström factor of the input kernel ({} landmarks), trace error {:.2e}",
            self.landmarks.as_deref().unwrap_or("?"),
            self.trace_error.unwrap_or(f64::NAN)
        )
    }
}

/// Axis labels as text: strings as they are, other values (numbers) as their JSON text.
fn labels_as_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    let raw: Option<Vec<Json>> = Option::deserialize(d)?;
    Ok(raw.map(|v| {
        v.into_iter()
            .map(|l| match l {
                Json::String(s) => s,
                other => other.to_string(),
            })
            .collect()
    }))
}

/// `axes` for `details`, from matrix name → its axes.
pub(crate) fn axes_json(axes: &BTreeMap<String, MatrixAxes>) -> Json {
    serde_json::to_value(axes).unwrap_or(Json::Null)
}
