//! Issues 30 and 32 in the workbench, as users see them (TestBackend, 120×36 and 80×24): every
//! fit recorded and marked until kept, cancelled runs recorded as such, prune after asking;
//! `--cv K` from the Run pane and its spread in Results; optimistic metrics marked; the rows a
//! run was scored on, grouped; the columns of the selected run's task when tasks mix;
//! estimate-based progress; and the small things of issue 32's point 8.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crossterm::event::KeyCode;

use ovk::tui::action::Action;
use ovk::tui::effect::Effect;
use ovk::tui::keys::map_key;
use ovk::tui::state::{Pane, PromptKind, State};
use ovk::tui::update::update;
use ovk_core::data::Task;
use ovk_core::methods::{Phase, Value};
use ovk_core::session::{CvStat, Listing, Optimistic, RunStatus, Summary};
use ovk_core::train::sweep::{SweepResult, SweepRow};
use ovk_core::train::{Ended, RunMessage, RunOutcome};

use crate::tui_render::{
    choose, field, finished, kernel_at, key, loaded, on, open_table, outcome, run_summary, screen,
    start_phase, state, sweep_now, table,
};

const SIZES: [(u16, u16); 2] = [(120, 36), (80, 24)];

fn at_both(s: &State, check: impl Fn(&str, (u16, u16))) {
    for size in SIZES {
        check(&screen(s, size.0, size.1), size);
    }
}

fn summary_of(l: Listing) -> Summary {
    match l {
        Listing::Ok(s) => *s,
        Listing::Corrupt { .. } => unreachable!(),
    }
}

fn listed(s: &mut State, list: Vec<Listing>) {
    s.pane = Pane::Sessions;
    update(
        s,
        Action::SessionsListed {
            root: Ok("/store".into()),
            list,
        },
    );
}

/// A regression run: mse, r2 and mae on the test rows.
fn regression_run(name: &str, mse: f64) -> Listing {
    let mut r = summary_of(run_summary(name, "krr", "jura.csv", 0.1, 0.0));
    r.key_metric = Some(("mse".into(), mse));
    r.metrics = BTreeMap::from([
        ("mse".to_string(), mse),
        ("r2".to_string(), 0.41),
        ("mae".to_string(), 3.2),
    ]);
    r.split_id = "bbbbbbbbbbbb".into();
    Listing::Ok(Box::new(r))
}

#[test]
fn runs_not_kept_and_cancelled_runs_are_marked_and_pruned_after_asking() {
    let mut s = state();
    let mut unkept = summary_of(run_summary("tried", "okl", "digits.csv", 0.2, 0.93));
    unkept.kept = false;
    let mut stopped = summary_of(run_summary("stopped", "okl", "digits.csv", 0.3, 0.0));
    stopped.kept = false;
    stopped.status = RunStatus::Cancelled;
    stopped.key_metric = None;
    stopped.metrics.clear();
    listed(
        &mut s,
        vec![
            run_summary("kept-one", "okl", "digits.csv", 0.1, 0.97),
            Listing::Ok(Box::new(unkept)),
            Listing::Ok(Box::new(stopped)),
        ],
    );
    at_both(&s, |out, size| {
        let line = |name: &str| {
            out.lines()
                .find(|l| l.contains(name))
                .unwrap_or("")
                .to_string()
        };
        assert!(line("tried").contains('○'), "{size:?}\n{out}");
        assert!(
            line("stopped").contains('✕') && line("stopped").contains("cancelled"),
            "{size:?}\n{out}"
        );
        assert!(!line("kept-one").contains('○'), "{size:?}\n{out}");
        assert!(
            out.contains("○ not kept ✕ cancelled") || out.contains("○ unkept ✕ cancelled"),
            "{size:?}\n{out}"
        );
        // The compare key stays on the footer at every size.
        assert!(out.contains("c compare"), "{size:?}\n{out}");
    });
    let a = map_key(&s, key(KeyCode::Char('P'))).unwrap();
    update(&mut s, a);
    assert_eq!(
        s.prompt.as_ref().map(|p| &p.kind),
        Some(&PromptKind::ConfirmPrune { count: 2 })
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("Delete the 2 runs not kept"),
            "{size:?}\n{out}"
        );
    });
    // Anything but y keeps them.
    update(&mut s, Action::Enter);
    assert!(s.status.contains("nothing deleted"), "{}", s.status);
    update(&mut s, Action::PrunePrompt);
    update(&mut s, Action::Char('y'));
    let effects = update(&mut s, Action::Enter);
    assert!(
        matches!(effects.as_slice(), [Effect::PruneUnkept]),
        "{effects:?}"
    );
    // With every run kept there is nothing to ask.
    let mut s = state();
    listed(
        &mut s,
        vec![run_summary("kept-one", "okl", "digits.csv", 0.1, 0.97)],
    );
    update(&mut s, Action::PrunePrompt);
    assert!(s.prompt.is_none() && s.status.contains("nothing to delete"));
}

