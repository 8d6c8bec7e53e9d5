//! The engine's messages speak to the command line (`raise --max-iter`, `ovk sweep --cv 3`,
//! `give --views prefixes`); the workbench shows them in its own terms: the Kernel and Method
//! panes' fields carry the flags' names with `_`, and the sweep and the views have keys.

/// Phrases with a workbench equivalent that is not a field name.
const PHRASES: [(&str, &str); 4] = [
    ("`ovk sweep --cv 3`", "a sweep (w on a Kernel pane field)"),
    ("ovk sweep --cv 3", "a sweep (w on a Kernel pane field)"),
    ("`ovk sweep --cv K`", "a sweep (w on a Kernel pane field)"),
    (
        "give --views prefixes or use a dataset whose sidecar names views",
        "put feature columns into named views in the Data pane (Space marks, V makes a view, v \
         groups by name prefix), or load a dataset whose sidecar names views",
    ),
];

/// `msg` with command-line names replaced by the workbench's: the phrases above, then every
/// remaining `--flag-name` by its field name `flag_name`.
pub fn in_workbench_terms(msg: &str) -> String {
    let mut text = msg.to_string();
    for (cli, tui) in PHRASES {
        text = text.replace(cli, tui);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("--") {
        let (before, flag) = rest.split_at(at);
        out.push_str(before);
        let name_len = flag[2..]
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'))
            .unwrap_or(flag.len() - 2);
        let name = &flag[2..2 + name_len];
        if name.starts_with(|c: char| c.is_ascii_lowercase()) {
            out.push_str(&name.replace('-', "_"));
        } else {
            out.push_str("--");
            out.push_str(name);
        }
        rest = &flag[2 + name_len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_become_field_names_and_commands_become_keys() {
        assert_eq!(
            in_workbench_terms("raise --max-iter or use --solver qn"),
            "raise max_iter or use solver qn"
        );
        assert_eq!(
            in_workbench_terms("choose them with `ovk sweep --cv 3`"),
            "choose them with a sweep (w on a Kernel pane field)"
        );
        assert!(in_workbench_terms(
            "mvml needs views: give --views prefixes or use a dataset whose sidecar names views"
        )
        .contains("V makes a view"));
        // Dashes that are not flags stay.
        assert_eq!(in_workbench_terms("a -- b --5"), "a -- b --5");
        assert_eq!(in_workbench_terms("ends with --"), "ends with --");
    }
}
