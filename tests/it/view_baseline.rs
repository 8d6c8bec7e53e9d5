//! A multi-view method's krr baseline sees the columns its views hold, as the method does: on
//! jura-like data with coordinates outside every view, the baseline equals krr fitted on the
//! views' columns alone, and the run says so.

use std::path::Path;

use ovk_core::methods::Silent;
use ovk_core::train::{self, RunConfig};

use crate::common::binary::temp_dir;

/// Jura's shape: coordinates, then seven metal concentrations; Cd is the target.
fn jura_like(dir: &Path) -> std::path::PathBuf {
    let mut text = String::from("Xloc,Yloc,Co,Cr,Cu,Ni,Pb,Zn,Cd\n");
    let mut s = 7u64;
    let mut r = || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 11) as f64 / (1u64 << 53) as f64) - 0.5
    };
    for i in 0..90 {
        let x = [r(), r(), r(), r(), r(), r(), r(), r()];
        let cd = x[2] + 0.5 * x[3] - x[5] * x[6] + 0.1 * r() + 0.01 * i as f64;
        let cells: Vec<String> = x
            .iter()
            .chain([cd].iter())
            .map(|v| format!("{v:.6}"))
            .collect();
        text.push_str(&cells.join(","));
        text.push('\n');
    }
    let path = dir.join("jura_like.csv");
    std::fs::write(&path, text).unwrap();
    path
}

fn config(data: &Path, method: &str, features: &[&str], views: Option<&[&str]>) -> RunConfig {
    serde_json::from_value(serde_json::json!({
        "data": {"path": data, "targets": ["Cd"], "features": features, "views": views},
        "method": method,
        "params": {"lambda": 0.1},
    }))
    .unwrap()
}

#[test]
fn the_baseline_of_mvml_uses_the_columns_of_its_views() {
    let dir = temp_dir("view-baseline", "jura", true);
    let data = jura_like(&dir);
    let all = ["Xloc", "Yloc", "Co", "Cr", "Cu", "Ni", "Pb", "Zn"];
    // one view by a regular expression, one by a range: the coordinates are in neither
    let views = ["metals=/^(Co|Cr|Cu|Ni)$/", "heavy=Pb..Zn"];
    let mvml = train::run(&config(&data, "mvml", &all, Some(&views[..])), &mut Silent).unwrap();
    let in_views = ["Co", "Cr", "Cu", "Ni", "Pb", "Zn"];
    let krr = train::run(&config(&data, "krr", &in_views, None), &mut Silent).unwrap();
    let base = mvml.record.baseline.as_ref().expect("a baseline").test["mse"];
    let alone = krr.record.metrics.test["mse"];
    assert!(
        (base - alone).abs() <= 1e-9 * alone.abs().max(1.0),
        "baseline {base} vs krr on the views' columns {alone}"
    );
    let all_krr = train::run(&config(&data, "krr", &all, None), &mut Silent).unwrap();
    assert_ne!(base, all_krr.record.metrics.test["mse"]);
    let notes = mvml.record.notes.join("\n");
    assert!(
        notes.contains("the krr baseline used the 6 feature columns the views hold (of 8)"),
        "{notes}"
    );
    // views holding every feature: the baseline is krr on all of them, and no note
    let whole = ["a=Xloc..Cu", "b=Ni..Zn"];
    let mvml = train::run(&config(&data, "mvml", &all, Some(&whole[..])), &mut Silent).unwrap();
    assert_eq!(
        mvml.record.baseline.as_ref().unwrap().test["mse"],
        all_krr.record.metrics.test["mse"]
    );
    assert!(!mvml.record.notes.join("\n").contains("baseline used"));
}
