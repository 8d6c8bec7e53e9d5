//! Property tests of the table loader (CSV/TSV and Parquet through polars): generated and
//! mutated files never panic and are either loaded or refused with a user-input error naming
//! the file; valid numeric tables load back exactly as written, from CSV and from Parquet.
//! `PROPTEST_CASES=N` raises the case count (default: a few dozen per property, for CI).

use crate::common::support;

use std::path::Path;

use ovk_core::data::{load_table, prepare, read_numeric_columns, write_parquet};
use ovk_core::data::{DataConfig, PrepareOptions};
use proptest::prelude::*;

fn scratch_file(ext: &str) -> std::path::PathBuf {
    support::scratch("loader", &format!("t.{ext}"))
}

fn assert_refusal(e: &ovk_core::OvkError, path: &Path) -> std::result::Result<(), TestCaseError> {
    support::refusal(e, &[&support::file_name(path)])
}

/// Load `path` the two ways the application does: the preview and `prepare` (default roles).
fn load_both(path: &Path) -> std::result::Result<(), TestCaseError> {
    match load_table(path, 5) {
        Ok(t) => {
            prop_assert!(t.n_rows > 0);
            prop_assert!(!t.columns.is_empty());
            prop_assert!(t.head.iter().all(|r| r.len() == t.columns.len()));
        }
        Err(e) => assert_refusal(&e, path)?,
    }
    if let Err(e) = prepare(&DataConfig::new(path), PrepareOptions::default()) {
        assert_refusal(&e, path)?;
    }
    Ok(())
}

/// A cell as hostile files hold them.
fn cell() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => any::<i64>().prop_map(|v| v.to_string()),
        4 => any::<f64>().prop_map(|v| v.to_string()),
        2 => (-400i32..400).prop_map(|e| format!("1e{e}")),
        1 => Just("99999999999999999999999999".to_string()),
        1 => Just("1e999".to_string()),
        1 => Just("-0".to_string()),
        2 => Just(String::new()),
        1 => Just(" ".to_string()),
        2 => prop::sample::select(vec!["NaN", "nan", "inf", "-inf", "Infinity", "NA", "null", "?", "none", "true", "false"])
            .prop_map(String::from),
        2 => "[a-z\u{e9}\u{4e2d}\u{1F600} ,;\t\"'\\n\\r]{0,8}",
        2 => "[a-z ,\t\\n\u{e9}]{0,6}".prop_map(|s| format!("\"{}\"", s.replace('"', "\"\""))),
        1 => Just("\"unclosed".to_string()),
        1 => Just("a\"b".to_string()),
    ]
}

fn header_name() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => "[a-z][a-z0-9_]{0,6}",
        1 => Just(String::new()),
        1 => "[ \u{e9}\u{4e2d}a-z]{1,4}",
        1 => "[a-z,]{1,4}".prop_map(|s| format!("\"{s}\"")),
        1 => Just("a".to_string()),
    ]
}

/// A delimited table: header, rows (usually as wide as the header, sometimes ragged), a
/// separator, line endings and an optional final newline.
fn table_text() -> impl Strategy<Value = (String, bool)> {
    (
        prop::collection::vec(header_name(), 1..6),
        prop::collection::vec(prop::collection::vec(cell(), 0..8), 0..8),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec(any::<bool>(), 8),
    )
        .prop_map(|(header, rows, tsv, crlf, final_nl, ragged)| {
            let sep = if tsv { "\t" } else { "," };
            let nl = if crlf { "\r\n" } else { "\n" };
            let width = header.len();
            let mut s = header.join(sep);
            for (i, mut r) in rows.into_iter().enumerate() {
                if !ragged[i % ragged.len()] || i % 3 != 0 {
                    r.resize(width, "0".to_string());
                }
                s.push_str(nl);
                s.push_str(&r.join(sep));
            }
            if final_nl {
                s.push_str(nl);
            }
            (s, tsv)
        })
}

