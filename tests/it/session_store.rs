//! The session store: round trips, atomic saves, corrupt entries, clear errors on bad files,
//! rename / delete / resolve, and id collisions.

use crate::common::fixture;

use std::fs;

use fixture::{record, temp_store};
use ndarray::{array, Array2};
use ovk_core::session::{load, new_id, now_rfc3339, slug, Listing, Store, SCHEMA};
use ovk_core::ErrorKind;

fn err_text<T: std::fmt::Debug>(r: ovk_core::Result<T>) -> String {
    r.expect_err("expected an error").to_string()
}

fn err_kind<T: std::fmt::Debug>(r: ovk_core::Result<T>) -> ErrorKind {
    r.expect_err("expected an error").kind()
}

fn ok_ids(store: &Store) -> Vec<String> {
    store
        .list()
        .into_iter()
        .filter_map(|l| match l {
            Listing::Ok(s) => Some(s.id),
            Listing::Corrupt { .. } => None,
        })
        .collect()
}

fn matrices() -> Vec<(String, Array2<f64>)> {
    vec![
        (
            "output_kernel".to_string(),
            array![[1.0, 0.5, 0.0], [0.5, 1.0, 0.25], [0.0, 0.25, 1.0]],
        ),
        (
            "predictions_test".to_string(),
            array![[0.1, -0.2, 0.3], [1.5, 2.5, -3.5]],
        ),
    ]
}

