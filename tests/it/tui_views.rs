//! The workbench's third pass (issue 32): views built from ranges, globs, regular expressions and
//! marked columns, renamed and merged; methods that do not fit the data said before `r`; the
//! quit question at any size; predictions of many outputs named as the file names them, scrolled
//! sideways with the true values beside; cut names keeping their ends; files found by typing.

use std::path::PathBuf;

use ovk::tui::action::Action;
use ovk::tui::effect::Effect;
use ovk::tui::state::{DataFocus, FileEntry, Pane, PromptKind, Role, State};
use ovk::tui::update::update;
use ovk_core::data::Table;
use ovk_core::train::{PredictionTable, Scored};

use crate::tui_render::{choose, col, loaded, open_table, screen, state};

/// jura's columns: coordinates, land use and rock codes, then seven metals.
fn jura() -> Table {
    let names = [
        "Xloc", "Yloc", "Landuse", "Rock", "Cd", "Co", "Cr", "Cu", "Ni", "Pb", "Zn",
    ];
    Table {
        path: PathBuf::from("data/jura.csv"),
        n_rows: 359,
        columns: names.iter().map(|n| col(n, 0.5, 5.0)).collect(),
        head: vec![vec!["1".into(); names.len()]],
        sparse: 0,
    }
}

fn typed(s: &mut State, text: &str) {
    update(s, Action::ClearText);
    for c in text.chars() {
        update(s, Action::Char(c));
    }
    update(s, Action::Enter);
}

fn jura_for_mvml() -> State {
    let mut s = state();
    open_table(&mut s, "data/jura.csv", Ok(jura()), None);
    s.data.col_cursor = 4;
    update(&mut s, Action::SetRole(Role::Target));
    choose(&mut s, "mvml");
    s.pane = Pane::Data;
    s.data.focus = DataFocus::Columns;
    s
}

fn view_of(s: &State, name: &str) -> Option<String> {
    let t = s.data.table.as_ref().unwrap();
    let i = t.columns.iter().position(|c| c.name == name).unwrap();
    s.data.view_name(i)
}

#[test]
fn views_are_built_from_regexes_ranges_globs_and_marks_then_renamed_and_merged() {
    let mut s = jura_for_mvml();
    // before any view, mvml is said not to fit — in the Run pane's reason and the Method list
    let why = s.run_config().unwrap_err();
    assert!(
        why.contains("mvml needs views") && why.contains("V makes a view"),
        "{why}"
    );
    s.pane = Pane::Method;
    let out = screen(&s, 120, 36);
    assert!(out.contains("✗ mvml needs views"), "{out}");
    s.pane = Pane::Data;

    update(&mut s, Action::ViewPrompt);
    assert!(matches!(
        s.prompt.as_ref().map(|p| &p.kind),
        Some(PromptKind::AssignView { .. })
    ));
    typed(&mut s, "metals = /^(Co|Cr|Cu)$/");
    assert!(
        s.status.contains("view metals: 3 columns added"),
        "{}",
        s.status
    );
    update(&mut s, Action::ViewPrompt);
    typed(&mut s, "heavy = Ni..Zn");
    // two marked columns, then the name alone
    s.data.col_cursor = 0;
    update(&mut s, Action::Space);
    update(&mut s, Action::Space);
    assert_eq!(s.data.col_cursor, 2);
    assert!(s.status.contains("2 columns marked"), "{}", s.status);
    assert!(screen(&s, 120, 36).contains("▪Xloc"));
    update(&mut s, Action::ViewPrompt);
    typed(&mut s, "where");
    update(&mut s, Action::ViewPrompt);
    typed(&mut s, "soil = L*,R*");
    for (c, v) in [
        ("Xloc", "where"),
        ("Yloc", "where"),
        ("Landuse", "soil"),
        ("Co", "metals"),
        ("Cu", "metals"),
        ("Zn", "heavy"),
    ] {
        assert_eq!(view_of(&s, c).as_deref(), Some(v), "{c}");
    }
    // the target stays a target, and says so
    update(&mut s, Action::ViewPrompt);
    typed(&mut s, "x = /^Cd$/");
    assert_eq!(view_of(&s, "Cd"), None);
    assert!(
        s.status.contains("no feature among those columns"),
        "{}",
        s.status
    );
    update(&mut s, Action::ViewPrompt);
    typed(&mut s, "x = /(/");
    assert!(
        s.status.contains("not a regular expression"),
        "{}",
        s.status
    );

    // rename one view, then merge another into it
    s.data.col_cursor = 0;
    update(&mut s, Action::RenameView);
    typed(&mut s, "place");
    s.data.col_cursor = 2;
    update(&mut s, Action::RenameView);
    typed(&mut s, "place");
    assert!(
        s.status
            .contains("view soil merged into place (2 columns moved)"),
        "{}",
        s.status
    );
    let cfg = s.run_config().unwrap();
    assert_eq!(
        cfg.data.views,
        Some(vec![
            "place=Xloc..Rock".to_string(),
            "metals=Co..Cu".to_string(),
            "heavy=Ni..Zn".to_string()
        ])
    );
    s.data.col_cursor = 6;
    for (w, h) in [(120, 36), (80, 24)] {
        let out = screen(&s, w, h);
        assert!(out.contains("view metals"), "{w}×{h}\n{out}");
        assert!(
            out.contains("views: place 4 · metals 3 · heavy 3"),
            "{w}×{h}\n{out}"
        );
    }
    // a feature left out of every view is counted, with what it means
    s.data.col_cursor = 0;
    update(&mut s, Action::SetRole(Role::Feature));
    let out = screen(&s, 120, 36);
    assert!(out.contains("1 feature in no view"), "{out}");
}

