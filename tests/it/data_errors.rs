//! Every bad input to the data layer gets a message that names the file and what is wrong.

use std::path::PathBuf;

use ovk_core::data::{load_table, prepare, read_numeric_columns, DataConfig, PrepareOptions};
use ovk_core::ErrorKind;

fn temp(name: &str, text: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("ovk-errors-{}-{name}", std::process::id()));
    std::fs::write(&p, text).unwrap();
    p
}

fn class_cfg(path: &std::path::Path, class: &str) -> DataConfig {
    let mut cfg = DataConfig::new(path);
    cfg.class = Some(class.into());
    cfg
}

fn prepare_err(cfg: &DataConfig) -> String {
    let e = prepare(cfg, PrepareOptions::default()).unwrap_err();
    assert_eq!(e.exit_code(), 2, "user errors exit with 2: {e}");
    e.to_string()
}

const SMALL: &str = "a,b,c\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n";

#[test]
fn missing_file() {
    let p = std::env::temp_dir().join("ovk-test-definitely-not-here.csv");
    let e = load_table(&p, 5).unwrap_err().to_string();
    assert!(
        e.ends_with("ovk-test-definitely-not-here.csv: no such file"),
        "{e}"
    );
    assert!(prepare_err(&class_cfg(&p, "c")).contains("no such file"));
}

#[test]
fn empty_file() {
    let p = temp("empty.csv", "");
    let e = load_table(&p, 5).unwrap_err().to_string();
    assert!(
        e.contains("empty.csv") && e.contains("the file is empty"),
        "{e}"
    );
    let p = temp("blank.csv", "\n  \n");
    let e = prepare_err(&class_cfg(&p, "c"));
    assert!(
        e.contains("blank.csv") && e.contains("the file is empty"),
        "{e}"
    );
}

#[test]
fn header_only() {
    let p = temp("header.csv", "a,b,c\n");
    let e = load_table(&p, 5).unwrap_err().to_string();
    assert!(
        e.contains("header.csv") && e.contains("has a header (3 columns) but no data rows"),
        "{e}"
    );
    assert!(prepare_err(&class_cfg(&p, "c")).contains("no data rows"));
}

#[test]
fn unknown_extension() {
    let p = temp("table.xlsx", SMALL);
    let e = load_table(&p, 5).unwrap_err().to_string();
    assert!(
        e.contains("table.xlsx") && e.contains("unknown file type `.xlsx`"),
        "{e}"
    );
    let p = temp("noext", SMALL);
    assert!(load_table(&p, 5)
        .unwrap_err()
        .to_string()
        .contains("no file extension"));
}

#[test]
fn garbled_csv_names_the_file() {
    let p = temp("ragged.csv", "a,b\n1,2\n3,4,5,6\n");
    let e = load_table(&p, 5).unwrap_err().to_string();
    assert!(
        e.contains("ragged.csv")
            && e.contains("data row 2 (line 3) has 4 cells but the header names 2 columns"),
        "{e}"
    );
    let p = temp("garbled.parquet", "this is not parquet at all");
    let e = load_table(&p, 5).unwrap_err().to_string();
    assert!(
        e.contains("garbled.parquet") && e.contains("cannot be read as Parquet"),
        "{e}"
    );
}

#[test]
fn unknown_column_suggests_the_nearest() {
    let p = temp("unknown.csv", "alpha,beta,label\n1,2,0\n3,4,1\n");
    let e = prepare_err(&class_cfg(&p, "lable"));
    assert!(
        e.contains("no column `lable`; did you mean `label`?"),
        "{e}"
    );
    let mut cfg = class_cfg(&p, "label");
    cfg.features = Some(vec!["alpha,betta".into()]);
    let e = prepare_err(&cfg);
    assert!(e.contains("no column `betta`; did you mean `beta`?"), "{e}");
    let e = read_numeric_columns(&p, &["alpah".into()]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingColumn);
    assert!(e.to_string().contains("did you mean `alpha`?"), "{e}");
    let e = prepare(&class_cfg(&p, "lable"), PrepareOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingColumn);
    let mut cfg = class_cfg(&p, "label");
    cfg.features = Some(vec!["gamma_*".into()]);
    let e = prepare(&cfg, PrepareOptions::default()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::MissingColumn, "{e}");
}

