//! The workbench as users see it: every pane rendered into a `TestBackend` in the states that
//! matter (empty, running, finished, failed), tiny terminals, and the pure update step
//! (key → action → state + effects). All data are injected by hand: no engine body runs.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ndarray::array;
use ratatui::backend::TestBackend;
use ratatui::Terminal;

use ovk::data::{ColumnSummary, DataConfig, DatasetInfo, Scale, Table, Task};
use ovk::kernels::{Kernel, KernelSpec};
use ovk::methods::{Params, Phase, TraceRecord, Value};
use ovk::session::{
    KernelRecord, Listing, Metrics, SessionRecord, Split, Summary, Timings, SCHEMA,
};
use ovk::train::{RunConfig, RunMessage, RunOutcome};
use ovk::tui::action::Action;
use ovk::tui::effect::Effect;
use ovk::tui::keys::{map_key, tab_spans};
use ovk::tui::render::{draw, MIN_HEIGHT, MIN_WIDTH};
use ovk::tui::state::{DataFocus, Pane, Prompt, PromptKind, Role, RunStatus, State};
use ovk::tui::update::update;

// ---------- fixtures ----------

fn col(name: &str, min: f64, max: f64) -> ColumnSummary {
    ColumnSummary {
        name: name.into(),
        dtype: "f64".into(),
        missing: 0,
        min: Some(min),
        max: Some(max),
        mean: Some(0.5 * (min + max)),
    }
}

fn table() -> Table {
    Table {
        path: PathBuf::from("toy/digits.csv"),
        n_rows: 3,
        columns: vec![
            col("p_0_0", 0.0, 16.0),
            col("p_0_1", 0.0, 15.0),
            col("target_y", -1.0, 2.0),
            col("digit", 0.0, 9.0),
        ],
        head: vec![
            vec!["0".into(), "3".into(), "0.5".into(), "7".into()],
            vec!["1".into(), "4".into(), "1.5".into(), "2".into()],
        ],
    }
}

fn trace(n: usize) -> Vec<TraceRecord> {
    (0..n)
        .map(|i| TraceRecord {
            iter: i,
            objective: 10f64.powi(-(i as i32)),
            residual: Some(0.5f64.powi(i as i32)),
            val_metric: Some(0.5 + 0.01 * i as f64),
            elapsed_ms: 10.0 * i as f64,
            ..TraceRecord::default()
        })
        .collect()
}

fn record(name: &str) -> SessionRecord {
    let mut cfg = DataConfig::new("toy/digits.csv");
    cfg.class = Some("digit".into());
    let mut test = BTreeMap::new();
    test.insert("accuracy".to_string(), 0.9712);
    let mut train = BTreeMap::new();
    train.insert("accuracy".to_string(), 0.9988);
    let mut base = BTreeMap::new();
    base.insert("accuracy".to_string(), 0.9511);
    let mut details = serde_json::Map::new();
    details.insert("certificate".into(), serde_json::json!(1.5e-9));
    let mut matrices = BTreeMap::new();
    matrices.insert("output_kernel".to_string(), "output_kernel.npy".to_string());
    SessionRecord {
        schema: SCHEMA.into(),
        id: format!("{name}-id"),
        name: name.into(),
        created: "2026-11-21T07:00:00Z".into(),
        ovk_version: "0.1.0".into(),
        dataset: DatasetInfo {
            path: "toy/digits.csv".into(),
            absolute_path: None,
            size: None,
            sha256: "abc".into(),
            rows: 3,
            features: vec!["p_0_0".into(), "p_0_1".into()],
            targets: vec!["digit".into()],
        },
        task: Task::Multiclass,
        method: "okl".into(),
        kernel: KernelRecord {
            spec: KernelSpec::default(),
            resolved: Kernel::Gaussian { sigma: 2.5 },
        },
        params: Params::new().with("lambda", Value::Float(0.1)),
        scale: Scale::Standard,
        split: Split {
            seed: 0,
            test_fraction: 0.25,
            train: vec![0, 1],
            test: vec![2],
            labeled: None,
            unlabeled: None,
        },
        feature_names: vec!["p_0_0".into(), "p_0_1".into()],
        output_names: vec!["digit=0".into(), "digit=1".into(), "digit=2".into()],
        trace: trace(8),
        iterations: 8,
        converged: true,
        objective: Some(1e-7),
        metrics: Metrics {
            train,
            test,
            unlabeled: None,
        },
        baseline: Some(Metrics {
            train: BTreeMap::new(),
            test: base,
            unlabeled: None,
        }),
        timings: Timings {
            load_s: 0.1,
            fit_s: 1.25,
            predict_s: 0.05,
            total_s: 1.4,
        },
        matrices,
        details,
        notes: vec!["step halved twice".into()],
        config: RunConfig {
            data: cfg,
            method: "okl".into(),
            kernel: KernelSpec::default(),
            params: Params::new(),
            name: None,
        },
        model: None,
    }
}

