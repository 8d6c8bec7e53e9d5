//! The seeded train/test split and the seeded choice of which training labels stay visible.

use std::path::Path;

use super::options::TEST_FRACTION;
use crate::error::input_at;
use crate::util::param::Value;
use crate::util::rng::Rng;
use crate::Result;

/// Original file row indices of each part, ascending.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Split {
    pub train: Vec<usize>,
    pub test: Vec<usize>,
}

/// Shuffle the labeled rows with `seed`, take round(test_fraction · n) of them (leaving at least
/// one labeled training row) as the test part; unlabeled rows always train.
pub(crate) fn split(
    path: &Path,
    labeled: &[usize],
    unlabeled: &[usize],
    test_fraction: f64,
    seed: u64,
) -> Result<Split> {
    if let Err(e) = TEST_FRACTION.check(&Value::Float(test_fraction)) {
        return Err(input_at(path, e.to_string()));
    }
    let mut order = labeled.to_vec();
    Rng::new(seed).shuffle(&mut order);
    let n_test = ((test_fraction * labeled.len() as f64).round() as usize)
        .min(labeled.len().saturating_sub(1));
    let test = ascending(order[..n_test].to_vec());
    let train = ascending(order[n_test..].iter().chain(unlabeled).copied().collect());
    Ok(Split { train, test })
}

/// The split a column gives (`--test-column`): labeled rows whose value is nonzero are the test
/// part, every other usable row trains. A missing value in that column is refused.
pub(crate) fn split_by_column(
    path: &Path,
    values: &[f64],
    name: &str,
    rows: &super::rows::RowUse,
) -> Result<Split> {
    if let Some(&bad) = rows
        .labeled
        .iter()
        .chain(&rows.unlabeled)
        .find(|&&i| !values[i].is_finite())
    {
        return Err(input_at(
            path,
            format!(
                "row {}: the test column `{name}` is missing or not a number (it must be 0 for \
                 training rows and nonzero for test rows)",
                bad + 1
            ),
        ));
    }
    let (test, mut train): (Vec<usize>, Vec<usize>) =
        rows.labeled.iter().partition(|&&i| values[i] != 0.0);
    if train.is_empty() {
        return Err(input_at(
            path,
            format!("the test column `{name}` marks every labeled row as a test row"),
        ));
    }
    train.extend(&rows.unlabeled);
    Ok(Split {
        train: ascending(train),
        test,
    })
}

/// Cross-validation inside the training part: shuffle its labeled rows with `seed`, cut them
/// into `folds` nearly equal folds, and make fold `fold` the held-out part. The original test
/// part is left out entirely, so a sweep never looks at it.
pub(crate) fn cv_fold(
    path: &Path,
    parts: &Split,
    labeled: &[usize],
    cv: super::CvFold,
    seed: u64,
) -> Result<Split> {
    let is_labeled = marks(labeled);
    let mut order: Vec<usize> = parts
        .train
        .iter()
        .copied()
        .filter(|&i| is_labeled.get(i) == Some(&true))
        .collect();
    let n = order.len();
    cv.check(n).map_err(|why| input_at(path, why))?;
    Rng::new(seed ^ 0xcf_f01d).shuffle(&mut order);
    let (lo, hi) = (cv.fold * n / cv.folds, (cv.fold + 1) * n / cv.folds);
    let test = ascending(order[lo..hi].to_vec());
    let is_test = marks(&test);
    let train: Vec<usize> = parts
        .train
        .iter()
        .copied()
        .filter(|&i| is_test.get(i) != Some(&true))
        .collect();
    Ok(Split {
        train: ascending(train),
        test,
    })
}

