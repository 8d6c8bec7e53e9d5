//! Names for the rows and columns of a saved matrix, so a heatmap reads "fou ~ kar" rather
//! than "0 ~ 2". The session's `details.axes[name]` says it exactly (`{"rows": AXIS, "cols":
//! AXIS}`, AXIS = `{"labels": [...]}` or `{"blocks": [{"name", "size"}, ...]}`); without it the
//! output names (m), the view names (`details.views`) or the feature names are matched by size,
//! and indices are the last resort.

use serde_json::Value as Json;

use crate::session::SessionRecord;

#[derive(Debug, Clone, PartialEq)]
pub struct Axes {
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    /// Rows and columns index the same things (a square similarity such as the output kernel
    /// L): only then is "strongest off-diagonal" meaningful.
    pub same: bool,
}

pub fn of(record: &SessionRecord, name: &str, shape: (usize, usize)) -> Axes {
    let (nr, nc) = shape;
    let declared = record.details.get("axes").and_then(|a| a.get(name));
    let side = |key: &str, n: usize| -> Option<Vec<String>> {
        declared.and_then(|d| d.get(key)).and_then(|a| axis(a, n))
    };
    let rows = side("rows", nr).unwrap_or_else(|| guess(record, name, nr));
    let cols = side("cols", nc).unwrap_or_else(|| guess(record, name, nc));
    let same = nr == nc && rows == cols;
    Axes { rows, cols, same }
}

/// One declared axis as `n` labels, or `None` when it does not have `n` of them.
fn axis(a: &Json, n: usize) -> Option<Vec<String>> {
    if let Some(labels) = a.get("labels").and_then(Json::as_array) {
        let v: Vec<String> = labels
            .iter()
            .map(|l| match l {
                Json::String(s) => s.clone(),
                other => other.to_string(),
            })
            .collect();
        return (v.len() == n).then_some(v);
    }
    let blocks = a.get("blocks")?.as_array()?;
    let mut v = Vec::with_capacity(n);
    for b in blocks {
        let name = b.get("name").and_then(Json::as_str).unwrap_or("?");
        let size = b.get("size").and_then(Json::as_u64).unwrap_or(0) as usize;
        if size == 1 {
            v.push(name.to_string());
        } else {
            v.extend((0..size).map(|k| format!("{name}·{k}")));
        }
    }
    (v.len() == n).then_some(v)
}

/// Labels for an undeclared axis of length `n`, by what else has that many entries.
fn guess(record: &SessionRecord, name: &str, n: usize) -> Vec<String> {
    let views: Vec<String> = record
        .details
        .get("views")
        .and_then(Json::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let outputs = &record.output_names;
    // View matrices name views even when m happens to equal the number of views.
    let viewish = name.starts_with("block_norms") || name.starts_with("view");
    if viewish && views.len() == n {
        return views;
    }
    if outputs.len() == n && n > 0 {
        return outputs.clone();
    }
    if views.len() == n && n > 0 {
        return views;
    }
    if record.feature_names.len() == n && n > 0 && !name.contains("coefficients") {
        return record.feature_names.clone();
    }
    (0..n).map(|i| i.to_string()).collect()
}

/// Each view's kernel width, for multi-view fits: `details.view_sigmas` ({view: σ}), else
/// `details.views` paired with `details.view_kernels` (σ read from `gaussian(σ=9.1234)`).
pub fn view_sigmas(record: &SessionRecord) -> Vec<(String, f64)> {
    let d = &record.details;
    if let Some(Json::Object(m)) = d.get("view_sigmas") {
        return m
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
            .collect();
    }
    let names = d.get("views").and_then(Json::as_array);
    let kernels = d.get("view_kernels").and_then(Json::as_array);
    match (names, kernels) {
        (Some(n), Some(k)) if n.len() == k.len() => n
            .iter()
            .zip(k)
            .filter_map(|(n, k)| {
                let text = k.as_str()?;
                let at = text.find("σ=")? + "σ=".len();
                let num: String = text[at..]
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || ".-+eE".contains(*c))
                    .collect();
                Some((n.as_str()?.to_string(), num.parse().ok()?))
            })
            .collect(),
        _ => Vec::new(),
    }
}
