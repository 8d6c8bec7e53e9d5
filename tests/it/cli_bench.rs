//! `ovk bench`: the child that measures one configuration prints one valid JSON object, the
//! scaling table comes out as Markdown plus a JSON ledger, and `bench data` writes the
//! synthetic problem. Tiny sizes only: nothing here asserts on seconds.

use crate::common::binary;
use binary::{ovk, stderr, stdout};

fn number(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

#[test]
fn bench_one_prints_one_json_object_with_fit_floor_ratio_and_peak_memory() {
    let store = binary::temp_dir("bench", "one", false);
    let o = ovk(
        &[
            "bench",
            "one",
            "--method",
            "okl",
            "--n",
            "40",
            "--outputs",
            "3",
        ],
        &store,
    );
    assert!(o.status.success(), "ovk failed: {}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(stdout(&o).trim()).expect("one JSON object on stdout");
    assert_eq!(v["method"], "okl");
    assert_eq!(v["n"], 40);
    assert_eq!(v["outputs"], 3);
    let (fit, eigh, ratio) = (
        number(&v, "fit_s"),
        number(&v, "eigh_s"),
        number(&v, "ratio"),
    );
    assert!(fit > 0.0 && eigh > 0.0);
    assert!((ratio - fit / eigh).abs() <= 1e-9 * ratio.abs().max(1.0));
    // VmHWM: at least the 40×40 Gram matrix, and far less than a gigabyte
    let peak = v["peak_rss_bytes"].as_u64().expect("peak_rss_bytes");
    assert!(peak > 40 * 40 * 8 && peak < 1 << 30, "peak {peak}");
    assert!(v["iterations"].as_u64().is_some_and(|i| i >= 1));
    assert_eq!(v["converged"], true);
    assert!(number(&v, "objective").is_finite());
}

#[test]
fn bench_one_refuses_an_unknown_method_with_the_list() {
    let store = binary::temp_dir("bench", "unknown", false);
    let o = ovk(&["bench", "one", "--method", "svm", "--n", "20"], &store);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("kde-conditional"), "{}", stderr(&o));
}

#[test]
fn bench_scaling_writes_markdown_and_a_json_ledger() {
    let dir = binary::temp_dir("bench", "scaling", true);
    let out = dir.join("ledger.json");
    let o = ovk(
        &[
            "bench",
            "scaling",
            "--methods",
            "krr,vvmr",
            "--n",
            "30,20",
            "--outputs",
            "2",
            "--out",
            out.to_str().expect("utf-8 path"),
        ],
        &dir.join("store"),
    );
    assert!(o.status.success(), "ovk failed: {}", stderr(&o));
    let md = stdout(&o);
    assert!(
        md.contains("| n | Gram of K | eigh of K | peak memory |"),
        "{md}"
    );
    assert!(md.contains("**krr**") && md.contains("**vvmr**"), "{md}");
    assert!(md.contains("| 20 |") && md.contains("| 30 |"), "{md}");
    let ledger: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("ledger written"))
            .expect("ledger is JSON");
    let rows = ledger["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), 4);
    for r in rows {
        assert_eq!(r["status"], "ok", "{r}");
        // the ratio uses the floor measured once per n
        let res = &r["result"];
        assert!((number(res, "ratio") - number(res, "fit_s") / number(res, "eigh_s")).abs() < 1e-9);
    }
    assert_eq!(ledger["floor"].as_array().map(Vec::len), Some(2));
}

#[test]
fn bench_data_writes_the_synthetic_problem_as_csv() {
    let dir = binary::temp_dir("bench", "data", true);
    let path = dir.join("syn.csv");
    let o = ovk(
        &[
            "bench",
            "data",
            "--n",
            "25",
            "--outputs",
            "4",
            "--out",
            path.to_str().expect("utf-8 path"),
        ],
        &dir.join("store"),
    );
    assert!(o.status.success(), "ovk failed: {}", stderr(&o));
    let text = std::fs::read_to_string(&path).expect("csv written");
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().expect("header").split(',').collect();
    assert_eq!(head.len(), 10 + 4);
    assert_eq!((head[0], head[13]), ("x_0", "y_3"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 25 + 100);
    assert!(rows.iter().all(|r| r
        .split(',')
        .all(|c| c.parse::<f64>().is_ok_and(f64::is_finite))));
}
