//! Issue 18, the diagnostics, missing values, encoded columns and colour depth as users see
//! them: rendered into a `TestBackend` at 120×36 and 80×24, data injected by hand (no fit runs).

#![allow(dead_code)]

use crossterm::event::KeyCode;
use ndarray::array;

use ovk::tui::action::Action;
use ovk::tui::keys::map_key;
use ovk::tui::state::{Pane, Role, State};
use ovk::tui::update::update;
use ovk_core::data::{Table, Task};

use crate::tui_render::{finished, key, on, open_table, screen, state};

const SIZES: [(u16, u16); 2] = [(120, 36), (80, 24)];

/// Render `s` at both sizes and hand each screen to `check`.
fn at_both(s: &State, check: impl Fn(&str, (u16, u16))) {
    for size in SIZES {
        check(&screen(s, size.0, size.1), size);
    }
}

/// `text` is on screen at both sizes.
fn shows(s: &State, text: &str) {
    at_both(s, |out, size| {
        assert!(out.contains(text), "{text:?} at {size:?}\n{out}")
    });
}

fn press(s: &mut State, c: char) {
    if let Some(a) = map_key(s, key(KeyCode::Char(c))) {
        update(s, a);
    }
}

// ---------- per-output diagnostics ----------

/// The finished toy fit with saved diagnostics for both parts.
fn with_diagnostics(task: Task, outputs: &[&str], diag: serde_json::Value) -> State {
    let mut s = on(finished(), Pane::Results);
    let r = &mut s.result.as_mut().unwrap().outcome.record;
    r.task = task;
    r.output_names = outputs.iter().map(|o| o.to_string()).collect();
    r.details.insert("diagnostics".into(), diag);
    s
}

#[test]
fn confusion_matrix_shows_counts_recall_and_precision_and_scrolls() {
    let mut s = with_diagnostics(
        Task::Multiclass,
        &["digit=0", "digit=1", "digit=2"],
        serde_json::json!({
            "train": {"confusion": [[5, 0, 0], [0, 4, 0], [0, 0, 6]]},
            "test": {"confusion": [[3, 1, 0], [0, 2, 0], [1, 0, 4]]}
        }),
    );
    press(&mut s, 'd');
    assert!(s.diag.shown);
    at_both(&s, |out, size| {
        assert!(out.contains("Confusion matrix — test"), "{size:?}\n{out}");
        assert!(out.contains("9/11 right"), "{size:?}\n{out}");
        // true class 0: 3 right of 4 → recall 0.750; predicted 0: 3 of 4 → precision 0.750.
        let row0 = out.lines().find(|l| l.contains("│0 ")).unwrap_or("");
        assert!(
            row0.contains('3') && row0.contains("0.750"),
            "{size:?}\n{out}"
        );
        let prec = out.lines().find(|l| l.contains("precision")).unwrap_or("");
        assert!(
            prec.contains("0.75") && prec.contains("0.67"),
            "{size:?}\n{out}"
        );
    });
    press(&mut s, 'p');
    at_both(&s, |out, size| {
        assert!(out.contains("Confusion matrix — train"), "{size:?}\n{out}");
        assert!(out.contains("15/15 right"), "{size:?}\n{out}");
    });
    for _ in 0..5 {
        press(&mut s, 'j');
    }
    assert_eq!(s.diag.row, 2, "the cursor stops at the last class");
    at_both(&s, |out, size| {
        assert!(out.contains("row 3/3"), "{size:?}\n{out}");
    });
    press(&mut s, 'd');
    at_both(&s, |out, size| {
        assert!(
            out.contains("Δ test"),
            "back to the summary {size:?}\n{out}"
        );
    });
}

#[test]
fn many_classes_scroll_to_the_last_and_say_what_is_hidden() {
    let k = 26;
    let names: Vec<String> = (0..k)
        .map(|i| format!("letter={}", (b'a' + i as u8) as char))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let m: Vec<Vec<usize>> = (0..k)
        .map(|i| {
            (0..k)
                .map(|j| if i == j { 100 } else { (i + j) % 2 })
                .collect()
        })
        .collect();
    let mut s = with_diagnostics(
        Task::Multiclass,
        &names,
        serde_json::json!({"test": {"confusion": m}}),
    );
    press(&mut s, 'd');
    press(&mut s, 'G');
    assert_eq!(s.diag.row, k - 1);
    at_both(&s, |out, size| {
        assert!(out.contains("row 26/26"), "{size:?}\n{out}");
        assert!(
            out.contains("│z "),
            "the last class is on screen {size:?}\n{out}"
        );
        assert!(out.contains(" of 26 "), "{size:?}\n{out}");
        // The columns follow the cursor: the last class's column, not the first's, is shown.
        let header = out.lines().find(|l| l.contains("true\\pred")).unwrap_or("");
        assert!(
            header.contains(" z") && !header.contains(" a "),
            "{size:?}\n{out}"
        );
    });
    press(&mut s, 'g');
    at_both(&s, |out, size| {
        assert!(out.contains("columns 1–"), "{size:?}\n{out}");
    });
}

