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

use ovk::tui::action::Action;
use ovk::tui::effect::Effect;
use ovk::tui::keys::{map_key, tab_spans};
use ovk::tui::render::{draw, MIN_HEIGHT, MIN_WIDTH};
use ovk::tui::state::{DataFocus, MarkedRun, Pane, Prompt, PromptKind, Role, RunStatus, State};
use ovk::tui::update::update;
use ovk_core::data::{ColumnSummary, DataConfig, DatasetInfo, Scale, Table, Task};
use ovk_core::kernels::{Kernel, KernelSpec};
use ovk_core::methods::{MethodName, Params, Phase, TraceRecord, Value};
use ovk_core::session::{
    KernelRecord, Listing, Metrics, SessionRecord, Split, Summary, Timings, SCHEMA,
};
use ovk_core::train::{RunConfig, RunMessage, RunOutcome};

// ---------- fixtures ----------

pub(crate) fn col(name: &str, min: f64, max: f64) -> ColumnSummary {
    ColumnSummary {
        name: name.into(),
        dtype: "f64".into(),
        missing: 0,
        min: Some(min),
        max: Some(max),
        mean: Some(0.5 * (min + max)),
        ..Default::default()
    }
}

pub(crate) fn table() -> Table {
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
        sparse: 0,
    }
}

pub(crate) fn trace(n: usize) -> Vec<TraceRecord> {
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

pub(crate) fn record(name: &str) -> SessionRecord {
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
            packed_width: None,
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
            id: None,
            folds: None,
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
            method: MethodName::Okl,
            kernel: KernelSpec::default(),
            params: Params::new(),
            name: None,
            cv: None,
            select_on: Default::default(),
        },
        model: None,
        status: Default::default(),
        kept: true,
        optimistic: None,
        cv: None,
        cv_baseline: None,
    }
}

pub(crate) fn outcome(name: &str) -> RunOutcome {
    RunOutcome {
        record: record(name),
        matrices: vec![(
            "output_kernel".into(),
            array![[1.0, 0.62, -0.4], [0.62, 1.0, 0.05], [-0.4, 0.05, 1.0]],
        )],
    }
}

/// The answer of a table load the state asked for (answers it did not ask for are dropped).
pub(crate) fn open_table(
    s: &mut State,
    path: &str,
    table: Result<Table, String>,
    sidecar: Option<String>,
) {
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

pub(crate) fn state() -> State {
    State::new(PathBuf::from("toy"))
}

/// A state with the toy table open and `digit` as the class.
pub(crate) fn loaded() -> State {
    let mut s = state();
    open_table(&mut s, "toy/digits.csv", Ok(table()), None);
    s.data.col_cursor = 3;
    update(&mut s, Action::SetRole(Role::Class));
    s.data.col_cursor = 2;
    update(&mut s, Action::SetRole(Role::Ignore));
    s
}

pub(crate) fn finished() -> State {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(outcome("first")))),
    );
    s
}

pub(crate) fn screen(s: &State, w: u16, h: u16) -> String {
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

pub(crate) fn on(mut s: State, p: Pane) -> State {
    s.pane = p;
    s
}

pub(crate) fn key(c: KeyCode) -> KeyEvent {
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
        (Pane::Sessions, "No runs yet"),
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
        "test 0.25",
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
    let mut s = on(s, Pane::Kernel);
    let out = screen(&s, 140, 40);
    assert!(out.contains("median  (= 3.2500)"), "{out}");
    // a multi-view method takes each view's own median, not the table's
    choose(&mut s, "mvml");
    let out = screen(&s, 140, 40);
    assert!(
        out.contains("median  (each view's own)") && !out.contains("3.2500"),
        "{out}"
    );
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

/// The fit entered `phase` (of `total` steps, when known).
pub(crate) fn start_phase(s: &mut State, phase: Phase, total: Option<usize>) {
    update(s, Action::Run(RunMessage::Phase { phase, total }));
}

#[test]
fn before_any_fit_the_gauge_waits_instead_of_saying_it_stopped() {
    let out = screen(&on(loaded(), Pane::Run), 80, 24);
    assert!(out.contains("waiting"), "{out}");
    assert!(!out.contains("stopped in"), "{out}");
    // an input rank other than auto is part of what will run
    let mut s = loaded();
    set_field(&mut s, "input_rank", "exact");
    let out = screen(&on(s, Pane::Run), 80, 24);
    assert!(out.contains("· input rank exact"), "{out}");
}

#[test]
fn running_state_shows_gauge_eta_and_live_chart() {
    let mut s = loaded();
    let effects = update(&mut s, Action::StartRun);
    assert!(
        matches!(effects.as_slice(), [Effect::StartRun(c)] if c.method == MethodName::Okl && c.data.class.as_deref() == Some("digit"))
    );
    assert_eq!(s.run.status, RunStatus::Running);
    let t0 = s.now;
    start_phase(&mut s, Phase::Iterating, Some(10));
    for r in trace(4) {
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    update(&mut s, Action::Tick(t0 + Duration::from_secs(2)));
    let out = screen(&on(s.clone(), Pane::Run), 140, 40);
    // Records for iterations 0–3: three steps done (iteration 0 is the starting point).
    assert!(out.contains("iterations 3/10"), "{out}");
    assert!(out.contains("ETA"), "{out}");
    assert!(out.contains("running iterations"), "{out}");
    let out = screen(&on(s, Pane::Charts), 140, 40);
    assert!(
        out.contains("Objective") && out.contains("(log)") && out.contains("1e-3"),
        "{out}"
    );
}

#[test]
fn a_factor_or_graph_phase_is_named_in_the_gram_slot() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    for (phase, label) in [(Phase::Factor, "landmarks"), (Phase::Graph, "k-NN graph")] {
        start_phase(&mut s, phase, Some(2000));
        let out = screen(&on(s.clone(), Pane::Run), 120, 36);
        // the chain keeps its six slots: the current label replaces "Gram matrix" there
        let chain = out
            .lines()
            .find(|l| l.contains("loading data"))
            .unwrap_or_else(|| panic!("no phase chain:\n{out}"));
        assert!(
            chain.contains(&format!("loading data › {label} › decomposition")),
            "{chain}"
        );
        assert!(!chain.contains("Gram matrix"), "{chain}");
        assert!(out.contains(&format!("running {label}")), "{out}");
    }
}

#[test]
fn help_wraps_long_explanations_at_80_columns() {
    let mut s = loaded();
    update(&mut s, Action::ToggleHelp);
    // the role keys' line and the test fraction's are whole, over two lines each
    let mut out = screen(&s, 80, 24);
    for _ in 0..12 {
        if out.contains("f t c v x T") {
            break;
        }
        update(&mut s, Action::Down);
        out = screen(&s, 80, 24);
    }
    assert!(out.contains("f t c v x T"), "{out}");
    assert!(out.contains("test marker (nonzero = a test row)"), "{out}");
    let mut out = screen(&s, 80, 24);
    for _ in 0..12 {
        update(&mut s, Action::Down);
        out = screen(&s, 80, 24);
        if out.contains("(mean / most frequent)") {
            break;
        }
    }
    assert!(out.contains("(mean / most frequent)"), "{out}");
    assert!(out.contains("Keys ") && !out.contains("Keys 1–"), "{out}");
}

#[test]
fn an_is_test_marker_replaces_the_random_split() {
    let mut s = loaded();
    // column 0 becomes the marker: the split line names it, [ ] say why they do nothing,
    // and the run's data configuration carries it
    s.data.col_cursor = 0;
    update(&mut s, Action::SetRole(Role::TestMarker));
    let out = screen(&on(s.clone(), Pane::Data), 120, 36);
    assert!(out.contains("test marker"), "{out}");
    let name = s.data.test_column().expect("a marker");
    assert!(out.contains(&format!("test rows: `{name}` ≠ 0")), "{out}");
    update(&mut s, Action::TestFraction(1));
    assert!(s.status.contains("the test rows are those"), "{}", s.status);
    let cfg = s.data.config().expect("a complete data choice");
    assert_eq!(cfg.test_column.as_deref(), Some(name.as_str()));
    assert!(!cfg.features.unwrap_or_default().contains(&name));
    // a second marker takes over; the first is ignored, not made a feature
    s.data.col_cursor = 1;
    update(&mut s, Action::SetRole(Role::TestMarker));
    assert_eq!(s.data.roles[0], Role::Ignore);
    assert_ne!(s.data.test_column(), Some(name));
}

#[test]
fn a_lambda_path_gauge_counts_fits_not_iterations() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    let t0 = s.now;
    start_phase(&mut s, Phase::Path, Some(25));
    // 40 iterations' records and 4 finished fits: the gauge says 4/25
    for r in trace(40) {
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    update(&mut s, Action::Run(RunMessage::Step { done: 4, total: 25 }));
    update(&mut s, Action::Tick(t0 + Duration::from_secs(8)));
    let out = screen(&on(s, Pane::Run), 120, 36);
    assert!(out.contains("λ path 4/25"), "{out}");
    assert!(out.contains("decomposition › λ path › predicting"), "{out}");
    assert!(out.contains("ETA"), "{out}");
}

#[test]
fn the_last_words_of_a_long_note_can_be_scrolled_into_view() {
    let mut s = finished();
    let note = "the krr baseline (identity output kernel, same input kernel) scored better on \
                the test rows: mean_auc 0.9038 against vvmr's 0.7162; vvmr's hyperparameters \
                may be far from their best on these data — choose them with THE-LAST-WORDS";
    if let Some(f) = s.result.as_mut() {
        f.outcome.record.notes.push(note.into());
    }
    let mut s = on(s, Pane::Results);
    for _ in 0..40 {
        update(&mut s, Action::ScrollNotes(3));
    }
    // word wrapping takes more rows than characters ÷ width: counted as rendered, the note's
    // end is reachable at 80 columns
    let out = screen(&s, 80, 24);
    assert!(out.contains("THE-LAST-WORDS"), "{out}");
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
        "baseline: krr, same kernel, same λ",
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
        out.contains("[0, 0] = 1.0000   row digit=0 · col digit=0"),
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
    // Four steps above the fit (zoom 4 at most): zoom 8 at most.
    assert_eq!(s.matrices.zoom, 4);
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
    assert_eq!(s.previous.as_ref().map(|p| p.name.as_str()), Some("first"));
    // Off until asked for (o); then drawn, being the same method on the same file.
    let out = screen(&on(s.clone(), Pane::Charts), 150, 40);
    assert!(!out.contains("previous: first"), "{out}");
    s.pane = Pane::Charts;
    update(&mut s, Action::ToggleOverlay);
    let out = screen(&s, 150, 40);
    assert!(out.contains("previous: first"), "{out}");
}

fn summary(name: &str) -> Listing {
    run_summary(name, "okl", "digits.csv", 0.1, 0.97)
}

/// A listed session with a λ and a test accuracy, for the runs table.
pub(crate) fn run_summary(
    name: &str,
    method: &str,
    dataset: &str,
    lambda: f64,
    acc: f64,
) -> Listing {
    Listing::Ok(Box::new(Summary {
        id: format!("{name}-id"),
        name: name.into(),
        created: "2026-11-21T07:00:00Z".into(),
        dataset: dataset.into(),
        method: method.into(),
        key_metric: Some(("accuracy".into(), acc)),
        path: PathBuf::from(format!("/store/{name}-id")),
        settings: BTreeMap::from([
            ("kernel".to_string(), "gaussian".to_string()),
            ("sigma".to_string(), "1.5000".to_string()),
            ("lambda".to_string(), lambda.to_string()),
        ]),
        metrics: BTreeMap::from([("accuracy".to_string(), acc)]),
        iterations: 37,
        fit_s: 0.25,
        data_files: vec![PathBuf::from(format!("/data/{dataset}"))],
        kept: true,
        status: Default::default(),
        optimistic: None,
        split_id: "0123456789ab".into(),
        folds_id: None,
        cv: None,
    }))
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
            && out.contains("test accuracy")
            && out.contains("0.9700")
            && out.contains("unreadable"),
        "{out}"
    );
    update(&mut s, Action::Bottom);
    let out = screen(&s, 150, 40);
    assert!(out.contains("/store/bad: unreadable: bad json"), "{out}");
    update(&mut s, Action::Top);
    // Space marks and moves on; c compares the two marked runs.
    let effects = update(&mut s, Action::Space);
    assert!(matches!(effects.as_slice(), [Effect::LoadMarked(p)] if p.ends_with("alpha-id")));
    update(&mut s, Action::Space);
    let effects = update(&mut s, Action::Compare);
    assert!(
        matches!(effects.as_slice(), [Effect::LoadCompare(a, b), Effect::LoadComparison(all)] if a.ends_with("alpha-id") && b.ends_with("beta-id") && all.len() == 2)
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
            && out
                .lines()
                .any(|l| l.contains("accuracy") && l.contains("0.9712") && l.contains("0.9500")),
        "{out}"
    );
    // Rename: prompt pre-filled, Enter sends the effect.
    update(&mut s, Action::Up);
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

/// Every fit is recorded the moment it finishes (not kept); `s` keeps it under a name. A
/// result the store never took is saved whole instead.
#[test]
fn a_finished_fit_is_recorded_at_once_and_s_keeps_it_under_a_name() {
    let mut s = state();
    update(&mut s, Action::Save);
    assert!(s.prompt.is_none() && s.status.contains("nothing to keep"));
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    // The thread runner's Finished: nobody recorded it, the workbench does.
    let effects = update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(outcome("first")))),
    );
    assert!(
        matches!(effects.as_slice(), [Effect::RecordRun(o)] if o.record.id == "first-id"),
        "{effects:?}"
    );
    let effects = update(&mut s, Action::Recorded(Ok("/store/first".into())));
    assert!(matches!(effects.as_slice(), [Effect::ListSessions]));
    let f = s.result.as_ref().unwrap();
    assert!(f.unkept() && f.saved == Some(PathBuf::from("/store/first")));
    let results = on(s.clone(), Pane::Results);
    at_both(&results, |out, size| {
        assert!(out.contains("recorded, not kept"), "{size:?}\n{out}");
    });
    assert!(screen(&on(s.clone(), Pane::Run), 120, 36).contains("not kept (s keeps it)"));
    update(&mut s, Action::Save);
    let out = screen(&s, 120, 36);
    assert!(out.contains("Keep run") && out.contains("first▏"), "{out}");
    update(&mut s, Action::ClearText);
    for c in "digits okl".chars() {
        update(&mut s, Action::Char(c));
    }
    let effects = update(&mut s, Action::Enter);
    match effects.as_slice() {
        [Effect::KeepSession { dir, name }] => {
            assert_eq!(name, "digits okl");
            assert_eq!(dir, &PathBuf::from("/store/first"));
        }
        e => panic!("{e:?}"),
    }
    let effects = update(
        &mut s,
        Action::Kept(Ok(("/store/first".into(), "digits okl".into()))),
    );
    assert!(matches!(effects.as_slice(), [Effect::ListSessions]));
    let r = &s.result.as_ref().unwrap().outcome.record;
    assert!(r.kept && r.name == "digits okl");
    update(&mut s, Action::Save);
    assert!(
        s.prompt.is_none() && s.status.contains("kept already"),
        "{}",
        s.status
    );

    // The store refused the record: s saves the whole result, kept.
    let mut s = finished();
    update(&mut s, Action::Recorded(Err("disk full".into())));
    assert!(s.status.contains("could not be recorded: disk full"));
    update(&mut s, Action::Save);
    let effects = update(&mut s, Action::Enter);
    assert!(
        matches!(effects.as_slice(), [Effect::SaveSession { name, .. }] if name == "first"),
        "{effects:?}"
    );
    update(&mut s, Action::Saved(Ok("/store/x".into())));
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
    // At 80×24 it scrolls to its last key.
    let out = screen(&s, 80, 24);
    assert!(!out.contains("play / pause the trace"), "{out}");
    for _ in 0..20 {
        let a = map_key(&s, key(KeyCode::Char('j'))).unwrap();
        update(&mut s, a);
    }
    assert!(s.help);
    let out = screen(&s, 80, 24);
    assert!(out.contains("play / pause the trace"), "{out}");
    // Any other key closes it.
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
        Some("source = \"s\"\nclass = \"digit\"\n".into()),
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
    assert!((s.data.split.test_fraction - 0.35).abs() < 1e-12);
    assert_eq!(s.data.split.seed, 2);
    assert_eq!(s.data.split.scale, Scale::None);
    let cfg = s.run_config().unwrap();
    assert_eq!(cfg.data.seed, 2);
    assert_eq!(cfg.data.scale, Scale::None);
}

