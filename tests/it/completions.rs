//! Issue 37: `ovk completions SHELL` prints a script the shell accepts, naming the commands and
//! `ovk run`'s options; `ovk man` prints a man page; an unknown shell is a usage error (exit 2).

use std::process::Command;

use crate::common::binary::{stderr, stdout};

fn ovk(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ovk"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn bash_accepts_the_completion_script() {
    let out = ovk(&["completions", "bash"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let script = stdout(&out);
    for word in ["sweep", "replay", "--kernel", "--data", "--lambda"] {
        assert!(script.contains(word), "`{word}` not completed");
    }
    let dir = crate::common::binary::temp_dir("completions", "bash", true);
    let file = dir.join("ovk.bash");
    std::fs::write(&file, &script).unwrap();
    let check = Command::new("bash").arg("-n").arg(&file).output().unwrap();
    assert!(check.status.success(), "bash -n: {}", stderr(&check));
    // Sourced, it registers a completion for `ovk`.
    let sourced = Command::new("bash")
        .arg("-c")
        .arg(format!("source '{}' && complete -p ovk", file.display()))
        .output()
        .unwrap();
    assert!(stdout(&sourced).contains("ovk"), "{}", stderr(&sourced));
}

#[test]
fn zsh_fish_and_the_man_page_are_printed() {
    for (shell, want) in [("zsh", "#compdef ovk"), ("fish", "complete -c ovk")] {
        let out = ovk(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        assert!(stdout(&out).contains(want), "{shell}");
    }
    let man = ovk(&["man"]);
    assert_eq!(man.status.code(), Some(0), "{}", stderr(&man));
    let page = stdout(&man);
    assert!(
        page.starts_with(".ie") || page.contains(".TH ovk"),
        "{}",
        &page[..200.min(page.len())]
    );
    assert!(
        page.contains("ovk\\-run") || page.contains("ovk-run"),
        "run's page"
    );
    let bad = ovk(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2));
}
