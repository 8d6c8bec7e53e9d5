//! Issue 31 in the workbench: several Kernel fields marked for search with `w`, searched from
//! Run by grid, random draws or successive halving, and the scores drawn in Charts as a
//! σ × λ heatmap (two varying fields) or a ranked table (more) — TestBackend at 120×36 and
//! 80×24.

use std::collections::BTreeMap;

use ovk::tui::action::Action;
use ovk::tui::effect::Effect;
use ovk::tui::state::{Pane, PromptKind, State};
use ovk::tui::update::update;
use ovk_core::train::{RunConfig, RunMessage};

use crate::tui_render::{kernel_at, on, screen, sweep_row, type_prompt};

const SIZES: [(u16, u16); 2] = [(120, 36), (80, 24)];

fn at_both(s: &State, check: impl Fn(&str, (u16, u16))) {
    for size in SIZES {
        check(&screen(s, size.0, size.1), size);
    }
}

/// `w` on field `key` in Kernel and `range` at its prompt: the field is marked, nothing runs.
fn mark(s: &mut State, key: &str, range: &str) {
    s.pane = Pane::Kernel;
    s.kernel.cursor = s
        .kernel
        .visible()
        .iter()
        .position(|&i| s.kernel.fields[i].key() == key)
        .unwrap();
    update(s, Action::SweepPrompt);
    let effects = type_prompt(s, range);
    assert!(effects.is_empty() && s.prompt.is_none(), "{}", s.status);
    assert!(
        s.search.get(key).is_some(),
        "{key} not marked: {}",
        s.status
    );
}

/// `w` in Run and `how` at its prompt.
fn search(s: &mut State, how: &str) -> Vec<Effect> {
    s.pane = Pane::Run;
    update(s, Action::SweepPrompt);
    assert!(
        matches!(&s.prompt, Some(p) if p.kind == PromptKind::Search),
        "{:?} {}",
        s.prompt,
        s.status
    );
    type_prompt(s, how)
}

fn sigma(c: &RunConfig) -> String {
    c.kernel.sigma.to_string()
}

fn lambda(c: &RunConfig) -> String {
    c.params.0["lambda"].to_string()
}