/// `y` cycles the target scaling none → center → standard → none; the Data pane shows it at
/// both sizes and the run takes it.
#[test]
fn y_cycles_the_target_scaling_into_the_run() {
    use ovk_core::data::TargetScale;
    let mut s = loaded();
    assert!(screen(&s, 80, 24).contains("targets none y"));
    for want in [
        TargetScale::Center,
        TargetScale::Standard,
        TargetScale::None,
        TargetScale::Center,
    ] {
        let a = map_key(&s, key(KeyCode::Char('y'))).unwrap();
        update(&mut s, a);
        assert_eq!(s.data.split.target_scale, want);
    }
    assert!(s.status.contains("intercept"), "{}", s.status);
    at_both(&s, |out, size| {
        assert!(out.contains("targets center y"), "{size:?}\n{out}");
    });
    assert_eq!(
        s.run_config().unwrap().data.target_scale,
        TargetScale::Center
    );
    at_both(&on(s, Pane::Run), |out, size| {
        assert!(out.contains("targets centred"), "{size:?}\n{out}");
    });
}

#[test]
fn method_choice_rebuilds_fields_and_keeps_shared_values() {
    let mut s = on(loaded(), Pane::Kernel);
    set_field(&mut s, "lambda", "0.5");
    s.pane = Pane::Method;
    let krr = ovk_core::methods::registry()
        .iter()
        .position(|m| m.name() == "krr")
        .unwrap();
    s.method.cursor = krr;
    update(&mut s, Action::Enter);
    assert_eq!(s.pane, Pane::Kernel);
    assert!(s.kernel.fields.iter().all(|f| f.key() != "max_iter"));
    let lambda = field(&s, "lambda");
    // Each method keeps its own hyperparameters: okl's λ does not reach krr …
    assert_ne!(lambda.text, "0.5");
    // … and is still there on the way back.
    s.pane = Pane::Method;
    s.method.cursor = ovk_core::methods::registry()
        .iter()
        .position(|m| m.name() == "okl")
        .unwrap();
    update(&mut s, Action::Enter);
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
    // Ctrl-C asks first; y at the question quits and cancels the fit.
    let a = map_key(&s, KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL)).unwrap();
    assert!(update(&mut s, a).is_empty());
    assert!(!s.quit && s.prompt.is_some());
    // Nothing to save while it runs: the question does not offer it, and s does nothing.
    assert!(!screen(&s, 80, 24).contains("saves first"));
    let a = map_key(&s, key(KeyCode::Char('s'))).unwrap();
    assert!(update(&mut s, a).is_empty());
    assert!(s.prompt.is_some());
    let a = map_key(&s, key(KeyCode::Char('y'))).unwrap();
    let effects = update(&mut s, a);
    assert!(s.quit);
    assert!(matches!(effects.as_slice(), [Effect::CancelRun]));
}

/// Esc cancels a running fit from whichever pane the user is watching, and the status bar
/// says so while it runs; with no fit running, Esc keeps its pane's own meaning.
#[test]
fn esc_cancels_a_running_fit_from_any_pane() {
    for pane in [Pane::Charts, Pane::Matrices, Pane::Data, Pane::Sessions] {
        let mut s = on(loaded(), pane);
        update(&mut s, Action::StartRun);
        assert!(screen(&s, 80, 24).contains("Esc cancels"), "{pane:?}");
        let a = map_key(&s, key(KeyCode::Esc)).unwrap();
        let effects = update(&mut s, a);
        assert!(
            matches!(effects.as_slice(), [Effect::CancelRun]),
            "{pane:?}"
        );
        assert!(!screen(&s, 80, 24).contains("Esc cancels"), "{pane:?}");
    }
    let mut s = on(finished(), Pane::Charts);
    let a = map_key(&s, key(KeyCode::Esc)).unwrap();
    assert!(update(&mut s, a).is_empty());
}

/// "Empty = the method's default" holds for every field: emptied, a field takes its default
/// back and says so, instead of refusing '' (σ) or showing nothing (λ).
#[test]
fn an_emptied_field_takes_its_default() {
    for key_name in ["sigma", "lambda"] {
        let mut s = on(loaded(), Pane::Kernel);
        let default = field(&s, key_name).text.clone();
        s.kernel.cursor = s
            .kernel
            .visible()
            .iter()
            .position(|&i| s.kernel.fields[i].key() == key_name)
            .unwrap();
        update(&mut s, Action::Enter);
        update(&mut s, Action::ClearText);
        update(&mut s, Action::Enter);
        assert_eq!(field(&s, key_name).text, default, "{key_name}");
        assert!(
            s.status.contains("(the default)"),
            "{key_name}: {}",
            s.status
        );
        assert!(s.kernel.first_error().is_none(), "{key_name}");
    }
}

/// A failure's whole message (its advice too) is readable in Notes, and the engine's flags
/// read as the workbench's fields.
#[test]
fn a_failure_is_readable_in_full_and_in_workbench_terms() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    let advice = "the objective became NaN — the fit diverged (likely causes: λ too small for an \
                  ill-conditioned Gram matrix, or a kernel width far too small); raise --lambda \
                  or set --max-iter lower, or choose them with `ovk sweep --cv 3`";
    update(
        &mut s,
        Action::Run(RunMessage::Failed {
            message: advice.into(),
            exit_code: 2,
        }),
    );
    let s = on(s, Pane::Run);
    // At 80×24 Notes scrolls (J K); at 120×36 all of it shows.
    assert!(screen(&s, 80, 24).contains("Notes 1–"));
    let out = screen(&s, 120, 36).replace(['│', '\n'], " ");
    let flat: String = out.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        "kernel width far too small",
        "raise lambda",
        "max_iter lower",
        "w on a",
    ] {
        assert!(flat.contains(want), "{want}: {out}");
    }
    assert!(!flat.contains("--lambda"), "{out}");
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

// ---------- issue 18: each numbered problem, at 120×36 and 80×24 ----------

const SIZES: [(u16, u16); 2] = [(120, 36), (80, 24)];

/// Render `s` at both sizes and hand each screen to `check`.
fn at_both(s: &State, check: impl Fn(&str, (u16, u16))) {
    for size in SIZES {
        check(&screen(s, size.0, size.1), size);
    }
}

/// Choose a method in the Method pane (Enter moves on to Kernel).
pub(crate) fn choose(s: &mut State, method: &str) {
    s.pane = Pane::Method;
    s.method.cursor = ovk_core::methods::registry()
        .iter()
        .position(|m| m.name() == method)
        .unwrap();
    update(s, Action::Enter);
}

pub(crate) fn field<'a>(s: &'a State, key: &str) -> &'a ovk::tui::state::Field {
    s.kernel.fields.iter().find(|f| f.key() == key).unwrap()
}

pub(crate) fn set_field(s: &mut State, key: &str, text: &str) {
    let i = s.kernel.fields.iter().position(|f| f.key() == key).unwrap();
    s.kernel.fields[i].text = text.into();
    s.kernel.fields[i].validate();
}

#[test]
fn p01_quit_asks_only_while_a_fit_runs() {
    // Running: q asks; n keeps the fit running.
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    let a = map_key(&s, key(KeyCode::Char('q'))).unwrap();
    assert!(update(&mut s, a).is_empty());
    at_both(&s, |out, size| {
        assert!(
            out.contains("Quit ovk?") && out.contains("a fit is running"),
            "{size:?}\n{out}"
        );
    });
    let a = map_key(&s, key(KeyCode::Char('n'))).unwrap();
    assert!(update(&mut s, a).is_empty());
    assert!(!s.quit && s.prompt.is_none() && s.is_running());
    // Finished: the fit is in the store already, kept or not — q quits at once.
    let mut s = finished();
    assert!(s
        .result
        .as_ref()
        .is_some_and(|f| !f.outcome.record.kept || f.saved.is_none()));
    update(&mut s, Action::Quit);
    assert!(s.quit && s.prompt.is_none());
}

fn sidecar_session() -> RunOutcome {
    let mut o = outcome("wq-saved");
    let r = &mut o.record;
    r.config.data = DataConfig::new("datasets/wq.csv"); // features and targets from the sidecar
    r.feature_names = (0..16).map(|i| format!("x{i}")).collect();
    r.output_names = (0..14).map(|i| format!("y{i}")).collect();
    r.task = Task::Regression;
    o
}

#[test]
fn p02_replay_run_pane_counts_features_and_targets_from_the_session() {
    let s = on(
        ovk::tui::replay_state(sidecar_session(), "/store/wq".into()),
        Pane::Run,
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("16 features") && out.contains("14 targets"),
            "{size:?}\n{out}"
        );
        assert!(
            !out.contains("0 features") && !out.contains("no fit yet"),
            "{out}"
        );
        assert!(out.contains("saved fit, replayed"), "{size:?}\n{out}");
    });
}

#[test]
fn p03_overlay_is_off_by_default_and_never_mixes_datasets() {
    let mut s = finished();
    let mut other = outcome("iris-krr");
    other.record.method = "krr".into();
    other.record.config.data = DataConfig::new("toy/iris.csv");
    update(&mut s, Action::StartRun);
    update(&mut s, Action::Run(RunMessage::Finished(Box::new(other))));
    s.pane = Pane::Charts;
    at_both(&s, |out, size| {
        assert!(!out.contains("previous"), "{size:?}\n{out}");
    });
    update(&mut s, Action::ToggleOverlay);
    at_both(&s, |out, size| {
        assert!(!out.contains("previous: first"), "{size:?}\n{out}");
        assert!(out.contains("not comparable"), "{size:?}\n{out}");
    });
}