#[test]
fn non_numeric_feature_names_column_row_and_value() {
    let p = temp("text.csv", "a,b,c\n1,2,0\n3,oops,1\n5,6,0\n");
    let e = prepare_err(&class_cfg(&p, "c"));
    assert!(e.contains("text.csv"), "{e}");
    assert!(e.contains("column `b` is not numeric"), "{e}");
    assert!(
        e.contains("data row 2 (1-based, header not counted) holds `oops`"),
        "{e}"
    );
    let e = read_numeric_columns(&p, &["b".into()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("column `b` is not numeric") && e.contains("data row 2"),
        "{e}"
    );
    // A target column is checked the same way.
    let mut cfg = DataConfig::new(&p);
    cfg.targets = Some(vec!["b".into()]);
    assert!(prepare_err(&cfg).contains("column `b` is not numeric"));
}

#[test]
fn missing_value_is_named_and_drop_missing_drops() {
    let p = temp("holes.csv", "a,b,c\n1,2,0\n3,,1\n5,NaN,0\n7,8,1\n9,10,0\n");
    let e = prepare_err(&class_cfg(&p, "c"));
    assert!(e.contains("holes.csv"), "{e}");
    assert!(
        e.contains("column `b` has a missing value (empty or NaN) in data row 2"),
        "{e}"
    );
    assert!(e.contains("--missing drop"), "{e}");
    let mut cfg = class_cfg(&p, "c");
    cfg.drop_missing = true;
    cfg.test_fraction = 0.0;
    let prep = prepare(&cfg, PrepareOptions::default()).unwrap();
    assert_eq!(prep.train_rows, vec![0, 3, 4]);
    // The NaN row (data row 3) is refused too once row 2 is fixed.
    let p = temp("nan.csv", "a,b,c\n1,2,0\n3,4,1\n5,NaN,0\n");
    let e = prepare_err(&class_cfg(&p, "c"));
    assert!(
        e.contains("column `b` has a missing value (empty or NaN) in data row 3"),
        "{e}"
    );
    // A missing class is a missing value as well.
    let p = temp("noclass.csv", "a,b,c\n1,2,0\n3,4,\n5,6,1\n");
    let e = prepare_err(&class_cfg(&p, "c"));
    assert!(
        e.contains("column `c` has a missing value") && e.contains("data row 2"),
        "{e}"
    );
    let e = read_numeric_columns(&p, &["c".into()])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("column `c` has a missing value in data row 2"),
        "{e}"
    );
}

#[test]
fn unlabeled_rows_kept_when_allowed() {
    let p = temp(
        "semi.csv",
        "a,y1,y2\n1,0.5,1\n2,,\n3,1.5,2\n4,2.5,3\n5,,\n6,3.5,4\n",
    );
    let mut cfg = DataConfig::new(&p);
    cfg.targets = Some(vec!["y*".into()]);
    let e = prepare_err(&cfg);
    assert!(
        e.contains("column `y1` has a missing value") && e.contains("data row 2"),
        "{e}"
    );
    cfg.test_fraction = 0.5;
    let prep = prepare(
        &cfg,
        PrepareOptions {
            allow_unlabeled: true,
        },
    )
    .unwrap();
    assert_eq!(prep.test_rows.len(), 2);
    assert!(!prep.test_rows.contains(&1) && !prep.test_rows.contains(&4));
    assert!(prep.train_rows.contains(&1) && prep.train_rows.contains(&4));
    for (k, r) in prep.train_rows.iter().enumerate() {
        let unlabeled = *r == 1 || *r == 4;
        assert_eq!(prep.labeled[k], !unlabeled);
        assert_eq!(prep.y_train.row(k).iter().all(|v| v.is_nan()), unlabeled);
    }
    // the file has no labels for them: their true targets are NaN too
    assert_eq!(prep.y_unlabeled_true.nrows(), 2);
    assert!(prep.y_unlabeled_true.iter().all(|v| v.is_nan()));
    assert!(prep.y_test.iter().all(|v| v.is_finite()));
}

#[test]
fn single_class_is_refused() {
    let p = temp("oneclass.csv", "a,b,c\n1,2,7\n3,4,7\n5,6,7\n");
    let e = prepare_err(&class_cfg(&p, "c"));
    assert!(
        e.contains("oneclass.csv") && e.contains("class column `c` has a single class (`7`)"),
        "{e}"
    );
}

