//! Metrics against values computed by hand, and AUC against the O(n²) pair count.

use ndarray::{array, Array2};
use ovk_core::data::{ClassCoding, Task};
use ovk_core::metrics::{
    accuracy, auc, hamming_loss, mean_auc, mse, per_label_auc, primary, r2, rbf_loss, scores,
};

const EPS: f64 = 1e-12;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < EPS
}

#[test]
fn mse_by_hand() {
    let y = array![[1.0, 2.0], [3.0, 4.0]];
    let f = array![[1.0, 3.0], [5.0, 4.0]];
    // (0 + 1 + 4 + 0) / 4
    assert!(close(mse(y.view(), f.view()), 1.25));
    assert!(mse(y.view(), array![[1.0, 2.0]].view()).is_nan());
}

#[test]
fn r2_by_hand() {
    let y = array![[1.0, 2.0], [3.0, 4.0]];
    let f = array![[1.0, 3.0], [5.0, 4.0]];
    // column 0: SST 2, SSE 4 → −1; column 1: SST 2, SSE 1 → ½; mean −¼
    assert!(close(r2(y.view(), f.view()), -0.25));
    assert!(close(r2(y.view(), y.view()), 1.0));
    // One row has no variance to explain: undefined, not 0 (nor 1 when predicted exactly).
    let one = array![[1.0, 2.0]];
    assert!(r2(one.view(), array![[0.0, 0.0]].view()).is_nan());
    assert!(r2(one.view(), one.view()).is_nan());
}

#[test]
fn r2_constant_column_is_one_when_exact_else_zero() {
    let y = array![[5.0, 1.0], [5.0, 3.0]];
    let exact = array![[5.0, 1.0], [5.0, 3.0]];
    assert!(close(r2(y.view(), exact.view()), 1.0));
    let off = array![[5.0, 1.0], [6.0, 3.0]];
    // constant column scores 0, the other 1
    assert!(close(r2(y.view(), off.view()), 0.5));
}