#[test]
fn each_run_shows_its_score_and_rows_and_the_table_groups_by_rows() {
    let mut s = state();
    let mut cv = summary_of(run_summary("five-fold", "okl", "digits.csv", 0.1, 0.95));
    cv.folds_id = Some("ffff00001111".into());
    cv.cv = Some((5, 0.9412, 0.0213));
    let mut other = summary_of(run_summary("other-split", "okl", "digits.csv", 0.1, 0.90));
    other.split_id = "cccccccccccc".into();
    listed(
        &mut s,
        vec![
            run_summary("first", "okl", "digits.csv", 0.1, 0.97),
            Listing::Ok(Box::new(other)),
            Listing::Ok(Box::new(cv)),
            run_summary("third", "krr", "digits.csv", 0.3, 0.96),
        ],
    );
    at_both(&s, |out, size| {
        // the score each run has, at 80 columns too
        assert!(out.contains("acc 0.9700"), "{size:?}\n{out}");
        assert!(out.contains("acc 0.9000"), "{size:?}\n{out}");
        assert!(out.contains("5× 0.9412±0.0213"), "{size:?}\n{out}");
    });
    let a = map_key(&s, key(KeyCode::Char('='))).unwrap();
    update(&mut s, a);
    assert!(s.sessions.runs.grouped);
    assert!(s.status.contains("3 groups"), "{}", s.status);
    at_both(&s, |out, size| {
        // the rows column beside the name: split id, and the folds' for the CV run
        assert!(out.contains("rows"), "{size:?}\n{out}");
        assert!(out.contains("012345/ffff"), "{size:?}\n{out}");
        assert!(out.contains("3 row groups"), "{size:?}\n{out}");
        // first and third share their rows: listed together
        let order: Vec<&str> = out
            .lines()
            .filter_map(|l| {
                ["first", "third", "other-split", "five-fold"]
                    .into_iter()
                    .find(|n| l.contains(n))
            })
            .collect();
        let pos = |n: &str| order.iter().position(|x| *x == n).unwrap();
        assert_eq!(pos("third").abs_diff(pos("first")), 1, "{size:?} {order:?}");
    });
}

#[test]
fn with_mixed_tasks_the_table_shows_the_selected_runs_columns() {
    let mut s = state();
    let mut list = vec![
        regression_run("jura-krr", 30.9),
        regression_run("jura-okl", 19.2),
    ];
    list.extend((0..3).map(|i| run_summary(&format!("digits-{i}"), "okl", "digits.csv", 0.1, 0.9)));
    listed(&mut s, list);
    assert_eq!(s.sessions.cursor, 0);
    at_both(&s, |out, size| {
        assert!(
            out.contains("mse runs' columns") || size.0 < 100,
            "{size:?}\n{out}"
        );
        assert!(!out.contains("test accuracy"), "{size:?}\n{out}");
        // every run's own metric, whatever its task
        assert!(
            out.contains("mse 30.9") && out.contains("acc 0.9000"),
            "{size:?}\n{out}"
        );
    });
    assert!(screen(&s, 120, 36).contains("test mse"));
    update(&mut s, Action::Bottom);
    let out = screen(&s, 120, 36);
    assert!(
        out.contains("test accuracy") && !out.contains("test mse"),
        "{out}"
    );
    assert!(out.contains("accuracy runs' columns"), "{out}");
}

#[test]
fn optimistic_metrics_carry_a_dagger_and_say_why() {
    let reason = "λ chosen on the test rows (--select-on test)";
    let mut s = state();
    let mut opt = summary_of(run_summary("paper", "lowrank-okl", "jura.csv", 0.1, 0.99));
    opt.optimistic = Some(reason.into());
    listed(&mut s, vec![Listing::Ok(Box::new(opt))]);
    at_both(&s, |out, size| {
        assert!(out.contains("0.9900†"), "{size:?}\n{out}");
        assert!(
            out.contains("† optimistic test metrics: λ chosen"),
            "{size:?}\n{out}"
        );
    });
    let mut o = outcome("paper");
    o.record.optimistic = Some(Optimistic {
        parts: vec!["test".into()],
        reason: reason.into(),
    });
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Recorded {
            dir: "/store/paper".into(),
            ended: Ended::Finished(Box::new(o)),
        }),
    );
    let s = on(s, Pane::Results);
    at_both(&s, |out, size| {
        assert!(
            out.contains("test†") && out.contains("0.9712†"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("λ chosen on the"), "{size:?}\n{out}");
    });
}

