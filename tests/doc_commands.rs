//! Every `ovk …` or `cargo run --release -- …` command quoted in README.md, datasets/README.md
//! and docs/*.md runs against the real binary, so a quoted command cannot rot: an unknown
//! subcommand or flag fails here. Each is run in `--help` form (clap still rejects an unknown
//! subcommand or flag before it prints help); the cheap and safe ones — `sessions`, and `run`
//! on a bundled file — also run as written, against a temporary session store.
//!
//! Extraction: fenced shell blocks (continuation lines ending in `\` joined, `# comments`
//! and anything after a pipe or redirection dropped) and inline code spans (also when a
//! paragraph wraps them). `<placeholders>`, ALL-CAPS words (`PATH`, `M1,M2`) and `…` stand for
//! a value the reader chooses: they become `1`, and such a command runs in `--help` form only.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A command found in a document.
#[derive(Debug, Clone, PartialEq)]
struct Quoted {
    /// `file:line` of its first line.
    origin: String,
    /// The arguments after `ovk` (or after `cargo run --release --`).
    args: Vec<String>,
    /// Some argument was a placeholder (replaced by `1`).
    placeholder: bool,
}

/// Longest a command run as written may take (release build; the slowest is a digits OKL fit).
const AS_IS_TIMEOUT: Duration = Duration::from_secs(300);

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// An empty temporary folder unique to this test process.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ovk-doc-commands-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("creating a temp dir");
    d
}

fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md"), root().join("datasets/README.md")];
    let mut in_docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    in_docs.sort();
    docs.extend(in_docs);
    docs
}

/// Shell-like words: single and double quotes group, a backslash escapes the next character.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut started = false;
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    started = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if started {
                    out.push(std::mem::take(&mut cur));
                    started = false;
                }
            }
            (None, c) => {
                cur.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(cur);
    }
    out
}

/// Drop a trailing `# comment` (a `#` at the start of a word, outside quotes).
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && prev_space => return &line[..i],
            None => {}
        }
        prev_space = c.is_whitespace();
    }
    line
}

fn is_placeholder(w: &str) -> bool {
    let caps = !w.is_empty()
        && w.split(',').all(|part| {
            let mut cs = part.chars();
            cs.next().is_some_and(|c| c.is_ascii_uppercase())
                && cs.all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        });
    caps || (w.contains('<') && w.contains('>')) || w.contains('…') || w.contains("...")
}

/// The ovk arguments of one shell line, or None when the line does not run ovk.
fn parse_command(line: &str, origin: String) -> Option<Quoted> {
    let line = strip_comment(line.trim().trim_start_matches("$ "));
    let mut ws = words(line);
    // Leading environment assignments (`OVK_THREADS=2 ovk …`).
    while ws.first().is_some_and(|w| {
        w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_')
        })
    }) {
        ws.remove(0);
    }
    let rest: Vec<String> = match ws.first().map(String::as_str) {
        Some("ovk") => ws[1..].to_vec(),
        Some("cargo") if ws.len() >= 3 && ws[1] == "run" && ws[2] == "--release" => {
            let after = &ws[3..];
            match after.first().map(String::as_str) {
                Some("--") => after[1..].to_vec(),
                None => Vec::new(),
                // `cargo run --release --bin …` or other cargo flags: not a quoted ovk command.
                Some(_) => return None,
            }
        }
        _ => return None,
    };
    let shell_ops = ["|", "||", "&&", ";", ">", ">>", "<", "2>", "2>&1", "&"];
    let mut args = Vec::new();
    let mut placeholder = false;
    for w in rest {
        if shell_ops.contains(&w.as_str()) || w.starts_with('>') || w.starts_with("2>") {
            break;
        }
        if is_placeholder(&w) {
            placeholder = true;
            args.push("1".to_string());
        } else {
            args.push(w);
        }
    }
    Some(Quoted {
        origin,
        args,
        placeholder,
    })
}

/// Inline code spans of a paragraph (single or double backticks).
fn code_spans(text: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'`' {
            i += 1;
            continue;
        }
        let ticks = b[i..].iter().take_while(|&&c| c == b'`').count();
        let fence = &text[i..i + ticks];
        let body = i + ticks;
        match text[body..].find(fence) {
            Some(end) => {
                spans.push(text[body..body + end].trim().to_string());
                i = body + end + ticks;
            }
            None => break,
        }
    }
    spans
}

