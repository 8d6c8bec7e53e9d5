//! `summary_text`: the key facts of a session, and a trace table that stays short.

use crate::common::fixture;

use fixture::record;
use ovk_core::session::summary_text;

#[test]
fn summary_names_the_key_fields() {
    let mut rec = record("yeast okl", "2026-11-21T06:00:00Z", 3);
    rec.id = "20261121-060000-yeast-okl".into();
    let text = summary_text(&rec);
    for needle in [
        "yeast okl",
        "20261121-060000-yeast-okl",
        "2026-11-21T06:00:00Z",
        "/data/yeast.csv",
        "8 rows",
        "multilabel",
        "okl",
        "gaussian(σ=1.2500)",
        "median heuristic",
        "lambda=0.1",
        "max_iter=50",
        "train 6, test 2",
        "mean_auc",
        "0.8000",
        "0.9500",
        "baseline test",
        "0.7500",
        "fit 0.5000 s",
        "converged after 3 iterations",
        "objective 1.5000",
        "step halved twice",
        "Trace (3 records)",
        "val metric",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    // an official split is named by its column, not by a fraction it did not use
    rec.config.data.test_column = Some("is_test".into());
    let text = summary_text(&rec);
    assert!(
        text.contains("train 6, test 2 (test rows marked by `is_test`, seed"),
        "{text}"
    );
}

#[test]
fn summary_says_when_a_fit_did_not_converge() {
    let mut rec = record("x", "2026-11-21T06:00:00Z", 1);
    rec.converged = false;
    rec.objective = None;
    let text = summary_text(&rec);
    assert!(
        text.contains("did NOT converge after 1 iteration,"),
        "{text}"
    );
    assert!(text.contains("objective not computed"), "{text}");
}

/// The trace table's lines, header first.
fn trace_lines(text: &str) -> Vec<&str> {
    text.lines()
        .skip_while(|l| !l.starts_with("Trace"))
        .skip(1)
        .collect()
}

#[test]
fn long_traces_show_head_and_tail() {
    let rec = record("long", "2026-11-21T06:00:00Z", 100);
    let text = summary_text(&rec);
    let lines = trace_lines(&text);
    // header + 20 + ellipsis + 20
    assert_eq!(lines.len(), 42, "{text}");
    let first_cell = |l: &str| l.split_whitespace().next().unwrap_or("").to_string();
    let iters: Vec<String> = lines.iter().map(|l| first_cell(l)).collect();
    assert_eq!(iters[0], "iter");
    assert_eq!(iters[1], "0");
    assert_eq!(iters[20], "19");
    assert!(lines[21].contains("… 60 more"), "{}", lines[21]);
    assert_eq!(iters[22], "80");
    assert_eq!(iters[41], "99");
    assert!(!iters.contains(&"50".to_string()));
    // aligned: every table row has the same width
    let width = lines[0].chars().count();
    for l in lines.iter().filter(|l| !l.contains('…')) {
        assert_eq!(l.chars().count(), width, "{l:?}");
    }
}

#[test]
fn traces_up_to_forty_are_shown_whole() {
    let text = summary_text(&record("whole", "2026-11-21T06:00:00Z", 40));
    let lines = trace_lines(&text);
    assert_eq!(lines.len(), 41);
    assert!(!text.contains('…'));
}