#[test]
fn save_list_load_round_trip() {
    let (root, store) = temp_store("roundtrip");
    let mut rec = record("yeast okl", "2026-11-21T06:00:00Z", 5);
    rec.id = "20261121-060000-yeast-okl".to_string();
    let dir = store.save(&rec, &matrices()).unwrap();
    assert_eq!(dir, root.join("20261121-060000-yeast-okl"));
    assert!(dir.join("session.json").is_file());
    assert!(dir.join("output_kernel.npy").is_file());

    // numpy-readable: magic, little-endian f64, C order
    let bytes = fs::read(dir.join("output_kernel.npy")).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let header = String::from_utf8_lossy(&bytes[..128]);
    assert!(header.contains("'descr': '<f8'"), "{header}");
    assert!(header.contains("'fortran_order': False"), "{header}");
    assert!(header.contains("'shape': (3, 3)"), "{header}");
    // version 1.0: the header length is a little-endian u16 at bytes 8..10
    let data_at = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let data: Vec<f64> = bytes[data_at..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(data, [1.0, 0.5, 0.0, 0.5, 1.0, 0.25, 0.0, 0.25, 1.0]);

    let listing = store.list();
    assert_eq!(listing.len(), 1);
    let Listing::Ok(s) = &listing[0] else {
        panic!("listed as corrupt: {listing:?}")
    };
    assert_eq!(s.id, "20261121-060000-yeast-okl");
    assert_eq!(s.name, "yeast okl");
    assert_eq!(s.dataset, "yeast.csv");
    assert_eq!(s.method, "okl");
    assert_eq!(s.key_metric, Some(("mean_auc".to_string(), 0.8)));

    let loaded = load(&dir).unwrap();
    let mut expected = rec.clone();
    expected.matrices = [
        ("output_kernel", "output_kernel.npy"),
        ("predictions_test", "predictions_test.npy"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(loaded.record, expected);
    for (name, m) in matrices() {
        assert_eq!(loaded.matrix(&name).unwrap(), m);
    }
    let _ = fs::remove_dir_all(root);
}

#[test]
fn nan_numbers_survive_the_json_round_trip() {
    let (root, store) = temp_store("nan");
    let mut rec = record("nan", "2026-11-21T06:00:00Z", 2);
    rec.objective = None;
    rec.trace[1].objective = f64::NAN;
    rec.metrics.test.insert("r2".into(), f64::NAN);
    let dir = store.save(&rec, &[]).unwrap();
    let text = fs::read_to_string(dir.join("session.json")).unwrap();
    assert!(text.contains("\"objective\": null"), "{text}");
    let back = load(&dir).unwrap().record;
    assert!(back.objective.is_none());
    assert!(back.trace[1].objective.is_nan());
    assert_eq!(back.trace[0].objective, 10.0);
    assert!(back.metrics.test["r2"].is_nan());
    let _ = fs::remove_dir_all(root);
}

#[test]
fn fresh_id_from_name_and_collision_suffixes() {
    let (root, store) = temp_store("collide");
    let rec = record("Yeast / OKL run!", "2026-11-21T06:00:00Z", 0);
    let a = store.save(&rec, &[]).unwrap();
    let id_a = a.file_name().unwrap().to_string_lossy().into_owned();
    // YYYYMMDD-HHMMSS-slug
    assert_eq!(id_a.len(), 16 + "yeast-okl-run".len(), "{id_a}");
    assert!(id_a[..8].chars().all(|c| c.is_ascii_digit()), "{id_a}");
    assert_eq!(&id_a[8..9], "-");
    assert!(id_a[9..15].chars().all(|c| c.is_ascii_digit()), "{id_a}");
    assert!(id_a.ends_with("-yeast-okl-run"), "{id_a}");
    assert_eq!(load(&a).unwrap().record.id, id_a);

    let mut fixed = rec.clone();
    fixed.id = "20260101-000000-same".to_string();
    let first = store.save(&fixed, &[]).unwrap();
    let second = store.save(&fixed, &[]).unwrap();
    let third = store.save(&fixed, &[]).unwrap();
    assert!(first.ends_with("20260101-000000-same"));
    assert!(second.ends_with("20260101-000000-same-2"));
    assert!(third.ends_with("20260101-000000-same-3"));
    assert_eq!(load(&third).unwrap().record.id, "20260101-000000-same-3");
    let _ = fs::remove_dir_all(root);
}

#[test]
fn a_failed_save_leaves_nothing() {
    let (root, store) = temp_store("failed");
    let rec = record("f", "2026-01-01T00:00:00Z", 0);
    let m = Array2::<f64>::eye(3);
    let twice = vec![("k".to_string(), m.clone()), ("k".to_string(), m.clone())];
    assert!(err_text(store.save(&rec, &twice)).contains("saved twice"));
    let escape = vec![("../k".to_string(), m)];
    assert!(store.save(&rec, &escape).is_err());
    assert_eq!(fs::read_dir(&root).unwrap().count(), 0);
    // an unsafe id in the record is replaced by a fresh one
    let mut odd = rec.clone();
    odd.id = "../../etc".to_string();
    let dir = store.save(&odd, &[]).unwrap();
    assert_eq!(dir.parent(), Some(root.as_path()));
    assert!(dir.file_name().unwrap().to_string_lossy().ends_with("-f"));
    let _ = fs::remove_dir_all(root);
}

#[test]
fn ids_and_timestamps() {
    assert_eq!(slug("Yeast / OKL run!"), "yeast-okl-run");
    assert_eq!(slug("  --  "), "session");
    assert_eq!(slug("ÄÖü"), "session");
    assert!(slug(&"x".repeat(100)).len() <= 40);
    let id = new_id("a b");
    assert!(id.ends_with("-a-b"), "{id}");
    let now = now_rfc3339();
    assert!(now.ends_with('Z') && now.len() == 20, "{now}");
    assert!(now.starts_with("20"), "{now}");
}

#[test]
fn list_is_newest_first() {
    let (root, store) = temp_store("order");
    for (id, created) in [
        ("b-old", "2026-01-01T00:00:00Z"),
        ("a-new", "2026-03-01T00:00:00Z"),
        ("c-mid", "2026-02-01T00:00:00Z"),
        ("d-mid", "2026-02-01T00:00:00Z"),
    ] {
        let mut rec = record(id, created, 0);
        rec.id = id.to_string();
        store.save(&rec, &[]).unwrap();
    }
    assert_eq!(ok_ids(&store), ["a-new", "d-mid", "c-mid", "b-old"]);
    let _ = fs::remove_dir_all(root);
}

#[test]
fn leftovers_and_corrupt_entries_never_break_listing() {
    let (root, store) = temp_store("corrupt");
    let mut good = record("good", "2026-01-01T00:00:00Z", 0);
    good.id = "good".into();
    let good_dir = store.save(&good, &[]).unwrap();
    let valid_json = fs::read_to_string(good_dir.join("session.json")).unwrap();

    // an interrupted save: a complete-looking temp directory is still not a session
    let tmp = root.join(".tmp-20260101-000000-x-4242");
    fs::create_dir(&tmp).unwrap();
    fs::write(tmp.join("session.json"), &valid_json).unwrap();
    // a stray file is ignored
    fs::write(root.join("notes.txt"), "hello").unwrap();
    // garbage
    fs::create_dir(root.join("garbage")).unwrap();
    fs::write(root.join("garbage/session.json"), "{ \"schema\": \n  oops").unwrap();
    // no session.json at all
    fs::create_dir(root.join("empty")).unwrap();
    // a future schema
    fs::create_dir(root.join("future")).unwrap();
    fs::write(
        root.join("future/session.json"),
        valid_json.replace(SCHEMA, "ovk.session/99"),
    )
    .unwrap();

    let listing = store.list();
    assert_eq!(listing.len(), 4, "{listing:?}");
    assert!(matches!(&listing[0], Listing::Ok(s) if s.id == "good"));
    let reason = |leaf: &str| {
        listing
            .iter()
            .find_map(|l| match l {
                Listing::Corrupt { path, reason } if path.ends_with(leaf) => Some(reason.clone()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{leaf} not listed as corrupt: {listing:?}"))
    };
    let garbage = reason("garbage");
    assert!(garbage.contains("invalid JSON"), "{garbage}");
    assert!(garbage.contains("line 2"), "{garbage}");
    assert!(reason("empty").contains("no session.json"));
    let future = reason("future");
    assert!(future.contains("ovk.session/99"), "{future}");
    assert!(future.contains(SCHEMA), "{future}");

    // the same messages from load
    assert!(err_text(load(&root.join("future"))).contains("ovk.session/99"));
    assert!(err_text(load(&root.join("garbage"))).contains("column"));
    let _ = fs::remove_dir_all(root);
}

#[test]
fn load_explains_what_is_wrong() {
    let (root, store) = temp_store("loaderr");
    let missing = err_text(load(&root.join("nope")));
    assert!(missing.contains("no such session directory"), "{missing}");
    fs::write(root.join("file"), "x").unwrap();
    assert_eq!(err_kind(load(&root.join("file"))), ErrorKind::BadSession);
    fs::create_dir(root.join("noschema")).unwrap();
    fs::write(root.join("noschema/session.json"), "{\"name\": \"x\"}").unwrap();
    assert_eq!(
        err_kind(load(&root.join("noschema"))),
        ErrorKind::BadSession
    );
    // right schema, wrong content
    let mut good = record("g", "2026-01-01T00:00:00Z", 0);
    good.id = "g".into();
    let dir = store.save(&good, &[]).unwrap();
    let text = fs::read_to_string(dir.join("session.json")).unwrap();
    fs::write(
        dir.join("session.json"),
        text.replace("\"method\": \"okl\"", "\"method\": 3"),
    )
    .unwrap();
    let e = load(&dir).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BadSession);
    assert!(e.to_string().contains("line"), "{e}");
    let _ = fs::remove_dir_all(root);
}

#[test]
fn matrix_errors_name_the_problem() {
    let (root, store) = temp_store("matrices");
    let mut rec = record("m", "2026-01-01T00:00:00Z", 0);
    rec.id = "m".into();
    let dir = store.save(&rec, &matrices()).unwrap();
    let loaded = load(&dir).unwrap();

    assert_eq!(
        err_kind(loaded.matrix("coefficients")),
        ErrorKind::BadSession
    );
    let unknown = err_text(loaded.matrix("coefficients"));
    assert!(
        unknown.contains("output_kernel, predictions_test"),
        "{unknown}"
    );

    // wrong shape: output_kernel must be m × m = 3 × 3
    ndarray_npy::write_npy(dir.join("output_kernel.npy"), &Array2::<f64>::eye(2)).unwrap();
    let shape = err_text(loaded.matrix("output_kernel"));
    assert!(
        shape.contains("2×2") && shape.contains("expected 3×3"),
        "{shape}"
    );
    // predictions_test must have one row per test row
    ndarray_npy::write_npy(
        dir.join("predictions_test.npy"),
        &Array2::<f64>::zeros((5, 3)),
    )
    .unwrap();
    let rows = err_text(loaded.matrix("predictions_test"));
    assert!(
        rows.contains("5×3") && rows.contains("expected 2×3"),
        "{rows}"
    );

    // corrupt
    fs::write(dir.join("output_kernel.npy"), b"\x93NUMPY garbage").unwrap();
    assert_eq!(
        err_kind(loaded.matrix("output_kernel")),
        ErrorKind::BadSession
    );
    // missing
    fs::remove_file(dir.join("output_kernel.npy")).unwrap();
    let gone = err_text(loaded.matrix("output_kernel"));
    assert!(
        gone.contains("output_kernel.npy") && gone.contains("missing"),
        "{gone}"
    );
    let _ = fs::remove_dir_all(root);
}

#[test]
fn rename_resolve_and_delete() {
    let (root, store) = temp_store("manage");
    let mut a = record("alpha", "2026-01-01T00:00:00Z", 0);
    a.id = "id-a".into();
    let mut b = record("beta", "2026-01-02T00:00:00Z", 0);
    b.id = "id-b".into();
    let dir_a = store.save(&a, &[]).unwrap();
    let dir_b = store.save(&b, &[]).unwrap();

    // resolve: path, id, unique name, unknown
    assert_eq!(store.resolve(dir_a.to_str().unwrap()).unwrap(), dir_a);
    assert_eq!(store.resolve("id-b").unwrap(), dir_b);
    assert_eq!(store.resolve("alpha").unwrap(), dir_a);
    assert!(err_text(store.resolve("gamma")).contains("no session 'gamma'"));

    // rename keeps the id, rewrites session.json, leaves no temp file behind
    store.rename("id-a", "beta").unwrap();
    let renamed = load(&dir_a).unwrap().record;
    assert_eq!(renamed.name, "beta");
    assert_eq!(renamed.id, "id-a");
    let names: Vec<String> = fs::read_dir(&dir_a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["session.json"]);
    assert!(err_text(store.rename("id-a", "  ")).contains("cannot be empty"));

    // two sessions named beta now: ambiguous
    let amb = err_text(store.resolve("beta"));
    assert!(amb.contains("id-a") && amb.contains("id-b"), "{amb}");

    // delete: by id; by name is refused with a hint; outside the store is refused
    let by_name = err_text(store.delete("beta"));
    assert!(by_name.contains("delete by id"), "{by_name}");
    let outside = std::env::temp_dir().join(format!("ovk-test-{}-outside", std::process::id()));
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("session.json"), "{}").unwrap();
    let refused = err_text(store.delete(outside.to_str().unwrap()));
    assert!(refused.contains("refusing"), "{refused}");
    assert!(outside.join("session.json").exists());
    assert!(err_text(store.delete(root.to_str().unwrap())).contains("refusing"));
    assert!(err_text(store.delete("../whatever")).contains("no session"));

    store.delete("id-a").unwrap();
    assert!(!dir_a.exists());
    assert_eq!(ok_ids(&store), ["id-b"]);
    store.delete(dir_b.to_str().unwrap()).unwrap();
    assert!(store.list().is_empty());
    // nothing left behind, not even hidden work directories
    assert_eq!(fs::read_dir(&root).unwrap().count(), 0);
    let _ = fs::remove_dir_all(outside);
    let _ = fs::remove_dir_all(root);
}

#[test]
fn open_uses_the_environment_and_creates_the_directory() {
    let dir = std::env::temp_dir()
        .join(format!("ovk-test-{}-env", std::process::id()))
        .join("nested");
    let _ = fs::remove_dir_all(dir.parent().unwrap());
    std::env::set_var("OVK_SESSIONS", &dir);
    let store = Store::open(None);
    std::env::remove_var("OVK_SESSIONS");
    let store = store.unwrap();
    assert_eq!(store.root(), dir.as_path());
    assert!(dir.is_dir());
    let _ = fs::remove_dir_all(dir.parent().unwrap());
}