#[test]
fn the_method_list_says_which_methods_fit_the_task_before_r() {
    let mut s = state();
    let mut t = jura();
    t.columns.truncate(6);
    t.columns[4].name = "label_a".into();
    t.columns[5].name = "label_b".into();
    for c in &mut t.columns[4..] {
        c.min = Some(0.0);
        c.max = Some(1.0);
    }
    open_table(&mut s, "data/jura.csv", Ok(t), None);
    assert_eq!(s.data.task(), Some(ovk_core::data::Task::Multilabel));
    choose(&mut s, "kde");
    let why = s.run_config().unwrap_err();
    assert!(
        why.contains("kde handles regression only") && why.contains("multilabel"),
        "{why}"
    );
    s.pane = Pane::Run;
    for (w, h) in [(120, 36), (80, 24)] {
        let out = screen(&s, w, h);
        assert!(
            out.contains("kde handles regression only"),
            "{w}×{h}\n{out}"
        );
    }
    s.pane = Pane::Method;
    let out = screen(&s, 120, 36);
    assert!(out.contains("✗ kde"), "{out}");
    // a class column beside targets is refused beforehand, in the Data pane too
    s.pane = Pane::Data;
    s.data.focus = DataFocus::Columns;
    s.data.col_cursor = 0;
    update(&mut s, Action::SetRole(Role::Class));
    let why = s.data.config().unwrap_err();
    assert!(
        why.contains("`Xloc` is the class and 2 columns are the targets"),
        "{why}"
    );
    assert!(screen(&s, 120, 36).contains("not ready: `Xloc` is the class"));
}

#[test]
fn the_quit_question_is_drawn_at_a_too_small_size() {
    let mut s = loaded();
    update(&mut s, Action::StartRun);
    assert!(s.is_running());
    update(&mut s, Action::Quit);
    assert!(s.prompt.is_some());
    for (w, h) in [(60, 16), (40, 10)] {
        let out = screen(&s, w, h);
        assert!(out.contains("Quit anyway?"), "{w}×{h}\n{out}");
    }
}

