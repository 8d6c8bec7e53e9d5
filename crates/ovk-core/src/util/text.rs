//! Text for people: the nearest valid name to a mistyped one, and strings made safe to show
//! on a terminal.

/// The valid key closest to `key` by edit distance, if any is reasonably close.
pub fn nearest<'a>(key: &str, valid: &[&'a str]) -> Option<&'a str> {
    valid
        .iter()
        .map(|v| (edit_distance(key, v), *v))
        .filter(|(d, v)| *d <= (v.len().max(key.len()) / 2).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, v)| v)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != *cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Characters a terminal may act on rather than print: C0 and C1 controls (ESC starts escape
/// sequences, CR rewrites the line), DEL, and the bidirectional overrides and isolates that
/// reorder what follows them.
pub(crate) fn is_unprintable(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// One field for display on one line (a name, a file name, a column): unprintable characters
/// are shown escaped (`\e`, `\n`, `\u{202e}`), never sent to the terminal. The TUI and the CLI
/// both call this on anything read from a session or a file.
pub fn display_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_safe(&mut out, c);
    }
    out
}

/// `display_safe` for a block of lines: newlines are kept, every other unprintable character
/// is escaped.
pub(crate) fn text_safe(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c == '\n' {
            out.push(c);
        } else {
            push_safe(&mut out, c);
        }
    }
    out
}

fn push_safe(out: &mut String, c: char) {
    use std::fmt::Write as _;
    match c {
        '\u{1b}' => out.push_str("\\e"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if is_unprintable(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_escapes_what_a_terminal_would_act_on() {
        assert_eq!(display_safe("a\u{1b}]0;x\u{7}b\r"), "a\\e]0;x\\u{7}b\\r");
        assert_eq!(text_safe("l1\nl2\u{9b}"), "l1\nl2\\u{9b}");
        assert_eq!(display_safe("naïve ü"), "naïve ü");
    }
}
