//! Views: named groups of feature columns, by column-name prefix (`fou` → `fou_0`, `fou_1` …)
//! or, in a sidecar, by a list of selectors (for files whose view columns share no prefix).

use std::path::Path;

use super::roles::SidecarCache;
use super::select::resolve;
use super::sidecar::ViewSpec;
use super::View;
use crate::error::input_at;
use crate::Result;

/// Resolve the requested views (or the sidecar's, when none are requested) into indices of the
/// feature columns. `features` holds the feature columns' file indices.
pub(crate) fn resolve_views(
    path: &Path,
    requested: Option<&[String]>,
    columns: &[&str],
    features: &[usize],
    sidecar: &mut SidecarCache,
) -> Result<Vec<View>> {
    match requested {
        Some(req) => {
            let mut views = Vec::new();
            // `NAME=COLS`: a view by column selectors (SARCOS-style `q=q1..q7`).
            for entry in req.iter().filter(|e| e.contains('=')) {
                let (name, sel) = entry.split_once('=').expect("an entry with =");
                if name.trim().is_empty() {
                    return Err(input_at(
                        path,
                        format!(
                            "the view `{entry}` has no name (write NAME=COLS, e.g. `q=q1..q7`)"
                        ),
                    ));
                }
                let selectors: Vec<String> = sel.split(',').map(|s| s.trim().to_string()).collect();
                let cols = by_spec(path, &ViewSpec::Columns(selectors), columns, features)?;
                if cols.is_empty() {
                    return Err(input_at(
                        path,
                        format!("the view `{entry}` selects no feature column"),
                    ));
                }
                views.push(View {
                    name: name.trim().to_string(),
                    columns: cols,
                });
            }
            let prefixes = req.iter().filter(|e| !e.contains('='));
            for name in prefixes.flat_map(|s| s.split(',')).map(str::trim) {
                if name.is_empty() {
                    continue;
                }
                let mut cols = by_prefix(name, columns, features);
                if cols.is_empty() {
                    if let Some(spec) = sidecar.get()?.and_then(|s| s.views.get(name)).cloned() {
                        cols = by_spec(path, &spec, columns, features)?;
                    }
                }
                if cols.is_empty() {
                    return Err(input_at(
                        path,
                        format!(
                            "the view `{name}` matches no feature column (a view is a column-name \
                             prefix, e.g. `fou` for `fou_0`, `fou_1`, …, a view named in the \
                             dataset's sidecar, or NAME=COLS with column selectors, e.g. \
                             `q=q1..q7`)"
                        ),
                    ));
                }
                views.push(View {
                    name: name.to_string(),
                    columns: cols,
                });
            }
            refuse_repeated_names(path, &views)?;
            Ok(views)
        }
        None => {
            let Some(sidecar) = sidecar.get()? else {
                return Ok(Vec::new());
            };
            let mut views = Vec::new();
            for (name, spec) in &sidecar.views {
                let cols = by_spec(path, spec, columns, features).map_err(|e| {
                    let side = super::sidecar::sidecar_path(path).unwrap_or_default();
                    crate::OvkError::input(format!(
                        "{e} (in the view `{name}` of the sidecar {})",
                        side.display()
                    ))
                })?;
                // A view whose columns the user left out of the features is not a view of this run.
                if !cols.is_empty() {
                    views.push(View {
                        name: name.clone(),
                        columns: cols,
                    });
                }
            }
            views.sort_by_key(|v| v.columns.first().copied());
            Ok(views)
        }
    }
}

/// Two views of one name would be one view shown twice in A's blocks and weights.
fn refuse_repeated_names(path: &Path, views: &[View]) -> Result<()> {
    for (k, v) in views.iter().enumerate() {
        if views[..k].iter().any(|w| w.name == v.name) {
            return Err(input_at(
                path,
                format!(
                    "the view name `{}` is given twice; give each view its own name",
                    v.name
                ),
            ));
        }
    }
    Ok(())
}

fn by_prefix(prefix: &str, columns: &[&str], features: &[usize]) -> Vec<usize> {
    let underscored = format!("{prefix}_");
    features
        .iter()
        .enumerate()
        .filter(|(_, &c)| columns[c] == prefix || columns[c].starts_with(&underscored))
        .map(|(k, _)| k)
        .collect()
}

/// The columns (indices into `columns`) a sidecar's view takes, as a run reads them.
pub fn view_columns(path: &Path, spec: &ViewSpec, columns: &[&str]) -> Result<Vec<usize>> {
    let all: Vec<usize> = (0..columns.len()).collect();
    by_spec(path, spec, columns, &all)
}

fn by_spec(
    path: &Path,
    spec: &ViewSpec,
    columns: &[&str],
    features: &[usize],
) -> Result<Vec<usize>> {
    match spec {
        ViewSpec::Prefix(p) => Ok(by_prefix(p, columns, features)),
        ViewSpec::Columns(sel) => {
            let picked = resolve(path, columns, sel)?;
            let mut cols: Vec<usize> = picked
                .iter()
                .filter_map(|c| features.iter().position(|f| f == c))
                .collect();
            cols.sort_unstable();
            Ok(cols)
        }
    }
}
