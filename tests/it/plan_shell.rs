//! `ovk sweep --plan` prints commands a POSIX shell reads back as exactly the argv meant: each
//! line of a plan with hostile values (quotes, `$`, backticks, spaces, tabs, a leading dash, a
//! non-UTF-8 store path) is parsed by `sh` and compared word for word; values no line can carry
//! (a newline) are refused with exit 2; and the README's Slurm recipe
//! (`eval "$(sed -n Np jobs.txt)"`) runs none of the commands hidden in the values.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::binary::{self, stderr};

fn plan(cfg: &Path, store: &Path, cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(["sweep", "--config"])
        .arg(cfg)
        .args(["--cv", "2", "--plan", "--sessions"])
        .arg(store)
        .current_dir(cwd)
        .output()
        .expect("running ovk")
}

/// The words `sh` makes of `line`, as `eval` in the Slurm recipe would.
fn words_of(line: &[u8], cwd: &Path) -> Vec<Vec<u8>> {
    let mut script = b"set -- ".to_vec();
    script.extend_from_slice(line);
    script.extend_from_slice(b"\nfor a; do printf '%s\\0' \"$a\"; done");
    let o = Command::new("sh")
        .arg("-c")
        .arg(OsString::from_vec(script))
        .current_dir(cwd)
        .output()
        .expect("running sh");
    assert!(o.status.success(), "sh failed on {line:?}: {}", stderr(&o));
    let mut w: Vec<Vec<u8>> = o.stdout.split(|&b| b == 0).map(<[u8]>::to_vec).collect();
    assert_eq!(w.pop(), Some(Vec::new()), "argv ends with a NUL");
    w
}

/// `s` as a TOML basic string (control characters as `\uXXXX`).
fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

#[test]
fn every_plan_line_is_one_shell_line_of_exactly_the_intended_words() {
    let dir = binary::temp_dir("plan-shell", "words", true);
    // A store whose path holds a quote, a space and a byte that is not UTF-8.
    let mut store = dir.as_os_str().as_bytes().to_vec();
    store.extend_from_slice(b"/it's a store \xff");
    let store = PathBuf::from(OsString::from_vec(store));
    let targets = [
        "-x",
        "it's $HOME `touch X` $(touch X) ; touch X",
        "a b\tc\r\u{1b}[31m",
        "ü\\'\"",
    ];
    let features = ["\"q\"", "back\\slash", "*", "~user"];
    let toml_list = |v: &[&str]| {
        let quoted: Vec<String> = v.iter().map(|s| toml_string(s)).collect();
        format!("[{}]", quoted.join(", "))
    };
    let data = "data dir/$(touch X) 'x'.csv";
    let cfg = dir.join("exp.toml");
    std::fs::write(
        &cfg,
        format!(
            "data = {}\nmethod = \"krr\"\ntargets = {}\nfeatures = {}\nlambda = [0.5, 1e-3]\n",
            toml_string(data),
            toml_list(&targets),
            toml_list(&features)
        ),
    )
    .unwrap();
    let o = plan(&cfg, &store, &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<&[u8]> = o
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(lines.len(), 4, "2 configurations × 2 folds");
    for (n, line) in lines.iter().enumerate() {
        let (c, f) = (n / 2, n % 2);
        let lambda = ["0.5", "0.001"][c];
        let mut want: Vec<Vec<u8>> = [
            "ovk",
            "run",
            "--data",
            data,
            "--features",
            &features.join(","),
            "--lambda",
            lambda,
            "--method",
            "krr",
        ]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
        // A value starting with a dash is joined to its flag, so clap cannot take it for one.
        want.push(format!("--targets={}", targets.join(",")).into_bytes());
        for w in ["--cv-folds", "2", "--cv-fold", &f.to_string(), "--name"] {
            want.push(w.as_bytes().to_vec());
        }
        want.push(format!("sweep-c{c}-f{f}").into_bytes());
        want.push(b"--sessions".to_vec());
        want.push(store.as_os_str().as_bytes().to_vec());
        assert_eq!(
            words_of(line, &dir),
            want,
            "line {n}: {}",
            String::from_utf8_lossy(line)
        );
    }

    // The README's Slurm recipe, with `ovk` a function that does nothing: no command hidden in
    // a value runs (no file X, nothing new in the folder).
    let work = dir.join("slurm");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("jobs.txt"), &o.stdout).unwrap();
    let before = entries(&work);
    for n in 1..=lines.len() {
        let r = Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ovk() {{ printf '%s\\n' \"$#\"; }}; eval \"$(sed -n {n}p jobs.txt)\""
            ))
            .current_dir(&work)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", stderr(&r));
        // `run`, 9 words of options and values, and 8 of fold, name and store.
        assert_eq!(String::from_utf8_lossy(&r.stdout).trim(), "18");
    }
    assert_eq!(entries(&work), before);
    assert!(!dir.join("X").exists());
}

#[test]
fn a_value_holding_a_newline_is_refused_and_nothing_is_printed() {
    let dir = binary::temp_dir("plan-shell", "newline", true);
    let store = dir.join("store");
    let cases = [
        (
            "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\ntargets = [\"y\\ntouch X #\"]\nlambda = [0.5, 1.0]\n",
            "'targets' holds a newline",
        ),
        (
            "data = \"d\\ntouch X #.csv\"\nmethod = \"krr\"\nlambda = [0.5, 1.0]\n",
            "'data' holds a newline",
        ),
        (
            "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\nfeatures = [\"Weight\\ntouch X\"]\nlambda = [0.5, 1.0]\n",
            "'features' holds a newline",
        ),
        (
            "data = \"datasets/linnerud.csv\"\nmethod = \"krr\"\ntargets = [\"a\\u0000b\"]\nlambda = [0.5, 1.0]\n",
            "'targets' holds a NUL byte",
        ),
    ];
    for (i, (text, needle)) in cases.iter().enumerate() {
        let cfg = dir.join(format!("exp{i}.toml"));
        std::fs::write(&cfg, text).unwrap();
        let o = plan(&cfg, &store, &binary::root());
        assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{text}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{text}: printed {:?}", o.stdout);
        // The recipe on what was printed (nothing) runs nothing.
        let jobs = dir.join("jobs.txt");
        std::fs::write(&jobs, &o.stdout).unwrap();
        let r = Command::new("sh")
            .arg("-c")
            .arg("eval \"$(sed -n 1p jobs.txt)\"")
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(r.status.success());
        assert!(!dir.join("X").exists());
    }
}