fn outcome(name: &str) -> RunOutcome {
    RunOutcome {
        record: record(name),
        matrices: vec![(
            "output_kernel".into(),
            array![[1.0, 0.62, -0.4], [0.62, 1.0, 0.05], [-0.4, 0.05, 1.0]],
        )],
    }
}

/// The answer of a table load the state asked for (answers it did not ask for are dropped).
fn open_table(s: &mut State, path: &str, table: Result<Table, String>, sidecar: Option<String>) {
    s.data.loading = Some(path.into());
    update(
        s,
        Action::TableLoaded {
            path: path.into(),
            table,
            sidecar,
        },
    );
}

fn state() -> State {
    State::new(PathBuf::from("toy"))
}

/// A state with the toy table open and `digit` as the class.
fn loaded() -> State {
    let mut s = state();
    open_table(&mut s, "toy/digits.csv", Ok(table()), None);
    s.data.col_cursor = 3;
    update(&mut s, Action::SetRole(Role::Class));
    s.data.col_cursor = 2;
    update(&mut s, Action::SetRole(Role::Ignore));
    s
}

fn finished() -> State {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(outcome("first")))),
    );
    s
}

fn screen(s: &State, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| draw(f, s)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..buf.area.height {
        for x in 0..buf.area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

fn on(mut s: State, p: Pane) -> State {
    s.pane = p;
    s
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

// ---------- rendering ----------

#[test]
fn every_pane_renders_empty() {
    let expect = [
        (Pane::Data, "Select a CSV or Parquet file"),
        (Pane::Method, "okl"),
        (Pane::Kernel, "lambda"),
        (Pane::Run, "Not ready to run"),
        (Pane::Charts, "no data yet"),
        (Pane::Matrices, "No matrices yet"),
        (Pane::Results, "No results yet"),
        (Pane::Sessions, "No saved sessions yet"),
    ];
    for (p, text) in expect {
        let out = screen(&on(state(), p), 120, 36);
        assert!(out.contains(text), "{p:?} lacks '{text}':\n{out}");
        assert!(
            out.contains("8 Sessions") && out.contains("? help"),
            "{out}"
        );
    }
}

#[test]
fn data_pane_previews_columns_roles_and_split() {
    let s = loaded();
    let out = screen(&s, 140, 40);
    for want in [
        "p_0_0",
        "digit",
        "class",
        "ignore",
        "16.0000",
        "test fraction 0.25",
        "First 2 rows",
        "median σ: computing",
    ] {
        assert!(out.contains(want), "missing '{want}':\n{out}");
    }
    assert_eq!(s.data.class().as_deref(), Some("digit"));
    assert_eq!(
        s.data.features(),
        vec!["p_0_0".to_string(), "p_0_1".to_string()]
    );
}

#[test]
fn median_sigma_is_shown_as_a_number_once_known() {
    let mut s = loaded();
    let g = s.data.generation;
    update(
        &mut s,
        Action::MedianComputed {
            generation: g,
            result: Ok(3.25),
        },
    );
    let out = screen(&on(s, Pane::Kernel), 140, 40);
    assert!(out.contains("median  (= 3.2500)"), "{out}");
}

#[test]
fn stale_median_results_are_dropped() {
    let mut s = loaded();
    let g = s.data.generation;
    update(&mut s, Action::TestFraction(1));
    update(
        &mut s,
        Action::MedianComputed {
            generation: g,
            result: Ok(9.0),
        },
    );
    assert_ne!(s.data.median, ovk::tui::state::Median::Value(9.0));
}

#[test]
fn kernel_pane_flags_a_bad_value_and_run_is_refused() {
    let mut s = on(loaded(), Pane::Kernel);
    let lambda_row = s
        .kernel
        .visible()
        .iter()
        .position(|&i| s.kernel.fields[i].key() == "lambda")
        .unwrap();
    s.kernel.cursor = lambda_row;
    update(&mut s, Action::Enter);
    assert!(s.kernel.editing);
    update(&mut s, Action::ClearText);
    for c in "-1".chars() {
        update(&mut s, Action::Char(c));
    }
    let out = screen(&s, 150, 40);
    assert!(out.contains("✗ lambda: -1 is outside (0"), "{out}");
    assert!(
        out.contains("Run is refused until lambda is fixed"),
        "{out}"
    );
    update(&mut s, Action::Enter);
    let effects = update(&mut s, Action::StartRun);
    assert!(effects.is_empty());
    assert!(s.status.contains("cannot run: fix lambda"), "{}", s.status);
    // Esc while editing restores the old text.
    update(&mut s, Action::Enter);
    update(&mut s, Action::Char('x'));
    update(&mut s, Action::Back);
    let f = &s.kernel.fields[s.kernel.current().unwrap()];
    assert_eq!(f.text, "-1");
}

#[test]
fn running_state_shows_gauge_eta_and_live_chart() {
    let mut s = loaded();
    let effects = update(&mut s, Action::StartRun);
    assert!(
        matches!(effects.as_slice(), [Effect::StartRun(c)] if c.method == "okl" && c.data.class.as_deref() == Some("digit"))
    );
    assert_eq!(s.run.status, RunStatus::Running);
    let t0 = s.now;
    update(
        &mut s,
        Action::Run(RunMessage::Phase {
            phase: Phase::Iterating,
            total: Some(10),
        }),
    );
    for r in trace(4) {
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    update(&mut s, Action::Tick(t0 + Duration::from_secs(2)));
    let out = screen(&on(s.clone(), Pane::Run), 140, 40);
    assert!(out.contains("iterations 4/10"), "{out}");
    assert!(out.contains("ETA"), "{out}");
    assert!(out.contains("running iterations"), "{out}");
    let out = screen(&on(s, Pane::Charts), 140, 40);
    assert!(
        out.contains("Objective") && out.contains("(log)") && out.contains("1e-3"),
        "{out}"
    );
}

#[test]
fn failed_run_shows_the_reason() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Failed {
            message: "the fit diverged".into(),
            exit_code: 2,
        }),
    );
    let out = screen(&on(s, Pane::Run), 140, 40);
    assert!(out.contains("failed: the fit diverged"), "{out}");
}

#[test]
fn finished_run_fills_results_matrices_and_charts() {
    let s = finished();
    let out = screen(&on(s.clone(), Pane::Results), 150, 40);
    for want in [
        "accuracy",
        "0.9712",
        "0.9511",
        "+0.0201",
        "certificate",
        "step halved twice",
        "converged",
    ] {
        assert!(out.contains(want), "Results lacks '{want}':\n{out}");
    }
    let out = screen(&on(s.clone(), Pane::Matrices), 150, 40);
    // Legend: −max … 0 … +max, the cell under the cursor, and the ranked list.
    assert!(out.contains("−1.0000") && out.contains("+1.0000"), "{out}");
    assert!(
        out.contains("[0, 0] = 1.0000   (digit=0 ~ digit=0)"),
        "{out}"
    );
    assert!(out.contains("0.6200 digit=0 ~ digit=1"), "{out}");
    assert!(out.contains("▀"), "{out}");
    let out = screen(&on(s, Pane::Charts), 150, 40);
    assert!(out.contains("Validation metric per iteration"), "{out}");
}

#[test]
fn matrix_cursor_moves_and_zoom_is_bounded() {
    let mut s = on(finished(), Pane::Matrices);
    update(&mut s, Action::Down);
    update(&mut s, Action::MoveCursor(1, 0));
    update(&mut s, Action::MoveCursor(5, 5));
    assert_eq!(s.matrices.cursor, (2, 2));
    for _ in 0..20 {
        update(&mut s, Action::Zoom(1));
    }
    assert_eq!(s.matrices.zoom, 8);
    let out = screen(&s, 150, 40);
    assert!(out.contains("[2, 2] = 1.0000"), "{out}");
}

#[test]
fn embedding_is_a_scatter_plot() {
    let mut s = finished();
    if let Some(f) = &mut s.result {
        f.outcome.matrices = vec![(
            "embedding".into(),
            array![[0.0, 1.0], [1.0, 0.0], [0.5, 0.5]],
        )];
    }
    let out = screen(&on(s, Pane::Matrices), 150, 40);
    assert!(
        out.contains("first two coordinates") && out.contains("digit=1"),
        "{out}"
    );
}

#[test]
fn previous_run_is_overlaid() {
    let mut s = finished();
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(outcome("second")))),
    );
    assert_eq!(s.previous.as_ref().map(|p| p.0.as_str()), Some("first"));
    let out = screen(&on(s.clone(), Pane::Charts), 150, 40);
    assert!(out.contains("previous: first"), "{out}");
    update(&mut s, Action::ToggleOverlay);
    let out = screen(&on(s, Pane::Charts), 150, 40);
    assert!(!out.contains("previous: first"), "{out}");
}

