//! A `.npy` header's claims checked against the file's size before ndarray-npy reads it:
//! the reader allocates the header length, then the element count, that the file claims, so a
//! corrupt or hostile header (`'shape': (1000000, 1000000)` in a 100-byte file) would ask for
//! terabytes instead of being refused.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

/// `Err(why)` when the header claims more bytes than the file holds. Headers too garbled to
/// read are left to ndarray-npy, which refuses them without allocating much.
pub(crate) fn check(path: &Path) -> std::result::Result<(), String> {
    let Ok(mut f) = File::open(path) else {
        return Ok(());
    };
    let Ok(file_len) = f.metadata().map(|m| m.len()) else {
        return Ok(());
    };
    let mut prefix = [0u8; 12];
    let got = read_up_to(&mut f, &mut prefix);
    if got < 10 || &prefix[..MAGIC.len()] != MAGIC {
        return Ok(());
    }
    // Format 1.0 stores the header length in 2 bytes, 2.0 and 3.0 in 4.
    let (header_len, start) = match prefix[6] {
        1 => (u64::from(u16::from_le_bytes([prefix[8], prefix[9]])), 10u64),
        2 | 3 if got == 12 => (
            u64::from(u32::from_le_bytes([
                prefix[8], prefix[9], prefix[10], prefix[11],
            ])),
            12,
        ),
        _ => return Ok(()),
    };
    let data_len = match file_len.checked_sub(start + header_len) {
        Some(d) => d,
        None => {
            return Err(format!(
                "the header claims {header_len} bytes but the file holds {file_len} in all \
                 (truncated or not a .npy file)"
            ))
        }
    };
    let mut header = vec![0u8; header_len as usize];
    if f.seek(SeekFrom::Start(start)).is_err() || f.read_exact(&mut header).is_err() {
        return Ok(());
    }
    let header = String::from_utf8_lossy(&header);
    let item = item_size(&header).unwrap_or(1);
    // A key given twice is judged by its largest claim, whichever one the reader keeps.
    for dims in shapes(&header) {
        let shape: Vec<String> = dims.iter().map(u64::to_string).collect();
        let shape = shape.join(", ");
        // ndarray also refuses (by panicking) a shape whose non-zero axes multiply past
        // isize::MAX, even when a zero axis makes it empty: `(0, 18446744073709551615)`.
        let addressable = dims
            .iter()
            .try_fold(item, |acc, &d| acc.checked_mul(d.max(1)))
            .is_some_and(|b| b <= isize::MAX as u64);
        if !addressable {
            return Err(format!(
                "the header claims shape ({shape}), larger than any matrix (corrupt header)"
            ));
        }
        let bytes = dims.iter().try_fold(item, |acc, &d| acc.checked_mul(d));
        if bytes.is_none_or(|b| b > data_len) {
            return Err(format!(
                "the header claims shape ({shape}) of {item}-byte values but the file holds only \
                 {data_len} bytes of data (truncated or corrupt)"
            ));
        }
    }
    Ok(())
}

fn read_up_to(f: &mut File, buf: &mut [u8]) -> usize {
    let mut got = 0;
    while got < buf.len() {
        match f.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    got
}

/// Every `'shape': (a, b, …)` in the header dictionary whose entries are whole numbers.
fn shapes(header: &str) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    for (at, _) in header.match_indices("shape") {
        let rest = header[at + "shape".len()..].trim_start_matches(['\'', '"']);
        let Some(rest) = rest.trim_start().strip_prefix(':') else {
            continue;
        };
        let Some(rest) = rest.trim_start().strip_prefix('(') else {
            continue;
        };
        let Some(end) = rest.find(')') else {
            continue;
        };
        let dims: Option<Vec<u64>> = rest[..end]
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse().ok())
            .collect();
        if let Some(dims) = dims {
            out.push(dims);
        }
    }
    out
}

/// The byte size in a simple `'descr': '<f8'` (the digits that end it).
fn item_size(header: &str) -> Option<u64> {
    let at = header.find("descr")?;
    let rest = header[at + "descr".len()..].trim_start_matches(['\'', '"']);
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let inner = &rest[1..];
    let descr = &inner[..inner.find(quote)?];
    let digits: String = descr
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok().filter(|&n| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(header: &str, data: usize) -> Vec<u8> {
        let mut h = header.to_string();
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut b = MAGIC.to_vec();
        b.extend([1, 0]);
        b.extend((h.len() as u16).to_le_bytes());
        b.extend(h.as_bytes());
        b.extend(vec![0u8; data]);
        b
    }

    fn check_bytes(name: &str, bytes: &[u8]) -> std::result::Result<(), String> {
        let p = std::env::temp_dir().join(format!("ovk-npy-claims-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        let r = check(&p);
        std::fs::remove_file(&p).unwrap();
        r
    }

    #[test]
    fn honest_headers_pass() {
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";
        assert_eq!(check_bytes("ok", &npy(h, 48)), Ok(()));
        let empty = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 5), }";
        assert_eq!(check_bytes("empty", &npy(empty, 0)), Ok(()));
    }

    #[test]
    fn a_terabyte_claim_in_a_small_file_is_refused() {
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }";
        let e = check_bytes("tb", &npy(h, 48)).unwrap_err();
        assert!(
            e.contains("(1000000, 1000000)") && e.contains("48 bytes"),
            "{e}"
        );
        // One element short.
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }";
        assert!(check_bytes("short", &npy(h, 47)).is_err());
    }

    #[test]
    fn overflowing_and_duplicated_shapes_are_refused() {
        let h = "{'descr': '<f8', 'shape': (18446744073709551615, 2), }";
        assert!(check_bytes("overflow", &npy(h, 16)).is_err());
        let h = "{'descr': '<f8', 'shape': (1, 2), 'shape': (100000000000, 2), }";
        assert!(check_bytes("twice", &npy(h, 16)).is_err());
        // Empty, yet ndarray cannot describe it (found by tests/prop/session.rs).
        let h = "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 18446744073709551615), }";
        let e = check_bytes("empty-huge", &npy(h, 0)).unwrap_err();
        assert!(e.contains("larger than any matrix"), "{e}");
    }

    #[test]
    fn a_header_longer_than_the_file_is_refused() {
        let mut b = MAGIC.to_vec();
        b.extend([2, 0]);
        b.extend(u32::MAX.to_le_bytes());
        b.extend(b"{'descr'");
        let e = check_bytes("long", &b).unwrap_err();
        assert!(e.contains("4294967295"), "{e}");
    }
}