#[test]
fn w_marks_fields_and_a_grid_searches_every_combination() {
    let mut s = kernel_at("lambda");
    // Nothing marked: w in Run says how to mark.
    s.pane = Pane::Run;
    update(&mut s, Action::SweepPrompt);
    assert!(
        s.prompt.is_none() && s.status.contains("no field is marked"),
        "{}",
        s.status
    );
    mark(&mut s, "sigma", "0.1 10 3 log");
    mark(&mut s, "lambda", "1e-3 1 4 log cv=3");
    assert!(s.status.contains("marked: σ, λ"), "{}", s.status);
    // Kernel shows each mark's range beside the value; Run lists the marks and the key.
    at_both(&on(s.clone(), Pane::Kernel), |out, size| {
        assert!(out.contains("≈ 1e-3 1 4 log"), "{size:?}\n{out}");
    });
    at_both(&on(s.clone(), Pane::Run), |out, size| {
        assert!(out.contains("marked  σ 0.1 10 3 log"), "{size:?}\n{out}");
    });
    // Changing a range keeps the mark's place; an empty range unmarks.
    mark(&mut s, "lambda", "1e-3 1 4 log");
    assert_eq!(s.search.marks.len(), 2);
    let effects = search(&mut s, "grid cv=3");
    let [Effect::StartSweep { configs, folds }] = effects.as_slice() else {
        panic!("{effects:?} {}", s.status)
    };
    assert_eq!(*folds, Some(3));
    assert_eq!(configs.len(), 12);
    // σ varies slowest, as `ovk sweep` orders a grid.
    let pairs: Vec<(String, String)> = configs.iter().map(|c| (sigma(c), lambda(c))).collect();
    assert_eq!(pairs[0], ("0.1".into(), "0.001".into()));
    assert_eq!(pairs[1], ("0.1".into(), "0.01".into()));
    assert_eq!(pairs[4], ("1".into(), "0.001".into()));
    assert_eq!(pairs[11], ("10".into(), "1".into()));
    assert!(configs.iter().all(|c| c.data.cv.is_none()));
    // Scores arrive: Run lists them by configuration, Charts draws the σ × λ heatmap with the
    // best cell starred.
    for (i, p) in pairs.iter().enumerate() {
        let mut row = sweep_row(i, 0.5 + 0.01 * i as f64);
        row.values = BTreeMap::from([
            ("sigma".into(), p.0.clone()),
            ("lambda".into(), p.1.clone()),
        ]);
        if i == 6 {
            row.mean = 0.99;
        }
        update(&mut s, Action::Run(RunMessage::SweepRow(Box::new(row))));
    }
    at_both(&on(s.clone(), Pane::Run), |out, size| {
        assert!(
            out.contains("Search of σ × λ — 12/12 scored, * best"),
            "{size:?}\n{out}"
        );
    });
    at_both(&on(s.clone(), Pane::Charts), |out, size| {
        assert!(out.contains("σ × λ"), "{size:?}\n{out}");
        assert!(
            out.contains("λ down (log), σ across (log)"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("*0.990"), "{size:?}\n{out}");
        // configuration 6 is σ = 1, λ = 0.1
        assert!(out.contains("* best: σ = 1, λ = 0.1"), "{size:?}\n{out}");
        // every λ labels a row, every σ a column
        for label in ["0.001", "0.01", "0.1", " 1 ", " 10 "] {
            assert!(out.contains(label), "{label} {size:?}\n{out}");
        }
    });
    // The heatmap's rows: λ = 1 on top, λ = 0.001 at the bottom.
    let out = screen(&on(s.clone(), Pane::Charts), 120, 36);
    let top = out.lines().position(|l| l.contains("        1 ")).unwrap();
    let bottom = out.lines().position(|l| l.contains("    0.001 ")).unwrap();
    assert!(top < bottom, "{out}");
    // unmarking
    s.pane = Pane::Kernel;
    s.kernel.cursor = s
        .kernel
        .visible()
        .iter()
        .position(|&i| s.kernel.fields[i].key() == "sigma")
        .unwrap();
    update(&mut s, Action::SweepPrompt);
    type_prompt(&mut s, "");
    assert!(s.search.get("sigma").is_none(), "{}", s.status);
}

#[test]
fn random_search_is_seeded_and_three_fields_rank_in_a_table() {
    let draw = |seed: u64| {
        let mut s = kernel_at("lambda");
        mark(&mut s, "sigma", "0.1 10 3 log");
        mark(&mut s, "lambda", "1e-4 1 5 log");
        mark(&mut s, "input_rank", "5 50 3 log");
        let effects = search(&mut s, &format!("random trials=9 seed={seed} cv=2"));
        let [Effect::StartSweep { configs, folds }] = effects.as_slice() else {
            panic!("{effects:?} {}", s.status)
        };
        assert_eq!(*folds, Some(2));
        (s, configs.clone())
    };
    let (mut s, a) = draw(7);
    let (_, b) = draw(7);
    let (_, c) = draw(8);
    assert_eq!(a.len(), 9);
    let settings = |v: &[RunConfig]| {
        v.iter()
            .map(|c| format!("{} {} {}", sigma(c), lambda(c), c.kernel.input_rank))
            .collect::<Vec<_>>()
    };
    assert_eq!(settings(&a), settings(&b), "the same seed draws the same");
    assert_ne!(settings(&a), settings(&c), "another seed draws others");
    // log-uniform within the ranges, ranks whole
    for c in &a {
        let l: f64 = lambda(c).parse().unwrap();
        let sg: f64 = sigma(c).parse().unwrap();
        let r: usize = c.kernel.input_rank.to_string().parse().unwrap();
        assert!((1e-4..=1.0).contains(&l) && (0.1..=10.0).contains(&sg) && (5..=50).contains(&r));
    }
    for i in 0..9 {
        update(
            &mut s,
            Action::Run(RunMessage::SweepRow(Box::new(sweep_row(
                i,
                0.6 + 0.03 * i as f64,
            )))),
        );
    }
    at_both(&on(s.clone(), Pane::Charts), |out, size| {
        assert!(out.contains("ranked, best first"), "{size:?}\n{out}");
        assert!(out.contains("rank"), "{size:?}\n{out}");
        // the best (configuration 8) ranks first
        let first = out
            .lines()
            .find(|l| l.contains("│1 ") || l.contains("│ 1 "))
            .unwrap_or("");
        assert!(first.contains("0.84"), "{size:?}\n{out}");
    });
    // A random search needs its trials; a grid refuses them.
    let mut s = kernel_at("lambda");
    mark(&mut s, "lambda", "1e-4 1 5 log");
    let refused = search(&mut s, "random seed=1");
    assert!(
        refused.is_empty() && s.status.contains("trials=N"),
        "{}",
        s.status
    );
    let refused = type_prompt(&mut s, "grid trials=4");
    assert!(
        refused.is_empty() && s.status.contains("every combination"),
        "{}",
        s.status
    );
}

#[test]
fn halving_from_the_workbench_counts_evaluations_and_keeps_the_last_rung() {
    let mut s = kernel_at("lambda");
    mark(&mut s, "sigma", "0.1 10 3 log");
    mark(&mut s, "lambda", "1e-3 1 3 log");
    let effects = search(&mut s, "halving factor=3 cv=3");
    let [Effect::StartHalving {
        configs,
        folds,
        factor,
    }] = effects.as_slice()
    else {
        panic!("{effects:?} {}", s.status)
    };
    assert_eq!((configs.len(), *folds, *factor), (9, Some(3), 3));
    // 9 configurations on few rows, the best 3 on more, the best one on all: 13 evaluations.
    for i in 0..9 {
        let mut r = sweep_row(i, 0.5 + 0.01 * i as f64);
        r.rung = Some(0);
        r.train_rows = Some(30);
        update(&mut s, Action::Run(RunMessage::SweepRow(Box::new(r))));
    }
    // configuration 0 scores best on the second rung although it was worst on the first
    for (i, m) in [(0, 0.95), (7, 0.7), (8, 0.8)] {
        let mut r = sweep_row(i, m);
        r.rung = Some(1);
        r.train_rows = Some(90);
        update(&mut s, Action::Run(RunMessage::SweepRow(Box::new(r))));
    }
    assert_eq!(s.run.sweep.as_ref().unwrap().best().unwrap().index, 0);
    at_both(&on(s.clone(), Pane::Run), |out, size| {
        assert!(
            out.contains("Halving of σ × λ — 12/13 evaluations"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("rows"), "{size:?}\n{out}");
    });
    at_both(&on(s.clone(), Pane::Charts), |out, size| {
        assert!(out.contains("*0.950"), "{size:?}\n{out}");
    });
    // halving needs folds to compare on
    let mut s = kernel_at("lambda");
    mark(&mut s, "lambda", "1e-3 1 3 log");
    let refused = search(&mut s, "halving cv=0");
    assert!(
        refused.is_empty() && s.status.contains("cv=K"),
        "{}",
        s.status
    );
}

#[test]
fn sessions_compares_every_marked_run_with_paired_tests_and_the_kernel_difference() {
    use ovk_core::data::Task;
    use ovk_core::metrics::PairedTest;
    use ovk_core::session::compare::{Comparison, MetricRow, PairedRow, PerOutput, RunColumn};
    let run = |k: usize| RunColumn {
        id: format!("id{k}"),
        name: format!("run-{k}"),
        method: ["okl", "krr", "lowrank-okl"][k].into(),
        dataset: "yeast.csv".into(),
        task: Task::Multilabel,
        split: "abcdef12".into(),
        folds: Some("f0f0f0f0".into()),
        optimistic: None,
    };
    let c = Comparison {
        runs: (0..3).map(run).collect(),
        metrics: vec![MetricRow {
            part: "cv".into(),
            metric: "mean_auc".into(),
            higher_is_better: true,
            values: vec![Some(0.81), Some(0.79), Some(0.83)],
            sd: vec![Some(0.01), Some(0.02), Some(0.01)],
            best: Some(2),
        }],
        per_output: Some(PerOutput {
            metric: "auc".into(),
            outputs: vec!["Class1".into(), "Class2".into()],
            values: vec![
                vec![Some(0.7), Some(0.6), Some(0.8)],
                vec![Some(0.9), Some(0.95), Some(0.85)],
            ],
            best: vec![Some(2), Some(1)],
        }),
        paired: vec![PairedRow {
            metric: "mean_auc".into(),
            a: 0,
            b: 1,
            test: PairedTest {
                n: 5,
                mean_difference: 0.02,
                sd_difference: 0.01,
                t: 4.47,
                t_p: 0.011,
                w: 15.0,
                w_p: 0.0625,
            },
        }],
        caveat: Some("the folds share training rows".into()),
        kernel_difference: Some(ndarray::array![[0.5, -0.2], [-0.2, 0.1]]),
        notes: vec![],
    };
    let mut s = on(kernel_at("lambda"), Pane::Sessions);
    s.sessions.list = (0..3)
        .map(|k| crate::tui_render::run_summary(&format!("run-{k}"), "okl", "yeast.csv", 0.1, 0.8))
        .collect();
    update(&mut s, Action::ComparisonLoaded(Ok(Box::new(c))));
    assert!(s.status.contains("3 runs side by side"), "{}", s.status);
    at_both(&s, |out, size| {
        assert!(out.contains("Compare 3 runs"), "{size:?}\n{out}");
        // every run a column, the best starred
        assert!(
            out.lines()
                .any(|l| l.contains("cv mean_auc") && l.contains("0.8300±0.0100*")),
            "{size:?}\n{out}"
        );
    });
    // the per-output AUCs, the paired p-values and the kernel difference at 120 columns
    let out = screen(&s, 120, 36);
    assert!(out.contains("per output: auc"), "{out}");
    assert!(out.contains("L₁ − L₂"), "{out}");
    let mut s2 = s.clone();
    update(&mut s2, Action::MoveCursor(0, 10));
    let out = screen(&s2, 120, 36);
    assert!(
        out.lines()
            .any(|l| l.contains("mean_auc") && l.contains("0.0110") && l.contains("0.0625")),
        "{out}"
    );
    // Esc closes it
    update(&mut s, Action::Back);
    assert!(s.sessions.comparison.is_none(), "{}", s.status);
}

#[test]
fn matrices_reads_l_as_correlations_in_clustered_order() {
    use ovk_core::train::RunOutcome;
    let mut s = crate::tui_render::finished();
    let names = ["alpha", "bravo", "charlie", "delta"];
    let f = s.result.as_mut().unwrap();
    f.outcome.record.output_names = names.iter().map(|n| n.to_string()).collect();
    // alpha goes with charlie, bravo with delta; raw diagonal 4
    let l = ndarray::array![
        [4.0, 0.0, 3.6, 0.1],
        [0.0, 4.0, 0.1, 3.6],
        [3.6, 0.1, 4.0, 0.0],
        [0.1, 3.6, 0.0, 4.0]
    ];
    f.outcome = RunOutcome {
        record: f.outcome.record.clone(),
        matrices: vec![("output_kernel".into(), l)],
    };
    let mut s = on(s, Pane::Matrices);
    let order = |s: &State| -> Vec<&'static str> {
        let out = screen(s, 120, 36);
        let mut seen = Vec::new();
        for line in out.lines() {
            let right: String = line.chars().skip(35).collect();
            for n in names {
                if right
                    .trim_start()
                    .trim_start_matches('│')
                    .trim_start()
                    .starts_with(n)
                    && !seen.contains(&n)
                {
                    seen.push(n);
                }
            }
        }
        seen
    };
    assert_eq!(order(&s), names, "{}", screen(&s, 120, 36));
    update(&mut s, Action::ToggleOrder);
    update(&mut s, Action::ToggleCorrelation);
    let out = screen(&s, 120, 36);
    assert!(out.contains("correlation, clustered"), "{out}");
    let o = order(&s);
    let at = |n: &str| o.iter().position(|x| *x == n).unwrap();
    assert_eq!(at("alpha").abs_diff(at("charlie")), 1, "{o:?}\n{out}");
    assert_eq!(at("bravo").abs_diff(at("delta")), 1, "{o:?}\n{out}");
    // the diagonal reads 1 as a correlation, not the raw 4
    let f = s.result.as_ref().unwrap();
    let m = &f.outcome.matrices[0].1;
    assert_eq!(ovk_core::inspect::correlation(m.view())[[0, 0]], 1.0);
    update(&mut s, Action::ToggleCorrelation);
    update(&mut s, Action::ToggleOrder);
    assert_eq!(order(&s), names);
    // raw in file order again: the title names no view (the status line names the keys)
    at_both(&s, |out, size| {
        assert!(!out.contains("output_kernel · "), "{size:?}\n{out}")
    });
}

#[test]
fn e_on_a_chart_or_heatmap_asks_the_figure_file_and_never_overwrites_unasked() {
    use ovk::figure::{Figure, Order};
    use std::path::PathBuf;
    // Not recorded yet: e keeps writing the CSV.
    let mut s = on(crate::tui_render::finished(), Pane::Matrices);
    let effects = update(&mut s, Action::Export);
    assert!(
        matches!(effects.as_slice(), [Effect::Export { .. }]),
        "{effects:?}"
    );
    // Recorded: a figure of the matrix as Matrices reads it, to a file the user confirms.
    s.result.as_mut().unwrap().saved = Some(PathBuf::from("/store/first-id"));
    update(&mut s, Action::ToggleCorrelation);
    let effects = update(&mut s, Action::Export);
    assert!(effects.is_empty());
    let Some(p) = s.prompt.clone() else {
        panic!("no prompt: {}", s.status)
    };
    assert!(p.text.ends_with("output_kernel.svg"), "{}", p.text);
    at_both(&s, |out, size| {
        assert!(
            out.contains("Export figure") && out.contains(".svg or .png"),
            "{size:?}\n{out}"
        )
    });
    let effects = type_prompt(&mut s, "L.txt");
    assert!(
        effects.is_empty() && s.status.contains(".svg or .png"),
        "{}",
        s.status
    );
    let effects = type_prompt(&mut s, "L.png");
    let [Effect::ExportFigure {
        session,
        figure,
        path,
        overwrite,
    }] = effects.as_slice()
    else {
        panic!("{effects:?} {}", s.status)
    };
    assert_eq!(session, &PathBuf::from("/store/first-id"));
    assert_eq!(
        figure,
        &Figure::Matrix {
            name: "output_kernel".into(),
            order: Order::File,
            correlation: true
        }
    );
    assert_eq!((path.clone(), *overwrite), (PathBuf::from("L.png"), false));
    // The file is there: asked; n keeps it, y draws over it.
    let exists = || Action::FigureExists {
        session: session.clone(),
        figure: figure.clone(),
        path: path.clone(),
    };
    update(&mut s, exists());
    at_both(&s, |out, size| {
        assert!(
            out.contains("L.png exists: overwrite it? y"),
            "{size:?}\n{out}"
        )
    });
    let effects = type_prompt(&mut s, "n");
    assert!(
        effects.is_empty() && s.status.contains("kept as it was"),
        "{}",
        s.status
    );
    update(&mut s, exists());
    let effects = type_prompt(&mut s, "y");
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::ExportFigure {
                overwrite: true,
                ..
            }]
        ),
        "{effects:?}"
    );
    // Charts of a recorded run: its trace.
    let mut s = on(s, Pane::Charts);
    update(&mut s, Action::Export);
    let effects = type_prompt(&mut s, "trace.svg");
    assert!(
        matches!(
            effects.as_slice(),
            [Effect::ExportFigure {
                figure: Figure::Trace,
                ..
            }]
        ),
        "{effects:?}"
    );
}