fn summary(name: &str) -> Listing {
    Listing::Ok(Summary {
        id: format!("{name}-id"),
        name: name.into(),
        created: "2026-11-21T07:00:00Z".into(),
        dataset: "digits.csv".into(),
        method: "okl".into(),
        key_metric: Some(("accuracy".into(), 0.97)),
        path: PathBuf::from(format!("/store/{name}-id")),
    })
}

#[test]
fn sessions_list_compare_rename_and_delete() {
    let mut s = state();
    let effects = update(&mut s, Action::Goto(Pane::Sessions));
    assert!(matches!(effects.as_slice(), [Effect::ListSessions]));
    update(
        &mut s,
        Action::SessionsListed {
            root: Ok("/store".into()),
            list: vec![
                summary("alpha"),
                summary("beta"),
                Listing::Corrupt {
                    path: "/store/bad".into(),
                    reason: "bad json".into(),
                },
            ],
        },
    );
    let out = screen(&s, 150, 40);
    assert!(
        out.contains("alpha")
            && out.contains("accuracy 0.9700")
            && out.contains("unreadable: bad json"),
        "{out}"
    );
    update(&mut s, Action::Space);
    update(&mut s, Action::Down);
    let effects = update(&mut s, Action::Space);
    assert!(
        matches!(effects.as_slice(), [Effect::LoadCompare(a, b)] if a.ends_with("alpha-id") && b.ends_with("beta-id"))
    );
    let mut b = record("beta");
    b.metrics.test.insert("accuracy".into(), 0.95);
    update(
        &mut s,
        Action::CompareLoaded(Ok(Box::new((record("alpha"), b)))),
    );
    let out = screen(&s, 150, 40);
    assert!(
        out.contains("Compare")
            && out.contains("accuracy 0.9712")
            && out.contains("accuracy 0.9500"),
        "{out}"
    );
    // Rename: prompt pre-filled, Enter sends the effect.
    update(&mut s, Action::Rename);
    assert!(
        matches!(&s.prompt, Some(Prompt { kind: PromptKind::Rename { id }, text }) if id == "beta-id" && text == "beta")
    );
    update(&mut s, Action::ClearText);
    for c in "gamma".chars() {
        update(&mut s, Action::Char(c));
    }
    let effects = update(&mut s, Action::Enter);
    assert!(
        matches!(effects.as_slice(), [Effect::RenameSession { id, name }] if id == "beta-id" && name == "gamma")
    );
    // Delete needs an explicit y.
    update(&mut s, Action::Delete);
    let out = screen(&s, 150, 40);
    assert!(out.contains("Delete 'beta' for good?"), "{out}");
    let effects = update(&mut s, Action::Enter);
    assert!(effects.is_empty() && s.status.contains("not deleted"));
    update(&mut s, Action::Delete);
    update(&mut s, Action::Char('y'));
    let effects = update(&mut s, Action::Enter);
    assert!(matches!(effects.as_slice(), [Effect::DeleteSession { id }] if id == "beta-id"));
}

