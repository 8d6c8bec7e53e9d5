//! The engine's layering, checked: a module of ovk-core uses only the modules listed before it
//! in `lib.rs` (docs/architecture.md), and the crate depends on no terminal or argument-parsing
//! library. A `use crate::train` in `session`, or `ratatui` in Cargo.toml, fails here.

use std::path::{Path, PathBuf};

/// The layers, lowest first; a module may use its own layer and those below.
const LAYERS: [&[&str]; 9] = [
    &["util", "error"],
    &["linalg"],
    &["kernels"],
    &["data"],
    &["methods"],
    &["metrics", "inspect"],
    &["config"],
    &["session"],
    &["train"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top module a file belongs to (`session` for src/session/store.rs).
fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

/// Every `crate::name` a file's non-test code mentions.
fn crate_paths(text: &str) -> Vec<(usize, String)> {
    let code = text.split("#[cfg(test)]").next().unwrap_or(text);
    let mut found = Vec::new();
    for (i, line) in code.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("");
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            found.push((i + 1, name));
        }
    }
    found
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let mut broken = Vec::new();
    for file in &files {
        let top = top_module(&src, file);
        let Some(own) = layer_of(&top) else {
            assert!(
                top == "lib",
                "{} belongs to no layer of LAYERS",
                file.display()
            );
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (line, used) in crate_paths(&text) {
            if let Some(theirs) = layer_of(&used) {
                if theirs > own {
                    broken.push(format!(
                        "{}:{line}: {top} (layer {}) uses {used} (layer {})",
                        file.strip_prefix(&src).unwrap().display(),
                        own + 1,
                        theirs + 1
                    ));
                }
            }
        }
    }
    assert!(
        broken.is_empty(),
        "layering broken (docs/architecture.md):\n{}",
        broken.join("\n")
    );
}

#[test]
fn every_top_module_is_in_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for line in lib.lines() {
        if let Some(name) = line
            .trim()
            .strip_prefix("pub mod ")
            .or_else(|| line.trim().strip_prefix("mod "))
        {
            let name = name.trim_end_matches(';');
            assert!(
                layer_of(name).is_some(),
                "module {name} is not placed in a layer (tests/layering.rs, docs/architecture.md)"
            );
        }
    }
}

#[test]
fn the_engine_depends_on_no_terminal_or_argument_parser() {
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .unwrap()
        .split("\n[")
        .next()
        .unwrap();
    for faced in ["ratatui", "crossterm", "clap", "signal-hook", "plotters"] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(faced)),
            "ovk-core must not depend on {faced}: it belongs to the ovk crate's faces"
        );
    }
}