/// The first `n` training rows of a seeded order of them (all of them when there are fewer):
/// successive halving's budgets, nested so that a larger budget keeps the rows of a smaller.
pub(crate) fn subsample(path: &Path, parts: &Split, n: usize, seed: u64) -> Result<Split> {
    if n < 2 {
        return Err(input_at(
            path,
            format!("a subsample of {n} training rows is too small to fit (need at least 2)"),
        ));
    }
    let mut order = parts.train.clone();
    Rng::new(seed ^ 0x4a1f_5eed).shuffle(&mut order);
    order.truncate(n);
    Ok(Split {
        train: ascending(order),
        test: parts.test.clone(),
    })
}

/// One mark per row index up to the largest of `rows`: set for the rows listed.
pub(crate) fn marks(rows: &[usize]) -> Vec<bool> {
    let mut marked = vec![false; rows.iter().max().map_or(0, |&m| m + 1)];
    for &i in rows {
        marked[i] = true;
    }
    marked
}

/// Distinct row indices in ascending order, the same as sorting them: marking them and reading
/// the marks back is two passes over the rows, where a sort of 10⁶ shuffled indices compares
/// each about twenty times. A handful of indices far apart is sorted instead.
fn ascending(mut rows: Vec<usize>) -> Vec<usize> {
    let span = rows.iter().max().map_or(0, |&m| m + 1);
    if span > 16 * rows.len() {
        rows.sort_unstable();
        return rows;
    }
    let marked = marks(&rows);
    debug_assert_eq!(
        marked.iter().filter(|&&m| m).count(),
        rows.len(),
        "distinct rows"
    );
    rows.clear();
    rows.extend((0..span).filter(|&i| marked[i]));
    rows
}

impl super::CvFold {
    /// Whether fold `fold` of `folds` can be taken from `rows` labeled training rows: the one
    /// bound on a fold count, wherever it was read (a flag, a config, a saved session), checked
    /// before anything is sized by it.
    pub fn check(self, rows: usize) -> std::result::Result<(), String> {
        if self.folds < 2 || self.fold >= self.folds || self.folds > rows {
            return Err(format!(
                "cannot take fold {} of {} from {rows} labeled training rows (need 2 ≤ folds ≤ \
                 rows)",
                self.fold, self.folds
            ));
        }
        Ok(())
    }
}

