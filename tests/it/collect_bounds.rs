//! `ovk sweep --collect` bounds the fold count a session claims before sizing anything by it,
//! with the check a fit (and `replay --verify`) makes: an edited session claiming 10¹⁵,
//! 2⁶⁴ − 1 or 10⁹ folds is refused with exit 2 naming its file — not an abort, a capacity
//! overflow panic, or gigabytes taken.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::binary::{self, stderr};

fn ovk_in(args: &[&str], store: &Path) -> std::process::Output {
    binary::ovk(args, store)
}

/// Four sessions written by a plan's commands: two configurations × two folds.
fn planned_store(dir: &Path) -> PathBuf {
    let cfg = dir.join("exp.toml");
    std::fs::write(
        &cfg,
        "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nlambda = [0.5, 5.0]\nkernel = \"linear\"\n",
    )
    .unwrap();
    let runs = dir.join("runs");
    let plan = ovk_in(
        &[
            "sweep",
            "--config",
            cfg.to_str().unwrap(),
            "--cv",
            "2",
            "--plan",
        ],
        &runs,
    );
    assert!(plan.status.success(), "{}", stderr(&plan));
    for line in String::from_utf8(plan.stdout).unwrap().lines() {
        let o = Command::new("sh")
            .arg("-c")
            .arg(format!("ovk() {{ \"$OVK\" \"$@\"; }}; {line}"))
            .env("OVK", env!("CARGO_BIN_EXE_ovk"))
            .current_dir(binary::root())
            .output()
            .unwrap();
        assert!(o.status.success(), "{line}: {}", stderr(&o));
    }
    runs
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let q = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &q);
        } else {
            std::fs::copy(&p, &q).unwrap();
        }
    }
}

#[test]
fn a_session_claiming_absurd_folds_is_refused_before_allocating() {
    let dir = binary::temp_dir("collect-bounds", "folds", true);
    let runs = planned_store(&dir);
    let fine = ovk_in(
        &["sweep", "--collect", runs.to_str().unwrap()],
        &dir.join("best"),
    );
    assert!(fine.status.success(), "{}", stderr(&fine));

    for (k, folds) in [
        "1000000000000000",
        "18446744073709551615",
        "1000000000",
        "1",
        "0",
    ]
    .iter()
    .enumerate()
    {
        let edited = dir.join(format!("edited{k}"));
        copy_dir(&runs, &edited);
        let one = std::fs::read_dir(&edited)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.join("session.json").is_file())
            .unwrap();
        let json = one.join("session.json");
        let text = std::fs::read_to_string(&json).unwrap();
        let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
        v["config"]["data"]["cv"]["folds"] = serde_json::from_str(folds).unwrap();
        std::fs::write(&json, serde_json::to_string(&v).unwrap()).unwrap();

        let o = ovk_in(
            &["sweep", "--collect", edited.to_str().unwrap()],
            &dir.join(format!("best{k}")),
        );
        assert_eq!(o.status.code(), Some(2), "{folds}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(json.to_str().unwrap())
                && e.contains("config.data.cv")
                && e.contains(&format!("of {folds} from")),
            "{folds}: {e}"
        );
        // `replay --verify` refuses the same session with the same check.
        let r = ovk_in(
            &["replay", one.to_str().unwrap(), "--verify"],
            &dir.join("r"),
        );
        assert_eq!(r.status.code(), Some(2), "{folds}: {}", stderr(&r));
        assert!(
            stderr(&r).contains(&format!(" of {folds} from")),
            "{}",
            stderr(&r)
        );
    }
}