#[test]
fn accuracy_by_argmax() {
    let y = array![
        [1.0, -1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [1.0, -1.0, -1.0]
    ];
    let f = array![
        [0.9, 0.1, 0.0],
        [0.2, 0.1, 0.5],
        [0.0, 0.0, 1.0],
        [0.3, 0.3, 0.1] // tie: the first maximum wins
    ];
    assert!(close(accuracy(y.view(), f.view()), 0.75));
    let nan = array![[f64::NAN, f64::NAN, f64::NAN]];
    assert!(close(
        accuracy(array![[1.0, 0.0, 0.0]].view(), nan.view()),
        0.0
    ));
}

#[test]
fn auc_perfect_inverted_and_ties() {
    let labels = [true, false, true, false];
    assert!(close(auc(&labels, &[0.9, 0.1, 0.8, 0.2]), 1.0));
    assert!(close(auc(&labels, &[0.1, 0.9, 0.2, 0.8]), 0.0));
    // pairs (pos, neg): ½ + 1 + 1 + 1 over 4
    assert!(close(auc(&labels, &[0.5, 0.5, 0.9, 0.1]), 0.875));
    assert!(close(auc(&labels, &[0.3, 0.3, 0.3, 0.3]), 0.5));
    // 0.3 beats 0.1, ties 0.3, loses to 0.8 → 1.5; 0.7 beats two → 2; (1.5 + 2) / 6
    let l5 = [true, true, false, false, false];
    assert!(close(auc(&l5, &[0.3, 0.7, 0.3, 0.1, 0.8]), 3.5 / 6.0));
}

#[test]
fn auc_undefined_cases_are_nan() {
    assert!(auc(&[true, true], &[0.1, 0.2]).is_nan());
    assert!(auc(&[false, false], &[0.1, 0.2]).is_nan());
    assert!(auc(&[], &[]).is_nan());
    assert!(auc(&[true, false], &[0.1]).is_nan());
    assert!(auc(&[true, false], &[f64::NAN, 0.2]).is_nan());
}

#[test]
fn auc_matches_pair_count() {
    let mut state = 12345u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20 {
        let n = 30;
        let labels: Vec<bool> = (0..n).map(|_| next() % 3 == 0).collect();
        // few distinct values, so many ties
        let s: Vec<f64> = (0..n).map(|_| (next() % 7) as f64).collect();
        let (mut wins, mut pairs) = (0.0, 0.0);
        for i in 0..n {
            for j in 0..n {
                if labels[i] && !labels[j] {
                    pairs += 1.0;
                    if s[i] > s[j] {
                        wins += 1.0;
                    } else if s[i] == s[j] {
                        wins += 0.5;
                    }
                }
            }
        }
        let got = auc(&labels, &s);
        if pairs == 0.0 {
            assert!(got.is_nan());
        } else {
            assert!(close(got, wins / pairs), "{got} vs {}", wins / pairs);
        }
    }
}

#[test]
fn per_label_and_mean_auc() {
    // label 0: perfect; label 1: inverted; label 2: one class only; NaN truth cells skipped
    let y = array![
        [1.0, -1.0, 1.0],
        [-1.0, 1.0, 1.0],
        [1.0, -1.0, 1.0],
        [f64::NAN, f64::NAN, 1.0]
    ];
    let f = array![
        [0.9, 0.9, 0.1],
        [0.1, 0.1, 0.2],
        [0.8, 0.8, 0.3],
        [-5.0, 5.0, 0.0]
    ];
    let per = per_label_auc(y.view(), f.view(), 0.0);
    assert_eq!(per.len(), 3);
    assert!(close(per[0], 1.0));
    assert!(close(per[1], 0.0));
    assert!(per[2].is_nan());
    assert!(close(mean_auc(y.view(), f.view(), 0.0), 0.5));
    let one_class = array![[1.0], [1.0]];
    assert!(mean_auc(one_class.view(), one_class.view(), 0.0).is_nan());
}

#[test]
fn hamming_by_hand() {
    let y = array![[1.0, -1.0], [-1.0, 1.0]];
    let f = array![[0.5, 0.2], [-0.1, -0.3]];
    assert!(close(hamming_loss(y.view(), f.view(), 0.0), 0.5));
    let y01 = array![[1.0, 0.0], [0.0, 1.0]];
    let f01 = array![[0.6, 0.4], [0.7, 0.9]];
    assert!(close(hamming_loss(y01.view(), f01.view(), 0.5), 0.25));
}

#[test]
fn rbf_loss_by_hand() {
    let y = array![[0.0, 0.0], [1.0, 1.0]];
    let f = array![[0.0, 0.0], [1.0, 0.0]];
    // row 1: 0; row 2: 2 − 2e^{−1/2}; mean 1 − e^{−1/2}
    assert!(close(
        rbf_loss(y.view(), f.view(), 1.0),
        1.0 - (-0.5f64).exp()
    ));
    // σ = 2: ‖·‖² = 1 → 2 − 2e^{−1/8}, halved
    assert!(close(
        rbf_loss(y.view(), f.view(), 2.0),
        1.0 - (-0.125f64).exp()
    ));
    assert!(rbf_loss(y.view(), f.view(), 0.0).is_nan());
}

#[test]
fn scores_per_task() {
    let y = array![[1.0, 2.0], [3.0, 4.0], [f64::NAN, 0.0]];
    let f = array![[1.0, 3.0], [5.0, 4.0], [100.0, 100.0]];
    let s = scores(Task::Regression, ClassCoding::Pm1, y.view(), f.view());
    assert_eq!(s.keys().collect::<Vec<_>>(), ["mse", "r2"]);
    assert!(close(s["mse"], 1.25)); // the NaN row is unlabeled and skipped
    assert!(close(s["r2"], -0.25));

    let y = array![[1.0, -1.0], [-1.0, 1.0]];
    let f = array![[0.3, 0.1], [0.4, 0.2]];
    let s = scores(Task::Multiclass, ClassCoding::Pm1, y.view(), f.view());
    assert_eq!(s.keys().collect::<Vec<_>>(), ["accuracy", "mse"]);
    assert!(close(s["accuracy"], 0.5));

    // 0/1 coding: threshold ½
    let y = array![[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [f64::NAN, f64::NAN]];
    let f = array![[0.6, 0.4], [0.4, 0.9], [0.55, 0.45], [0.0, 0.0]];
    let s = scores(Task::Multilabel, ClassCoding::ZeroOne, y.view(), f.view());
    assert_eq!(s.keys().collect::<Vec<_>>(), ["hamming", "mean_auc", "mse"]);
    // label 0: positives 0.6, 0.55 vs negative 0.4 → 1; label 1: 0.9, 0.45 vs 0.4 → 1
    assert!(close(s["mean_auc"], 1.0));
    // only cell (2, 1) = 0.45 is on the wrong side of ½
    assert!(close(s["hamming"], 1.0 / 6.0));
    let pm1 = scores(Task::Multilabel, ClassCoding::Pm1, y.view(), f.view());
    // threshold 0 reads every cell as positive
    assert!(close(pm1["hamming"], 2.0 / 6.0));
}

#[test]
fn scores_leave_out_undefined_metrics() {
    let y: Array2<f64> = array![[1.0], [1.0]];
    let f = array![[0.5], [0.7]];
    let s = scores(Task::Multilabel, ClassCoding::Pm1, y.view(), f.view());
    assert!(!s.contains_key("mean_auc"));
    assert!(s.contains_key("hamming"));
    let all_nan = array![[f64::NAN], [f64::NAN]];
    assert!(scores(Task::Regression, ClassCoding::Pm1, all_nan.view(), f.view()).is_empty());
}

#[test]
fn primary_metric_direction() {
    assert_eq!(primary(Task::Regression), ("mse", false));
    assert_eq!(primary(Task::Multiclass), ("accuracy", true));
    assert_eq!(primary(Task::Multilabel), ("mean_auc", true));
}

#[test]
fn confusion_matrix_by_hand() {
    use ovk_core::metrics::confusion;
    // truths 0,0,1,2,2 (one-hot ±1); predictions argmax 0,1,1,2,0; a NaN truth row is skipped.
    let y = array![
        [1.0, -1.0, -1.0],
        [1.0, -1.0, -1.0],
        [-1.0, 1.0, -1.0],
        [-1.0, -1.0, 1.0],
        [-1.0, -1.0, 1.0],
        [f64::NAN, f64::NAN, f64::NAN]
    ];
    let f = array![
        [0.9, 0.1, -0.5],
        [0.0, 0.2, -0.1],
        [-0.3, 0.8, 0.1],
        [-0.9, 0.0, 0.4],
        [0.5, 0.1, 0.2],
        [1.0, 0.0, 0.0]
    ];
    assert_eq!(
        confusion(y.view(), f.view()),
        vec![vec![1, 1, 0], vec![0, 1, 0], vec![1, 0, 1]]
    );
}

#[test]
fn per_label_precision_recall_auc_by_hand() {
    use ovk_core::metrics::per_label;
    // label 0: truth + + − −, scores .9 −.2 .4 −.8 → TP 1, FP 1, FN 1: precision ½, recall ½;
    // AUC: positive .9 beats both negatives, −.2 beats −.8 only → 3/4.
    // label 1: truth all − → recall and AUC undefined, one false positive → precision 0.
    let y = array![[1.0, -1.0], [1.0, -1.0], [-1.0, -1.0], [-1.0, -1.0]];
    let f = array![[0.9, 0.3], [-0.2, -0.1], [0.4, -0.5], [-0.8, -0.7]];
    let s = per_label(y.view(), f.view(), 0.0);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].precision, Some(0.5));
    assert_eq!(s[0].recall, Some(0.5));
    assert!(close(s[0].auc.unwrap(), 0.75));
    assert_eq!((s[0].support, s[0].rows), (2, 4));
    assert_eq!(s[1].precision, Some(0.0));
    assert_eq!(s[1].recall, None);
    assert_eq!(s[1].auc, None);
    // 0/1 coding thresholds at ½.
    let y01 = y.mapv(|v| if v > 0.0 { 1.0 } else { 0.0 });
    let f01 = f.mapv(|v| v + 0.5);
    assert_eq!(per_label(y01.view(), f01.view(), 0.5), s);
}

