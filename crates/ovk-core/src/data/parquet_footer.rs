//! A Parquet file's footer checked before polars reads it. The footer is Thrift (compact
//! protocol); polars sizes its buffers from the list and string lengths the footer claims, so a
//! 8 KB file claiming a list of 10¹⁰ entries made it ask for 88 GB and abort — an allocation
//! failure cannot be caught. Every length is checked here against the bytes that remain; no
//! schema is needed for that because the compact protocol tags every field with its type.
//!
//! polars also slices the file at each column chunk's byte range without a bounds check
//! (`get_unchecked` in polars-stream's row-group fetcher) and `madvise`s the result, so a chunk
//! claimed outside the file panicked on polars' own executor threads. The walk therefore follows
//! the few fields that locate chunks — FileMetaData.row_groups → RowGroup.columns →
//! ColumnChunk.meta_data → ColumnMetaData's offsets and size (parquet.thrift) — and refuses a
//! chunk that does not lie between the leading magic and the footer.
//!
//! The walk also reads the schema's DECIMAL annotations: polars (built without its decimal
//! type) cannot read such a column at all, and its error names no column, so ovk names them.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::thrift_compact as ct;
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
    // Column chunks live after the leading `PAR1` and before the footer.
    let data = 4..size - 8 - footer_len;
    let footer = r
        .file_metadata(&data)
        .map_err(|why| corrupt(format!("its footer {why}")))?;
    if !footer.decimal_columns.is_empty() {
        return Err(input_at(
            path,
            format!(
                "has Parquet DECIMAL column{} {}, which ovk cannot read (it reads numbers as \
                 float64): cast {} to double when writing the file, e.g. \
                 `pl.col(...).cast(pl.Float64)` in polars or `pa.float64()` in pyarrow",
                if footer.decimal_columns.len() == 1 {
                    ""
                } else {
                    "s"
                },
                footer.decimal_columns.join(", "),
                if footer.decimal_columns.len() == 1 {
                    "it"
                } else {
                    "them"
                },
            ),
        ));
    }
    Ok(())
}

/// What the walk learns from a footer besides its being well formed.
#[derive(Debug, Default, PartialEq)]
struct Footer {
    /// Column chunks located inside the data pages.
    chunks: usize,
    /// Schema elements annotated DECIMAL, as `'name' (DECIMAL(precision, scale))`.
    decimal_columns: Vec<String>,
}

/// Field ids in parquet.thrift that locate column chunks.
mod field {
    pub(crate) const FILE_SCHEMA: i64 = 2;
    pub(crate) const FILE_ROW_GROUPS: i64 = 4;
    pub(crate) const SCHEMA_NAME: i64 = 4;
    pub(crate) const SCHEMA_CONVERTED_TYPE: i64 = 6;
    pub(crate) const SCHEMA_SCALE: i64 = 7;
    pub(crate) const SCHEMA_PRECISION: i64 = 8;
    pub(crate) const SCHEMA_LOGICAL_TYPE: i64 = 10;
    /// LogicalType is a union; its DECIMAL member, DecimalType { scale: 1, precision: 2 }.
    pub(crate) const LOGICAL_DECIMAL: i64 = 5;
    pub(crate) const DECIMAL_SCALE: i64 = 1;
    pub(crate) const DECIMAL_PRECISION: i64 = 2;
    pub(crate) const ROW_GROUP_COLUMNS: i64 = 1;
    pub(crate) const CHUNK_META_DATA: i64 = 3;
    pub(crate) const META_TOTAL_COMPRESSED_SIZE: i64 = 7;
    pub(crate) const META_DATA_PAGE_OFFSET: i64 = 9;
    pub(crate) const META_DICTIONARY_PAGE_OFFSET: i64 = 11;
}

/// ConvertedType DECIMAL in parquet.thrift.
const CONVERTED_DECIMAL: i64 = 5;