#[test]
fn save_prompts_for_a_name_and_emits_the_outcome() {
    let mut s = state();
    update(&mut s, Action::Save);
    assert!(s.prompt.is_none() && s.status.contains("nothing to save"));
    let mut s = finished();
    update(&mut s, Action::Save);
    let out = screen(&s, 120, 36);
    assert!(
        out.contains("Save session") && out.contains("first▏"),
        "{out}"
    );
    update(&mut s, Action::ClearText);
    for c in "digits okl".chars() {
        update(&mut s, Action::Char(c));
    }
    let effects = update(&mut s, Action::Enter);
    match effects.as_slice() {
        [Effect::SaveSession { name, outcome }] => {
            assert_eq!(name, "digits okl");
            assert_eq!(outcome.record.id, "first-id");
        }
        e => panic!("{e:?}"),
    }
    let effects = update(&mut s, Action::Saved(Ok("/store/x".into())));
    assert!(matches!(effects.as_slice(), [Effect::ListSessions]));
    assert_eq!(
        s.result.as_ref().and_then(|f| f.saved.clone()),
        Some(PathBuf::from("/store/x"))
    );
}

#[test]
fn help_lists_keys() {
    let mut s = state();
    let a = map_key(&s, key(KeyCode::Char('?'))).unwrap();
    update(&mut s, a);
    let out = screen(&s, 120, 48);
    assert!(
        out.contains("Keys") && out.contains("Shift-Tab") && out.contains("f t c v x"),
        "{out}"
    );
    // Any key closes it.
    let a = map_key(&s, key(KeyCode::Char('x'))).unwrap();
    update(&mut s, a);
    assert!(!s.help);
}