/// A few byte edits: overwrite, insert or delete at a position (may break UTF-8).
fn mutate(bytes: &mut Vec<u8>, edits: &[(usize, u8, u8)]) {
    for &(at, op, b) in edits {
        if bytes.is_empty() {
            bytes.push(b);
            continue;
        }
        let i = at % bytes.len();
        match op % 3 {
            0 => bytes[i] = b,
            1 => bytes.insert(i, b),
            _ => {
                bytes.remove(i);
            }
        }
    }
}

/// Finite values a CSV can spell, written with Rust's shortest round-trip formatting.
fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => -1e6f64..1e6,
        2 => prop::num::f64::NORMAL | prop::num::f64::SUBNORMAL | prop::num::f64::ZERO,
        1 => (-1_000_000i64..1_000_000).prop_map(|v| v as f64),
    ]
}

proptest! {
    #![proptest_config(support::config(64))]

    #[test]
    fn generated_tables_load_or_are_refused((text, tsv) in table_text()) {
        let path = scratch_file(if tsv { "tsv" } else { "csv" });
        std::fs::write(&path, &text).unwrap();
        load_both(&path)?;
        support::assert_no_absurd_allocation()?;
    }

    #[test]
    fn mutated_tables_load_or_are_refused(
        (text, tsv) in table_text(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 1..6),
    ) {
        let mut bytes = text.into_bytes();
        mutate(&mut bytes, &edits);
        let path = scratch_file(if tsv { "tsv" } else { "csv" });
        std::fs::write(&path, &bytes).unwrap();
        load_both(&path)?;
    }

    #[test]
    fn mutated_parquet_is_refused_or_loads(
        (text, _) in table_text(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..4),
        cut in any::<prop::sample::Index>(),
        truncate in any::<bool>(),
    ) {
        let csv = scratch_file("csv");
        std::fs::write(&csv, &text).unwrap();
        let pq = scratch_file("parquet");
        if write_parquet(&csv, &pq).is_err() {
            return Ok(());
        }
        let mut bytes = std::fs::read(&pq).unwrap();
        if truncate {
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        mutate(&mut bytes, &edits);
        std::fs::write(&pq, &bytes).unwrap();
        load_both(&pq)?;
    }
}

proptest! {
    #![proptest_config(support::config(48))]

    /// What is written is what is read: every finite value comes back bit for bit (up to the
    /// sign of zero), through CSV or TSV and through a Parquet copy.
    #[test]
    fn numeric_tables_round_trip(
        width in 1usize..5,
        values in prop::collection::vec(finite(), 1..60),
        tsv in any::<bool>(),
        crlf in any::<bool>(),
        pad in any::<bool>(),
    ) {
        let names: Vec<String> = (0..width).map(|j| format!("c{j}")).collect();
        let rows: Vec<&[f64]> = values.chunks(width).filter(|r| r.len() == width).collect();
        prop_assume!(!rows.is_empty());
        let sep = if tsv { "\t" } else { "," };
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = names.join(sep);
        for r in &rows {
            text.push_str(nl);
            let cells: Vec<String> = r
                .iter()
                .map(|v| if pad { format!(" {v} ") } else { format!("{v}") })
                .collect();
            text.push_str(&cells.join(sep));
        }
        text.push_str(nl);
        let path = scratch_file(if tsv { "tsv" } else { "csv" });
        std::fs::write(&path, &text).unwrap();
        let pq = scratch_file("parquet");
        write_parquet(&path, &pq).unwrap();
        for file in [&path, &pq] {
            let m = read_numeric_columns(file, &names)
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            prop_assert_eq!(m.dim(), (rows.len(), width));
            for (i, r) in rows.iter().enumerate() {
                for (j, &v) in r.iter().enumerate() {
                    prop_assert!(m[[i, j]] == v, "row {} col {}: wrote {:e}, read {:e}", i, j, v, m[[i, j]]);
                }
            }
        }
    }

    /// Quoted text cells (separators, doubled quotes, newlines, non-ASCII) come back as written.
    #[test]
    fn quoted_text_round_trips(
        cells in prop::collection::vec("x[a-z ,;\t\"\n\u{e9}\u{4e2d}\u{1F600}]{0,10}", 1..8),
    ) {
        let mut text = String::from("label,v\n");
        for (i, c) in cells.iter().enumerate() {
            text.push_str(&format!("\"{}\",{i}\n", c.replace('"', "\"\"")));
        }
        let path = scratch_file("csv");
        std::fs::write(&path, &text).unwrap();
        let t = load_table(&path, cells.len()).unwrap_or_else(|e| panic!("{e}\n{text}"));
        prop_assert_eq!(t.n_rows, cells.len());
        for (i, c) in cells.iter().enumerate() {
            prop_assert_eq!(&t.head[i][0], c);
            prop_assert_eq!(&t.head[i][1], &i.to_string());
        }
    }
}

/// Found by `numeric_tables_round_trip`: polars infers i64 for any run of digits, so a column
/// holding a whole number beyond i64 (`99999999999999999999`) was refused with "could not
/// parse … as dtype `i64`". It is a number; it loads as f64, and the column's other values too.
#[test]
fn whole_numbers_beyond_i64_load_as_numbers() {
    let path = scratch_file("csv");
    std::fs::write(
        &path,
        "a,b,c\n1,99999999999999999999,x\n2,-9223372036854775809,y\n3,7,z\n",
    )
    .unwrap();
    let m = read_numeric_columns(&path, &["a".into(), "b".into()]).unwrap();
    assert_eq!(m.column(0).to_vec(), vec![1.0, 2.0, 3.0]);
    assert_eq!(
        m.column(1).to_vec(),
        vec![99999999999999999999.0, -9223372036854775809.0, 7.0]
    );
    let t = load_table(&path, 3).unwrap();
    let dtypes: Vec<&str> = t.columns.iter().map(|c| c.dtype.as_str()).collect();
    assert_eq!(dtypes, ["i64", "f64", "str"]);
}

/// Found by the `load_csv` fuzzer: two corrupt Parquet files on which polars panics, once on
/// the calling thread (`thrift bool field`, caught) and once on its async executor's threads
/// (`Invalid argument` from an `madvise` of a column chunk at a negative offset — now refused by
/// the footer walk before polars reads). Both are refused as corrupt, naming the file.
#[test]
fn parquet_files_that_make_polars_panic_are_refused() {
    for name in ["bad_thrift.parquet", "bad_pages.parquet"] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/bad")
            .join(name);
        let e = load_table(&path, 5).unwrap_err();
        assert_eq!(e.exit_code(), 2, "{e:?}");
        let msg = e.to_string();
        assert!(
            msg.contains(name)
                && msg.contains("cannot be read as Parquet")
                && msg.contains("corrupt"),
            "{msg}"
        );
    }
}

/// Found by the `load_csv` fuzzer: a 7.9 KB Parquet file on which polars asked for
/// 88 847 737 728 bytes and the process aborted (`memory allocation … failed`, exit 134). An
/// allocation failure cannot be caught, so the footer walk bounds every length it claims first.
#[test]
fn parquet_claiming_88_gb_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad/huge_alloc.parquet");
    let e = load_table(&path, 5).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e:?}");
    assert!(e.to_string().contains("its footer claims a"), "{e}");
}

/// Found by the load_csv fuzzer after the footer check went in: a column chunk at byte −832.
/// polars slices the file there unchecked and `madvise`s it, which panicked on its own executor
/// threads (and sometimes exited 101). The footer walk now locates every chunk first.
#[test]
fn parquet_whose_chunks_lie_outside_the_file_is_refused() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bad/executor_panic.parquet");
    let e = load_table(&path, 5).unwrap_err();
    assert_eq!(e.exit_code(), 2, "{e:?}");
}