/// Which of the `n` candidate labels to keep: `labeled` ≥ 1 is a count, < 1 a fraction
/// (at least one label). Returns a mask over the candidates.
pub(crate) fn keep_labels(path: &Path, n: usize, labeled: f64, seed: u64) -> Result<Vec<bool>> {
    if !labeled.is_finite() || labeled <= 0.0 {
        return Err(input_at(
            path,
            format!("--labeled must be a count (≥ 1) or a fraction in (0, 1), not {labeled}"),
        ));
    }
    // 1.5 is neither: rounding it to a count would hide a typo in a fraction (0.15?).
    if labeled > 1.0 && labeled.fract() != 0.0 {
        return Err(input_at(
            path,
            format!(
                "--labeled {labeled} is neither a count of labels (a whole number ≥ 1) nor a \
                 fraction in (0, 1)"
            ),
        ));
    }
    // Compared as numbers first: 1e300 as usize would be 18446744073709551615.
    if labeled >= 1.0 && labeled.round() > n as f64 {
        let shown = if labeled >= 1e9 {
            format!("{labeled:e}")
        } else {
            format!("{}", labeled.round())
        };
        return Err(input_at(
            path,
            format!(
                "--labeled {shown} asks for {shown} labels, but the training part has only {n} \
                 labeled rows (give a count up to {n}, or a fraction in (0, 1))"
            ),
        ));
    }
    let k = if labeled >= 1.0 {
        labeled.round() as usize
    } else {
        ((labeled * n as f64).round() as usize).max(1)
    };
    let mut keep = vec![false; n];
    for i in Rng::new(seed ^ 0x5eed).sample(n, k) {
        keep[i] = true;
    }
    Ok(keep)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_reproducible_disjoint_and_complete() {
        let p = Path::new("t.csv");
        let labeled: Vec<usize> = (0..40).filter(|i| i % 7 != 3).collect();
        let unlabeled: Vec<usize> = (0..40).filter(|i| i % 7 == 3).collect();
        let a = split(p, &labeled, &unlabeled, 0.25, 11).unwrap();
        let b = split(p, &labeled, &unlabeled, 0.25, 11).unwrap();
        let c = split(p, &labeled, &unlabeled, 0.25, 12).unwrap();
        assert_eq!(a, b);
        assert_ne!(a.test, c.test);
        assert_eq!(
            a.test.len(),
            (0.25f64 * labeled.len() as f64).round() as usize
        );
        assert!(a.test.iter().all(|i| labeled.contains(i)));
        assert!(a.test.windows(2).all(|w| w[0] < w[1]));
        assert!(a.train.windows(2).all(|w| w[0] < w[1]));
        let mut all: Vec<usize> = a.train.iter().chain(&a.test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..40).collect::<Vec<_>>());
    }

    #[test]
    fn split_leaves_a_training_row() {
        let p = Path::new("t.csv");
        let s = split(p, &[0, 1], &[], 0.9, 0).unwrap();
        assert_eq!((s.train.len(), s.test.len()), (1, 1));
        assert!(split(p, &[0, 1], &[], 1.0, 0)
            .unwrap_err()
            .to_string()
            .contains("test_fraction: 1 is outside [0, 1)"));
    }

    #[test]
    fn cv_folds_partition_the_training_part() {
        let p = Path::new("t.csv");
        let labeled: Vec<usize> = (0..20).collect();
        let parts = split(p, &labeled, &[], 0.25, 3).unwrap();
        let mut seen = Vec::new();
        for fold in 0..3 {
            let f = cv_fold(
                p,
                &parts,
                &labeled,
                crate::data::CvFold { folds: 3, fold },
                3,
            )
            .unwrap();
            assert!(f.test.iter().all(|i| parts.train.contains(i)));
            assert!(f.test.iter().all(|i| !f.train.contains(i)));
            assert_eq!(f.test.len() + f.train.len(), parts.train.len());
            seen.extend(f.test);
        }
        seen.sort_unstable();
        assert_eq!(seen, parts.train);
        assert!(cv_fold(
            p,
            &parts,
            &labeled,
            crate::data::CvFold { folds: 99, fold: 0 },
            3
        )
        .is_err());
    }

    #[test]
    fn ascending_equals_a_sort_of_distinct_rows_dense_or_sparse() {
        for (n, stride) in [(0, 1), (1, 1), (10_000, 1), (10_000, 3), (50, 1000)] {
            let mut rows: Vec<usize> = (0..n).map(|i| i * stride).collect();
            Rng::new(n as u64).shuffle(&mut rows);
            let mut want = rows.clone();
            want.sort_unstable();
            assert_eq!(ascending(rows), want, "n = {n}, stride {stride}");
        }
    }

    #[test]
    fn keep_labels_counts_and_fractions() {
        let p = Path::new("t.csv");
        let count = |m: Vec<bool>| m.iter().filter(|b| **b).count();
        assert_eq!(count(keep_labels(p, 20, 5.0, 1).unwrap()), 5);
        assert_eq!(count(keep_labels(p, 20, 0.3, 1).unwrap()), 6);
        assert_eq!(count(keep_labels(p, 20, 0.01, 1).unwrap()), 1);
        assert_eq!(
            keep_labels(p, 20, 0.3, 1).unwrap(),
            keep_labels(p, 20, 0.3, 1).unwrap()
        );
        assert!(keep_labels(p, 20, 21.0, 1)
            .unwrap_err()
            .to_string()
            .contains("only 20"));
        assert!(keep_labels(p, 20, 0.0, 1).is_err());
        assert!(keep_labels(p, 20, 1.5, 1)
            .unwrap_err()
            .to_string()
            .contains("neither a count"));
        assert_eq!(count(keep_labels(p, 20, 1.0, 1).unwrap()), 1);
    }
}
