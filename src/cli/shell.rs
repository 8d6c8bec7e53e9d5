//! Words for a POSIX shell: `ovk sweep --plan` prints commands that `sh`, `eval "$(sed -n Np
//! jobs.txt)"` or GNU parallel read back as exactly the argv meant, whatever the values hold.
//!
//! A word is left bare when it is made of characters no shell treats specially, else put in
//! single quotes (inside which a POSIX shell takes every byte literally but `'`, written
//! `'\''`). A newline cannot be carried that way on one line, and `$'\n'` is not read by dash
//! (Debian's `/bin/sh`, which `sbatch --wrap` and `sh -c` run): it would silently become the
//! two characters `\n`. So a value holding a newline — or a NUL, which no argv can hold — is
//! refused instead of printed.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Why a value cannot be one word of a one-line command.
pub fn unprintable(bytes: &[u8]) -> Option<&'static str> {
    if bytes.contains(&b'\n') {
        Some("a newline")
    } else if bytes.contains(&0) {
        Some("a NUL byte")
    } else {
        None
    }
}

/// `bytes` as one shell word on one line; `None` when `unprintable` says it cannot be.
pub fn quote(bytes: &[u8]) -> Option<Vec<u8>> {
    if unprintable(bytes).is_some() {
        return None;
    }
    let plain = |b: &u8| b.is_ascii_alphanumeric() || b"-_./,=:+@%".contains(b);
    if !bytes.is_empty() && bytes.iter().all(plain) {
        return Some(bytes.to_vec());
    }
    let mut out = Vec::with_capacity(bytes.len() + 2);
    out.push(b'\'');
    for &b in bytes {
        if b == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(b);
        }
    }
    out.push(b'\'');
    Some(out)
}

/// A path as one shell word, byte for byte (a path need not be UTF-8).
pub fn quote_path(p: &std::path::Path) -> Option<Vec<u8>> {
    quote(OsStr::as_bytes(p.as_os_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_stay_bare_and_the_rest_is_single_quoted() {
        assert_eq!(quote(b"lambda").unwrap(), b"lambda");
        assert_eq!(quote(b"").unwrap(), b"''");
        assert_eq!(quote(b"a b").unwrap(), b"'a b'");
        assert_eq!(quote(b"it's").unwrap(), b"'it'\\''s'");
        assert_eq!(quote(b"$(x)`y`").unwrap(), b"'$(x)`y`'");
        assert_eq!(quote(b"\xff\t\r").unwrap(), b"'\xff\t\r'");
    }

    #[test]
    fn a_newline_or_nul_has_no_one_line_word() {
        assert_eq!(quote(b"y\ntouch X #"), None);
        assert_eq!(unprintable(b"y\ntouch X #"), Some("a newline"));
        assert_eq!(unprintable(b"a\0b"), Some("a NUL byte"));
    }
}
