//! Which rows a run can use: rows with a missing cell are refused (or dropped on request), and
//! rows whose outputs are all empty may become unlabeled training rows.

use std::collections::BTreeMap;
use std::path::Path;

use super::encode::RawOutputs;
use super::raw::row_label;
use crate::error::input_at;
use crate::Result;

/// Usable rows by kind, as original file row indices in ascending order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RowUse {
    pub labeled: Vec<usize>,
    pub unlabeled: Vec<usize>,
    pub dropped: usize,
}

/// What a missing cell does to its row.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MissingCells {
    /// Drop the row (else refuse the file, naming the cell).
    pub drop: bool,
    /// Feature cells do not count: `data::impute` fills them after the split.
    pub(crate) features_filled_later: bool,
}

/// Sort the rows of a file into labeled, unlabeled and dropped. `first_missing` names, for each
/// file row with a missing feature, the first such feature.
pub(crate) fn usable_rows(
    path: &Path,
    first_missing: &BTreeMap<usize, usize>,
    feature_names: &[String],
    outputs: &RawOutputs,
    missing: MissingCells,
    allow_unlabeled: bool,
) -> Result<RowUse> {
    let drop_missing = missing.drop;
    let mut rows = RowUse {
        labeled: Vec::new(),
        unlabeled: Vec::new(),
        dropped: 0,
    };
    // A complete table, the usual case, needs no look row by row: every row is labeled. That
    // look took 20 ms of a 10⁶-row load.
    let missing_outputs = if first_missing.is_empty() && outputs.complete() {
        rows.labeled = (0..outputs.rows()).collect();
        Vec::new()
    } else {
        outputs.missing_by_row()
    };
    for (i, &(n_missing, first_missing_output)) in missing_outputs.iter().enumerate() {
        let missing_feature = if missing.features_filled_later {
            None
        } else {
            first_missing.get(&i).copied()
        };
        let all_outputs_missing = n_missing == outputs.width();
        let missing_column = match (missing_feature, first_missing_output) {
            (Some(j), _) => Some(feature_names[j].as_str()),
            (None, _) if allow_unlabeled && all_outputs_missing => None,
            (None, o) => o,
        };
        match missing_column {
            None if n_missing == 0 => rows.labeled.push(i),
            None => rows.unlabeled.push(i),
            Some(_) if drop_missing => rows.dropped += 1,
            Some(col) => {
                let keep_unlabeled = if allow_unlabeled {
                    " (rows whose outputs are all empty are kept as unlabeled)"
                } else {
                    ""
                };
                return Err(input_at(
                    path,
                    format!(
                        "column `{col}` has a missing value (empty or NaN) in {}; drop such rows \
                         (--missing drop) or fill them in (--missing impute){keep_unlabeled}",
                        row_label(i)
                    ),
                ));
            }
        }
    }
    let usable = rows.labeled.len() + rows.unlabeled.len();
    if usable < 2 {
        let dropped = if rows.dropped > 0 {
            format!(" ({} dropped for missing values)", rows.dropped)
        } else {
            String::new()
        };
        return Err(input_at(
            path,
            format!("only {usable} usable row(s){dropped}; at least 2 are needed"),
        ));
    }
    if rows.labeled.is_empty() {
        return Err(input_at(
            path,
            "no row has a label (every output cell is empty)",
        ));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sort(y: Vec<f64>, first_missing: &BTreeMap<usize, usize>) -> RowUse {
        let outputs = RawOutputs::Targets {
            names: vec!["y".into()],
            columns: vec![y],
        };
        let missing = MissingCells {
            drop: true,
            features_filled_later: false,
        };
        let names = ["x".to_string()];
        usable_rows(
            Path::new("t.csv"),
            first_missing,
            &names,
            &outputs,
            missing,
            true,
        )
        .unwrap()
    }

    /// A complete table takes the shortcut, a table with gaps the look row by row; both sort
    /// the rows as that look does.
    #[test]
    fn complete_and_gapped_tables_sort_their_rows() {
        let n = 3000;
        let y: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let all = sort(y.clone(), &BTreeMap::new());
        assert_eq!(all.labeled, (0..n).collect::<Vec<_>>());
        assert!(all.unlabeled.is_empty() && all.dropped == 0);

        // Past the first chunk of 1024: an empty output, and a missing feature.
        let mut gapped = y;
        gapped[2500] = f64::NAN;
        let some = sort(gapped.clone(), &BTreeMap::new());
        assert_eq!(some.unlabeled, [2500]);
        assert_eq!(some.labeled.len(), n - 1);
        let feature_gap = sort(gapped, &BTreeMap::from([(7, 0)]));
        assert_eq!(feature_gap.dropped, 1);
        assert!(!feature_gap.labeled.contains(&7) && feature_gap.unlabeled == [2500]);
    }
}