/// The commands in the inline code spans of a paragraph (its lines joined, so a span may wrap).
fn flush_paragraph(paragraph: &mut Vec<(usize, &str)>, found: &mut Vec<Quoted>, file: &str) {
    if let Some(&(first, _)) = paragraph.first() {
        let joined: Vec<&str> = paragraph.iter().map(|(_, l)| *l).collect();
        for span in code_spans(&joined.join(" ")) {
            if let Some(q) = parse_command(&span, format!("{file}:{}", first + 1)) {
                found.push(q);
            }
        }
    }
    paragraph.clear();
}

/// Every ovk command quoted in one markdown text.
fn extract(text: &str, file: &str) -> Vec<Quoted> {
    let mut found = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    let mut paragraph: Vec<(usize, &str)> = Vec::new();
    let flush = |paragraph: &mut Vec<(usize, &str)>, found: &mut Vec<Quoted>| {
        flush_paragraph(paragraph, found, file)
    };
    while i < lines.len() {
        let line = lines[i];
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            flush(&mut paragraph, &mut found);
            let fence = &t[..3];
            let lang = t[3..].trim().to_ascii_lowercase();
            let shell = matches!(lang.as_str(), "" | "sh" | "bash" | "shell" | "console");
            i += 1;
            while i < lines.len() && !lines[i].trim_start().starts_with(fence) {
                let start = i;
                let mut logical = lines[i].to_string();
                while logical.trim_end().ends_with('\\') && i + 1 < lines.len() {
                    let kept = logical.trim_end();
                    logical = format!("{} {}", &kept[..kept.len() - 1], lines[i + 1].trim());
                    i += 1;
                }
                if shell {
                    if let Some(q) = parse_command(&logical, format!("{file}:{}", start + 1)) {
                        found.push(q);
                    }
                }
                i += 1;
            }
            i += 1; // the closing fence
            continue;
        }
        if t.is_empty() || t.starts_with('#') || t.starts_with('|') {
            flush(&mut paragraph, &mut found);
            if t.starts_with('|') {
                paragraph.push((i, line));
                flush(&mut paragraph, &mut found);
            }
        } else {
            paragraph.push((i, line));
        }
        i += 1;
    }
    flush(&mut paragraph, &mut found);
    found
}

fn ovk_cmd(args: &[String], store: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ovk"));
    c.args(args)
        .current_dir(root())
        .env("OVK_SESSIONS", store)
        .env("NO_COLOR", "1")
        .stdin(Stdio::null());
    c
}

/// The first line of clap's help that names the usage.
fn usage_line(help: &str) -> String {
    help.lines()
        .find(|l| l.trim_start().starts_with("Usage:"))
        .unwrap_or("")
        .to_string()
}

