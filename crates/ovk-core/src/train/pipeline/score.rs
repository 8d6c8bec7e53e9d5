//! Stage 4, score: the model's predictions on the labeled training rows and the held-out rows,
//! scored against the file's own targets — once — with the per-output detail the faces show.

use std::time::Instant;

use ndarray::{Array2, ArrayView2, CowArray, Ix2};

use super::fit::{predict_rows, Fitted};
use crate::data::{ClassCoding, Prepared, Task};
use crate::linalg::select_rows;
use crate::metrics;
use crate::session::details::key;
use crate::session::{MetricMap, Metrics};
use crate::Result;

/// The scores of a fit, its test predictions, and the details that come with them.
pub(super) struct Scored {
    pub metrics: Metrics,
    pub(crate) pred_test: Array2<f64>,
    pub details: serde_json::Map<String, serde_json::Value>,
    pub predict_s: f64,
}

/// Predict and score the training and held-out parts (and a semi-supervised method's
/// unlabeled training rows, whose labels the data had but the fit did not see).
pub(super) fn score(f: &Fitted, prepared: &Prepared, coding: ClassCoding) -> Result<Scored> {
    let t_pred = Instant::now();
    let m = f.problem.y.ncols();
    let rows = f.problem.labeled_rows();
    let (x_lab, y_lab) = labeled_part(&f.problem.x, f.y_train(), &rows);
    let pred_train = f.fit.model.predict(x_lab.view())?;
    let pred_test = predict_rows(f.fit.model.as_ref(), f.x_test.view(), m)?;
    let predict_s = t_pred.elapsed().as_secs_f64();

    let task = prepared.task;
    let score = |y: ArrayView2<f64>, yhat: ArrayView2<f64>| -> MetricMap {
        if y.nrows() == 0 {
            MetricMap::new()
        } else {
            metrics::scores(task, coding, y, yhat)
        }
    };
    let mut scores = Metrics {
        train: score(y_lab.view(), pred_train.view()),
        test: score(f.y_test.view(), pred_test.view()),
        unlabeled: None,
    };
    // Structured outputs (KDE) are also scored by the RBF loss of their output kernel. Its σ
    // lives where the fit's targets do: scaled, under --target-scale.
    if let Some(sigma) = f.fit.details.get("output_sigma").and_then(|v| v.as_f64()) {
        let in_fit_units = |a: ArrayView2<f64>| -> Array2<f64> {
            let mut a = a.to_owned();
            if let Some(t) = &f.target_scaler {
                t.apply(&mut a);
            }
            a
        };
        for (map, y, yhat) in [
            (&mut scores.train, y_lab.view(), pred_train.view()),
            (&mut scores.test, f.y_test.view(), pred_test.view()),
        ] {
            if y.nrows() > 0 {
                let (y, yhat) = (in_fit_units(y), in_fit_units(yhat));
                map.insert(
                    "rbf_loss".into(),
                    metrics::rbf_loss(y.view(), yhat.view(), sigma),
                );
            }
        }
    }
    let unlabeled = unlabeled_part(f, prepared);
    if let Some((truth, p)) = &unlabeled {
        scores.unlabeled = Some(score(truth.view(), p.view()));
    }

    let mut details = serde_json::Map::new();
    let mid = metrics::coding_midpoint(coding);
    let parts = [
        ("train", y_lab.view(), pred_train.view()),
        ("test", f.y_test.view(), pred_test.view()),
    ];
    if task == Task::Multilabel {
        let mut all: Vec<(&str, ArrayView2<f64>, ArrayView2<f64>)> = parts.to_vec();
        if let Some((truth, p)) = &unlabeled {
            all.push(("unlabeled", truth.view(), p.view()));
        }
        details.insert(
            "per_label_auc".into(),
            per_label_auc(&all, &prepared.output_names, mid),
        );
    }
    // Per-output diagnostics of each part (confusion matrix, per-label scores, scatter sample).
    let mut diag = serde_json::Map::new();
    for (part, y, yhat) in parts {
        if y.nrows() > 0 {
            let d = metrics::diagnostics(task, y, yhat, mid);
            if let Ok(v) = serde_json::to_value(d) {
                diag.insert(part.to_string(), v);
            }
        }
    }
    details.insert(key::DIAGNOSTICS.into(), serde_json::Value::Object(diag));
    Ok(Scored {
        metrics: scores,
        pred_test,
        details,
        predict_s,
    })
}

/// Per-label AUC, by label name, for each part that has labels (JSON null: one class only).
fn per_label_auc(
    parts: &[(&str, ArrayView2<f64>, ArrayView2<f64>)],
    names: &[String],
    mid: f64,
) -> serde_json::Value {
    let mut per_label = serde_json::Map::new();
    for (part, y, yhat) in parts {
        if y.nrows() > 0 {
            let aucs = metrics::per_label_auc(*y, *yhat, mid);
            let named: serde_json::Map<String, serde_json::Value> = names
                .iter()
                .zip(aucs)
                .map(|(n, a)| (n.clone(), serde_json::json!(a.is_finite().then_some(a))))
                .collect();
            per_label.insert(part.to_string(), serde_json::Value::Object(named));
        }
    }
    serde_json::Value::Object(per_label)
}

/// The unlabeled training rows' true targets and the fit's own predictions of them.
fn unlabeled_part<'a>(
    f: &'a Fitted,
    prepared: &'a Prepared,
) -> Option<(&'a Array2<f64>, &'a Array2<f64>)> {
    f.fit
        .matrices
        .iter()
        .find(|(n, _)| n == "predictions_unlabeled")
        .map(|(_, p)| (&prepared.y_unlabeled_true, p))
        .filter(|(truth, p)| p.nrows() == truth.nrows())
}

/// The labeled training rows of x and y: views when every row is labeled (with 10⁵ outputs a
/// copy of y is 100+ MB), copies otherwise.
pub(super) fn labeled_part<'a>(
    x: &'a Array2<f64>,
    y: &'a Array2<f64>,
    rows: &[usize],
) -> (CowArray<'a, f64, Ix2>, CowArray<'a, f64, Ix2>) {
    if rows.len() == x.nrows() {
        (x.view().into(), y.view().into())
    } else {
        (
            select_rows(x.view(), rows).into(),
            select_rows(y.view(), rows).into(),
        )
    }
}