fn many_labels(n: usize) -> PredictionTable {
    let names: Vec<String> = (1..=8).map(|k| format!("label_Class{k}")).collect();
    let scores = ndarray::Array2::from_shape_fn((n, 8), |(i, k)| (i + k) as f64 / 10.0 - 0.3);
    let decoded = names
        .iter()
        .enumerate()
        .map(|(k, nm)| {
            let v = (0..n).map(|i| if i + k > 3 { "1" } else { "0" }.to_string());
            (nm.clone(), v.collect())
        })
        .collect();
    let truth = names
        .iter()
        .map(|nm| (nm.clone(), (0..n).map(|i| (i % 2).to_string()).collect()))
        .collect();
    PredictionTable {
        output_names: names,
        scores,
        decoded,
        filled_rows: 0,
        scored: Some(Scored {
            metrics: [("hamming_loss".to_string(), 0.25)].into(),
            rows: (0..n).collect(),
            trained_left_out: 0,
            truth,
        }),
    }
}

#[test]
fn many_outputs_are_named_as_the_file_scroll_sideways_and_show_the_truth() {
    let mut s = state();
    s.pane = Pane::Sessions;
    let n = 12;
    update(
        &mut s,
        Action::Predicted(Ok(Box::new(ovk::tui::state::Predictions {
            session: "yeast-okl".into(),
            data: "scene.csv".into(),
            table: many_labels(n),
            scroll: 0,
            ignored: (0..197).map(|k| format!("att{k}")).collect(),
        }))),
    );
    assert!(
        s.status
            .contains("the model ignores 197 columns of this file (`att0`, `att1`, `att2`, …)"),
        "{}",
        s.status
    );
    for (w, h) in [(120, 36), (80, 24)] {
        let out = screen(&s, w, h);
        assert!(
            out.contains("label_Class1") && out.contains("label_Class1 true"),
            "{out}"
        );
        assert!(out.contains("([ ] scroll)"), "{w}×{h}\n{out}");
    }
    // sideways to the last page: the eighth label, its score and its true value
    for _ in 0..40 {
        update(&mut s, Action::Column(1));
    }
    for (w, h) in [(120, 36), (80, 24)] {
        let out = screen(&s, w, h);
        assert!(out.contains("label_Class8"), "{w}×{h}\n{out}");
        assert!(out.contains("of 24 ([ ] scroll)"), "{w}×{h}\n{out}");
        assert!(!out.contains("label_Class1 "), "{w}×{h}\n{out}");
    }
    // the saved table names its columns as the screen does
    let effects = update(&mut s, Action::Export);
    let [Effect::Export { text, .. }] = effects.as_slice() else {
        panic!("{effects:?}")
    };
    assert!(
        text.starts_with("label_Class1,label_Class1_score,label_Class2,label_Class2_score,"),
        "{text}"
    );
}

#[test]
fn long_names_keep_their_ends_and_i_shows_the_whole_text() {
    let mut s = state();
    let mut t = jura();
    t.columns[5].name = "target_LBL_with_a_long_shared_prefix_number_17".into();
    t.columns[6].name = "target_LBL_with_a_long_shared_prefix_number_18".into();
    open_table(&mut s, "data/jura.csv", Ok(t), None);
    let out = screen(&s, 80, 24);
    assert!(
        out.contains("_number_17") && out.contains("_number_18"),
        "{out}"
    );
    assert!(
        !out.contains("target_LBL_with_a_long_shared_prefix_number_17"),
        "{out}"
    );
    s.status = format!("{} and the end of it", "a long status line ".repeat(8));
    let out = screen(&s, 120, 36);
    assert!(
        !out.contains("the end of it") && out.contains("… i ? help"),
        "{out}"
    );
    s.data.col_cursor = 5;
    // the first rows' headers keep the ends too
    let out = screen(&s, 120, 36);
    assert!(
        out.contains("ta…ber_17") && out.contains("ta…ber_18"),
        "{out}"
    );
    let key = crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('i'),
        crossterm::event::KeyModifiers::NONE,
    );
    let a = ovk::tui::keys::map_key(&s, key).unwrap();
    update(&mut s, a);
    let out = screen(&s, 120, 36);
    assert!(out.contains("the end of it"), "{out}");
    assert!(
        out.contains("column target_LBL_with_a_long_shared_prefix_number_17"),
        "{out}"
    );
    // any key closes it
    let a = ovk::tui::keys::map_key(&s, key).unwrap();
    update(&mut s, a);
    assert!(!s.full_text);
}