#[test]
fn tiny_terminals_never_panic_and_say_the_size_needed() {
    let states = [
        state(),
        loaded(),
        finished(),
        on(finished(), Pane::Matrices),
        on(finished(), Pane::Charts),
    ];
    for s in &states {
        for p in Pane::ALL {
            let s = on(s.clone(), p);
            for (w, h) in [
                (0, 0),
                (1, 1),
                (0, 10),
                (10, 0),
                (5, 3),
                (20, 5),
                (69, 19),
                (70, 20),
                (71, 21),
                (200, 60),
            ] {
                let _ = screen(&s, w, h);
            }
        }
    }
    let out = screen(&state(), 40, 10);
    assert!(out.contains(&format!("{MIN_WIDTH}×{MIN_HEIGHT}")), "{out}");
}

#[test]
fn no_color_theme_renders_heatmap_with_characters() {
    let mut s = on(finished(), Pane::Matrices);
    s.theme = ovk::tui::theme::Theme::new(ovk::tui::theme::ColorMode::None);
    let out = screen(&s, 150, 40);
    assert!(out.contains('█'), "{out}");
}

// ---------- pure update ----------

#[test]
fn navigation_keys_and_clicks_switch_panes() {
    let mut s = state();
    let steps: [(KeyCode, Pane); 6] = [
        (KeyCode::Tab, Pane::Method),
        (KeyCode::BackTab, Pane::Data),
        (KeyCode::Char('l'), Pane::Method),
        (KeyCode::Right, Pane::Kernel),
        (KeyCode::Char('h'), Pane::Method),
        (KeyCode::Char('7'), Pane::Results),
    ];
    for (k, want) in steps {
        let a = map_key(&s, key(k)).unwrap();
        update(&mut s, a);
        assert_eq!(s.pane, want, "{k:?}");
    }
    let (p, x, _) = tab_spans()[5];
    update(&mut s, Action::Click { col: x + 1, row: 0 });
    assert_eq!(s.pane, p);
    assert_eq!(p, Pane::Matrices);
}