fn cv_outcome() -> RunOutcome {
    let mut o = outcome("five-fold");
    o.record.cv = Some(BTreeMap::from([(
        "accuracy".to_string(),
        CvStat {
            mean: 0.95,
            sd: 0.01,
            folds: vec![0.94, 0.95, 0.96],
        },
    )]));
    o.record.config.cv = Some(3);
    o
}

#[test]
fn f_in_run_sets_the_folds_and_results_show_mean_sd_and_each_fold() {
    let mut s = on(loaded(), Pane::Run);
    assert!(
        screen(&s, 80, 24).contains("cv      none"),
        "{}",
        screen(&s, 80, 24)
    );
    let a = map_key(&s, key(KeyCode::Char('f'))).unwrap();
    update(&mut s, a);
    assert_eq!(s.cv, Some(3));
    at_both(&s, |out, size| {
        assert!(
            out.contains("cv      3 folds of the training part"),
            "{size:?}\n{out}"
        );
    });
    update(&mut s, Action::CycleFolds);
    assert_eq!(s.cv, Some(5));
    let effects = update(&mut s, Action::StartRun);
    assert!(
        matches!(effects.as_slice(), [Effect::StartRun(c)] if c.cv == Some(5)),
        "{effects:?}"
    );
    update(
        &mut s,
        Action::Run(RunMessage::Recorded {
            dir: "/store/cv".into(),
            ended: Ended::Finished(Box::new(cv_outcome())),
        }),
    );
    update(&mut s, Action::CycleFolds);
    update(&mut s, Action::CycleFolds);
    assert_eq!(s.cv, None);
    let r = on(s, Pane::Results);
    at_both(&r, |out, size| {
        assert!(out.contains("cv 3 folds"), "{size:?}\n{out}");
        assert!(out.contains("0.9500 ± 0.0100"), "{size:?}\n{out}");
    });
    let out = screen(&r, 120, 36);
    assert!(out.contains("folds 0.9400 · 0.9500 · 0.9600"), "{out}");
    // A sweep's configurations are never cross-validated twice.
    let mut s = kernel_at("lambda");
    s.cv = Some(5);
    update(&mut s, Action::SweepPrompt);
    let effects = sweep_now(&mut s, "1e-3 1 3 log cv=3");
    let [Effect::StartSweep { configs, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert!(configs.iter().all(|c| c.cv.is_none()));
}

#[test]
fn the_predict_view_shows_the_metrics_when_the_file_holds_the_outputs() {
    let mut s = state();
    listed(
        &mut s,
        vec![run_summary("alpha", "okl", "digits.csv", 0.1, 0.97)],
    );
    let n = 6;
    let table = ovk_core::train::PredictionTable {
        output_names: vec!["c0".into(), "c1".into()],
        scores: ndarray::Array2::from_shape_fn((n, 2), |(i, k)| (i * 2 + k) as f64),
        decoded: vec![],
        filled_rows: 0,
        scored: Some(ovk_core::train::Scored {
            metrics: BTreeMap::from([("accuracy".to_string(), 0.8333)]),
            rows: (0..n).collect(),
            trained_left_out: 0,
            truth: vec![],
        }),
    };
    update(
        &mut s,
        Action::Predicted(Ok(Box::new(ovk::tui::state::Predictions {
            session: "alpha".into(),
            data: "labelled.csv".into(),
            table,
            scroll: 0,
            ignored: vec![],
        }))),
    );
    assert!(s.status.contains("6 scored"), "{}", s.status);
    at_both(&s, |out, size| {
        assert!(
            out.contains("scored on 6 of 6 rows") && out.contains("accuracy 0.8333"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn a_long_decomposition_moves_against_its_estimate() {
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    let t0 = s.now;
    update(
        &mut s,
        Action::Run(RunMessage::Estimate(vec![
            (Phase::Gram, 2.0),
            (Phase::Decomposition, 60.0),
        ])),
    );
    start_phase(&mut s, Phase::Decomposition, None);
    update(&mut s, Action::Tick(t0 + Duration::from_secs(15)));
    at_both(&s, |out, size| {
        assert!(out.contains("45.0 s left (estimate)"), "{size:?}\n{out}");
        // the bar moved: a quarter of it filled
        assert!(out.contains('█'), "{size:?}\n{out}");
    });
    assert!(screen(&s, 120, 36).contains("decomposition ~25%"));
    update(&mut s, Action::Tick(t0 + Duration::from_secs(75)));
    at_both(&s, |out, size| {
        assert!(
            out.contains("past its 1 m 00 s estimate"),
            "{size:?}\n{out}"
        );
    });
    // The worker's memory is the fit's own.
    update(
        &mut s,
        Action::WorkerMemory {
            rss: 1 << 30,
            peak: 3 << 29,
        },
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("memory 1.0 GiB (peak 1.5 GiB)"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn at_80_columns_a_sweep_keeps_its_count_and_eta() {
    let mut s = kernel_at("lambda");
    update(&mut s, Action::SweepPrompt);
    sweep_now(&mut s, "1e-3 10 12 log cv=3");
    let t0 = s.now;
    for i in 0..3 {
        update(
            &mut s,
            Action::Run(RunMessage::SweepRow(Box::new(
                crate::tui_render::sweep_row(i, 0.9),
            ))),
        );
    }
    update(&mut s, Action::Tick(t0 + Duration::from_secs(754)));
    let s = on(s, Pane::Run);
    at_both(&s, |out, size| {
        let line = out.lines().find(|l| l.contains("3/12")).unwrap_or_default();
        assert!(line.contains("ETA"), "{size:?}\n{out}");
        assert!(line.contains('░') || line.contains('█'), "{size:?}\n{out}");
    });
}

#[test]
fn g_and_capital_g_scroll_the_help_without_closing_it() {
    let mut s = state();
    update(&mut s, Action::ToggleHelp);
    for c in ['G', 'g', 'G'] {
        let a = map_key(&s, key(KeyCode::Char(c))).unwrap();
        update(&mut s, a);
        assert!(s.help, "{c} closed the help");
    }
    let out = screen(&s, 80, 24);
    assert!(out.contains("play / pause the trace"), "{out}");
}

fn sweep_outcome() -> RunOutcome {
    let mut o = outcome("toy-okl-best");
    let rows: Vec<SweepRow> = [0.001, 0.01, 0.1, 1.0]
        .iter()
        .enumerate()
        .map(|(i, l)| SweepRow {
            index: i,
            values: BTreeMap::from([("lambda".to_string(), Value::Float(*l).to_string())]),
            metric: "accuracy".into(),
            higher_is_better: true,
            mean: 0.8 + 0.05 * i as f64,
            sd: 0.01,
            fold_scores: vec![0.8, 0.8, 0.8],
            seconds: 0.1,
            error: None,
            rung: None,
            train_rows: None,
        })
        .collect();
    let table = SweepResult {
        folds: Some(3),
        rows,
        best: Some(3),
        interrupted: false,
    };
    o.record
        .details
        .insert("sweep".into(), serde_json::to_value(table).unwrap());
    o
}

#[test]
fn a_sweeps_cv_curve_shows_in_its_replay() {
    let s = on(
        ovk::tui::replay_state(sweep_outcome(), "/store/sweep".into()),
        Pane::Charts,
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("Sweep: 3-fold CV accuracy per λ (4/4 scored)"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn u_copies_an_opened_sessions_settings_into_the_form() {
    let mut s = loaded();
    assert_eq!(s.method().unwrap().name(), "okl");
    let mut o = outcome("krr-run");
    o.record.method = "krr".into();
    o.record.config.method = "krr".parse().unwrap();
    o.record.params = ovk_core::methods::Params::new().with("lambda", Value::Float(0.5));
    o.record.config.cv = Some(5);
    o.record.config.data.seed = 7;
    update(
        &mut s,
        Action::SessionOpened(Ok(Box::new(("/store/krr-run".into(), o)))),
    );
    assert_eq!(s.pane, Pane::Results);
    let a = map_key(&s, key(KeyCode::Char('u'))).unwrap();
    update(&mut s, a);
    assert_eq!(s.method().unwrap().name(), "krr");
    assert_eq!(field(&s, "lambda").text, "0.5");
    assert_eq!(s.cv, Some(5));
    assert_eq!(s.data.split.seed, 7);
    assert!(
        s.status.contains("settings of 'krr-run' are in the form"),
        "{}",
        s.status
    );
    let cfg = s.run_config().unwrap();
    assert_eq!((cfg.method.name(), cfg.cv), ("krr", Some(5)));
}

#[test]
fn a_sweeps_best_does_not_stay_in_the_form_on_other_data() {
    let mut s = kernel_at("lambda");
    let default = field(&s, "lambda").text.clone();
    update(&mut s, Action::SweepPrompt);
    sweep_now(&mut s, "1e-3 1 4 log cv=3");
    for (i, m) in [0.8, 0.85, 0.95, 0.9].into_iter().enumerate() {
        let mut row = crate::tui_render::sweep_row(i, m);
        row.values = BTreeMap::from([(
            "lambda".to_string(),
            ["0.001", "0.01", "0.1", "1"][i].to_string(),
        )]);
        update(&mut s, Action::Run(RunMessage::SweepRow(Box::new(row))));
    }
    update(
        &mut s,
        Action::Run(RunMessage::Recorded {
            dir: "/store/best".into(),
            ended: Ended::Finished(Box::new(outcome("toy-okl-best"))),
        }),
    );
    assert_eq!(field(&s, "lambda").text, "0.1");
    // The same file again: the best stays.
    open_table(&mut s, "toy/digits.csv", Ok(table()), None);
    assert_eq!(field(&s, "lambda").text, "0.1");
    // Other data: back to the default, and said.
    let mut other = table();
    other.path = "toy/other.csv".into();
    open_table(&mut s, "toy/other.csv", Ok(other), None);
    assert_eq!(field(&s, "lambda").text, default);
    assert!(
        s.status
            .contains("lambda = 0.1 was the sweep's best on digits.csv"),
        "{}",
        s.status
    );
    // A method chosen since keeps its own form; the sweep's method is reset all the same.
    let _ = choose;
}

#[test]
fn a_run_the_worker_recorded_as_cancelled_says_so() {
    let mut s = on(finished(), Pane::Run);
    update(&mut s, Action::StartRun);
    start_phase(&mut s, Phase::Decomposition, None);
    update(&mut s, Action::CancelRun);
    at_both(&s, |out, size| {
        assert!(out.contains("stopped within a second"), "{size:?}\n{out}");
    });
    let mut rec = outcome("digits-okl").record;
    rec.status = RunStatus::Cancelled;
    rec.kept = false;
    let effects = update(
        &mut s,
        Action::Run(RunMessage::Recorded {
            dir: "/store/digits-okl".into(),
            ended: Ended::Cancelled(Box::new(rec)),
        }),
    );
    assert!(matches!(effects.as_slice(), [Effect::ListSessions]));
    assert!(
        s.status.contains("recorded as cancelled ('digits-okl'"),
        "{}",
        s.status
    );
    at_both(&s, |out, size| {
        assert!(out.contains("recorded as cancelled"), "{size:?}\n{out}");
        assert!(out.contains("stopped in decomposition"), "{size:?}\n{out}");
    });
    // the earlier result is still shown, and is what s keeps
    assert_eq!(s.result.as_ref().unwrap().outcome.record.name, "first");
}

#[test]
fn the_memory_line_says_whose_peak_it_is() {
    let mut o = outcome("mem");
    o.record.details.insert(
        "memory".into(),
        serde_json::json!({
            "estimated_peak_bytes": 2u64 << 30,
            "estimated_peak": "2.0 GiB",
            "process_peak_rss_bytes": 3u64 << 29,
            "process": "worker",
        }),
    );
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Recorded {
            dir: "/store/mem".into(),
            ended: Ended::Finished(Box::new(o)),
        }),
    );
    let out = screen(&on(s, Pane::Results), 120, 36);
    assert!(
        out.contains("estimated peak 2.0 GiB · measured peak 1.5 GiB (the fit's own process)"),
        "{out}"
    );
}

#[test]
fn a_cancelled_session_opened_from_the_table_reads_as_cancelled() {
    let mut rec = outcome("stopped").record;
    rec.status = RunStatus::Cancelled;
    rec.kept = false;
    rec.metrics = Default::default();
    rec.baseline = None;
    rec.task = Task::Multiclass;
    let o = RunOutcome {
        record: rec,
        matrices: vec![],
    };
    let mut s = loaded();
    update(
        &mut s,
        Action::SessionOpened(Ok(Box::new((PathBuf::from("/store/stopped"), o)))),
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("cancelled, none") || size.0 < 100,
            "{size:?}\n{out}"
        );
        assert!(out.contains("no model, no"), "{size:?}\n{out}");
    });
}