#[test]
fn fewer_than_two_rows() {
    let p = temp("onerow.csv", "a,b,c\n1,2,0\n");
    let e = prepare_err(&class_cfg(&p, "c"));
    assert!(
        e.contains("onerow.csv") && e.contains("only 1 usable row(s); at least 2 are needed"),
        "{e}"
    );
    let p = temp("dropped.csv", "a,b,c\n1,,0\n3,4,1\n,6,0\n");
    let mut cfg = class_cfg(&p, "c");
    cfg.drop_missing = true;
    let e = prepare_err(&cfg);
    assert!(
        e.contains("only 1 usable row(s) (2 dropped for missing values)"),
        "{e}"
    );
}

#[test]
fn no_roles_without_sidecar() {
    let p = temp("roleless.csv", SMALL);
    let e = prepare_err(&DataConfig::new(&p));
    assert!(e.contains("--class") && e.contains("--targets"), "{e}");
    assert!(
        e.contains("no sidecar") && e.contains("roleless.toml"),
        "{e}"
    );
}

#[test]
fn conflicting_roles() {
    let p = temp("conflict.csv", SMALL);
    let mut cfg = class_cfg(&p, "c");
    cfg.targets = Some(vec!["b".into()]);
    assert!(prepare_err(&cfg).contains("not both"));
    let mut cfg = class_cfg(&p, "c");
    cfg.features = Some(vec!["a".into(), "c".into()]);
    assert!(prepare_err(&cfg).contains("column `c` is chosen both as a feature and as an output"));
    let mut cfg = class_cfg(&p, "c");
    cfg.task = Some(ovk_core::data::Task::Regression);
    assert!(prepare_err(&cfg).contains("task regression needs target columns"));
}

#[test]
fn bad_labeled_and_test_fraction() {
    let p = temp("badnums.csv", SMALL);
    let mut cfg = class_cfg(&p, "c");
    cfg.test_fraction = 1.0;
    let e = prepare_err(&cfg);
    assert!(e.contains("test_fraction: 1 is outside [0, 1)"), "{e}");
    let mut cfg = class_cfg(&p, "c");
    cfg.labeled = Some(10.0);
    let e = prepare_err(&cfg);
    assert!(
        e.contains("--labeled 10 asks for 10 labels") && e.contains("only 3 labeled rows"),
        "{e}"
    );
    cfg.labeled = Some(-1.0);
    assert!(prepare_err(&cfg).contains("--labeled must be"));
}

#[test]
fn multilabel_task_needs_binary_columns() {
    let p = temp("notbinary.csv", "a,l1,l2\n1,0,1\n2,1,2\n3,0,0\n");
    let mut cfg = DataConfig::new(&p);
    cfg.targets = Some(vec!["l1..l2".into()]);
    cfg.task = Some(ovk_core::data::Task::Multilabel);
    let e = prepare_err(&cfg);
    assert!(e.contains("`l2` holds `2` in data row 2"), "{e}");
}

#[test]
fn unknown_view_prefix() {
    let p = temp("views.csv", "fou_0,fou_1,kar_0,c\n1,2,3,0\n4,5,6,1\n");
    let mut cfg = class_cfg(&p, "c");
    cfg.views = Some(vec!["fou,zer".into()]);
    let e = prepare_err(&cfg);
    assert!(
        e.contains("the view `zer` matches no feature column"),
        "{e}"
    );
}

#[test]
fn malformed_sidecar_is_an_error_naming_it() {
    let p = temp("brokenside.csv", SMALL);
    let side = p.with_extension("toml");
    std::fs::write(&side, "description = 3\n").unwrap();
    let e = prepare_err(&DataConfig::new(&p));
    std::fs::remove_file(&side).unwrap();
    assert!(
        e.contains("brokenside.toml") && e.contains("malformed dataset sidecar"),
        "{e}"
    );
}

#[test]
fn bad_sidecar_view_names_the_view_and_sidecar() {
    let p = temp("badview.csv", SMALL);
    let side = p.with_extension("toml");
    std::fs::write(
        &side,
        "description = \"d\"\nsource = \"s\"\nclass = \"c\"\n[views]\nv = [\"a..bb\"]\n",
    )
    .unwrap();
    let e = prepare_err(&DataConfig::new(&p));
    std::fs::remove_file(&side).unwrap();
    assert!(e.contains("no column `bb`; did you mean `b`?"), "{e}");
    assert!(
        e.contains("in the view `v` of the sidecar") && e.contains("badview.toml"),
        "{e}"
    );
}