#[test]
fn role_keys_need_a_column_and_class_is_unique() {
    let mut s = state();
    update(&mut s, Action::SetRole(Role::Class));
    assert!(s.status.contains("open a file first"));
    let mut s = loaded();
    assert_eq!(s.data.focus, DataFocus::Columns);
    s.data.col_cursor = 0;
    let a = map_key(&s, key(KeyCode::Char('c'))).unwrap();
    update(&mut s, a);
    assert_eq!(s.data.class().as_deref(), Some("p_0_0"));
    assert_eq!(s.data.roles[3], Role::Feature);
    // target_* was guessed a target by the naming convention before we ignored it.
    let fresh = {
        let mut f = state();
        open_table(&mut f, "t.csv", Ok(table()), None);
        f
    };
    assert_eq!(fresh.data.roles[2], Role::Target);
    // A sidecar wins.
    let mut f = state();
    open_table(
        &mut f,
        "t.csv",
        Ok(table()),
        Some("class = \"digit\"\n".into()),
    );
    assert_eq!(f.data.class().as_deref(), Some("digit"));
}

#[test]
fn split_keys_change_fraction_seed_and_scaling() {
    let mut s = loaded();
    for c in [']', ']', '{', '}', '}', '='] {
        let a = map_key(&s, key(KeyCode::Char(c))).unwrap();
        update(&mut s, a);
    }
    assert!((s.data.test_fraction - 0.35).abs() < 1e-12);
    assert_eq!(s.data.seed, 2);
    assert_eq!(s.data.scale, Scale::None);
    let cfg = s.run_config().unwrap();
    assert_eq!(cfg.data.seed, 2);
    assert_eq!(cfg.data.scale, Scale::None);
}

#[test]
fn method_choice_rebuilds_fields_and_keeps_shared_values() {
    let mut s = on(loaded(), Pane::Kernel);
    let i = s
        .kernel
        .fields
        .iter()
        .position(|f| f.key() == "lambda")
        .unwrap();
    s.kernel.fields[i].text = "0.5".into();
    s.pane = Pane::Method;
    let krr = ovk::methods::registry()
        .iter()
        .position(|m| m.name() == "krr")
        .unwrap();
    s.method.cursor = krr;
    update(&mut s, Action::Enter);
    assert_eq!(s.pane, Pane::Kernel);
    assert!(s.kernel.fields.iter().all(|f| f.key() != "max_iter"));
    let lambda = s
        .kernel
        .fields
        .iter()
        .find(|f| f.key() == "lambda")
        .unwrap();
    assert_eq!(lambda.text, "0.5");
    assert_eq!(
        s.run_config().unwrap().params.0.get("lambda"),
        Some(&Value::Float(0.5))
    );
}

#[test]
fn space_cycles_the_kernel_and_hides_sigma_for_linear() {
    let mut s = on(state(), Pane::Kernel);
    s.kernel.cursor = 0;
    assert!(s
        .kernel
        .visible()
        .iter()
        .any(|&i| s.kernel.fields[i].key() == "sigma"));
    update(&mut s, Action::Space); // gaussian → polynomial
    let keys: Vec<&str> = s
        .kernel
        .visible()
        .iter()
        .map(|&i| s.kernel.fields[i].key())
        .collect();
    assert!(
        keys.contains(&"degree") && !keys.contains(&"sigma"),
        "{keys:?}"
    );
    update(&mut s, Action::Space); // → laplacian
    update(&mut s, Action::Space); // → linear
    let keys: Vec<&str> = s
        .kernel
        .visible()
        .iter()
        .map(|&i| s.kernel.fields[i].key())
        .collect();
    assert!(
        !keys.contains(&"sigma") && !keys.contains(&"degree"),
        "{keys:?}"
    );
}

#[test]
fn quitting_while_running_cancels_the_fit() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    let effects = update(&mut s, Action::StartRun);
    assert!(effects.is_empty() && s.status.contains("already running"));
    let a = map_key(&s, KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)).unwrap();
    let effects = update(&mut s, a);
    assert!(s.quit);
    assert!(matches!(effects.as_slice(), [Effect::CancelRun]));
}

#[test]
fn esc_in_run_cancels_and_cancelled_is_reported() {
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    let a = map_key(&s, key(KeyCode::Esc)).unwrap();
    let effects = update(&mut s, a);
    assert!(matches!(effects.as_slice(), [Effect::CancelRun]));
    update(&mut s, Action::Run(RunMessage::Cancelled));
    assert_eq!(s.run.status, RunStatus::Cancelled);
    assert!(screen(&s, 120, 36).contains("cancelled"));
}

