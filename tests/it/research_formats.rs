//! Issue 37: data as researchers have it. Small scene-like and yeast-like multi-label tables,
//! written by the test as CSV, as Mulan ARFF (dense and sparse, labels in an XML file beside
//! it), as MEKA ARFF (`-C n`) and as LIBSVM multi-label files, give the same fitted model and
//! metrics whatever the format; bad files are input errors naming the line.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::common::binary::{assert_ok, ovk, stderr, stdout, temp_dir};

/// A multi-label table: features (many zeros, like text counts) and 0/1 labels.
struct Fixture {
    x: Vec<Vec<f64>>,
    y: Vec<Vec<u8>>,
}

fn fixture(rows: usize, features: usize, labels: usize, seed: u64) -> Fixture {
    let mut s = seed;
    let mut next = move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..rows {
        let row: Vec<f64> = (0..features)
            .map(|_| {
                let v = next();
                if v < 0.4 {
                    0.0
                } else {
                    (v * 1000.0).round() / 250.0 - 1.5
                }
            })
            .collect();
        // Labels that depend on the features, so the fit has something to find.
        let lab: Vec<u8> = (0..labels)
            .map(|k| u8::from(row[k % features] + 0.3 * next() > 0.5))
            .collect();
        x.push(row);
        y.push(lab);
    }
    Fixture { x, y }
}

fn feature_names(f: &Fixture) -> Vec<String> {
    (1..=f.x[0].len()).map(|j| format!("f{j}")).collect()
}

fn label_names(f: &Fixture) -> Vec<String> {
    (0..f.y[0].len()).map(|k| format!("label_{k}")).collect()
}

fn write_csv(f: &Fixture, path: &Path) {
    let mut t = feature_names(f)
        .into_iter()
        .chain(label_names(f))
        .collect::<Vec<_>>()
        .join(",");
    t.push('\n');
    for (x, y) in f.x.iter().zip(&f.y) {
        let cells: Vec<String> = x
            .iter()
            .map(|v| v.to_string())
            .chain(y.iter().map(|v| v.to_string()))
            .collect();
        writeln!(t, "{}", cells.join(",")).unwrap();
    }
    std::fs::write(path, t).unwrap();
}

/// Mulan's layout: features, then the labels as {0,1} attributes; `sparse` writes `{i v}`
/// rows. `meka` puts the labels first and says `-C n` instead.
fn write_arff(f: &Fixture, path: &Path, sparse: bool, meka: bool) {
    let l = f.y[0].len();
    let rel = if meka {
        format!("'fixture: -C {l}'")
    } else {
        "fixture".into()
    };
    let mut t = format!("% written by the test\n@relation {rel}\n\n");
    let feats: Vec<String> = feature_names(f)
        .iter()
        .map(|n| format!("@attribute {n} numeric\n"))
        .collect();
    let labs: Vec<String> = label_names(f)
        .iter()
        .map(|n| format!("@attribute '{n}' {{0,1}}\n"))
        .collect();
    let (first, second) = if meka {
        (&labs, &feats)
    } else {
        (&feats, &labs)
    };
    t.push_str(&first.concat());
    t.push_str(&second.concat());
    t.push_str("\n@data\n");
    for (x, y) in f.x.iter().zip(&f.y) {
        let xs = x.iter().map(|v| v.to_string());
        let ys = y.iter().map(|v| v.to_string());
        let cells: Vec<String> = if meka {
            ys.chain(xs).collect()
        } else {
            xs.chain(ys).collect()
        };
        if sparse {
            let pairs: Vec<String> = cells
                .iter()
                .enumerate()
                .filter(|(_, c)| c.as_str() != "0")
                .map(|(i, c)| format!("{i} {c}"))
                .collect();
            writeln!(t, "{{{}}}", pairs.join(", ")).unwrap();
        } else {
            writeln!(t, "{}", cells.join(",")).unwrap();
        }
    }
    std::fs::write(path, t).unwrap();
}

fn write_mulan_xml(f: &Fixture, path: &Path) {
    let mut t = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n\
         <labels xmlns=\"http://mulan.sourceforge.net/labels\">\n",
    );
    for n in label_names(f) {
        writeln!(t, "<label name=\"{n}\"></label>").unwrap();
    }
    t.push_str("</labels>\n");
    std::fs::write(path, t).unwrap();
}

/// LIBSVM multi-label: `0,2 1:0.5 4:1` (label values 0.., feature indices 1..).
fn write_libsvm(f: &Fixture, path: &Path) {
    let mut t = String::from("# written by the test\n");
    for (x, y) in f.x.iter().zip(&f.y) {
        let labels: Vec<String> = (0..y.len())
            .filter(|&k| y[k] == 1)
            .map(|k| k.to_string())
            .collect();
        let feats: Vec<String> = (0..x.len())
            .filter(|&j| x[j] != 0.0)
            .map(|j| format!("{}:{}", j + 1, x[j]))
            .collect();
        writeln!(t, "{} {}", labels.join(","), feats.join(" ")).unwrap();
    }
    std::fs::write(path, t).unwrap();
}

/// `ovk run` on `data`, and the session it wrote.
fn run(store: &Path, data: &Path, method: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "run",
        "--data",
        data.to_str().unwrap(),
        "--method",
        method,
        "--kernel",
        "gaussian",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = ovk(&args, store);
    assert_ok(&out, &format!("{}: ", data.display()));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    PathBuf::from(v["session"].as_str().unwrap())
}

fn session(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("session.json")).unwrap()).unwrap()
}