#[test]
fn per_label_table_shows_precision_recall_auc_and_scrolls() {
    let names: Vec<String> = (0..25).map(|i| format!("label_tag_{i:02}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let labels: Vec<serde_json::Value> = (0..25)
        .map(|i| {
            serde_json::json!({"precision": 0.5, "recall": if i == 3 { None } else { Some(0.25) },
                               "auc": 0.75, "support": i, "rows": 40})
        })
        .collect();
    let mut s = with_diagnostics(
        Task::Multilabel,
        &names,
        serde_json::json!({"test": {"labels": labels}, "train": {"labels": labels}}),
    );
    press(&mut s, 'd');
    at_both(&s, |out, size| {
        assert!(out.contains("Per label — test"), "{size:?}\n{out}");
        assert!(
            out.contains("precision") && out.contains("AUC"),
            "{size:?}\n{out}"
        );
        let l0 = out
            .lines()
            .find(|l| l.contains("label_tag_00"))
            .unwrap_or("");
        assert!(
            l0.contains("0.5000")
                && l0.contains("0.2500")
                && l0.contains("0.7500")
                && l0.contains("0/40"),
            "{size:?}\n{out}"
        );
        let l3 = out
            .lines()
            .find(|l| l.contains("label_tag_03"))
            .unwrap_or("");
        assert!(
            l3.contains('—'),
            "undefined recall is a dash {size:?}\n{out}"
        );
    });
    press(&mut s, 'G');
    at_both(&s, |out, size| {
        assert!(
            out.contains("label_tag_24") && out.contains("label 25/25"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn regression_scatter_draws_the_chosen_output() {
    let pairs0: Vec<(f64, f64)> = (0..50).map(|i| (i as f64, i as f64 + 0.5)).collect();
    let pairs1: Vec<(f64, f64)> = (0..50).map(|i| (i as f64, 100.0 - i as f64)).collect();
    let mut s = with_diagnostics(
        Task::Regression,
        &["heating_load", "cooling_load"],
        serde_json::json!({"test": {"outputs": [
            {"r2": 0.97, "mse": 0.25, "pairs": pairs0, "rows": 50},
            {"r2": -3.1, "mse": 412.0, "pairs": pairs1, "rows": 900}
        ]}}),
    );
    press(&mut s, 'd');
    at_both(&s, |out, size| {
        assert!(
            out.contains("heating_load") && out.contains("0.9700"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("predicted ↑ vs true →"), "{size:?}\n{out}");
        assert!(
            out.chars().any(|c| ('\u{2801}'..='\u{28ff}').contains(&c)),
            "braille dots {size:?}\n{out}"
        );
    });
    press(&mut s, 'j');
    at_both(&s, |out, size| {
        assert!(out.contains("cooling_load · predicted"), "{size:?}\n{out}");
        assert!(out.contains("900 rows, 50 plotted"), "{size:?}\n{out}");
    });
    // No train diagnostics saved: said, not blank.
    press(&mut s, 'p');
    at_both(&s, |out, size| {
        assert!(out.contains("No train diagnostics"), "{size:?}\n{out}");
    });
}

/// A session keeps diagnostics for the first outputs, labels or classes only; the view says how
/// many it left out instead of letting the list look complete.
#[test]
fn outputs_labels_and_classes_past_the_cap_are_counted_not_hidden() {
    let mut s = with_diagnostics(
        Task::Regression,
        &["y0", "y1", "y2"],
        serde_json::json!({"test": {"outputs": [
            {"r2": 0.5, "mse": 1.0, "pairs": [[0.0, 0.1], [1.0, 0.9]], "rows": 2},
            {"r2": 0.4, "mse": 1.1, "pairs": [], "rows": 2}
        ], "omitted": 99998}}),
    );
    press(&mut s, 'd');
    shows(&s, "99998 more outputs not kept");
    press(&mut s, 'j');
    shows(&s, "not plotted (first 100");

    let label = serde_json::json!({"precision": 0.5, "recall": 0.5, "auc": 0.75, "support": 3,
                                   "rows": 10});
    let mut s = with_diagnostics(
        Task::Multilabel,
        &["a", "b"],
        serde_json::json!({"test": {"labels": [label.clone(), label], "omitted": 981}}),
    );
    press(&mut s, 'd');
    shows(&s, "981 more labels");

    let mut s = with_diagnostics(
        Task::Multiclass,
        &["c=0", "c=1"],
        serde_json::json!({"test": {"omitted": 300}}),
    );
    press(&mut s, 'd');
    shows(&s, "300 classes");
}

#[test]
fn an_old_session_gets_test_diagnostics_from_its_saved_predictions() {
    let mut s = on(finished(), Pane::Results);
    let o = &mut s.result.as_mut().unwrap().outcome;
    o.matrices.push((
        "predictions_test".into(),
        array![[0.9, -0.2, -0.9], [0.1, 0.5, -0.3]],
    ));
    o.matrices.push((
        "targets_test".into(),
        array![[1.0, -1.0, -1.0], [1.0, -1.0, -1.0]],
    ));
    press(&mut s, 'd');
    at_both(&s, |out, size| {
        assert!(out.contains("1/2 right"), "{size:?}\n{out}");
    });
}

// ---------- missing values (9) and encoded columns (10) in the Data pane ----------

fn mixed() -> Table {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mixed_columns.csv");
    let t = ovk_core::data::load_table(&path, 5).unwrap();
    Table {
        path: "toy/mixed_columns.csv".into(),
        ..t
    }
}

#[test]
fn text_dates_and_ids_get_their_roles_and_the_pane_says_so() {
    let t = mixed();
    // `NA` in a numeric column reads as missing, as the engine reads it.
    let age = t.columns.iter().find(|c| c.name == "age").unwrap();
    assert_eq!((age.dtype.as_str(), age.missing), ("f64", 2));
    let mut s = state();
    open_table(&mut s, "toy/mixed_columns.csv", Ok(t), None);
    let role = |s: &State, n: &str| {
        let i = s
            .data
            .table
            .as_ref()
            .unwrap()
            .columns
            .iter()
            .position(|c| c.name == n)
            .unwrap();
        s.data.roles[i]
    };
    assert_eq!(role(&s, "id"), Role::Ignore);
    assert_eq!(role(&s, "user"), Role::Ignore);
    assert_eq!(role(&s, "when"), Role::Ignore);
    assert_eq!(role(&s, "city"), Role::Feature);
    at_both(&s, |out, size| {
        assert!(out.contains("one-hot 3"), "{size:?}\n{out}");
        assert!(out.contains("one-hot encoded (city)"), "{size:?}\n{out}");
        assert!(out.contains("not encoded (when)"), "{size:?}\n{out}");
    });
}

#[test]
fn missing_cells_cycle_refuse_drop_impute_with_counts_and_the_reason_is_whole() {
    let mut s = state();
    open_table(&mut s, "toy/mixed_columns.csv", Ok(mixed()), None);
    s.data.col_cursor = 6;
    update(&mut s, Action::SetRole(Role::Target));
    let why = s.run_config().unwrap_err();
    assert!(why.contains("missing value: press m"), "{why}");
    at_both(&s, |out, size| {
        assert!(
            out.contains("missing: refuse (3 rows affected) m"),
            "{size:?}\n{out}"
        );
        // The whole reason, up to its last words, wrapped rather than cut.
        assert!(out.contains("ignore the column"), "{size:?}\n{out}");
    });
    press(&mut s, 'm');
    at_both(&s, |out, size| {
        assert!(out.contains("missing: drop 3 rows m"), "{size:?}\n{out}");
    });
    press(&mut s, 'm');
    let cfg = s.run_config().unwrap();
    assert!(cfg.data.impute_missing && !cfg.data.drop_missing);
    at_both(&s, |out, size| {
        assert!(out.contains("missing: impute 3 rows m"), "{size:?}\n{out}");
    });
    press(&mut s, 'm');
    assert!(s.run_config().is_err(), "back to refusing");
}

#[test]
fn a_text_id_marked_as_feature_is_refused_with_the_reason() {
    let mut s = state();
    open_table(&mut s, "toy/mixed_columns.csv", Ok(mixed()), None);
    s.data.col_cursor = 6;
    update(&mut s, Action::SetRole(Role::Target));
    s.data.col_cursor = 1;
    update(&mut s, Action::SetRole(Role::Feature));
    press(&mut s, 'm');
    let why = s.run_config().unwrap_err();
    assert!(
        why.contains("`user` is text with 40 distinct values"),
        "{why}"
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("mark it x (ignore) or c (class)"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn e_exports_the_diagnostics_on_screen() {
    let mut s = with_diagnostics(
        Task::Multiclass,
        &["digit=0", "digit=1"],
        serde_json::json!({"test": {"confusion": [[3, 1], [0, 2]]}}),
    );
    press(&mut s, 'd');
    let effects = update(&mut s, Action::Export);
    let [ovk::tui::effect::Effect::Export { name, text, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(name, "first-confusion-test");
    assert_eq!(
        text,
        "true\\predicted,digit=0,digit=1\ndigit=0,3,1\ndigit=1,0,2\n"
    );
}

#[test]
fn ten_digit_classes_fit_80_columns() {
    let names: Vec<String> = (0..10).map(|i| format!("digit={i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let m: Vec<Vec<usize>> = (0..10)
        .map(|i| {
            (0..10)
                .map(|j| if i == j { 48 } else { usize::from(j == 8) })
                .collect()
        })
        .collect();
    let mut s = with_diagnostics(
        Task::Multiclass,
        &names,
        serde_json::json!({"test": {"confusion": m}}),
    );
    press(&mut s, 'd');
    at_both(&s, |out, size| {
        assert!(!out.contains("not shown"), "{size:?}\n{out}");
        let head = out.lines().find(|l| l.contains("true\\pred")).unwrap_or("");
        assert!(
            head.contains(" 9 ") && head.contains("recall"),
            "{size:?}\n{out}"
        );
    });
}