#[test]
fn p04_cancel_clears_the_old_notes_and_eta_and_s_explains() {
    let mut s = on(finished(), Pane::Run);
    update(&mut s, Action::StartRun);
    start_phase(&mut s, Phase::Iterating, Some(100));
    for r in trace(3) {
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    update(&mut s, Action::CancelRun);
    // The thread runner's Cancelled: nobody recorded it, the workbench does, from what it saw.
    let effects = update(&mut s, Action::Run(RunMessage::Cancelled));
    match effects.as_slice() {
        [Effect::RecordStopped { config, trace, .. }] => {
            assert_eq!(config.method.name(), "okl");
            assert_eq!(trace.len(), 3);
        }
        e => panic!("{e:?}"),
    }
    update(&mut s, Action::Recorded(Ok("/store/stopped".into())));
    assert_eq!(s.run.recorded, Some(PathBuf::from("/store/stopped")));
    at_both(&s, |out, size| {
        assert!(!out.contains("step halved twice"), "{size:?}\n{out}");
        assert!(!out.contains("ETA"), "{size:?}\n{out}");
        assert!(!out.contains("cancelled  cancelled"), "{size:?}\n{out}");
        assert!(out.contains("recorded as cancelled"), "{size:?}\n{out}");
    });
    update(&mut s, Action::Save);
    assert!(s.prompt.is_some());
    assert!(s.status.contains("earlier result 'first'"), "{}", s.status);
    // With no earlier result, s says why nothing happens.
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    update(&mut s, Action::Run(RunMessage::Cancelled));
    update(&mut s, Action::Save);
    assert!(
        s.prompt.is_none() && s.status.contains("cancelled"),
        "{}",
        s.status
    );
}

#[test]
fn p05_editing_lambda_during_a_fit_leaves_the_running_summary() {
    let mut s = loaded();
    set_field(&mut s, "lambda", "0.1");
    update(&mut s, Action::StartRun);
    set_field(&mut s, "lambda", "0.5");
    s.pane = Pane::Run;
    at_both(&s, |out, size| {
        assert!(out.contains("lambda=0.1"), "{size:?}\n{out}");
        assert!(!out.contains("lambda=0.5"), "{size:?}\n{out}");
        assert!(out.contains("lambda 0.1 → 0.5"), "{size:?}\n{out}");
    });
}

#[test]
fn p06_multi_view_fits_show_each_views_sigma() {
    let mut s = finished();
    let r = &mut s.result.as_mut().unwrap().outcome.record;
    r.method = "mvml".into();
    r.details.insert(
        "view_sigmas".into(),
        serde_json::json!({"fou": 9.1, "fac": 21.9}),
    );
    for p in [Pane::Results, Pane::Run] {
        at_both(&on(s.clone(), p), |out, size| {
            assert!(
                out.contains("σ per view") && out.contains("9.1000") && out.contains("21.9000"),
                "{p:?} {size:?}\n{out}"
            );
        });
    }
}

#[test]
fn p07_eta_uses_steps_not_records_and_the_recent_pace() {
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    let t0 = s.now;
    start_phase(&mut s, Phase::Iterating, Some(10));
    // Iteration 0 is recorded before any work; later steps take 450 ms each.
    for (i, ms) in [0.0, 450.0, 900.0, 1350.0, 1800.0].into_iter().enumerate() {
        let mut r = trace(1).remove(0);
        r.iter = i;
        r.elapsed_ms = ms;
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    update(&mut s, Action::Tick(t0 + Duration::from_secs(2)));
    at_both(&s, |out, size| {
        // 4 steps done, 6 left at 0.45 s: 2.7 s (not 5 records done and 2.0 s).
        assert!(out.contains("iterations 4/10"), "{size:?}\n{out}");
        assert!(out.contains("ETA 2.7 s"), "{size:?}\n{out}");
    });
}

#[test]
fn p08_vvmr_gets_a_labeled_fraction() {
    let mut s = loaded();
    choose(&mut s, "vvmr");
    s.pane = Pane::Data;
    s.data.focus = DataFocus::Columns;
    at_both(&s, |out, size| {
        assert!(out.contains("vvmr needs unlabeled rows"), "{size:?}\n{out}");
    });
    let a = map_key(&s, key(KeyCode::Char('<'))).unwrap();
    update(&mut s, a);
    update(&mut s, Action::Labeled(-8));
    assert_eq!(s.run_config().unwrap().data.labeled, Some(0.55));
    at_both(&s, |out, size| {
        assert!(out.contains("labeled 0.55"), "{size:?}\n{out}");
    });
}

#[test]
fn p09_missing_values_are_read_as_the_cli_reads_them_and_can_be_dropped() {
    let dir = crate::common::binary::temp_dir("tui", "na", true);
    let csv = dir.join("na.csv");
    std::fs::write(&csv, "a,b,y\n1,NA,0\n2,3,1\n3,4,0\n4,?,1\n").unwrap();
    let t = ovk_core::data::load_table(&csv, 5).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(t.columns[1].dtype, "f64");
    assert_eq!(t.columns[1].missing, 2);
    let mut s = state();
    open_table(
        &mut s,
        "toy/na.csv",
        Ok(Table {
            path: "toy/na.csv".into(),
            ..t
        }),
        None,
    );
    s.data.col_cursor = 2;
    update(&mut s, Action::SetRole(Role::Class));
    let why = s.run_config().unwrap_err();
    assert!(
        why.contains("`b` has 2 missing values") && why.contains("press m"),
        "{why}"
    );
    at_both(&s, |out, size| {
        assert!(out.contains("missing: refuse (2 rows"), "{size:?}\n{out}");
        assert!(out.contains("press m to drop"), "{size:?}\n{out}");
    });
    let a = map_key(&s, key(KeyCode::Char('m'))).unwrap();
    update(&mut s, a);
    assert!(s.run_config().unwrap().data.drop_missing);
}

#[test]
fn p10_text_and_id_columns_start_ignored() {
    let mut t = table();
    t.columns.insert(
        0,
        ColumnSummary {
            name: "city".into(),
            dtype: "str".into(),
            missing: 0,
            min: None,
            max: None,
            mean: None,
            ..Default::default()
        },
    );
    for r in t.head.iter_mut() {
        r.insert(0, "Lyon".into());
    }
    let mut s = state();
    open_table(&mut s, "toy/digits.csv", Ok(t), None);
    assert_eq!(s.data.roles[0], Role::Ignore);
    at_both(&s, |out, size| {
        assert!(out.contains("text/ID column ignored"), "{size:?}\n{out}");
    });
    // Marked a feature by hand, the run is refused with the reason in full.
    s.data.col_cursor = 0;
    update(&mut s, Action::SetRole(Role::Feature));
    s.data.col_cursor = 4;
    update(&mut s, Action::SetRole(Role::Class));
    // the class is the only output (a class beside targets is refused first, for its own reason)
    let targets: Vec<usize> = (0..s.data.roles.len())
        .filter(|&i| s.data.roles[i] == Role::Target)
        .collect();
    for i in targets {
        s.data.col_cursor = i;
        update(&mut s, Action::SetRole(Role::Ignore));
    }
    let err = s.run_config().unwrap_err();
    assert!(err.contains("`city` is text"), "{err}");
}

#[test]
fn p11_small_terminal_keeps_names_delta_and_tabs() {
    let s = loaded();
    let out = screen(&s, 80, 24);
    assert!(out.contains("p_0_0") && out.contains("target_y"), "{out}");
    assert!(out.contains("8 Sessions"), "{out}");
    let out = screen(&on(finished(), Pane::Results), 80, 24);
    assert!(out.contains("Δ test") && out.contains("+0.0201"), "{out}");
    at_both(&on(finished(), Pane::Results), |out, size| {
        assert!(out.contains("Δ test"), "{size:?}\n{out}");
    });
}

fn lambda_path(s: &mut State, n: i32) {
    let details = &mut s.result.as_mut().unwrap().outcome.record.details;
    details.insert("lambda".into(), serde_json::json!(0.25));
    let path: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({
                "lambda": 0.25 * 2f64.powi(10 - i),
                "iterations": 1000 + i,
                "validation_mse": 1.0 + i as f64 / 100.0,
            })
        })
        .collect();
    details.insert("path".into(), serde_json::Value::Array(path));
}

#[test]
fn p12_long_tables_scroll_to_their_last_row() {
    let mut s = on(finished(), Pane::Results);
    lambda_path(&mut s, 25);
    let a = map_key(&s, key(KeyCode::Char('G'))).unwrap();
    update(&mut s, a);
    at_both(&s, |out, size| {
        assert!(
            out.contains("1024"),
            "last row (iterations 1024) not shown {size:?}\n{out}"
        );
        assert!(out.contains("row 25/25"), "{size:?}\n{out}");
    });
    // The Run pane's trace: the first of 319 records is reachable.
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    for mut r in trace(319) {
        r.objective = 1.0;
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    update(&mut s, Action::Top);
    at_both(&s, |out, size| {
        assert!(out.contains("Trace (1/319)"), "{size:?}\n{out}");
        assert!(
            out.lines()
                .any(|l| l.contains("│0 ") || l.contains(" 0    ")),
            "{size:?}\n{out}"
        );
    });
    // Notes scroll with J.
    for i in 0..40 {
        update(
            &mut s,
            Action::Run(RunMessage::Note(format!("note number {i}"))),
        );
    }
    for _ in 0..30 {
        update(&mut s, Action::ScrollNotes(3));
    }
    at_both(&s, |out, size| {
        assert!(out.contains("note number 39"), "{size:?}\n{out}");
    });
}

#[test]
fn p13_strongest_pairs_only_for_similarities_and_names_are_whole() {
    let mut s = on(finished(), Pane::Matrices);
    let f = s.result.as_mut().unwrap();
    f.outcome.record.output_names = vec![
        "amazed-surprised".into(),
        "quiet-still-and-calm".into(),
        "angry-aggressive".into(),
    ];
    f.outcome.matrices.push((
        "coefficients".into(),
        array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],
    ));
    at_both(&s, |out, size| {
        assert!(out.contains("Strongest off-diagonal"), "{size:?}\n{out}");
        assert!(out.contains("quiet-still-and-calm"), "{size:?}\n{out}");
    });
    update(&mut s, Action::NextMatrix);
    at_both(&s, |out, size| {
        assert!(!out.contains("Strongest off-diagonal"), "{size:?}\n{out}");
        assert!(out.contains("Largest |entries|"), "{size:?}\n{out}");
    });
}

#[test]
fn p14_heatmaps_label_columns_fit_big_matrices_and_keep_the_sign_without_colour() {
    let mut s = on(finished(), Pane::Matrices);
    let f = s.result.as_mut().unwrap();
    f.outcome.record.details.insert(
        "axes".into(),
        serde_json::json!({"block_norms": {
            "rows": {"labels": ["fou", "fac"]},
            "cols": {"labels": ["fou", "fac"]}}}),
    );
    f.outcome
        .matrices
        .push(("block_norms".into(), array![[1.0, -0.5], [-0.5, 1.0]]));
    let mut big = ndarray::Array2::zeros((576, 576));
    big[[500, 3]] = -2.0;
    f.outcome.matrices.push(("metric".into(), big));
    update(&mut s, Action::Zoom(3));
    update(&mut s, Action::NextMatrix);
    assert_eq!(s.matrices.zoom, 0, "zoom is per matrix");
    at_both(&s, |out, size| {
        assert!(out.contains("row fou · col fou"), "{size:?}\n{out}");
        assert!(
            out.lines()
                .any(|l| l.contains("fou") && l.contains("fac") && !l.contains("row")),
            "column labels {size:?}\n{out}"
        );
    });
    update(&mut s, Action::NextMatrix);
    at_both(&s, |out, size| {
        // at 80 columns the title keeps the block size and the key, not the whole wording
        let overview = if size.0 >= 120 {
            "overview: 1 cell ="
        } else {
            "blocks · + zooms in"
        };
        assert!(out.contains(overview), "{size:?}\n{out}");
    });
    s.theme = ovk::tui::theme::Theme::new(ovk::tui::theme::ColorMode::None);
    at_both(&s, |out, size| {
        assert!(
            out.contains('#'),
            "negative cells have their own glyph {size:?}\n{out}"
        );
    });
}

#[test]
fn p15_settings_stay_with_their_method_and_file() {
    let mut s = loaded();
    set_field(&mut s, "lambda", "0.3");
    choose(&mut s, "lowrank-okl");
    let lam = field(&s, "lambda");
    assert!(
        lam.text.is_empty(),
        "lowrank-okl keeps its λ path: {:?}",
        lam.text
    );
    at_both(&on(s.clone(), Pane::Kernel), |out, size| {
        assert!(out.contains("lowrank-okl"), "{size:?}\n{out}");
    });
    // A test fraction of 0 stays with its file.
    s.pane = Pane::Data;
    for _ in 0..5 {
        update(&mut s, Action::TestFraction(-1));
    }
    assert_eq!(s.data.split.test_fraction, 0.0);
    let mut other = table();
    other.path = "toy/iris.csv".into();
    open_table(&mut s, "toy/iris.csv", Ok(other), None);
    assert_eq!(s.data.split.test_fraction, 0.25);
    at_both(&s, |out, size| {
        assert!(out.contains("test 0.25"), "{size:?}\n{out}");
    });
    open_table(&mut s, "toy/digits.csv", Ok(table()), None);
    assert_eq!(s.data.split.test_fraction, 0.0);
}

#[test]
fn p16_long_column_names_and_sidecar_views_are_shown() {
    let mut t = table();
    t.columns[0].name = "Mean_Acc1298_Mean_Mem40_Centroid".into();
    t.columns[1].name = "BH_LowPeakAmp".into();
    let mut s = state();
    let sidecar =
        "source = \"s\"\n[views]\ntimbre = [\"Mean_Acc1298_Mean_Mem40_Centroid\"]\nrhythm = [\"BH_LowPeakAmp\"]\n";
    open_table(&mut s, "toy/digits.csv", Ok(t), Some(sidecar.into()));
    assert_eq!(
        s.data.views(),
        vec!["timbre".to_string(), "rhythm".to_string()]
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("view timbre") && out.contains("view rhythm"),
            "{size:?}\n{out}"
        );
        assert!(
            out.contains("Mean_Acc1298_Mean_Mem40_Centroid"),
            "{size:?}\n{out}"
        );
    });
}

