//! Outputs the training part cannot teach: a class no labeled training row has, a label or
//! target that is constant over them. The fit runs (the user may mean it, e.g. a test column
//! holding one class), but its scores for those outputs are chance, and a note says why.

use ndarray::ArrayView2;

use crate::data::Task;

/// At most this many names in a note; the rest are counted.
const SHOWN: usize = 8;

/// One note per kind of output the labeled training rows of `y` (NaN rows are unlabeled)
/// cannot teach.
pub(super) fn untaught_outputs(y: ArrayView2<f64>, task: Task, names: &[String]) -> Vec<String> {
    let constant: Vec<(usize, f64)> = y
        .columns()
        .into_iter()
        .enumerate()
        .filter_map(|(j, col)| {
            let mut labeled = col.iter().filter(|v| !v.is_nan());
            let first = *labeled.next()?;
            labeled.all(|&v| v == first).then_some((j, first))
        })
        .collect();
    if constant.is_empty() {
        return Vec::new();
    }
    let listed = |js: &[usize]| {
        let mut s: Vec<&str> = js.iter().take(SHOWN).map(|&j| names[j].as_str()).collect();
        let more = js.len().saturating_sub(SHOWN);
        let extra = (more > 0).then(|| format!("and {more} more"));
        s.extend(extra.as_deref());
        s.join(", ")
    };
    let highest = y
        .iter()
        .filter(|v| !v.is_nan())
        .fold(f64::NEG_INFINITY, |a, &b| a.max(b));
    match task {
        Task::Multiclass => {
            let absent: Vec<usize> = constant
                .iter()
                .filter(|&&(_, v)| v < highest)
                .map(|&(j, _)| j)
                .collect();
            if absent.is_empty() {
                return Vec::new();
            }
            vec![format!(
                "no labeled training row has class {} ({} of {} classes): the model cannot \
                 predict {}",
                listed(&absent),
                absent.len(),
                names.len(),
                if absent.len() == 1 { "it" } else { "them" }
            )]
        }
        Task::Multilabel => {
            let js: Vec<usize> = constant.iter().map(|&(j, _)| j).collect();
            vec![format!(
                "{} {} the same value in every labeled training row: the model learns nothing \
                 for {}, and {} AUC is chance",
                listed(&js),
                if js.len() == 1 { "has" } else { "have" },
                if js.len() == 1 { "it" } else { "them" },
                if js.len() == 1 { "its" } else { "their" }
            )]
        }
        Task::Regression => {
            let js: Vec<usize> = constant.iter().map(|&(j, _)| j).collect();
            vec![format!(
                "{} {} constant over the labeled training rows",
                listed(&js),
                if js.len() == 1 { "is" } else { "are" }
            )]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn names(m: usize) -> Vec<String> {
        (0..m).map(|j| format!("o{j}")).collect()
    }

    #[test]
    fn a_class_no_training_row_has_is_named() {
        // Rows of classes o0 and o2 (±1 coding); o1 never appears; the NaN row is unlabeled.
        let y = array![
            [1.0, -1.0, -1.0],
            [-1.0, -1.0, 1.0],
            [f64::NAN, f64::NAN, f64::NAN]
        ];
        let notes = untaught_outputs(y.view(), Task::Multiclass, &names(3));
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].starts_with("no labeled training row has class o1 (1 of 3"),
            "{notes:?}"
        );
        // Every class present: nothing to say.
        let all = array![[1.0, -1.0], [-1.0, 1.0]];
        assert!(untaught_outputs(all.view(), Task::Multiclass, &names(2)).is_empty());
    }

    #[test]
    fn constant_labels_and_targets_are_named_and_counted() {
        let y = array![[0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 1.0, f64::NAN]];
        let notes = untaught_outputs(y.view(), Task::Multilabel, &names(3));
        assert!(
            notes[0].starts_with("o0, o2 have the same value"),
            "{notes:?}"
        );
        let wide = ndarray::Array2::<f64>::zeros((2, 10));
        let notes = untaught_outputs(wide.view(), Task::Regression, &names(10));
        assert!(notes[0].ends_with("o7, and 2 more are constant over the labeled training rows"));
    }
}