/// The type to skip a list element as: a bool element is one byte (type 1 or 2 in the list
/// header), unlike a bool field, whose value sits in its header.
fn element_kind(elem: u8) -> u8 {
    if elem == 1 || elem == 2 {
        3
    } else {
        elem
    }
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

    /// A zigzag-encoded signed varint (i16, i32, i64 and long-form field ids).
    fn zigzag(&mut self) -> std::result::Result<i64, String> {
        let n = self.varint()?;
        Ok((n >> 1) as i64 ^ -((n & 1) as i64))
    }

    /// An integer field's value, kept in `slot`.
    fn zigzag_into(&mut self, slot: &mut Option<i64>) -> Walk {
        *slot = Some(self.zigzag()?);
        Ok(())
    }

    /// The next field header of a struct as (id, type); `None` at the stop field. The short
    /// form stores the id as a delta from the previous field's.
    fn field(&mut self, last_id: &mut i64) -> std::result::Result<Option<(i64, u8)>, String> {
        let header = self.byte()?;
        let kind = header & 0x0f;
        if kind == 0 {
            return Ok(None);
        }
        *last_id = match header >> 4 {
            0 => self.zigzag()?,
            delta => *last_id + i64::from(delta),
        };
        Ok(Some((*last_id, kind)))
    }

    /// A list header as (element type, length), its length checked against the bytes left.
    fn list_header(&mut self) -> std::result::Result<(u8, u64), String> {
        let h = self.byte()?;
        let n = match h >> 4 {
            15 => self.varint()?,
            short => u64::from(short),
        };
        self.claim(n, "a list of length")?;
        Ok((h & 0x0f, n))
    }

    fn skip_struct(&mut self, depth: usize) -> Walk {
        self.walk_struct(depth, |r, _id, kind| r.skip_value(kind, depth))
    }

    /// Walk one struct, handing each field to `on_field(reader, id, type)`, which must consume
    /// the field's value.
    fn walk_struct(
        &mut self,
        depth: usize,
        mut on_field: impl FnMut(&mut Self, i64, u8) -> Walk,
    ) -> Walk {
        if depth > MAX_DEPTH {
            return Err("is nested too deeply".into());
        }
        let mut last_id = 0;
        while let Some((id, kind)) = self.field(&mut last_id)? {
            on_field(self, id, kind)?;
        }
        Ok(())
    }

    /// Walk a list of structs with `each`, or skip the value if it has another shape.
    fn walk_struct_list(
        &mut self,
        kind: u8,
        depth: usize,
        mut each: impl FnMut(&mut Self, u64) -> Walk,
    ) -> Walk {
        if kind != ct::LIST {
            return self.skip_value(kind, depth);
        }
        let (elem, n) = self.list_header()?;
        for i in 0..n {
            if elem == ct::STRUCT {
                each(self, i)?;
            } else {
                self.skip_value(element_kind(elem), depth + 1)?;
            }
        }
        Ok(())
    }

    /// FileMetaData: every length checked, every column chunk located inside `data`, the
    /// DECIMAL columns of the schema named.
    fn file_metadata(
        &mut self,
        data: &std::ops::Range<u64>,
    ) -> std::result::Result<Footer, String> {
        let mut chunks = 0;
        let mut decimal_columns = Vec::new();
        self.walk_struct(0, |r, id, kind| match id {
            field::FILE_SCHEMA => r.walk_struct_list(kind, 1, |r, _| {
                if let Some(d) = r.schema_element_decimal()? {
                    decimal_columns.push(d);
                }
                Ok(())
            }),
            field::FILE_ROW_GROUPS => r.walk_struct_list(kind, 1, |r, g| {
                r.walk_struct(2, |r, id, kind| match id {
                    field::ROW_GROUP_COLUMNS => r.walk_struct_list(kind, 3, |r, c| {
                        r.walk_struct(4, |r, id, kind| match (id, kind) {
                            (field::CHUNK_META_DATA, ct::STRUCT) => {
                                chunks += 1;
                                let at = format!("row group {g}, column {c}");
                                r.column_chunk_range(data, &at)
                            }
                            _ => r.skip_value(kind, 4),
                        })
                    }),
                    _ => r.skip_value(kind, 2),
                })
            }),
            _ => r.skip_value(kind, 0),
        })?;
        Ok(Footer {
            chunks,
            decimal_columns,
        })
    }

    /// One SchemaElement: `Some("'name' (DECIMAL(p, s))")` if it is annotated DECIMAL, by its
    /// converted type or its logical type.
    fn schema_element_decimal(&mut self) -> std::result::Result<Option<String>, String> {
        let (mut name, mut decimal) = (String::new(), false);
        let (mut precision, mut scale) = (None, None);
        self.walk_struct(2, |r, id, kind| match (id, kind) {
            (field::SCHEMA_NAME, ct::BINARY) => {
                name = r.string()?;
                Ok(())
            }
            (field::SCHEMA_CONVERTED_TYPE, ct::I32) => {
                decimal |= r.zigzag()? == CONVERTED_DECIMAL;
                Ok(())
            }
            (field::SCHEMA_SCALE, ct::I32) => r.zigzag_into(&mut scale),
            (field::SCHEMA_PRECISION, ct::I32) => r.zigzag_into(&mut precision),
            (field::SCHEMA_LOGICAL_TYPE, ct::STRUCT) => r.walk_struct(3, |r, id, kind| {
                if (id, kind) != (field::LOGICAL_DECIMAL, ct::STRUCT) {
                    return r.skip_value(kind, 3);
                }
                decimal = true;
                r.walk_struct(4, |r, id, kind| match (id, kind) {
                    (field::DECIMAL_SCALE, ct::I32) => r.zigzag_into(&mut scale),
                    (field::DECIMAL_PRECISION, ct::I32) => r.zigzag_into(&mut precision),
                    _ => r.skip_value(kind, 4),
                })
            }),
            _ => r.skip_value(kind, 2),
        })?;
        Ok(decimal.then(|| {
            // Escaped: a hostile name must not reach the terminal raw.
            let shown: String = name
                .chars()
                .take(80)
                .collect::<String>()
                .escape_debug()
                .to_string();
            match (precision, scale) {
                (Some(p), Some(s)) => format!("'{shown}' (DECIMAL({p}, {s}))"),
                _ => format!("'{shown}' (DECIMAL)"),
            }
        }))
    }

    /// A binary field as text (lossy: only shown in a message).
    fn string(&mut self) -> std::result::Result<String, String> {
        let n = self.varint()?;
        self.claim(n, "a string of length")?;
        let bytes = &self.buf[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }

    /// ColumnMetaData: the chunk's bytes, located as polars locates them (the dictionary page
    /// if there is one, else the first data page, for `total_compressed_size` bytes), must lie
    /// inside `data`.
    fn column_chunk_range(&mut self, data: &std::ops::Range<u64>, at: &str) -> Walk {
        let (mut size, mut data_page, mut dictionary_page) = (None, None, None);
        self.walk_struct(5, |r, id, kind| {
            let slot = match id {
                field::META_TOTAL_COMPRESSED_SIZE => &mut size,
                field::META_DATA_PAGE_OFFSET => &mut data_page,
                field::META_DICTIONARY_PAGE_OFFSET => &mut dictionary_page,
                _ => return r.skip_value(kind, 5),
            };
            if kind != ct::I64 {
                return r.skip_value(kind, 5);
            }
            r.zigzag_into(slot)
        })?;
        // A missing field is polars' to report; only a present range is checked here.
        let (Some(start), Some(len)) = (dictionary_page.or(data_page), size) else {
            return Ok(());
        };
        let end = start.checked_add(len);
        match end {
            Some(end) if start >= 0 && len >= 0 && data.contains(&(start as u64)) && end as u64 <= data.end => Ok(()),
            _ => Err(format!(
                "places the column chunk of {at} at bytes {start}..{} but the data pages lie in {}..{}",
                end.map_or_else(|| "overflow".to_string(), |e| e.to_string()),
                data.start,
                data.end
            )),
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
                let (elem, n) = self.list_header()?; // list / set
                for _ in 0..n {
                    self.skip_value(element_kind(elem), depth + 1)?;
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

    fn zigzag_varint(v: i64, out: &mut Vec<u8>) {
        let mut n = ((v << 1) ^ (v >> 63)) as u64;
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
    }

    /// FileMetaData { row_groups: [RowGroup { columns: [ColumnChunk { meta_data: ColumnMetaData
    /// { total_compressed_size, data_page_offset, dictionary_page_offset? } }] }] }.
    fn footer_with_chunk(size: i64, data_page: i64, dictionary_page: Option<i64>) -> Vec<u8> {
        let mut b = vec![0x49, 0x1c, 0x19, 0x1c, 0x3c]; // field 4 list<struct>, field 1 list<struct>, field 3 struct
        b.push(0x76); // field 7: i64
        zigzag_varint(size, &mut b);
        b.push(0x26); // field 9 (delta 2): i64
        zigzag_varint(data_page, &mut b);
        if let Some(offset) = dictionary_page {
            b.push(0x26); // field 11 (delta 2): i64
            zigzag_varint(offset, &mut b);
        }
        b.extend([0x00, 0x00, 0x00, 0x00]); // ends ColumnMetaData, ColumnChunk, RowGroup, FileMetaData
        b
    }

    fn locate(footer: &[u8], data: std::ops::Range<u64>) -> std::result::Result<usize, String> {
        Compact {
            buf: footer,
            pos: 0,
        }
        .file_metadata(&data)
        .map(|f| f.chunks)
    }

    #[test]
    fn a_column_chunk_inside_the_data_pages_is_located() {
        assert_eq!(locate(&footer_with_chunk(100, 4, None), 4..104), Ok(1));
        assert_eq!(locate(&footer_with_chunk(60, 50, Some(4)), 4..104), Ok(1));
    }

    #[test]
    fn a_column_chunk_outside_the_data_pages_is_refused() {
        for (size, data_page, dictionary_page) in [
            (360, -832, None),    // before the file (the fuzzer's executor_panic.parquet)
            (100, 5, None),       // one byte into the footer
            (10, 200, None),      // inside the footer
            (-5, 10, None),       // a negative size
            (i64::MAX, 10, None), // an end past i64
            (10, 10, Some(500)),  // the dictionary page is where polars starts reading
            (10, 10, Some(0)),    // over the leading magic
        ] {
            let e = locate(&footer_with_chunk(size, data_page, dictionary_page), 4..104)
                .expect_err(&format!(
                    "{size} bytes at {data_page} / {dictionary_page:?}"
                ));
            assert!(
                e.contains("places the column chunk of row group 0, column 0"),
                "{e}"
            );
        }
    }

    #[test]
    fn every_chunk_of_a_polars_file_with_row_groups_and_a_dictionary_is_located() {
        use polars::prelude::*;
        let n = 50;
        let mut df = df!(
            "x" => (0..n).map(|i| i as f64 * 0.5).collect::<Vec<_>>(),
            "s" => (0..n).map(|i| ["a", "bb", "ccc"][i % 3]).collect::<Vec<_>>(),
        )
        .unwrap();
        let path = std::env::temp_dir().join(format!("ovk-footer-{}.parquet", std::process::id()));
        ParquetWriter::new(std::fs::File::create(&path).unwrap())
            .with_row_group_size(Some(10))
            .finish(&mut df)
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        check_parquet_footer(&path).unwrap();
        let _ = std::fs::remove_file(&path);
        let footer_len =
            u32::from_le_bytes(bytes[bytes.len() - 8..][..4].try_into().unwrap()) as usize;
        let footer = &bytes[bytes.len() - 8 - footer_len..bytes.len() - 8];
        let data = 4..(bytes.len() - 8 - footer_len) as u64;
        assert_eq!(
            locate(footer, data),
            Ok(2 * n / 10),
            "two columns in five row groups"
        );
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