/// Columns the sidecar marks as views are plain features to a single-kernel method: its run
/// records no views (and draws no note that they went unused); mvml's run keeps them.
#[test]
fn sidecar_views_go_to_multi_view_methods_only() {
    let mut t = table();
    t.columns[0].name = "a_0".into();
    t.columns[1].name = "b_0".into();
    let mut s = state();
    let sidecar =
        "source = \"s\"\nclass = \"digit\"\n[views]\nleft = [\"a_0\"]\nright = [\"b_0\"]\n";
    open_table(&mut s, "toy/digits.csv", Ok(t), Some(sidecar.into()));
    choose(&mut s, "krr");
    let krr = s.run_config().unwrap();
    assert_eq!(krr.data.views, None);
    assert!(krr.data.features.unwrap().contains(&"a_0".to_string()));
    choose(&mut s, "mvml");
    let mvml = s.run_config().unwrap();
    assert_eq!(mvml.data.views, Some(vec!["left".into(), "right".into()]));
}

#[test]
fn p17_ticks_plurals_details_and_row_counts_read_right() {
    let mut s = finished();
    s.result.as_mut().unwrap().outcome.record.details.insert(
        "nystrom".into(),
        serde_json::json!({"p": 40, "fraction": 0.25}),
    );
    at_both(&on(s.clone(), Pane::Charts), |out, size| {
        assert!(
            !out.contains("7.0000") && !out.contains(".0000\n"),
            "{size:?}\n{out}"
        );
        assert!(
            out.contains("y: objective (log) · x: iteration"),
            "{size:?}\n{out}"
        );
    });
    at_both(&on(s.clone(), Pane::Results), |out, size| {
        assert!(!out.contains("{\""), "raw JSON {size:?}\n{out}");
        assert!(
            out.contains("nystrom: fraction 0.2500 · p 40"),
            "{size:?}\n{out}"
        );
    });
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    update(&mut s, Action::Run(RunMessage::Record(trace(1).remove(0))));
    at_both(&s, |out, size| {
        assert!(out.contains("Trace (1 record)"), "{size:?}\n{out}");
    });
}

#[test]
fn export_writes_the_current_matrix_as_csv() {
    let mut s = on(finished(), Pane::Matrices);
    let effects = update(&mut s, Action::Export);
    let [Effect::Export { name, text, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(name, "first-output_kernel");
    assert!(
        text.starts_with("\"\",digit=0,digit=1,digit=2\ndigit=0,1,0.62,-0.4\n"),
        "{text}"
    );
}

// ---------- runs table, marked-run overlay, sweeps, export (issue 18, "what must exist") ----------

/// A store of 25 runs: okl and krr on iris and digits, λ from 1e-3 up, accuracy varying.
fn runs_state() -> State {
    let mut s = on(state(), Pane::Sessions);
    let list = (0..25)
        .map(|i| {
            let (method, data) = match i % 3 {
                0 => ("krr", "digits.csv"),
                1 => ("okl", "iris.csv"),
                _ => ("okl", "digits.csv"),
            };
            let acc = 0.80 + 0.007 * ((i * 7) % 25) as f64;
            run_summary(
                &format!("run-{i:02}"),
                method,
                data,
                1e-3 * (i + 1) as f64,
                acc,
            )
        })
        .collect();
    update(
        &mut s,
        Action::SessionsListed {
            root: Ok("/store".into()),
            list,
        },
    );
    s
}

/// The names of the runs on screen, top to bottom.
fn names_shown(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let i = l.find("run-")?;
            Some(l[i..i + 6].to_string())
        })
        .collect()
}

