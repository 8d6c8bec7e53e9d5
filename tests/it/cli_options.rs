//! Options a user mistypes, and options that do nothing for the chosen method or kernel: the
//! first are refused naming the flag and the fix, the second are noted in the session.

use crate::common::binary::{ovk, stderr, stdout, temp_dir};

const IRIS: &[&str] = &["run", "--data", "datasets/iris.csv", "--json"];

fn refused(extra: &[&str], needles: &[&str]) {
    let store = temp_dir("opts", "refused", false);
    let args: Vec<&str> = IRIS.iter().chain(extra).copied().collect();
    let o = ovk(&args, &store);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    for n in needles {
        assert!(
            stderr(&o).contains(n),
            "{args:?} lacks {n:?}: {}",
            stderr(&o)
        );
    }
    let saved = std::fs::read_dir(&store).map(|d| d.count()).unwrap_or(0);
    assert_eq!(saved, 0, "{args:?}: a refused run wrote into the store");
}

/// The notes of a successful `ovk run … --json`.
fn notes_of_run(args: &[&str], store: &std::path::Path) -> Vec<String> {
    let o = ovk(args, store);
    assert!(o.status.success(), "{args:?}: {}", stderr(&o));
    let rec: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    serde_json::from_value(rec["notes"].clone()).unwrap_or_default()
}

#[test]
fn mistyped_options_are_refused_naming_the_flag() {
    refused(
        &["--method", "vvmr", "--labeled", "1.5"],
        &["--labeled 1.5 is neither a count", "fraction in (0, 1)"],
    );
    refused(
        &[
            "--method",
            "mvml",
            "--views",
            "a=sepal_length,a=petal_length",
        ],
        &["view name `a` is given twice"],
    );
    refused(
        &[
            "--method",
            "mvml",
            "--views",
            "=sepal_length,b=petal_length",
        ],
        &["has no name", "NAME=COLS"],
    );
    refused(
        &["--method", "krr", "--class", "sepal_length,species"],
        &[
            "--class takes one class column",
            "--targets sepal_length,species",
        ],
    );
    refused(
        &["--method", "krr", "--seed", "99999999999999999999999"],
        &["--seed", "above the largest seed, 18446744073709551615"],
    );
    // The method parameter's message names the flag once, as typed.
    let store = temp_dir("opts", "ovk-flag", false);
    let o = ovk(
        &[
            "run",
            "--data",
            "datasets/linnerud.csv",
            "--method",
            "kde",
            "--ovk",
            "foo",
        ],
        &store,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("ovk: --ovk: 'foo' is not one of identity"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn options_the_fit_does_not_use_are_noted() {
    let store = temp_dir("opts", "unused", false);
    let args = [
        IRIS,
        &[
            "--method",
            "krr",
            "--kernel",
            "linear",
            "--sigma",
            "3",
            "--degree",
            "3",
            "--views",
            "a=sepal_length",
        ],
    ]
    .concat();
    let notes = notes_of_run(&args, &store);
    for needle in [
        "σ = 3 is not used: the linear kernel has no width",
        "degree 3 is not used",
        "the views (a=sepal_length) are not used: krr",
    ] {
        assert!(
            notes.iter().any(|n| n.contains(needle)),
            "no note {needle:?} in {notes:?}"
        );
    }
    // The same settings where they are used draw no note.
    let used = [
        IRIS,
        &[
            "--method",
            "mvml",
            "--sigma",
            "3",
            "--views",
            "a=sepal_length,b=petal_length",
        ],
    ]
    .concat();
    let o = ovk(&used, &store);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!stdout(&o).contains("is not used"), "{}", stdout(&o));
    assert!(!stdout(&o).contains("are not used"), "{}", stdout(&o));
    // The features outside both views are named: mvml's kernels never see them.
    assert!(
        stdout(&o).contains("sepal_width, petal_width belong to no view, so mvml leaves them out"),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&store);
}

#[test]
fn columns_left_out_of_the_default_features_are_noted() {
    let dir = temp_dir("opts", "dated", true);
    let data = dir.join("dated.csv");
    let mut text = String::from("day,x,y\n");
    for i in 1..=12 {
        text.push_str(&format!("2024-01-{i:02},{i},{}\n", i * 2 + i % 3));
    }
    std::fs::write(&data, text).unwrap();
    let store = dir.join("store");
    let args = ["run", "--data", data.to_str().unwrap(), "--method", "krr"];
    let notes = notes_of_run(&[&args[..], &["--targets", "y", "--json"]].concat(), &store);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("`day` is not a feature: a date")),
        "{notes:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
