//! `--missing impute`: missing feature cells filled in after the split, from the training rows
//! alone — a numeric column's mean, a text column's most frequent level — so the held-out rows
//! never shape the inputs the model is trained on.

use std::path::Path;

use ndarray::Array2;

use super::features::Group;
use crate::error::input_at;
use crate::Result;

/// What imputation did: the rows of both parts with a filled cell, and per feature the value
/// a missing cell takes (NaN for a group with no training value; saved for `ovk predict`).
#[derive(Debug)]
pub(crate) struct Imputed {
    pub rows: usize,
    pub fill: Vec<f64>,
}

/// Fill the NaN cells of `x_train` and `x_test` (features grouped by `source` into `groups`)
/// from `x_train`'s present cells.
pub(crate) fn impute(
    path: &Path,
    x_train: &mut Array2<f64>,
    x_test: &mut Array2<f64>,
    source: &[usize],
    groups: &[Group],
) -> Result<Imputed> {
    let filled_rows = |x: &Array2<f64>| {
        x.rows()
            .into_iter()
            .filter(|r| r.iter().any(|v| v.is_nan()))
            .count()
    };
    let filled = filled_rows(x_train) + filled_rows(x_test);
    let mut fill_of_feature = vec![f64::NAN; source.len()];
    // Each group's features, in one pass (a wide table has 10⁵ of them).
    let mut members = vec![Vec::new(); groups.len()];
    for (j, &k) in source.iter().enumerate() {
        members[k].push(j);
    }
    for (group, cols) in groups.iter().zip(&members) {
        let Some(&first) = cols.first() else { continue };
        // A row's cell is missing when its (first) feature is NaN: a text cell's indicators
        // are NaN together.
        let present: Vec<usize> = (0..x_train.nrows())
            .filter(|&i| !x_train[[i, first]].is_nan())
            .collect();
        if present.is_empty() {
            if x_train
                .column(first)
                .iter()
                .chain(x_test.column(first))
                .any(|v| v.is_nan())
            {
                return Err(input_at(
                    path,
                    format!(
                        "column `{}` has no value in the training rows to fill its missing \
                         cells from; leave it out of the features or drop such rows \
                         (--missing drop)",
                        group.column
                    ),
                ));
            }
            continue;
        }
        // The fill: per feature of the group, the value a missing row takes.
        let fill: Vec<f64> = if group.one_hot {
            // The level with the most training rows; ties go to the first level (sorted).
            let count = |j: usize| present.iter().map(|&i| x_train[[i, j]]).sum::<f64>();
            let counts: Vec<f64> = cols.iter().map(|&j| count(j)).collect();
            let best = counts
                .iter()
                .enumerate()
                .fold(0, |b, (t, &c)| if c > counts[b] { t } else { b });
            (0..cols.len())
                .map(|t| f64::from(u8::from(t == best)))
                .collect()
        } else {
            let sum: f64 = present.iter().map(|&i| x_train[[i, first]]).sum();
            vec![sum / present.len() as f64]
        };
        for (&j, &v) in cols.iter().zip(&fill) {
            fill_of_feature[j] = v;
        }
        for x in [&mut *x_train, &mut *x_test] {
            for i in 0..x.nrows() {
                if x[[i, first]].is_nan() {
                    for (&j, &v) in cols.iter().zip(&fill) {
                        x[[i, j]] = v;
                    }
                }
            }
        }
    }
    Ok(Imputed {
        rows: filled,
        fill: fill_of_feature,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn groups() -> Vec<Group> {
        vec![
            Group {
                column: "x".into(),
                one_hot: false,
            },
            Group {
                column: "city".into(),
                one_hot: true,
            },
        ]
    }

    #[test]
    fn the_fill_comes_from_the_training_rows_only() {
        let nan = f64::NAN;
        // Features x, city=Lyon, city=Paris; training: x = 1, 3, —; Lyon, Paris, Paris.
        let mut train = array![
            [1.0, 1.0, 0.0],
            [3.0, 0.0, 1.0],
            [nan, 0.0, 1.0],
            [5.0, nan, nan]
        ];
        // The test rows hold a huge x and Lyon twice: neither may move the fill.
        let mut test = array![[nan, 1.0, 0.0], [1e6, nan, nan], [1e6, 1.0, 0.0]];
        let imputed = impute(
            Path::new("t.csv"),
            &mut train,
            &mut test,
            &[0, 1, 1],
            &groups(),
        )
        .unwrap();
        assert_eq!(imputed.rows, 4);
        // Saved for new rows: x's training mean, Paris (two training rows of three).
        assert_eq!(imputed.fill, vec![3.0, 0.0, 1.0]);
        assert_eq!(train.column(0).to_vec(), vec![1.0, 3.0, 3.0, 5.0]);
        assert_eq!(test[[0, 0]], 3.0);
        assert_eq!(train.row(3).to_vec(), vec![5.0, 0.0, 1.0]);
        assert_eq!(test.row(1).to_vec(), vec![1e6, 0.0, 1.0]);
    }

    #[test]
    fn a_column_empty_in_the_training_rows_is_named() {
        let nan = f64::NAN;
        let mut train = array![[nan, 1.0, 0.0], [nan, 0.0, 1.0]];
        let mut test = array![[2.0, 1.0, 0.0]];
        let e = impute(
            Path::new("t.csv"),
            &mut train,
            &mut test,
            &[0, 1, 1],
            &groups(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("`x`") && e.contains("training rows"), "{e}");
    }
}