#[test]
fn runs_table_lists_settings_and_metrics_and_scrolls_to_its_last_row() {
    let mut s = runs_state();
    at_both(&s, |out, size| {
        assert!(
            out.contains("Runs in /store")
                && (out.contains("test accuracy") || out.contains("acc 0.8000"))
                && out.contains("run-00")
                && out.contains("column 1/"),
            "{size:?}\n{out}"
        );
        if size.1 == 24 {
            assert!(
                !out.contains("run-24"),
                "{size:?}: 25 rows cannot all fit\n{out}"
            );
        }
    });
    update(&mut s, Action::Bottom);
    at_both(&s, |out, size| {
        let shown = names_shown(out);
        assert_eq!(
            shown.last().map(String::as_str),
            Some("run-24"),
            "{size:?}\n{out}"
        );
    });
    // Every hyperparameter is a column, those that differ between runs (λ) first.
    let titles: Vec<String> = ovk::tui::state::columns(&s.sessions.list, None)
        .iter()
        .map(|c| c.title())
        .collect();
    let at = |t: &str| titles.iter().position(|x| x == t).unwrap();
    assert!(
        at("lambda") < at("kernel") && at("lambda") < at("sigma"),
        "{titles:?}"
    );
    // Moving the column cursor right scrolls to λ.
    let lambda = s
        .sessions
        .columns()
        .iter()
        .position(|c| c.title() == "lambda")
        .unwrap();
    for _ in 0..lambda {
        update(&mut s, Action::Column(1));
    }
    at_both(&s, |out, size| {
        assert!(
            out.contains("lambda") && out.contains("0.025"),
            "{size:?}\n{out}"
        );
    });
    let sigma = s
        .sessions
        .columns()
        .iter()
        .position(|c| c.title() == "sigma")
        .unwrap();
    update(&mut s, Action::Column((sigma - lambda) as i32));
    at_both(&s, |out, size| {
        assert!(
            out.contains("sigma") && out.contains("1.5000"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn runs_table_sorts_by_the_chosen_column_and_reverses() {
    let mut s = runs_state();
    // The first metric (test accuracy): o sorts best first, again worst first.
    let at = s
        .sessions
        .columns()
        .iter()
        .position(|c| c.title() == "test accuracy")
        .unwrap();
    update(&mut s, Action::Column(at as i32));
    update(&mut s, Action::SortBy);
    let acc =
        |s: &State, i: usize| match &s.sessions.list[s.sessions.runs.rows(&s.sessions.list)[i]] {
            Listing::Ok(x) => x.metrics["accuracy"],
            _ => f64::NAN,
        };
    let n = s.sessions.runs.rows(&s.sessions.list).len();
    assert!((1..n).all(|i| acc(&s, i - 1) >= acc(&s, i)));
    at_both(&s, |out, size| {
        assert!(out.contains("test accuracy▼"), "{size:?}\n{out}");
        assert!(s.status.contains("largest first"), "{}", s.status);
    });
    update(&mut s, Action::SortBy);
    assert!((1..n).all(|i| acc(&s, i - 1) <= acc(&s, i)));
    at_both(&s, |out, size| {
        assert!(out.contains("test accuracy▲"), "{size:?}\n{out}")
    });
    // A third o: back to newest first (the listing's order).
    update(&mut s, Action::SortBy);
    assert_eq!(
        s.sessions.runs.rows(&s.sessions.list),
        (0..25).collect::<Vec<_>>()
    );
}

#[test]
fn runs_table_filters_by_text_method_and_dataset() {
    let mut s = runs_state();
    update(&mut s, Action::Filter);
    assert!(matches!(
        &s.prompt,
        Some(Prompt {
            kind: PromptKind::Filter,
            ..
        })
    ));
    for c in "method:okl dataset:iris".chars() {
        update(&mut s, Action::Char(c));
    }
    // Applied as typed.
    let rows = s.sessions.runs.rows(&s.sessions.list);
    assert_eq!(rows.len(), 8, "{rows:?}");
    update(&mut s, Action::Enter);
    at_both(&s, |out, size| {
        assert!(out.contains("8/25 match"), "{size:?}\n{out}");
        assert!(
            out.contains("run-01") && !out.contains("run-00"),
            "{size:?}\n{out}"
        );
    });
    // Enter on a filtered row opens that run, not the unfiltered list's row.
    let effects = update(&mut s, Action::Enter);
    assert!(matches!(effects.as_slice(), [Effect::OpenSession(p)] if p.ends_with("run-01-id")));
    // Nothing matches: said so; Esc clears the filter.
    update(&mut s, Action::Filter);
    update(&mut s, Action::ClearText);
    for c in "zzz".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Enter);
    at_both(&s, |out, size| {
        assert!(out.contains("no run matches 'zzz'"), "{size:?}\n{out}")
    });
    update(&mut s, Action::Back);
    assert!(s.sessions.runs.filter.is_empty());
    assert_eq!(s.sessions.runs.rows(&s.sessions.list).len(), 25);
}

fn marked_curve(name: &str, method: &str, dataset: &str, scale: f64) -> MarkedRun {
    MarkedRun {
        name: name.into(),
        method: method.into(),
        dataset: dataset.into(),
        trace: trace(8)
            .into_iter()
            .map(|mut t| {
                t.objective = scale * (1.0 + t.objective);
                t
            })
            .collect(),
    }
}

/// Mark three runs of `runs_state`: run-01 and run-04 (okl on iris), run-02 (okl on digits);
/// the folders the state asks to load.
fn mark_three(s: &mut State) -> Vec<PathBuf> {
    let mut effects = Vec::new();
    for i in [1usize, 4, 2] {
        s.sessions.cursor = i;
        effects.extend(update(s, Action::Space));
    }
    effects
        .iter()
        .map(|e| match e {
            Effect::LoadMarked(p) => p.clone(),
            e => panic!("{e:?}"),
        })
        .collect()
}

/// The curves of the three runs `mark_three` marked, loaded from `paths`.
fn load_three(s: &mut State, paths: &[PathBuf]) {
    let curves = [
        marked_curve("run-01", "okl", "iris.csv", 10.0),
        marked_curve("run-04", "okl", "iris.csv", 12.0),
        marked_curve("run-02", "okl", "digits.csv", 5000.0),
    ];
    for (p, c) in paths.iter().zip(curves) {
        update(s, Action::MarkedLoaded(p.clone(), Ok(c)));
    }
}

#[test]
fn marked_runs_overlay_in_charts_one_chart_per_problem_with_a_legend() {
    let mut s = runs_state();
    let paths = mark_three(&mut s);
    assert_eq!(paths.len(), 3);
    at_both(&s, |out, size| {
        assert!(out.contains("3 marked"), "{size:?}\n{out}")
    });
    load_three(&mut s, &paths);
    s.pane = Pane::Charts;
    at_both(&s, |out, size| {
        assert!(
            out.contains("Marked runs (3)")
                && out.contains("━1━ run-01")
                && out.contains("━2━ run-04")
                && out.contains("━3━ run-02"),
            "{size:?}\n{out}"
        );
        // Two problems, two charts: digits' objective (≈5000) never shares iris' axis (≈10).
        assert!(
            out.contains("Objective — okl on iris.csv (runs 1, 2)")
                && out.contains("Objective — okl on digits.csv (run 3)"),
            "{size:?}\n{out}"
        );
    });
    // m: back to this run's charts; the marks stay.
    update(&mut s, Action::ToggleMarked);
    at_both(&s, |out, size| {
        assert!(
            !out.contains("Marked runs") && out.contains("m: marked runs"),
            "{size:?}\n{out}"
        )
    });
    // Export of the marked curves: one line per run and iteration.
    update(&mut s, Action::ToggleMarked);
    let effects = update(&mut s, Action::Export);
    let [Effect::Export { name, text, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(name, "marked-runs");
    assert_eq!(text.lines().count(), 1 + 3 * 8, "{text}");
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("1,run-01,okl,iris.csv,0,"),
        "{text}"
    );
}

#[test]
fn runs_table_exports_as_shown_with_full_precision() {
    let mut s = runs_state();
    update(&mut s, Action::Filter);
    for c in "method:krr".chars() {
        update(&mut s, Action::Char(c));
    }
    update(&mut s, Action::Enter);
    let effects = update(&mut s, Action::Export);
    let [Effect::Export { name, text, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(name, "runs");
    let mut lines = text.lines();
    let head = lines.next().unwrap();
    assert!(
        head.starts_with("name,") && head.contains(",test accuracy,") && head.ends_with(",path"),
        "{head}"
    );
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 9, "{text}");
    assert!(
        rows.iter().all(|r| r.contains(",krr,digits.csv,")),
        "{text}"
    );
    // Metrics at full precision, not the screen's four digits; the full creation time.
    assert!(
        rows[0].starts_with("run-00,accuracy 0.8,krr,digits.csv,0123456789ab,0.8,"),
        "{text}"
    );
    assert!(rows[0].contains(",2026-11-21T07:00:00Z,"), "{text}");
}

/// okl on the toy table, the Kernel cursor on `key`.
pub(crate) fn kernel_at(key: &str) -> State {
    let mut s = loaded();
    choose(&mut s, "okl");
    s.pane = Pane::Kernel;
    s.kernel.cursor = s
        .kernel
        .visible()
        .iter()
        .position(|&i| s.kernel.fields[i].key() == key)
        .unwrap();
    s
}

pub(crate) fn type_prompt(s: &mut State, text: &str) -> Vec<Effect> {
    update(s, Action::ClearText);
    for c in text.chars() {
        update(s, Action::Char(c));
    }
    update(s, Action::Enter)
}

/// Enter `text` at the range prompt `w` opened, which marks the field for search, then `w`
/// in Run and Enter: the search it asks (a grid, on the range's folds) starts.
pub(crate) fn sweep_now(s: &mut State, text: &str) -> Vec<Effect> {
    let effects = type_prompt(s, text);
    if s.prompt.is_some() || !effects.is_empty() {
        return effects;
    }
    update(s, Action::Goto(Pane::Run));
    update(s, Action::SweepPrompt);
    update(s, Action::Enter)
}

pub(crate) fn sweep_row(index: usize, mean: f64) -> ovk_core::train::sweep::SweepRow {
    ovk_core::train::sweep::SweepRow {
        index,
        values: BTreeMap::new(),
        metric: "accuracy".into(),
        higher_is_better: true,
        mean,
        sd: 0.01,
        fold_scores: vec![mean - 0.01, mean + 0.01],
        seconds: 0.5,
        error: None,
        rung: None,
        train_rows: None,
    }
}

#[test]
fn sweep_range_is_checked_against_the_parameter() {
    // A field that is not a number cannot be swept.
    let mut s = kernel_at("solver");
    update(&mut s, Action::SweepPrompt);
    assert!(
        s.prompt.is_none() && s.status.contains("not a number"),
        "{}",
        s.status
    );
    // λ: the prompt starts with a log range; a log range through 0 is refused and kept.
    let mut s = kernel_at("lambda");
    at_both(&s, |out, size| {
        assert!(out.contains("w marks lambda"), "{size:?}\n{out}")
    });
    update(&mut s, Action::SweepPrompt);
    assert!(
        matches!(&s.prompt, Some(Prompt { kind: PromptKind::Sweep { key }, text }) if key == "lambda" && text.contains("log"))
    );
    at_both(&s, |out, size| {
        assert!(out.contains("LOW HIGH N"), "{size:?}\n{out}")
    });
    let effects = sweep_now(&mut s, "0 1 5 log");
    assert!(
        effects.is_empty() && s.status.contains("positive ends"),
        "{}",
        s.status
    );
    assert!(s.prompt.is_some(), "the prompt stays for a fix");
    // λ must be > 0 even on a linear range (the ParamSpec's open minimum).
    let effects = sweep_now(&mut s, "0 1 3 lin");
    assert!(
        effects.is_empty() && s.status.contains("outside (0"),
        "{}",
        s.status
    );
    // max_iter is a whole number ≥ 1.
    let mut s = kernel_at("max_iter");
    update(&mut s, Action::SweepPrompt);
    let effects = sweep_now(&mut s, "0 10 3");
    assert!(
        effects.is_empty() && s.status.contains("outside [1"),
        "{}",
        s.status
    );
    let effects = sweep_now(&mut s, "1 3 5 cv=2");
    let [Effect::StartSweep { configs, folds }] = effects.as_slice() else {
        panic!("{effects:?} {}", s.status)
    };
    // 1, 1.5→2, 2, 2.5→3, 3: whole numbers, each once.
    let iters: Vec<String> = configs
        .iter()
        .map(|c| c.params.0["max_iter"].to_string())
        .collect();
    assert_eq!(iters, ["1", "2", "3"]);
    assert_eq!(*folds, Some(2));
}

/// `w` on input_rank sweeps ranks: whole numbers on a log range, each fit on its own rank.
#[test]
fn w_on_input_rank_sweeps_ranks() {
    let mut s = kernel_at("input_rank");
    update(&mut s, Action::SweepPrompt);
    assert!(
        matches!(&s.prompt, Some(Prompt { kind: PromptKind::Sweep { key }, text }) if key == "input_rank" && text.starts_with("100 1000 4 log")),
        "{:?}",
        s.prompt
    );
    let refused = sweep_now(&mut s, "0 10 3 lin");
    assert!(
        refused.is_empty() && s.status.contains("at least 1"),
        "{}",
        s.status
    );
    let effects = sweep_now(&mut s, "100 400 3 cv=0");
    let [Effect::StartSweep { configs, folds }] = effects.as_slice() else {
        panic!("{effects:?} {}", s.status)
    };
    let ranks: Vec<String> = configs
        .iter()
        .map(|c| c.kernel.input_rank.to_string())
        .collect();
    assert_eq!(ranks, ["100", "200", "400"]);
    assert_eq!(*folds, None);
    // A rank its fit refuses: the table says failed, the notes say why, whole.
    update(
        &mut s,
        Action::Run(RunMessage::SweepRow(Box::new(sweep_row(0, 0.9)))),
    );
    let mut failed = sweep_row(2, f64::NAN);
    failed.error = Some("--input-rank 400 is larger than the 384 training rows".into());
    update(&mut s, Action::Run(RunMessage::SweepRow(Box::new(failed))));
    at_both(&on(s.clone(), Pane::Run), |out, size| {
        assert!(
            out.contains("400        failed     see Notes"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("r = 400 failed:"), "{size:?}\n{out}");
        // whole numbers without a decimal point
        assert!(
            out.contains("* 100 ") && !out.contains("100.0"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn sweep_runs_in_the_background_fills_its_curve_and_keeps_the_best() {
    let mut s = kernel_at("lambda");
    update(&mut s, Action::SweepPrompt);
    let effects = sweep_now(&mut s, "1e-3 1 4 log cv=3");
    let [Effect::StartSweep { configs, folds }] = effects.as_slice() else {
        panic!("{effects:?} {}", s.status)
    };
    let lambdas: Vec<String> = configs
        .iter()
        .map(|c| c.params.0["lambda"].to_string())
        .collect();
    assert_eq!(lambdas, ["0.001", "0.01", "0.1", "1"]);
    assert_eq!(*folds, Some(3));
    assert!(configs
        .iter()
        .all(|c| c.method == MethodName::Okl && c.data.cv.is_none()));
    assert!(s.is_running() && s.pane == Pane::Run);
    at_both(&s, |out, size| {
        assert!(
            out.contains("sweep   λ: 4 values") && out.contains("Sweep of λ — 0/4 scored"),
            "{size:?}\n{out}"
        )
    });
    // A second sweep or fit waits for this one.
    assert!(update(&mut s, Action::StartRun).is_empty());
    update(
        &mut s,
        Action::Run(RunMessage::SweepRow(Box::new(sweep_row(2, 0.95)))),
    );
    update(
        &mut s,
        Action::Run(RunMessage::SweepRow(Box::new(sweep_row(0, 0.80)))),
    );
    assert!(s.status.contains("best so far λ = 0.1"), "{}", s.status);
    at_both(&s, |out, size| {
        assert!(
            out.contains("Sweep of λ — 2/4 scored, * best"),
            "{size:?}\n{out}"
        );
    });
    let charts = on(s.clone(), Pane::Charts);
    at_both(&charts, |out, size| {
        assert!(
            out.contains("Sweep: 3-fold CV accuracy per λ (2/4 scored)")
                && out.contains("best λ = 0.1000 (0.9500)"),
            "{size:?}\n{out}"
        );
    });
    // The sweep's rows export as CSV from the Run pane.
    let effects = update(&mut s, Action::Export);
    let [Effect::Export { name, text, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(name, "sweep-lambda");
    assert!(
        text.starts_with("lambda,mean_accuracy,sd,seconds,error,fold_0,fold_1\n0.001,0.8,"),
        "{text}"
    );
    // Cancelling reaches the sweep.
    assert!(matches!(
        update(&mut s, Action::CancelRun).as_slice(),
        [Effect::CancelRun]
    ));
    // The refit of the best ends the run like a fit: the result, recorded, s keeps it.
    update(
        &mut s,
        Action::Run(RunMessage::Recorded {
            dir: "/store/best".into(),
            ended: ovk_core::train::Ended::Finished(Box::new({
                let mut o = outcome("toy-okl-best");
                o.record.kept = false; // as the worker records it
                o
            })),
        }),
    );
    assert!(s.result.is_some() && s.unsaved_work().is_none());
    // the best λ is now the Kernel pane's, so the next fit is the one kept
    let lambda = field(&s, "lambda");
    assert_eq!((lambda.text.as_str(), &lambda.error), ("0.1", &None));
    assert!(
        s.status
            .contains("λ = 0.1, the sweep's best, is now in Kernel (3)"),
        "{}",
        s.status
    );
    update(&mut s, Action::Save);
    assert!(
        matches!(&s.prompt, Some(Prompt { kind: PromptKind::SaveName, text }) if text == "toy-okl-best")
    );
}

#[test]
fn a_cancelled_sweep_keeps_its_scored_rows_and_says_no_best_was_kept() {
    let mut s = kernel_at("lambda");
    update(&mut s, Action::SweepPrompt);
    sweep_now(&mut s, "1e-3 1 4 log cv=3");
    update(
        &mut s,
        Action::Run(RunMessage::SweepRow(Box::new(sweep_row(1, 0.9)))),
    );
    // q during a sweep asks first, like a fit.
    update(&mut s, Action::Quit);
    assert!(matches!(
        &s.prompt,
        Some(Prompt {
            kind: PromptKind::ConfirmQuit { .. },
            ..
        })
    ));
    update(&mut s, Action::Back);
    assert!(matches!(
        update(&mut s, Action::Back).as_slice(),
        [Effect::CancelRun]
    ));
    update(&mut s, Action::Run(RunMessage::Cancelled));
    assert!(
        s.status.contains("sweep stopped, no best refitted"),
        "{}",
        s.status
    );
    assert!(s.result.is_none() && s.unsaved_work().is_none());
    at_both(&s, |out, size| {
        assert!(
            out.contains("being recorded as cancelled")
                && out.contains("Sweep of λ — 1/4 scored")
                && !out.contains("stopped in —"),
            "{size:?}\n{out}"
        );
    });
    // A new fit forgets the sweep.
    update(&mut s, Action::StartRun);
    assert!(s.run.sweep.is_none());
}

/// A method whose parameters wrap onto two lines at 80 columns (kde) still shows the Run
/// box's "Enter or r starts the fit" line at 80×24 (seen in the walk through all six methods).
#[test]
fn run_box_keeps_its_hint_when_the_params_wrap() {
    let mut s = on(loaded(), Pane::Method);
    // vvmr: its parameters wrap at 80 columns and it fits this classification table
    for c in [KeyCode::Down, KeyCode::Down, KeyCode::Down, KeyCode::Enter] {
        if let Some(a) = map_key(&s, key(c)) {
            update(&mut s, a);
        }
    }
    let s = on(s, Pane::Run);
    for (w, h) in [(80, 24), (120, 36)] {
        let out = screen(&s, w, h);
        assert!(out.contains("method  vvmr"), "{out}");
        assert!(out.contains("Enter or r starts the fit"), "{w}×{h}:\n{out}");
    }
}

/// Issue 16 in the workbench: p in Sessions asks for a file, Enter asks the engine to predict
/// with the selected session's model, the table shows (decoded class first, then scores) and
/// scrolls at 120×36 and 80×24, e exports exactly it, Esc closes it.
#[test]
fn sessions_predict_on_a_file_shows_scrolls_and_exports_the_table() {
    let mut s = state();
    update(&mut s, Action::Goto(Pane::Sessions));
    update(
        &mut s,
        Action::SessionsListed {
            root: Ok("/store".into()),
            list: vec![summary("alpha")],
        },
    );
    update(&mut s, Action::PredictPrompt);
    assert!(matches!(
        s.prompt.as_ref().map(|p| &p.kind),
        Some(PromptKind::Predict { .. })
    ));
    for c in "new.csv".chars() {
        update(&mut s, Action::Char(c));
    }
    let effects = update(&mut s, Action::Enter);
    let [Effect::Predict { session, data, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(
        (session.as_path(), data.as_path()),
        (
            std::path::Path::new("/store/alpha-id"),
            std::path::Path::new("new.csv")
        )
    );
    let n = 25;
    let table = ovk_core::train::PredictionTable {
        output_names: vec!["c0".into(), "c1".into()],
        scores: ndarray::Array2::from_shape_fn((n, 2), |(i, k)| (i * 2 + k) as f64),
        decoded: vec![(
            "digit".into(),
            (0..n).map(|i| format!("class{i}")).collect(),
        )],
        filled_rows: 0,
        scored: None,
    };
    update(
        &mut s,
        Action::Predicted(Ok(Box::new(ovk::tui::state::Predictions {
            session: "alpha".into(),
            data: "new.csv".into(),
            table,
            scroll: 0,
            ignored: vec![],
        }))),
    );
    for (w, h) in [(120, 36), (80, 24)] {
        let out = screen(&s, w, h);
        assert!(out.contains("Predictions of alpha on new.csv"), "{out}");
        assert!(out.contains("class0") && out.contains("digit"), "{out}");
    }
    update(&mut s, Action::Bottom);
    for (w, h) in [(120, 36), (80, 24)] {
        let out = screen(&s, w, h);
        assert!(
            out.contains("class24") && out.contains("of 25"),
            "{w}×{h}:\n{out}"
        );
    }
    let effects = update(&mut s, Action::Export);
    let [Effect::Export { name, text, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert_eq!(name, "predictions-alpha");
    assert_eq!(text.lines().next(), Some("digit,c0_score,c1_score"));
    assert_eq!(text.lines().count(), n + 1);
    update(&mut s, Action::Back);
    assert!(s.sessions.predictions.is_none());
    update(
        &mut s,
        Action::Predicted(Err("lacks the column `x`".into())),
    );
    assert!(
        s.status.contains("cannot predict: lacks the column `x`"),
        "{}",
        s.status
    );
}

/// The Kernel pane sizes its key column to the longest key, so no key is cut; at 80 columns the
/// label column gives way to the value (the Field box repeats the label with the help).
#[test]
fn kernel_pane_shows_every_key_whole_at_both_sizes() {
    let mut s = loaded();
    choose(&mut s, "vvmr");
    s.pane = Pane::Kernel;
    at_both(&s, |out, size| {
        for key in ["laplacian_power", "graph_weights", "output_knn"] {
            assert!(
                out.contains(&format!("{key} ")),
                "{key} cut at {size:?}\n{out}"
            );
        }
        assert_eq!(
            out.contains("manifold regularisation"),
            size.0 >= 120,
            "{size:?}\n{out}"
        );
    });
}

/// The Method pane says which tasks the highlighted method handles, before a fit is refused.
#[test]
fn method_pane_names_the_tasks_a_method_handles() {
    let mut s = loaded();
    choose(&mut s, "kde");
    s.pane = Pane::Method;
    at_both(&s, |out, size| {
        assert!(out.contains("tasks: regression only"), "{size:?}\n{out}");
    });
    choose(&mut s, "okl");
    s.pane = Pane::Method;
    at_both(&s, |out, size| {
        assert!(
            out.contains("tasks: regression, multiclass and multilabel"),
            "{size:?}\n{out}"
        );
    });
}

/// `d` on an empty Results pane says why nothing changes instead of announcing a view.
#[test]
fn diagnostics_key_without_a_result_says_so() {
    let mut s = on(loaded(), Pane::Results);
    let a = map_key(&s, key(KeyCode::Char('d'))).unwrap();
    update(&mut s, a);
    assert!(!s.diag.shown);
    assert!(s.status.contains("no results yet"), "{}", s.status);
}

/// A λ path wider than the pane: `[ ]` scroll its columns while λ stays in the first one.
#[test]
fn results_records_table_scrolls_its_columns_and_keeps_lambda() {
    let mut s = finished();
    let details = &mut s.result.as_mut().unwrap().outcome.record.details;
    details.insert("lambda".into(), serde_json::json!(0.5));
    let path: Vec<serde_json::Value> = (0..4)
        .map(|i| {
            serde_json::json!({
                "lambda": 0.5 * 2f64.powi(-i),
                "iterations": 3 * i,
                "validation_mse": 1.5,
                "train_mse": 1.25,
                "objective": 100.0,
                "seconds": 0.125,
                "converged": true,
                "certificate": {"certified": true, "escapes": 0, "rank_deficient": false,
                                "residual": 1e-9, "top_eigenvalue": 1.0},
            })
        })
        .collect();
    details.insert("path".into(), serde_json::Value::Array(path));
    let mut s = on(s, Pane::Results);
    let out = screen(&s, 80, 24);
    assert!(
        out.contains("columns 1–") && !out.contains("top_eigenvalue"),
        "{out}"
    );
    for _ in 0..20 {
        let a = map_key(&s, key(KeyCode::Char(']'))).unwrap();
        update(&mut s, a);
    }
    let out = screen(&s, 80, 24);
    let header = out
        .lines()
        .find(|l| l.contains("lambda"))
        .expect("λ stays the first column");
    assert!(header.contains("top_eigenval"), "{out}");
    assert!(!header.contains("iterations"), "{out}");
    for _ in 0..20 {
        let a = map_key(&s, key(KeyCode::Char('['))).unwrap();
        update(&mut s, a);
    }
    assert_eq!(s.scroll.record_cols, 0);
}

/// Every method takes an input rank R — mvml as ⌊R/v⌋ block-Nyström landmarks per view — but
/// landmarks belong to the shared factor's methods: mvml does not list them. A rank typed for
/// okl carries over to mvml and back; a refused rank's reason leads the Field box, even at 80
/// columns.
#[test]
fn input_rank_carries_over_to_mvml_which_lists_no_landmarks() {
    let mut s = on(loaded(), Pane::Kernel);
    set_field(&mut s, "input_rank", "100");
    let keys = |s: &State| -> Vec<&'static str> {
        s.kernel
            .visible()
            .iter()
            .map(|&i| s.kernel.fields[i].key())
            .collect()
    };
    choose(&mut s, "mvml");
    assert!(
        keys(&s).contains(&"input_rank") && !keys(&s).contains(&"landmarks"),
        "{:?}",
        keys(&s)
    );
    assert!(s.kernel.first_error().is_none());
    assert_eq!(
        s.kernel.kernel_spec().unwrap().input_rank.to_string(),
        "100"
    );
    // a Nyström fraction beside it: the run would refuse the pair, so the form does
    set_field(&mut s, "nystrom", "0.1");
    let (key, why) = s.kernel.first_error().expect("two choices of landmarks");
    assert_eq!(key, "nystrom");
    assert!(
        why.contains("input_rank 100 chooses the landmarks too"),
        "{why}"
    );
    assert!(screen(&s, 120, 36).contains("✗ input_rank 100"));
    set_field(&mut s, "input_rank", "exact");
    let (_, why) = s.kernel.first_error().expect("exact beside a fraction");
    assert!(why.contains("asks for the exact fit"), "{why}");
    set_field(&mut s, "input_rank", "auto");
    assert!(s.kernel.first_error().is_none());
    set_field(&mut s, "nystrom", "");
    set_field(&mut s, "input_rank", "0");
    let (key, why) = s.kernel.first_error().expect("a rank of 0 is refused");
    assert_eq!(key, "input_rank");
    assert!(why.contains("at least 1"), "{why}");
    let wide = screen(&s, 120, 36);
    assert!(wide.contains("✗ --input-rank must"), "{wide}");
    // on the field, its reason leads the Field box, even at 80 columns
    s.kernel.cursor = s
        .kernel
        .visible()
        .iter()
        .position(|&i| s.kernel.fields[i].key() == "input_rank")
        .unwrap();
    let out = screen(&s, 80, 24);
    assert!(
        out.contains("input_rank refused: --input-rank must"),
        "{out}"
    );
    set_field(&mut s, "input_rank", "100");
    choose(&mut s, "okl");
    assert!(keys(&s).contains(&"input_rank") && keys(&s).contains(&"landmarks"));
    assert!(s.kernel.first_error().is_none());
    assert_eq!(
        s.kernel.kernel_spec().unwrap().input_rank.to_string(),
        "100"
    );
}

// ---------- a user's report: opened sessions, replay, convergence, stale status, counts ----------

/// A saved kde fit of another dataset, as Sessions opens it.
fn other_session() -> RunOutcome {
    let mut o = outcome("emotions-kde");
    let r = &mut o.record;
    r.method = "kde".into();
    r.config.method = MethodName::Kde;
    r.config.data = DataConfig::new("toy/emotions.csv");
    r.trace = trace(5);
    r.iterations = 5;
    r.notes = vec!["the opened session's own note".into()];
    o
}

fn open_session(s: &mut State, o: RunOutcome) {
    update(
        s,
        Action::SessionOpened(Ok(Box::new(("/store/opened".into(), o)))),
    );
}

#[test]
fn opening_a_session_after_a_fit_shows_that_session_in_run_and_the_badge() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    for r in trace(3) {
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    update(
        &mut s,
        Action::Run(RunMessage::Note("a note of the fit".into())),
    );
    update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(outcome("first")))),
    );
    open_session(&mut s, other_session());
    at_both(&on(s.clone(), Pane::Run), |out, size| {
        assert!(
            out.contains("emotions.csv") && out.contains("method  kde"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("Trace (5 records"), "{size:?}\n{out}");
        assert!(out.contains("the opened session's own"), "{size:?}\n{out}");
        assert!(!out.contains("a note of the fit"), "{size:?}\n{out}");
        assert!(!out.contains("finished in"), "{size:?}\n{out}");
        assert!(
            out.contains("Enter or r fits the form instead: okl on digits.csv"),
            "{size:?}\n{out}"
        );
        // The gauge waits for nothing: no fit runs.
        assert!(!out.contains("waiting"), "{size:?}\n{out}");
    });
    // A fit still running keeps its progress; its end replaces the opened session.
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    update(&mut s, Action::Run(RunMessage::Record(trace(1).remove(0))));
    open_session(&mut s, other_session());
    assert!(s.is_running() && s.run.trace.len() == 1);
}

/// A session whose class column came from the sidecar (its configuration names none) still
/// reads as a class with its count, from the model's class record, not as "3 targets".
#[test]
fn an_opened_sessions_sidecar_class_is_named_as_a_class() {
    let mut o = outcome("sidecar-class");
    o.record.config.data.class = None;
    o.record.model = Some(ovk_core::session::ModelRecord {
        kind: "krr".into(),
        settings: Default::default(),
        arrays: Vec::new(),
        scaler: ovk_core::data::Scaler::identity(2),
        feature_dtypes: Vec::new(),
        class: Some(ovk_core::session::ClassRecord {
            column: "digit".into(),
            dtype: "i64".into(),
            values: o.record.output_names.clone(),
        }),
        class_coding: Default::default(),
        fill: None,
        target_scaler: None,
    });
    let classes = o.record.output_names.len();
    let mut s = loaded();
    open_session(&mut s, o);
    at_both(&on(s, Pane::Run), |out, size| {
        assert!(
            out.contains(&format!("class digit ({classes} classes)")),
            "{size:?}\n{out}"
        );
        assert!(!out.contains("targets"), "{size:?}\n{out}");
    });
}

#[test]
fn a_session_opened_in_a_replay_is_replayed_whole_with_its_sigma() {
    let mut s = ovk::tui::replay_state(outcome("saved"), "/store/saved-id".into());
    update(&mut s, Action::Step(-5));
    assert_eq!(s.chart_trace().len(), 3);
    let mut long = other_session();
    long.record.trace = trace(20);
    long.record.kernel.resolved = Kernel::Gaussian { sigma: 9.8259 };
    open_session(&mut s, long);
    assert_eq!(s.chart_trace().len(), 20);
    assert!(screen(&s, 120, 36).contains("replay 20/20"));
    at_both(&on(s, Pane::Kernel), |out, size| {
        assert!(
            out.contains("Kernel & hyperparameters of kde"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("median  (= 9.8259)"), "{size:?}\n{out}");
        assert!(!out.contains("load data"), "{size:?}\n{out}");
    });
}

#[test]
fn the_tick_that_ends_playback_is_drawn() {
    let mut s = ovk::tui::replay_state(outcome("saved"), "/store/saved-id".into());
    update(&mut s, Action::Space);
    let mut t = s.now;
    while s.replay.as_ref().unwrap().playing {
        t += Duration::from_millis(100);
        let tick = Action::Tick(t);
        assert!(ovk::tui::update::redraws(&s, &tick));
        update(&mut s, tick);
    }
    assert_eq!(s.chart_trace().len(), 8);
    assert!(screen(&s, 120, 36).contains("replay 8/8"));
    assert!(!ovk::tui::update::redraws(&s, &Action::Tick(t)));
}

/// okl stopped by max_iter 3 before its tolerance.
fn unconverged() -> RunOutcome {
    let mut o = outcome("capped");
    let r = &mut o.record;
    r.params = Params::new()
        .with("lambda", Value::Float(0.1))
        .with("max_iter", Value::Int(3));
    r.trace = trace(3);
    r.iterations = 3;
    r.converged = false;
    r.notes = vec!["L-BFGS stopped at --max-iter 3 iterations; raise --max-iter".into()];
    o
}

#[test]
fn a_fit_stopped_by_max_iter_says_it_did_not_converge() {
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(unconverged()))),
    );
    assert!(
        s.status
            .contains("3 iterations — not converged (hit max_iter 3)"),
        "{}",
        s.status
    );
    at_both(&s, |out, size| {
        assert!(out.contains("not converged"), "{size:?}\n{out}");
        assert!(
            out.contains("finished in 0.0 s · not converged"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("L-BFGS stopped at"), "Notes: {size:?}\n{out}");
    });
    let s = on(
        ovk::tui::replay_state(unconverged(), "/store/capped".into()),
        Pane::Run,
    );
    at_both(&s, |out, size| {
        assert!(
            out.contains("replayed: 3 iterations — not converged (hit max_iter 3)"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn one_iteration_is_singular() {
    let mut o = outcome("krr");
    o.record.iterations = 1;
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(o.clone()))),
    );
    assert!(s.status.contains(", 1 iteration —"), "{}", s.status);
    let s = on(ovk::tui::replay_state(o, "/store/krr".into()), Pane::Run);
    assert!(screen(&s, 120, 36).contains("replayed: 1 iteration (converged)"));
}

#[test]
fn a_status_outlives_nothing_it_was_about() {
    // A failed fit's badge goes once other data are loaded.
    let mut s = on(loaded(), Pane::Run);
    update(&mut s, Action::StartRun);
    update(
        &mut s,
        Action::Run(RunMessage::Failed {
            message: "singular".into(),
            exit_code: 1,
        }),
    );
    assert!(screen(&s, 120, 36).contains(" failed "));
    open_table(&mut s, "toy/digits.csv", Ok(table()), None);
    at_both(&s, |out, size| {
        assert!(!out.contains("failed"), "{size:?}\n{out}");
        assert!(out.contains(" idle "), "{size:?}\n{out}");
    });
    // The comparison's "Esc to close" goes with the comparison when Sessions is left.
    let mut s = on(finished(), Pane::Sessions);
    update(
        &mut s,
        Action::CompareLoaded(Ok(Box::new((record("a"), record("b"))))),
    );
    assert!(s.status.contains("Esc to close"));
    update(&mut s, Action::Goto(Pane::Data));
    assert!(s.sessions.compare.is_none() && !s.status.contains("Esc to close"));
    // A sweep's refit note names the best as its table shows it, and is past once done.
    let mut s = kernel_at("lambda");
    update(&mut s, Action::SweepPrompt);
    sweep_now(&mut s, "1e-3 1 4 log cv=3");
    for (i, score) in [(0, 0.8), (1, 0.95), (2, 0.9), (3, 0.7)] {
        update(
            &mut s,
            Action::Run(RunMessage::SweepRow(Box::new(sweep_row(i, score)))),
        );
    }
    let refitting = "refitting the best, λ = 0.01 (row 2 of 4, *), on the whole training part…";
    assert_eq!(s.run.notes.last().map(String::as_str), Some(refitting));
    update(
        &mut s,
        Action::Run(RunMessage::Finished(Box::new(outcome("toy-okl-best")))),
    );
    at_both(&s, |out, size| {
        assert!(!out.contains("refitting"), "{size:?}\n{out}");
        assert!(out.contains("• refitted the best, λ ="), "{size:?}\n{out}");
    });
}

#[test]
fn trace_and_results_agree_on_records_iterations_and_the_objective() {
    // lowrank-okl: the path's first λ (B = 0 optimal) is a record but no iteration.
    let mut o = outcome("path");
    let r = &mut o.record;
    r.method = "lowrank-okl".into();
    r.config.method = MethodName::LowRankOkl;
    r.trace = trace(6);
    r.iterations = 5;
    r.objective = r.trace.last().map(|t| t.objective);
    let s = on(
        ovk::tui::replay_state(o.clone(), "/store/path".into()),
        Pane::Run,
    );
    assert!(screen(&s, 120, 36).contains("Trace (6 records · 5 iterations"));
    at_both(&on(s.clone(), Pane::Results), |out, size| {
        assert!(
            out.contains("5 (converged) — the trace's 6"),
            "{size:?}\n{out}"
        );
    });
    let out = screen(&on(s, Pane::Results), 120, 36);
    assert!(
        out.contains("1 λ of the path set without iterating"),
        "{out}"
    );
    // okl's bcd: the last record precedes C re-solved for the final L.
    let mut o = unconverged();
    o.record.objective = Some(1.14e6);
    o.record.trace[2].objective = 1.23e6;
    o.record
        .details
        .insert("solver".into(), serde_json::json!("bcd"));
    let s = on(
        ovk::tui::replay_state(o, "/store/bcd".into()),
        Pane::Results,
    );
    at_both(&s, |out, size| {
        assert!(out.contains("1.14e6 — the trace's last"), "{size:?}\n{out}");
    });
    let out = screen(&s, 120, 36);
    assert!(
        out.contains("precedes C re-solved for the final L"),
        "{out}"
    );
}

// ---------- views a user checked: heatmap zoom, charts, empty matrices, gauge, compare ----------

/// The screen line holding the heatmap cursor.
fn cursor_line(out: &str) -> &str {
    out.lines().find(|l| l.contains('◆')).expect("a cursor")
}

#[test]
fn heatmap_zoom_steps_from_the_fit_and_row_labels_sit_on_their_rows() {
    let mut s = on(finished(), Pane::Matrices);
    let title = |s: &State, size: (u16, u16)| {
        let out = screen(s, size.0, size.1);
        out.lines()
            .find(|l| l.contains("output_kernel 3×3"))
            .unwrap()
            .to_string()
    };
    assert!(title(&s, (120, 36)).contains("fitted (zoom 4)"));
    update(&mut s, Action::Zoom(1));
    assert!(title(&s, (120, 36)).contains("zoom 5 · + - (0 = fit)"));
    update(&mut s, Action::Zoom(-1));
    assert!(title(&s, (120, 36)).contains("fitted (zoom 4)"));
    update(&mut s, Action::Zoom(-1));
    assert!(title(&s, (120, 36)).contains("fitted (zoom 4)"));
    for _ in 0..3 {
        update(&mut s, Action::Zoom(1));
    }
    assert!(title(&s, (120, 36)).contains("zoom 7"));
    let zero = map_key(&s, key(KeyCode::Char('0'))).unwrap();
    update(&mut s, zero);
    assert!(title(&s, (120, 36)).contains("fitted (zoom 4)"));
    // Every row's label is on the line of its row, at every zoom and size.
    for step in 0..=4 {
        s.matrices.zoom = step;
        for r in 0..3 {
            s.matrices.cursor = (r, r);
            at_both(&s, |out, size| {
                let line = cursor_line(out);
                let label = format!("digit={r}");
                assert!(
                    line.contains(&label) && !line.contains(" · col "),
                    "step {step} row {r} {size:?}\n{out}"
                );
            });
        }
    }
}

#[test]
fn a_dense_heatmap_names_the_cursors_row_on_its_line() {
    let mut s = on(finished(), Pane::Matrices);
    let f = s.result.as_mut().unwrap();
    let names: Vec<String> = (0..30).map(|i| format!("r{i}")).collect();
    f.outcome.record.details.insert(
        "axes".into(),
        serde_json::json!({"big": {"rows": {"labels": names}, "cols": {"labels": names}}}),
    );
    f.outcome
        .matrices
        .push(("big".into(), ndarray::Array2::eye(30)));
    update(&mut s, Action::NextMatrix);
    let out = screen(&s, 80, 24);
    assert!(out.contains("big 30×30 — 2 rows per line"), "{out}");
    for r in [1, 2, 17] {
        s.matrices.cursor = (r, r);
        let out = screen(&s, 80, 24);
        assert!(cursor_line(&out).contains(&format!("r{r} ")), "{r}\n{out}");
    }
    // + leaves the dense view for whole lines per row.
    update(&mut s, Action::Zoom(1));
    let out = screen(&s, 80, 24);
    assert!(
        out.contains("zoom 1 · + -") && cursor_line(&out).contains("r17"),
        "{out}"
    );
}

#[test]
fn an_empty_matrix_says_so_instead_of_a_scale_and_a_cursor() {
    let mut s = on(finished(), Pane::Matrices);
    let f = s.result.as_mut().unwrap();
    f.outcome.matrices.push((
        "predictions_unlabeled".into(),
        ndarray::Array2::zeros((0, 3)),
    ));
    update(&mut s, Action::NextMatrix);
    at_both(&s, |out, size| {
        assert!(out.contains("empty (0×3)"), "{size:?}\n{out}");
        assert!(
            !out.contains('◆') && !out.contains("−1.0000") && !out.contains("+1.0000"),
            "{size:?}\n{out}"
        );
    });
}

/// The x-axis labels of the chart titled `title`, with their columns.
fn x_labels(out: &str, title: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = out.lines().collect();
    let top = lines.iter().position(|l| l.contains(title)).unwrap();
    let bottom = top
        + lines[top..]
            .iter()
            .position(|l| l.contains("└ y:"))
            .unwrap();
    let row: Vec<char> = lines[bottom - 1].chars().collect();
    let mut labels = Vec::new();
    let mut x = 1;
    while x + 1 < row.len() {
        if row[x] != ' ' {
            let w: String = row[x..row.len() - 1]
                .iter()
                .take_while(|c| **c != ' ')
                .collect();
            labels.push((x, w.clone()));
            x += w.chars().count();
        }
        x += 1;
    }
    labels
}

#[test]
fn a_single_iteration_reads_as_iteration_one_on_whole_ticks() {
    let mut s = on(finished(), Pane::Charts);
    let f = s.result.as_mut().unwrap();
    f.outcome.record.trace = vec![TraceRecord {
        iter: 1,
        objective: 3.5,
        residual: Some(1e-9),
        ..TraceRecord::default()
    }];
    at_both(&s, |out, size| {
        let labels: Vec<String> = x_labels(out, "Objective")
            .into_iter()
            .map(|l| l.1)
            .collect();
        assert_eq!(labels, ["0", "1", "2"], "{size:?}\n{out}");
        assert!(!out.contains("0.9500"), "{size:?}\n{out}");
    });
}

#[test]
fn validation_chart_says_the_method_records_none_once_finished() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    let out = screen(&on(s.clone(), Pane::Charts), 120, 36);
    assert!(out.contains("no data yet"), "{out}");
    let mut done = outcome("first");
    for t in &mut done.record.trace {
        t.val_metric = None;
    }
    update(&mut s, Action::Run(RunMessage::Finished(Box::new(done))));
    at_both(&on(s, Pane::Charts), |out, size| {
        assert!(
            out.contains("this method records no validation metric per iteration")
                && !out.contains("no data yet"),
            "{size:?}\n{out}"
        );
    });
}

/// A one-shot fit (krr, kde, an mvml round) records no residual: once finished, the chart says
/// so instead of waiting for data.
#[test]
fn residual_chart_says_the_method_records_none_once_finished() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    let mut done = outcome("first");
    for t in &mut done.record.trace {
        t.residual = None;
        t.step = None;
    }
    update(&mut s, Action::Run(RunMessage::Finished(Box::new(done))));
    at_both(&on(s, Pane::Charts), |out, size| {
        assert!(
            out.contains("this method records no residual or step per iteration"),
            "{size:?}\n{out}"
        );
    });
}

#[test]
fn residual_chart_is_readable_at_80x24_with_its_legend_off_the_plot() {
    let mut s = on(finished(), Pane::Charts);
    let f = s.result.as_mut().unwrap();
    f.outcome.record.trace = (1..=40)
        .map(|i| TraceRecord {
            iter: i,
            objective: 1.0 + 1.0 / i as f64,
            residual: Some(10f64.powi(-(i as i32) / 4)),
            step: Some(1.0),
            ..TraceRecord::default()
        })
        .collect();
    at_both(&s, |out, size| {
        let lines: Vec<&str> = out.lines().collect();
        let top = lines
            .iter()
            .position(|l| l.contains("Residual / step"))
            .unwrap();
        // The legend is in the title, and the plot has rows for its labels.
        assert!(
            lines[top].contains("residual") && lines[top].contains("step"),
            "{size:?}\n{out}"
        );
        let bottom = top
            + lines[top..]
                .iter()
                .position(|l| l.contains("└ y:"))
                .unwrap();
        let plot = &lines[top + 1..bottom - 2];
        assert!(plot.len() >= 3, "{size:?}\n{out}");
        for l in plot {
            let label: String = l.chars().skip(1).take_while(|c| *c != '│').collect();
            let label = label.trim();
            assert!(
                label.is_empty()
                    || label
                        .strip_prefix("1e")
                        .is_some_and(|e| e.parse::<i32>().is_ok()),
                "garbled '{label}' {size:?}\n{out}"
            );
            assert!(
                !l.contains("residual") && !l.contains("step"),
                "{size:?}\n{out}"
            );
        }
    });
}

#[test]
fn a_sweeps_log_axis_spaces_its_decades_evenly() {
    let mut s = kernel_at("lambda");
    update(&mut s, Action::SweepPrompt);
    sweep_now(&mut s, "1e-4 1 5 log cv=3");
    for i in 0..5 {
        update(
            &mut s,
            Action::Run(RunMessage::SweepRow(Box::new(sweep_row(
                i,
                0.8 + 0.02 * i as f64,
            )))),
        );
    }
    at_both(&on(s, Pane::Charts), |out, size| {
        let labels = x_labels(out, "Sweep:");
        let names: Vec<&str> = labels.iter().map(|l| l.1.as_str()).collect();
        assert_eq!(
            names,
            ["1e-4", "1e-3", "1e-2", "1e-1", "1e0"],
            "{size:?}\n{out}"
        );
        // Centres (the last label ends at the plot's edge: its tick is its last column).
        let at: Vec<f64> = labels
            .iter()
            .enumerate()
            .map(|(i, (x, l))| {
                let w = l.chars().count() as f64;
                if i + 1 == labels.len() {
                    *x as f64 + w - 1.0
                } else {
                    *x as f64 + (w / 2.0).floor()
                }
            })
            .collect();
        let gaps: Vec<f64> = at.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|g| (g - gaps[0]).abs() <= 1.0),
            "{gaps:?} {size:?}\n{out}"
        );
    });
}

#[test]
fn the_gauge_text_stands_apart_from_the_bar() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    start_phase(&mut s, Phase::Iterating, Some(100000));
    for (iter, ms) in [(0, 0.0), (41554, 9300.0)] {
        let r = TraceRecord {
            iter,
            objective: 1.0,
            elapsed_ms: ms,
            ..TraceRecord::default()
        };
        update(&mut s, Action::Run(RunMessage::Record(r)));
    }
    at_both(&on(s, Pane::Run), |out, size| {
        let line = out
            .lines()
            .find(|l| l.contains("iterations 41554/100000"))
            .unwrap();
        let at = line.find("iterations 41554").unwrap();
        let before: String = line[..at].chars().rev().take(2).collect();
        assert!(before.starts_with(' '), "{size:?}\n{line}");
        // The bar is whole: filled, then its track, with no hole.
        let bar = line[..at].trim_start_matches('│').trim_end();
        assert!(
            bar.starts_with('█') && !bar.contains(' '),
            "{size:?}\n{line}"
        );
    });
}

#[test]
fn compare_gives_each_parameter_a_row_with_both_runs_values() {
    let mut s = runs_state();
    let mut a = record("alpha");
    a.params = Params::new()
        .with("l_update", Value::Text("symmetric".into()))
        .with("lambda", Value::Float(0.1))
        .with("max_iter", Value::Int(1000))
        .with("solver", Value::Text("qn".into()))
        .with("tol", Value::Float(1e-8));
    let mut b = a.clone();
    b.name = "beta".into();
    b.params = b.params.with("lambda", Value::Float(0.3));
    s.sessions.compare = Some(Box::new((a, b)));
    at_both(&s, |out, size| {
        let row = |k: &str| {
            out.lines()
                .skip_while(|l| !l.contains("Compare ("))
                .find(|l| l.contains(&format!("  {k}  ")))
                .unwrap_or_else(|| panic!("no row {k} {size:?}\n{out}"))
                .to_string()
        };
        let lambda = row("lambda");
        assert!(
            lambda.contains('≠') && lambda.contains("0.1") && lambda.contains("0.3"),
            "{size:?}\n{out}"
        );
        let solver = row("solver");
        assert!(
            !solver.contains('≠') && solver.matches("qn").count() == 2,
            "{size:?}\n{out}"
        );
    });
    // What does not fit scrolls into view.
    s.scroll.compare = 100;
    at_both(&s, |out, size| {
        assert!(
            out.contains("tol") && out.contains("1e-8"),
            "{size:?}\n{out}"
        );
    });
}

// ---------- the 80×24 audit: what a user trips over on a small terminal ----------

/// The toy folder listed (digits.csv and iris.csv) and digits.csv open, its columns focused.
fn listed_and_opened() -> State {
    let mut s = state();
    let entries = ["digits.csv", "iris.csv"]
        .map(|n| ovk::tui::state::FileEntry {
            name: n.into(),
            path: PathBuf::from("toy").join(n),
            is_dir: false,
        })
        .to_vec();
    update(
        &mut s,
        Action::DirListed {
            dir: "toy".into(),
            entries: Ok(entries),
            select: None,
        },
    );
    open_table(&mut s, "toy/digits.csv", Ok(table()), None);
    s
}

/// The Files list stays beside the columns while roles are set, so another file can be picked
/// at 80×24 too (it used to give its room to the columns there); the columns keep every stat.
#[test]
fn the_file_list_stays_in_view_while_the_columns_are_edited() {
    let s = listed_and_opened();
    assert_eq!(s.data.focus, DataFocus::Columns);
    at_both(&s, |out, size| {
        assert!(
            out.contains("┌ Files") && out.contains("iris.csv"),
            "{size:?}\n{out}"
        );
        let header = out
            .lines()
            .find(|l| l.contains("column") && l.contains("dtype"))
            .unwrap_or_else(|| panic!("no columns header {size:?}\n{out}"));
        assert!(
            ["role", "missing", "min", "max", "mean"]
                .iter()
                .all(|h| header.contains(h)),
            "{size:?}\n{out}"
        );
        assert!(
            out.contains("16.0000") && out.contains("8.0000"),
            "{size:?}\n{out}"
        );
    });
}

/// The titles the border cuts off in `out`: a box's corner right after a title's text (a title
/// that fits ends with a space before the border).
fn cut_titles(out: &str) -> Vec<String> {
    out.lines()
        .filter(|l| {
            let cs: Vec<char> = l.chars().collect();
            cs.windows(2)
                .any(|w| matches!(w[1], '┐' | '┘') && !matches!(w[0], '─' | ' '))
        })
        .map(str::to_string)
        .collect()
}

/// Every title gives up its hints (or a path its parents) before the border would cut it: the
/// audit found the file list's folder, the columns' keys, the heatmap's zoom, the trace's
/// scroll keys, lowrank-okl's Kernel title, the marked runs' charts and the metrics' baseline
/// cut at 80×24, and the metrics' at 120×36 too.
#[test]
fn no_title_is_cut_by_its_border_at_either_size() {
    let mut states: Vec<(String, State)> = Vec::new();
    let mut data = listed_and_opened();
    data.data.dir = "experiments/multi-output-learning/shared/datasets".into();
    states.push(("columns beside a long folder".into(), data.clone()));
    data.data.focus = DataFocus::Files;
    states.push(("files of a long folder".into(), data));
    for p in [Pane::Run, Pane::Matrices, Pane::Results] {
        states.push((format!("finished {p:?}"), on(finished(), p)));
    }
    // an opened session whose trace has more records than iterations
    let mut one = finished();
    let r = &mut one.result.as_mut().unwrap().outcome.record;
    (r.iterations, r.trace) = (1, trace(2));
    one.run.trace = trace(2);
    states.push(("2 records of 1 iteration".into(), on(one, Pane::Run)));
    let mut lowrank = loaded();
    choose(&mut lowrank, "lowrank-okl");
    states.push(("lowrank-okl".into(), on(lowrank, Pane::Kernel)));
    let mut runs = runs_state();
    let list = runs.sessions.list.clone();
    update(
        &mut runs,
        Action::SessionsListed {
            root: Ok("lab-share/users/researcher/ovk-session-store/sessions".into()),
            list,
        },
    );
    runs.sessions.runs.filter = "okl".into();
    for i in [1usize, 4] {
        runs.sessions.cursor = i;
        update(&mut runs, Action::Space);
    }
    states.push(("runs filtered and marked".into(), runs));
    let mut marked = runs_state();
    let paths = mark_three(&mut marked);
    load_three(&mut marked, &paths);
    states.push(("marked runs' charts".into(), on(marked, Pane::Charts)));
    for (name, s) in &states {
        at_both(s, |out, size| {
            let cut = cut_titles(out);
            assert!(cut.is_empty(), "{name} {size:?}: {cut:#?}\n{out}");
        });
    }
}

/// A saved mvml fit of mfeat's six views: a σ per view, mvml's thirteen parameters, the block
/// norms between views, and the learned metric A over 75 landmarks per view (the views'
/// blocks on both axes).
fn mvml_session() -> RunOutcome {
    let mut o = outcome("mfeat-mvml");
    let r = &mut o.record;
    r.method = "mvml".into();
    r.config.method = MethodName::Mvml;
    r.config.data = DataConfig::new("datasets/mfeat.csv");
    r.output_names = (0..10).map(|d| format!("digit={d}")).collect();
    r.params = Params::new()
        .with("a_step", Value::Text("optimal".into()))
        .with("eta", Value::Float(0.01))
        .with("fixed_metric", Value::Bool(false))
        .with("init", Value::Text("identity".into()))
        .with("lambda", Value::Float(0.1))
        .with("learn_weights", Value::Bool(false))
        .with("max_iter", Value::Int(50))
        .with("metric_space", Value::Text("gram".into()))
        .with("mu", Value::Float(0.5))
        .with("nystrom", Value::Float(0.1))
        .with("sparse", Value::Bool(false))
        .with("tol", Value::Float(1e-4))
        .with("view_sigma", Value::Text("median".into()));
    let views = ["fou", "fac", "kar", "pix", "zer", "mor"];
    let blocks = serde_json::json!({
        "blocks": views.map(|v| serde_json::json!({"name": v, "size": 75}))
    });
    let d = &mut r.details;
    d.insert("views".into(), serde_json::json!(views));
    d.insert(
        "view_sigmas".into(),
        serde_json::json!({"fac": 20.596, "fou": 12.1527, "kar": 11.2859,
                           "mor": 2.8649, "pix": 21.9157, "zer": 9.1115}),
    );
    d.insert(
        "axes".into(),
        serde_json::json!({
            "block_norms": {"rows": {"labels": views}, "cols": {"labels": views}},
            "metric": {"rows": blocks, "cols": blocks},
        }),
    );
    o.matrices =
        vec![
            (
                "block_norms".into(),
                ndarray::Array2::from_shape_fn((6, 6), |(i, j)| 1.0 / (1 + i + j) as f64),
            ),
            (
                "metric".into(),
                ndarray::Array2::from_shape_fn((450, 450), |(i, j)| {
                    if i / 75 == j / 75 {
                        1.0
                    } else {
                        0.1
                    }
                }),
            ),
        ];
    o
}

/// An opened mvml session's Run box, whose σ per view and parameters wrap at 80 columns,
/// still ends with what Enter would fit (its last line was cut at 80×24).
#[test]
fn an_opened_multi_view_sessions_run_box_keeps_its_last_line() {
    let mut s = loaded();
    open_session(&mut s, mvml_session());
    at_both(&on(s, Pane::Run), |out, size| {
        assert!(
            out.contains("σ per view") && out.contains("view_sigma=median"),
            "{size:?}\n{out}"
        );
        assert!(
            out.contains("Enter or r fits the form instead: okl on digits.csv"),
            "{size:?}\n{out}"
        );
        assert!(out.contains("Trace (8 records"), "{size:?}\n{out}");
    });
}

/// The row labels beside a heatmap's grid, top to bottom: on each line of the grid, what stands
/// between the box's border and the first cell.
fn heatmap_row_labels(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            let grid = l.find(['▀', '◆'])?;
            let border = l[..grid].rfind('│')? + '│'.len_utf8();
            Some(l[border..grid].trim().to_string())
        })
        .collect()
}

/// The overview of mvml's metric A names each line by the views its rows lie in (`fou/fac` for
/// a line across a boundary) — it showed the first row's index within its view (`fou·28`).
#[test]
fn the_overview_of_a_multi_view_metric_names_its_lines_by_view() {
    let mut s = finished();
    open_session(&mut s, mvml_session());
    s.pane = Pane::Matrices;
    update(&mut s, Action::NextMatrix);
    let views = ["fou", "fac", "kar", "pix", "zer", "mor"];
    at_both(&s, |out, size| {
        assert!(out.contains("metric 450×450 — "), "{size:?}\n{out}");
        let labels = heatmap_row_labels(out);
        let named = |l: &String| l.split('/').all(|v| views.contains(&v));
        assert!(
            labels.len() > 6 && labels.iter().all(named),
            "{size:?} {labels:?}\n{out}"
        );
        assert_eq!(labels.first().map(String::as_str), Some("fou"), "{out}");
        assert_eq!(labels.last().map(String::as_str), Some("mor"), "{out}");
        assert!(
            views.iter().all(|v| labels.iter().any(|l| l == v)),
            "{size:?} {labels:?}"
        );
    });
}

/// The names over a heatmap's grid: the words of the line under its `[row, col] = value` line,
/// inside the heatmap's box.
fn heatmap_column_names(out: &str) -> Vec<String> {
    let lines: Vec<&str> = out.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("] = "))
        .unwrap_or_else(|| panic!("no heatmap\n{out}"));
    let inside = lines[at + 1].split('│').rev().nth(1).unwrap_or_default();
    inside.split_whitespace().map(str::to_string).collect()
}

/// The heatmap's column names never drop silently: names too long for their columns give their
/// shared prefix once (`digit=0 1 2`), are cut while that tells them apart (`ama hap rel`), or
/// come every k-th at a regular step, and an overview of mvml's metric names its views where
/// they begin. (At 80×24 the 3×3 output kernel lost
/// `digit=1`, and the metric's header read `fou·0 fac·3 kar·6 pix·9 zer·12 mor·28`.)
#[test]
fn heatmap_column_names_show_what_fits_at_a_regular_step() {
    let s = on(finished(), Pane::Matrices);
    at_both(&s, |out, size| {
        let names = heatmap_column_names(out);
        assert!(
            names == ["digit=0", "digit=1", "digit=2"] || names == ["digit=0", "1", "2"],
            "{size:?} {names:?}\n{out}"
        );
    });
    // Names with nothing in common are cut to what a column holds while that tells them apart.
    let mut s = on(finished(), Pane::Matrices);
    let moods = ["amazed-surprised", "happy-pleased", "relaxing-calm"];
    s.result.as_mut().unwrap().outcome.record.output_names = moods.map(String::from).to_vec();
    at_both(&s, |out, size| {
        let names = heatmap_column_names(out);
        assert!(
            names == moods || names == ["ama", "hap", "rel"],
            "{size:?} {names:?}\n{out}"
        );
    });
    let mut s = finished();
    open_session(&mut s, mvml_session());
    s.pane = Pane::Matrices;
    update(&mut s, Action::NextMatrix);
    at_both(&s, |out, size| {
        let names = heatmap_column_names(out);
        assert_eq!(
            names,
            ["fou", "fac", "kar", "pix", "zer", "mor"],
            "{size:?}\n{out}"
        );
    });
    // Zoomed in, one column per landmark: fou·0, fou·k, fou·2k … at one step — or, when every
    // name in view shares `fou·`, that prefix once and 0, k, 2k ….
    update(&mut s, Action::Zoom(1));
    at_both(&s, |out, size| {
        let names = heatmap_column_names(out);
        let at: Vec<usize> = names
            .iter()
            .filter_map(|n| n.strip_prefix("fou·").unwrap_or(n).parse().ok())
            .collect();
        let steps: Vec<usize> = at.windows(2).map(|p| p[1] - p[0]).collect();
        assert!(
            at.len() >= 4 && at[0] == 0 && steps.iter().all(|&d| d == steps[0] && d > 1),
            "{size:?} {names:?}\n{out}"
        );
    });
}

/// The cell under the cursor names its row and its column even when both names are long:
/// without the prefix every name shares, once when row and column are one name, else each
/// shortened to its share of the line — never the column's name cut off (at 80 columns
/// emotions' audio features read "row Mean_Acc1298_Mean_Mem40_Centroid · col Mean_Acc1298_Me…").
#[test]
fn the_cursor_line_keeps_both_long_names_in_view() {
    let mut s = on(finished(), Pane::Matrices);
    let long = [
        "Mean_Acc1298_Mean_Mem40_Centroid",
        "Mean_Acc1298_Mean_Mem40_Rolloff",
        "Mean_Acc1298_Mean_Mem40_Flux",
    ];
    s.result.as_mut().unwrap().outcome.record.output_names = long.map(String::from).to_vec();
    let cursor_line = |s: &State, at: &str, size: (u16, u16)| -> String {
        let out = screen(s, size.0, size.1);
        out.lines()
            .find(|l| l.contains(at))
            .unwrap_or_else(|| panic!("{size:?}: no cursor line\n{out}"))
            .to_string()
    };
    at_both(&s, |_, size| {
        let line = cursor_line(&s, "[0, 0] =", size);
        assert!(line.contains("row = col Centroid"), "{size:?}: {line}");
    });
    let a = map_key(&s, key(KeyCode::Char('L'))).unwrap();
    update(&mut s, a);
    at_both(&s, |_, size| {
        let line = cursor_line(&s, "[0, 1] =", size);
        assert!(
            line.contains("row Centroid · col Rolloff"),
            "{size:?}: {line}"
        );
    });
    // The strongest pairs give each long name a line of its own, shortened, not broken
    // mid-name ("Mean_Acc1298_Mean_Mem40_Centro" / "id ~" before).
    at_both(&s, |out, size| {
        assert!(out.contains("~ Mean_Acc1298"), "{size:?}\n{out}");
        assert!(!out.contains("│id ~"), "{size:?}\n{out}");
    });
    // where the line has room, the names are whole
    let out = screen(&s, 200, 40);
    assert!(
        out.contains("row Mean_Acc1298_Mean_Mem40_Centroid · col Mean_Acc1298_Mean_Mem40_Rolloff"),
        "{out}"
    );
}
