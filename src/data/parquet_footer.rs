//! A Parquet file's footer checked before polars reads it. The footer is Thrift (compact
//! protocol); polars sizes its buffers from the list and string lengths the footer claims, so a
//! 8 KB file claiming a list of 10¹⁰ entries made it ask for 88 GB and abort — an allocation
//! failure cannot be caught. Every length is checked here against the bytes that remain; no
//! schema is needed because the compact protocol tags every field with its type.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::input_at;
use crate::Result;

/// Deeper nesting than any real footer (schema elements are a flat list).
const MAX_DEPTH: usize = 64;

/// Refuse a file whose Parquet footer is missing, truncated, or claims more than it holds.
pub(crate) fn check_parquet_footer(path: &Path) -> Result<()> {
    let corrupt = |why: String| {
        input_at(
            path,
            format!("cannot be read as Parquet: the file is corrupt ({why})"),
        )
    };
    let io = |e: std::io::Error| crate::OvkError::io_path(path, e);
    let mut f = std::fs::File::open(path).map_err(io)?;
    let size = f.metadata().map_err(io)?.len();
    if size < 12 {
        return Err(corrupt(format!(
            "{size} bytes is too short for a Parquet file"
        )));
    }
    let mut tail = [0u8; 8];
    f.seek(SeekFrom::End(-8)).map_err(io)?;
    f.read_exact(&mut tail).map_err(io)?;
    if &tail[4..] != b"PAR1" {
        return Err(corrupt(
            "it does not end with the Parquet magic `PAR1`".into(),
        ));
    }
    let footer_len = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]) as u64;
    if footer_len + 12 > size {
        return Err(corrupt(format!(
            "its footer claims {footer_len} bytes but the file has {size}"
        )));
    }
    let mut footer = vec![0u8; footer_len as usize];
    f.seek(SeekFrom::End(-8 - footer_len as i64)).map_err(io)?;
    f.read_exact(&mut footer).map_err(io)?;
    let mut r = Compact {
        buf: &footer,
        pos: 0,
    };
    r.skip_struct(0)
        .map_err(|why| corrupt(format!("its footer {why}")))
}

/// A reader of Thrift's compact protocol that only walks and checks.
struct Compact<'a> {
    buf: &'a [u8],
    pos: usize,
}

type Walk = std::result::Result<(), String>;

impl Compact<'_> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn byte(&mut self) -> std::result::Result<u8, String> {
        let b = *self
            .buf
            .get(self.pos)
            .ok_or_else(|| format!("ends early (at byte {})", self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    fn varint(&mut self) -> std::result::Result<u64, String> {
        let mut v = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(format!("has a malformed number at byte {}", self.pos))
    }

    /// A claimed count of `n` items of at least one byte each must fit in what remains.
    fn claim(&self, n: u64, what: &str) -> Walk {
        if n > self.remaining() as u64 {
            return Err(format!(
                "claims {what} {n} with {} bytes left",
                self.remaining()
            ));
        }
        Ok(())
    }

    fn skip(&mut self, n: u64) -> Walk {
        self.claim(n, "a string of length")?;
        self.pos += n as usize;
        Ok(())
    }

    fn skip_struct(&mut self, depth: usize) -> Walk {
        if depth > MAX_DEPTH {
            return Err("is nested too deeply".into());
        }
        loop {
            let header = self.byte()?;
            let kind = header & 0x0f;
            if kind == 0 {
                return Ok(()); // stop field
            }
            if header >> 4 == 0 {
                self.varint()?; // long-form field id
            }
            self.skip_value(kind, depth)?;
        }
    }

    /// Skip one value of compact type `kind` (a struct field's type or a list's element type).
    fn skip_value(&mut self, kind: u8, depth: usize) -> Walk {
        match kind {
            1 | 2 => Ok(()),                    // bool in a field header
            3 => self.byte().map(|_| ()),       // i8 (and bool as a list element)
            4..=6 => self.varint().map(|_| ()), // i16, i32, i64
            7 => self.skip(8),                  // double
            8 => {
                let n = self.varint()?; // binary / string
                self.skip(n)
            }
            9 | 10 => {
                let h = self.byte()?; // list / set
                let elem = h & 0x0f;
                let n = match h >> 4 {
                    15 => self.varint()?,
                    short => u64::from(short),
                };
                self.claim(n, "a list of length")?;
                for _ in 0..n {
                    // A bool list element is one byte (type 1 or 2 in the list header).
                    let k = if elem == 1 || elem == 2 { 3 } else { elem };
                    self.skip_value(k, depth + 1)?;
                }
                Ok(())
            }
            11 => {
                let n = self.varint()?; // map
                if n == 0 {
                    return Ok(());
                }
                self.claim(n, "a map of length")?;
                let kv = self.byte()?;
                for _ in 0..n {
                    self.skip_value(kv >> 4, depth + 1)?;
                    self.skip_value(kv & 0x0f, depth + 1)?;
                }
                Ok(())
            }
            12 => self.skip_struct(depth + 1),
            other => Err(format!(
                "has an unknown field type {other} at byte {}",
                self.pos
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(bytes: &[u8]) -> Walk {
        Compact { buf: bytes, pos: 0 }.skip_struct(0)
    }

    #[test]
    fn a_well_formed_struct_walks() {
        // field 1: i32 = 5; field 2: string "ab"; field 3: list<i32> [1, 2]; stop.
        let bytes = [
            0x15, 0x0a, 0x18, 0x02, b'a', b'b', 0x19, 0x25, 0x02, 0x04, 0x00,
        ];
        assert_eq!(walk(&bytes), Ok(()));
    }

    #[test]
    fn a_list_claiming_more_than_the_bytes_left_is_refused() {
        // field 1: list<i64> of 10¹⁰ entries (long form), in a 9-byte footer.
        let mut bytes = vec![0x19, 0xf6];
        let mut n: u64 = 10_000_000_000;
        while n >= 0x80 {
            bytes.push((n as u8) | 0x80);
            n >>= 7;
        }
        bytes.push(n as u8);
        let e = walk(&bytes).unwrap_err();
        assert!(e.contains("claims a list of length 10000000000"), "{e}");
    }

    #[test]
    fn truncated_and_runaway_inputs_are_refused() {
        assert!(walk(&[0x18, 0x05, b'a'])
            .unwrap_err()
            .contains("string of length 5"));
        assert!(walk(&[0x15]).unwrap_err().contains("ends early"));
        assert!(walk(&[0x1c; 200])
            .unwrap_err()
            .contains("nested too deeply"));
        assert!(walk(&[0x1d]).unwrap_err().contains("unknown field type 13"));
    }
}