/// Check one command in `--help` form; an error message when it is wrong.
fn check_help_form(q: &Quoted, store: &Path) -> Result<(), String> {
    let mut args = q.args.clone();
    args.push("--help".into());
    let out = ovk_cmd(&args, store).output().map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() || !text.contains("Usage:") {
        return Err(format!(
            "`ovk {}` in --help form failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    // `ovk WORD` with an unknown WORD would parse as the workbench's PATH: a first word that is
    // not an option must be a subcommand (its help's usage names it), a placeholder, or a path.
    let first = q.args.iter().position(|a| !a.starts_with('-'));
    if let Some(k) = first {
        let word = &q.args[k];
        let takes_value = k > 0 && q.args[k - 1] == "--sessions";
        let usage = usage_line(&text);
        let is_subcommand = usage.contains(&format!("ovk {word}"));
        if !takes_value && !is_subcommand && !q.placeholder && !root().join(word).exists() {
            return Err(format!(
                "`ovk {}`: '{word}' is neither a subcommand nor an existing path ({usage})",
                q.args.join(" ")
            ));
        }
    }
    Ok(())
}

/// Commands cheap and safe enough to run as written: `sessions`, and `run` on existing files.
fn runs_as_is(q: &Quoted) -> bool {
    if q.placeholder || q.args.iter().any(|a| a == "--help" || a == "-h") {
        return false;
    }
    match q.args.first().map(String::as_str) {
        Some("sessions") => true,
        Some("run") => {
            let has_data = q.args.iter().any(|a| a == "--data" || a == "--config");
            let files_exist = q.args.windows(2).all(|w| {
                !matches!(w[0].as_str(), "--data" | "--config" | "--candidates")
                    || root().join(&w[1]).is_file()
            });
            has_data && files_exist
        }
        _ => false,
    }
}

fn check_as_is(q: &Quoted, store: &Path, n: usize) -> Result<(), String> {
    let log = store.join(format!("as-is-{n}.log"));
    let err = File::create(&log).map_err(|e| e.to_string())?;
    let out = err.try_clone().map_err(|e| e.to_string())?;
    let mut child = ovk_cmd(&q.args, store)
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > AS_IS_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "`ovk {}` did not finish in {AS_IS_TIMEOUT:?}",
                q.args.join(" ")
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    if status.success() {
        Ok(())
    } else {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = text.lines().rev().take(8).collect();
        Err(format!(
            "`ovk {}` as written failed ({status}): {}",
            q.args.join(" "),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ))
    }
}

fn all_quoted() -> Vec<Quoted> {
    let mut all: Vec<Quoted> = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("reading a document");
        let name = doc
            .strip_prefix(root())
            .unwrap_or(&doc)
            .display()
            .to_string();
        for q in extract(&text, &name) {
            if !all.iter().any(|a| a.args == q.args) {
                all.push(q);
            }
        }
    }
    all
}

#[test]
fn every_quoted_command_runs() {
    let quoted = all_quoted();
    // The README alone quotes the tour, the sweep and the dataset commands.
    assert!(quoted.len() >= 15, "only {} commands found", quoted.len());
    let store = temp_dir("store");
    let mut failures = Vec::new();
    let mut ran = 0;
    for (n, q) in quoted.iter().enumerate() {
        if let Err(e) = check_help_form(q, &store) {
            failures.push(format!("{}: {e}", q.origin));
            continue;
        }
        let as_is = runs_as_is(q);
        println!(
            "{}: ovk {} ({})",
            q.origin,
            q.args.join(" "),
            if as_is {
                "--help form, then as written"
            } else {
                "--help form"
            }
        );
        if as_is {
            ran += 1;
            if let Err(e) = check_as_is(q, &store, n) {
                failures.push(format!("{}: {e}", q.origin));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&store);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ran >= 2, "only {ran} commands ran as written");
}

#[test]
fn the_checks_catch_an_unknown_subcommand_or_flag() {
    let store = temp_dir("bad");
    let bad = [
        "ovk frobnicate",
        "ovk frobnicate --data datasets/iris.csv",
        "cargo run --release -- run --no-such-flag 1",
        "ovk bench nonsense",
        "ovk sweep --config exp.toml --cross-validate 3",
    ];
    for line in bad {
        let q = parse_command(line, "test".into()).expect("an ovk command");
        assert!(check_help_form(&q, &store).is_err(), "`{line}` passed");
    }
    let good = parse_command(
        "ovk run --data datasets/iris.csv --method krr",
        "test".into(),
    )
    .expect("an ovk command");
    assert_eq!(check_help_form(&good, &store), Ok(()));
    let _ = std::fs::remove_dir_all(&store);
}

#[test]
fn extraction_handles_fences_continuations_placeholders_and_spans() {
    let md = "Intro with `ovk sessions` and a span that\nwraps: `ovk replay\n<id> --print`.\n\n\
              ```toml\novk = \"not a command\"\n```\n\n\
              ```sh\n# a comment\ncargo run --release -- run --data d.csv \\\n    --method okl   # trailing\n\
              ovk sweep --plan --sessions DIR > jobs.txt\nOVK_THREADS=2 ovk gen gp-mix --outputs M\n\
              cargo run --release\ncargo bench --bench okl\n```\n\n| `ovk export <id>` | x |\n";
    let got: Vec<(Vec<String>, bool)> = extract(md, "t.md")
        .into_iter()
        .map(|q| (q.args, q.placeholder))
        .collect();
    let v = |s: &str| -> Vec<String> { s.split_whitespace().map(String::from).collect() };
    assert_eq!(
        got,
        vec![
            (v("sessions"), false),
            (v("replay 1 --print"), true),
            (v("run --data d.csv --method okl"), false),
            (v("sweep --plan --sessions 1"), true),
            (v("gen gp-mix --outputs 1"), true),
            (vec![], false),
            (v("export 1"), true),
        ]
    );
}
