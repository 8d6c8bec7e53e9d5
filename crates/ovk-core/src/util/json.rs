//! JSON as people read it and files keep it small: objects one key per line, as
//! `serde_json::to_string_pretty` writes them, but an array of numbers, strings or booleans on
//! one line. Pretty-printed, a session's per-output diagnostics put every number on a line of
//! its own (54 000 lines, 1.2 MB for one example session).

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};

/// `value` as indented JSON with scalar arrays kept on one line, ending in a newline.
pub(crate) fn to_readable_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut bytes = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut bytes, Readable::default());
    value.serialize(&mut ser)?;
    bytes.push(b'\n');
    Ok(String::from_utf8(bytes).expect("serde_json writes UTF-8"))
}

/// An open array or object, and whether it is laid out one item per line.
enum Frame {
    /// `block`: an item is an array or object, so every item gets its own line.
    Array {
        block: bool,
    },
    Object {
        keys: bool,
    },
}

/// Writes values as `CompactFormatter` does, and the layout around them itself. An array
/// item's separator waits until the item begins: a scalar gets `, `, a container a new line.
#[derive(Default)]
struct Readable {
    open: Vec<Frame>,
    /// `Some(first)` between `begin_array_value` and the item's first byte.
    pending_item: Option<bool>,
}

impl Readable {
    fn newline<W: ?Sized + Write>(&self, w: &mut W, depth: usize) -> io::Result<()> {
        w.write_all(b"\n")?;
        (0..depth).try_for_each(|_| w.write_all(b"  "))
    }

    /// Before an array item's first byte: its separator, by what the item is.
    fn item<W: ?Sized + Write>(&mut self, w: &mut W, container: bool) -> io::Result<()> {
        let Some(first) = self.pending_item.take() else {
            return Ok(());
        };
        let depth = self.open.len();
        let Some(Frame::Array { block }) = self.open.last_mut() else {
            return Ok(());
        };
        *block |= container;
        if *block {
            if !first {
                w.write_all(b",")?;
            }
            self.newline(w, depth)
        } else if first {
            Ok(())
        } else {
            w.write_all(b", ")
        }
    }
}

macro_rules! scalar {
    ($($name:ident($t:ty)),* $(,)?) => {$(
        fn $name<W: ?Sized + Write>(&mut self, w: &mut W, v: $t) -> io::Result<()> {
            self.item(w, false)?;
            CompactFormatter.$name(w, v)
        }
    )*};
}

impl Formatter for Readable {
    scalar!(
        write_bool(bool),
        write_i8(i8),
        write_i16(i16),
        write_i32(i32),
        write_i64(i64),
        write_i128(i128),
        write_u8(u8),
        write_u16(u16),
        write_u32(u32),
        write_u64(u64),
        write_u128(u128),
        write_f32(f32),
        write_f64(f64),
        write_number_str(&str),
    );

    fn write_null<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.item(w, false)?;
        w.write_all(b"null")
    }

    fn begin_string<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.item(w, false)?;
        w.write_all(b"\"")
    }

    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.item(w, true)?;
        self.open.push(Frame::Array { block: false });
        w.write_all(b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(Frame::Array { block: true }) = self.open.pop() {
            self.newline(w, self.open.len())?;
        }
        w.write_all(b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, _: &mut W, first: bool) -> io::Result<()> {
        self.pending_item = Some(first);
        Ok(())
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.item(w, true)?;
        self.open.push(Frame::Object { keys: false });
        w.write_all(b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        if let Some(Frame::Object { keys: true }) = self.open.pop() {
            self.newline(w, self.open.len())?;
        }
        w.write_all(b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        if let Some(Frame::Object { keys }) = self.open.last_mut() {
            *keys = true;
        }
        if !first {
            w.write_all(b",")?;
        }
        self.newline(w, self.open.len())
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _: &mut W) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    #[test]
    fn scalar_arrays_stay_on_one_line_and_everything_reads_back() {
        let v = json!({
            "name": "a \"b\" [",
            "xs": [1.5, -2e-300, 3, "t", null, true],
            "rows": [[1, 2], [3]],
            "nested": {"empty": {}, "none": [], "flag": true, "nil": null},
            "objs": [{"k": 1}, {}]
        });
        let text = to_readable_json(&v).unwrap();
        assert!(
            text.contains("\"xs\": [1.5, -2e-300, 3, \"t\", null, true]"),
            "{text}"
        );
        assert!(
            text.contains("\"rows\": [\n    [1, 2],\n    [3]\n  ]"),
            "{text}"
        );
        assert!(
            text.contains("\"objs\": [\n    {\n      \"k\": 1\n    },\n    {}\n  ]"),
            "{text}"
        );
        assert!(
            text.contains("\"empty\": {}") && text.contains("\"none\": []"),
            "{text}"
        );
        assert!(
            text.starts_with("{\n  \"") && text.ends_with("\n}\n"),
            "{text}"
        );
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, v);
        // Numbers keep serde_json's shortest round-trip text, so every f64 reads back exactly.
        let x: f64 = 0.1 + 0.2;
        let back: Vec<f64> = serde_json::from_str(&to_readable_json(&[x]).unwrap()).unwrap();
        assert_eq!(back[0].to_bits(), x.to_bits());
    }

    #[test]
    fn objects_read_as_to_string_pretty_writes_them() {
        let v = json!({"a": {"b": 1, "c": "d"}, "e": [{"f": [2, 3]}]});
        let pretty = serde_json::to_string_pretty(&v).unwrap() + "\n";
        let readable = to_readable_json(&v).unwrap();
        assert_eq!(
            readable,
            pretty.replace("[\n        2,\n        3\n      ]", "[2, 3]")
        );
    }
}