/// A searched σ far from the median distance the kernel will see is said before the fits, as
/// `ovk sweep` says it: the driver computes the warnings of the search's own configurations
/// in the background, and Run's notes show them.
#[test]
fn a_search_over_widths_far_from_the_median_warns_in_run() {
    let mut s = kernel_at("sigma");
    mark(&mut s, "sigma", "500 5000 2 log");
    let effects = search(&mut s, "grid cv=3");
    let [Effect::StartSweep { configs, .. }] = effects.as_slice() else {
        panic!("{effects:?} {}", s.status)
    };
    // The state's table is a stand-in: the same search on the real digits table.
    let digits = crate::common::binary::root().join("datasets/digits.csv");
    let configs: Vec<RunConfig> = configs
        .iter()
        .cloned()
        .map(|mut c| {
            c.data = ovk_core::data::DataConfig {
                class: Some("digit".into()),
                ..ovk_core::data::DataConfig::new(&digits)
            };
            c
        })
        .collect();
    let warnings = ovk_core::train::width::sweep_width_warnings(&configs);
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(
        warnings[0].contains("wider than the median distance"),
        "{warnings:?}"
    );
    update(&mut s, Action::WidthWarnings(warnings));
    assert!(s.status.starts_with("warning: σ = "), "{}", s.status);
    let out = screen(&on(s.clone(), Pane::Run), 120, 36);
    assert!(out.contains("warning: σ = 500"), "{out}");
    // Once the search is over and another run shown, late warnings are not pinned on it.
    s.run = Default::default();
    update(&mut s, Action::WidthWarnings(vec!["late".into()]));
    assert!(s.run.notes.is_empty());
}
