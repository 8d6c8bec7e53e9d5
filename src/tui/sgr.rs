//! The 16 ANSI colours as the plain codes every terminal knows. crossterm writes even the 16
//! named colours as 256-colour codes (`ESC[38;5;1m`), which a terminal announcing itself as
//! `TERM=xterm` (or `screen`, `linux`, `vt100`) may not understand; there each such code is
//! rewritten to its classic form (`ESC[31m`). A frame is buffered until ratatui flushes it,
//! so a code is never split across writes.

use std::io::{self, Write};

/// Whether the terminal needs the classic 16-colour codes: it claims neither true colour
/// (`COLORTERM`) nor 256 colours (`TERM=*-256color`, `*-direct`).
pub fn needs_classic_codes(colorterm: Option<&str>, term: Option<&str>) -> bool {
    let ct = colorterm.unwrap_or("").to_ascii_lowercase();
    if ct == "truecolor" || ct == "24bit" {
        return false;
    }
    let term = term.unwrap_or("").to_ascii_lowercase();
    !(term.contains("256color") || term.contains("direct"))
}

/// A writer that rewrites 256-colour codes below 16 into classic SGR codes when `rewrite`.
pub struct Classic<W: Write> {
    inner: W,
    buf: Vec<u8>,
    rewrite: bool,
}

impl<W: Write> Classic<W> {
    pub fn new(inner: W, rewrite: bool) -> Self {
        Classic {
            inner,
            buf: Vec::new(),
            rewrite,
        }
    }
}

impl<W: Write> Write for Classic<W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        if !self.rewrite {
            return self.inner.write(b);
        }
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let out = rewrite(&self.buf);
            self.buf.clear();
            self.inner.write_all(&out)?;
        }
        self.inner.flush()
    }
}

/// Every `ESC[…m` whose parameters hold `38;5;n` / `48;5;n` with n < 16 gets the classic
/// code (30–37, 90–97 / 40–47, 100–107); an underline colour (`58;5;n`), which such terminals
/// lack, is dropped. Everything else passes unchanged.
pub fn rewrite(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'[') {
            let start = i + 2;
            let mut end = start;
            while end < bytes.len() && (bytes[end].is_ascii_digit() || bytes[end] == b';') {
                end += 1;
            }
            if end < bytes.len() && bytes[end] == b'm' {
                let params = std::str::from_utf8(&bytes[start..end]).unwrap_or("");
                out.extend_from_slice(b"\x1b[");
                out.extend_from_slice(classic(params).as_bytes());
                out.push(b'm');
                i = end + 1;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    out
}

fn classic(params: &str) -> String {
    let p: Vec<&str> = params.split(';').collect();
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < p.len() {
        let indexed = p.get(k + 1) == Some(&"5");
        let n = p.get(k + 2).and_then(|n| n.parse::<u8>().ok());
        match (p[k], indexed, n) {
            ("38", true, Some(n)) if n < 16 => {
                out.push(if n < 8 { 30 + n } else { 90 + n - 8 }.to_string());
                k += 3;
            }
            ("48", true, Some(n)) if n < 16 => {
                out.push(if n < 8 { 40 + n } else { 100 + n - 8 }.to_string());
                k += 3;
            }
            ("58", true, Some(_)) => k += 3,
            (x, _, _) => {
                out.push(x.to_string());
                k += 1;
            }
        }
    }
    if out.is_empty() {
        "0".into()
    } else {
        out.join(";")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexed_colours_below_16_become_classic_codes() {
        assert_eq!(rewrite(b"\x1b[38;5;1mred"), b"\x1b[31mred");
        assert_eq!(rewrite(b"\x1b[38;5;8;48;5;12mx"), b"\x1b[90;104mx");
        assert_eq!(rewrite(b"\x1b[1;38;5;6m"), b"\x1b[1;36m");
        // True colour, 256-colour codes above 15, cursor moves and text pass unchanged.
        assert_eq!(rewrite(b"\x1b[38;2;1;2;3m"), b"\x1b[38;2;1;2;3m");
        assert_eq!(rewrite(b"\x1b[38;5;200m"), b"\x1b[38;5;200m");
        assert_eq!(rewrite(b"\x1b[3;4Hab\x1b[0m"), b"\x1b[3;4Hab\x1b[0m");
        assert_eq!(rewrite(b"\x1b[58;5;3m"), b"\x1b[0m");
    }

    #[test]
    fn a_code_split_across_writes_is_rewritten_at_flush() {
        let mut w = Classic::new(Vec::new(), true);
        w.write_all(b"\x1b[38;5;").unwrap();
        w.write_all(b"2m").unwrap();
        w.flush().unwrap();
        assert_eq!(w.inner, b"\x1b[32m");
        let mut w = Classic::new(Vec::new(), false);
        w.write_all(b"\x1b[38;5;2m").unwrap();
        assert_eq!(w.inner, b"\x1b[38;5;2m");
    }

    #[test]
    fn only_plain_terminals_need_classic_codes() {
        assert!(needs_classic_codes(None, Some("xterm")));
        assert!(needs_classic_codes(None, Some("screen")));
        assert!(!needs_classic_codes(None, Some("xterm-256color")));
        assert!(!needs_classic_codes(Some("truecolor"), Some("xterm")));
        assert!(needs_classic_codes(None, None));
    }
}