#[test]
fn typing_in_a_prompt_does_not_trigger_commands() {
    let mut s = finished();
    update(&mut s, Action::Save);
    let a = map_key(&s, key(KeyCode::Char('q'))).unwrap();
    assert!(matches!(a, Action::Char('q')));
    update(&mut s, a);
    assert!(!s.quit);
}

#[test]
fn replay_steps_plays_and_is_read_only() {
    let mut s = ovk::tui::replay_state(outcome("saved"), "/store/saved-id".into());
    assert_eq!(s.pane, Pane::Charts);
    assert_eq!(s.chart_trace().len(), 8);
    let left = map_key(&s, key(KeyCode::Left)).unwrap();
    assert!(matches!(left, Action::Step(-1)));
    update(&mut s, left);
    update(&mut s, Action::Step(-3));
    assert_eq!(s.chart_trace().len(), 4);
    let out = screen(&s, 140, 40);
    assert!(out.contains("replay 4/8"), "{out}");
    update(&mut s, Action::Bottom);
    assert_eq!(s.chart_trace().len(), 8);
    // Space from the end restarts and plays.
    update(&mut s, Action::Space);
    assert!(s.replay.as_ref().unwrap().playing);
    assert_eq!(s.chart_trace().len(), 1);
    let t = s.now;
    update(&mut s, Action::Tick(t + Duration::from_millis(100)));
    assert_eq!(s.chart_trace().len(), 2);
    assert!(update(&mut s, Action::StartRun).is_empty());
    assert!(s.status.contains("read-only"));
    update(&mut s, Action::Save);
    assert!(s.prompt.is_none());
    // The panes show the session's configuration.
    let out = screen(&on(s.clone(), Pane::Data), 140, 40);
    assert!(
        out.contains("Data of the session") && out.contains("2 train / 1 test"),
        "{out}"
    );
    let out = screen(&on(s, Pane::Kernel), 140, 40);
    assert!(out.contains("0.1") && out.contains("read-only"), "{out}");
    let _ = Instant::now();
}

#[test]
fn a_table_being_read_shows_in_the_preview_and_late_answers_are_dropped() {
    let mut s = state();
    s.data.loading = Some("toy/wide.csv".into());
    let text = screen(&s, 100, 30);
    assert!(text.contains("reading wide.csv…"), "{text}");
    // The answer for a file the user has since moved away from does not replace the choice.
    update(
        &mut s,
        Action::TableLoaded {
            path: "toy/digits.csv".into(),
            table: Ok(table()),
            sidecar: None,
        },
    );
    assert!(s.data.table.is_none());
    assert_eq!(
        s.data.loading.as_deref(),
        Some(std::path::Path::new("toy/wide.csv"))
    );
    open_table(&mut s, "toy/wide.csv", Ok(table()), None);
    assert!(s.data.table.is_some() && s.data.loading.is_none());
    assert!(!screen(&s, 100, 30).contains("reading"));
}

#[test]
fn results_show_a_lambda_path_as_a_table_with_the_kept_row_marked() {
    let mut s = finished();
    let details = &mut s.result.as_mut().unwrap().outcome.record.details;
    details.insert("lambda".into(), serde_json::json!(0.25));
    let path: Vec<serde_json::Value> = (0..30)
        .map(|i| {
            serde_json::json!({
                "lambda": 0.25 * 2f64.powi(10 - i),
                "iterations": 3 * i,
                "validation_mse": 1.0 + (i as f64 - 10.0).abs() / 10.0,
                "certificate": {"certified": i < 12},
            })
        })
        .collect();
    details.insert("path".into(), serde_json::Value::Array(path));
    let out = screen(&on(s, Pane::Results), 150, 40);
    assert!(out.contains("λ path — 30 fits, ★ kept"), "{out}");
    assert!(
        out.contains("validation_mse") && out.contains("certified"),
        "{out}"
    );
    // Row 10 (λ = 0.25) is kept: it is marked and scrolled into view.
    let kept = out
        .lines()
        .find(|l| l.contains('★') && !l.contains("kept"))
        .expect("a kept row");
    assert!(kept.contains("0.2500") && kept.contains("1.0000"), "{kept}");
    // The path is no longer squeezed into the details list as "[30 values]".
    assert!(!out.contains("[30 values]"), "{out}");
}