#[test]
fn regression_output_fit_by_hand() {
    use ovk_core::metrics::{diagnostics, output_fit, SCATTER_POINTS};
    // truth 1 2 3, prediction 1 3 3: SSE 1, SST 2 → R² ½, MSE ⅓; the NaN truth row is skipped.
    let y = array![1.0, 2.0, 3.0, f64::NAN];
    let f = array![1.0, 3.0, 3.0, 7.0];
    let o = output_fit(y.view(), f.view());
    assert!(close(o.r2.unwrap(), 0.5));
    assert!(close(o.mse.unwrap(), 1.0 / 3.0));
    assert_eq!(o.pairs, vec![(1.0, 1.0), (2.0, 3.0), (3.0, 3.0)]);
    assert_eq!(o.rows, 3);
    // Many rows: the scatter keeps a strided sample, the scores use every row.
    let n = 3 * SCATTER_POINTS;
    let y = Array2::from_shape_fn((n, 2), |(i, j)| (i + j) as f64);
    let d = diagnostics(Task::Regression, y.view(), y.view(), 0.0);
    let outs = d.outputs.unwrap();
    assert_eq!(outs.len(), 2);
    assert_eq!(outs[1].pairs.len(), SCATTER_POINTS);
    assert_eq!(outs[1].pairs[1], (4.0, 4.0));
    assert_eq!(outs[0].r2, Some(1.0));
    assert!(d.confusion.is_none() && d.labels.is_none());
}