fn entries(names: &[&str]) -> Vec<FileEntry> {
    names
        .iter()
        .map(|n| FileEntry {
            name: n.to_string(),
            path: PathBuf::from("toy").join(n),
            is_dir: n.ends_with('/'),
        })
        .collect()
}

#[test]
fn files_say_what_they_cannot_open_find_by_typing_and_u_is_the_parent() {
    let mut s = state();
    update(
        &mut s,
        Action::DirListed {
            dir: "toy".into(),
            entries: Ok(entries(&["../", "iris.csv", "wine.csv", "yeast.parquet"])),
            select: Some(PathBuf::from("toy/notes.txt")),
        },
    );
    assert!(
        s.status
            .contains("notes.txt is not a table the workbench reads")
            && s.status.contains(".csv, .tsv and .parquet"),
        "{}",
        s.status
    );
    // `/` finds as it is typed; Enter opens what it found
    let slash = crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Char('/'),
        crossterm::event::KeyModifiers::NONE,
    );
    let a = ovk::tui::keys::map_key(&s, slash).unwrap();
    update(&mut s, a);
    update(&mut s, Action::Char('w'));
    update(&mut s, Action::Char('I'));
    assert_eq!(s.data.file_cursor, 2);
    let out = screen(&s, 80, 24);
    assert!(out.contains("Find"), "{out}");
    let effects = update(&mut s, Action::Enter);
    assert!(
        matches!(effects.as_slice(), [Effect::LoadTable(p)] if p.ends_with("wine.csv")),
        "{effects:?}"
    );
    // u is the parent folder from the columns too; Esc is back to the files
    open_table(&mut s, "toy/wine.csv", Ok(jura()), None);
    assert_eq!(s.data.focus, DataFocus::Columns);
    update(&mut s, Action::Back);
    assert_eq!(s.data.focus, DataFocus::Files);
    s.data.focus = DataFocus::Columns;
    let effects = update(&mut s, Action::ParentDir);
    assert!(
        matches!(effects.as_slice(), [Effect::ListDir { .. }]),
        "{effects:?}"
    );
}

/// Predictions on the table the model was fitted on: the score leaves its training rows out
/// and says so, and a label's true value reads as its predicted one ("1", not "1.0000").
#[test]
fn predictions_on_the_training_table_leave_its_training_rows_out_of_the_score() {
    let mut s = state();
    s.pane = Pane::Sessions;
    let n = 12;
    let mut table = many_labels(n);
    if let Some(sc) = table.scored.as_mut() {
        sc.trained_left_out = 9;
        sc.truth = sc
            .truth
            .iter()
            .map(|(nm, v)| (nm.clone(), v.iter().map(|x| format!("{x}.0")).collect()))
            .collect();
    }
    update(
        &mut s,
        Action::Predicted(Ok(Box::new(ovk::tui::state::Predictions {
            session: "emotions-okl".into(),
            data: "emotions.csv".into(),
            table,
            scroll: 0,
            ignored: vec![],
        }))),
    );
    assert!(
        s.status
            .contains("3 scored against the outputs the file holds (its 9 training rows left out)"),
        "{}",
        s.status
    );
    let out = screen(&s, 120, 36);
    assert!(
        out.contains("scored on the 3 of 12 rows that did not train the model"),
        "{out}"
    );
    assert!(!out.contains("1.0000"), "{out}");
}