/// The fitted model and its metrics are those of the CSV run, bit for bit.
fn same_fit(csv: &Path, other: &Path) {
    let (a, b) = (session(csv), session(other));
    assert_eq!(a["metrics"], b["metrics"], "{}", other.display());
    assert_eq!(a["task"], b["task"], "{}", other.display());
    for m in ["coefficients.npy", "predictions_test.npy"] {
        assert_eq!(
            std::fs::read(csv.join(m)).unwrap(),
            std::fs::read(other.join(m)).unwrap(),
            "{m} of {}",
            other.display()
        );
    }
}

fn every_format_fits_alike(tag: &str, f: &Fixture) {
    let dir = temp_dir("research", tag, true);
    let store = dir.join("store");
    let csv = dir.join(format!("{tag}.csv"));
    write_csv(f, &csv);
    let mulan = dir.join(format!("{tag}-train.arff"));
    write_arff(f, &mulan, false, false);
    write_mulan_xml(f, &dir.join(format!("{tag}.xml")));
    let sparse_dir = dir.join("sparse");
    std::fs::create_dir_all(&sparse_dir).unwrap();
    let sparse = sparse_dir.join(format!("{tag}.arff"));
    write_arff(f, &sparse, true, false);
    write_mulan_xml(f, &sparse_dir.join(format!("{tag}.xml")));
    let meka = dir.join(format!("{tag}-meka.arff"));
    write_arff(f, &meka, true, true);
    let svm = dir.join(format!("{tag}.svm"));
    write_libsvm(f, &svm);
    let targets = format!("label_0..label_{}", f.y[0].len() - 1);
    for method in ["krr", "okl"] {
        let base = run(&store, &csv, method, &["--targets", &targets]);
        assert_eq!(session(&base)["task"], "multilabel");
        // Roles from the XML beside the file, MEKA's -C, the LIBSVM labels: no role flags.
        for data in [&mulan, &sparse, &meka, &svm] {
            same_fit(&base, &run(&store, data, method, &[]));
        }
        // --targets names the labels of an ARFF file as of a CSV file.
        same_fit(
            &base,
            &run(&store, &mulan, method, &["--targets", &targets]),
        );
    }
}

#[test]
fn scene_like_arff_and_libsvm_fit_as_the_csv() {
    every_format_fits_alike("scene", &fixture(60, 8, 6, 1));
}

#[test]
fn yeast_like_arff_and_libsvm_fit_as_the_csv() {
    every_format_fits_alike("yeast", &fixture(70, 12, 9, 2));
}

#[test]
fn a_weka_class_and_a_single_label_libsvm_file_are_classifications() {
    let dir = temp_dir("research", "class", true);
    let store = dir.join("store");
    let mut arff = String::from(
        "@relation iris\n@attribute a numeric\n@attribute b numeric\n@attribute colour \
         {red,'light blue',green}\n@attribute class {x,y,z}\n@data\n",
    );
    let mut svm = String::new();
    let colours = ["red", "'light blue'", "green"];
    for i in 0..45 {
        let (a, b) = ((i % 7) as f64 / 3.0, (i % 5) as f64 - 2.0);
        let c = i % 3;
        let a_cell = if i == 7 {
            "?".to_string()
        } else {
            a.to_string()
        };
        writeln!(
            arff,
            "{a_cell},{b},{},{}",
            colours[(i / 3) % 3],
            ["x", "y", "z"][c]
        )
        .unwrap();
        writeln!(svm, "{} 1:{a} 2:{b}", c + 1).unwrap();
    }
    let arff_path = dir.join("weka.arff");
    std::fs::write(&arff_path, arff).unwrap();
    let s = session(&run(&store, &arff_path, "krr", &["--missing", "drop"]));
    assert_eq!(s["task"], "multiclass");
    let features = s["dataset"]["features"].to_string();
    assert!(
        features.contains("colour=light blue"),
        "one-hot: {features}"
    );
    let svm_path = dir.join("single.libsvm");
    std::fs::write(&svm_path, svm).unwrap();
    let s = session(&run(&store, &svm_path, "krr", &[]));
    assert_eq!(s["task"], "multiclass");
    assert_eq!(s["dataset"]["features"].as_array().unwrap().len(), 2);
}

#[test]
fn bad_research_files_are_input_errors_naming_the_line() {
    let dir = temp_dir("research", "bad", true);
    let store = dir.join("store");
    let head = "@relation r\n@attribute x numeric\n@attribute y numeric\n@data\n";
    let cases: [(&str, String, &str); 6] = [
        ("ragged.arff", format!("{head}1,2\n3\n"), "line 6"),
        ("word.arff", format!("{head}1,2\nabc,4\n"), "line 6"),
        ("index.arff", format!("{head}{{0 1, 7 2}}\n"), "line 5"),
        ("noheader.arff", "1,2\n3,4\n".into(), "@attribute"),
        ("pair.svm", "1 1:2\n2 3\n".into(), "line 2"),
        ("huge.svm", "1 99999999999999:1\n".into(), "columns"),
    ];
    for (name, text, want) in cases {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        let out = ovk(
            &["run", "--data", p.to_str().unwrap(), "--method", "krr"],
            &store,
        );
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(name) && err.contains(want), "{name}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A Mulan XML naming a label the file lacks is named.
    let p = dir.join("m.arff");
    std::fs::write(&p, format!("{head}1,2\n3,4\n")).unwrap();
    std::fs::write(dir.join("m.xml"), "<labels><label name=\"z\"/></labels>").unwrap();
    let out = ovk(
        &["run", "--data", p.to_str().unwrap(), "--method", "krr"],
        &store,
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("m.xml") && err.contains("`z`"), "{err}");
}
