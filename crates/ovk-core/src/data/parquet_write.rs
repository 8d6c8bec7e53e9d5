//! A plain Parquet writer for all-numeric tables: one row group, one PLAIN-encoded,
//! uncompressed data page of required DOUBLE values per column, and the footer in Thrift's
//! compact protocol (parquet.thrift's field ids, cited at each struct).
//!
//! Why not polars' writer: it decides per column whether a dictionary is worth it by a
//! HyperLogLog estimate whose count walks all its registers, a fixed cost per column that made
//! writing 10⁵ columns of 200 rows take about 10 s (40 % of it in `HyperLogLog::count`), with
//! no option to turn dictionaries off. Random reals never gain from a dictionary, so this
//! writer never tries; any table it does not cover (text columns, pages beyond 1 GiB) goes to
//! polars as before. What it writes is read back by polars (tests: `gen_formats`).

use std::io::{self, Write};

use super::thrift_compact as ct;

/// A column page above this many bytes is left to polars (a page size is an i32).
pub(crate) const MAX_PAGE_BYTES: usize = 1 << 30;

// parquet.thrift enums.
const TYPE_DOUBLE: i32 = 5;
const REPETITION_REQUIRED: i32 = 0;
const ENCODING_PLAIN: i32 = 0;
const ENCODING_RLE: i32 = 3;
const CODEC_UNCOMPRESSED: i32 = 0;
const PAGE_DATA: i32 = 0;

/// Thrift compact encoding into a byte buffer; `last` holds the previous field id of each
/// open struct (field headers are deltas).
struct Compact {
    buf: Vec<u8>,
    last: Vec<i16>,
}

impl Compact {
    fn new() -> Self {
        Compact {
            buf: Vec::new(),
            last: vec![0],
        }
    }

    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }

    fn field(&mut self, id: i16, ty: u8) {
        let last = self.last.last_mut().expect("inside a struct");
        let delta = id - *last;
        *last = id;
        if (1..=15).contains(&delta) {
            self.buf.push(((delta as u8) << 4) | ty);
        } else {
            self.buf.push(ty);
            self.zigzag(id as i64);
        }
    }

    fn i32(&mut self, id: i16, v: i32) {
        self.field(id, ct::I32);
        self.zigzag(v as i64);
    }

    fn i64(&mut self, id: i16, v: i64) {
        self.field(id, ct::I64);
        self.zigzag(v);
    }

    fn string(&mut self, id: i16, s: &str) {
        self.field(id, ct::BINARY);
        self.raw_string(s);
    }

    fn raw_string(&mut self, s: &str) {
        self.varint(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn list_header(&mut self, len: usize, elem: u8) {
        if len < 15 {
            self.buf.push(((len as u8) << 4) | elem);
        } else {
            self.buf.push(0xF0 | elem);
            self.varint(len as u64);
        }
    }

    fn list(&mut self, id: i16, len: usize, elem: u8) {
        self.field(id, ct::LIST);
        self.list_header(len, elem);
    }

    /// A struct field (or, with `id` None, a struct element of a list).
    fn begin(&mut self, id: Option<i16>) {
        if let Some(id) = id {
            self.field(id, ct::STRUCT);
        }
        self.last.push(0);
    }

    fn end(&mut self) {
        self.buf.push(0);
        self.last.pop();
    }
}

/// Write `columns` (name, values; all of one length, at most `MAX_PAGE_BYTES / 8` values) as
/// a Parquet file.
pub(crate) fn write_plain_parquet(
    out: &mut dyn Write,
    columns: &[(&str, &[f64])],
) -> io::Result<()> {
    let rows = columns.first().map_or(0, |(_, v)| v.len());
    if columns.iter().any(|(_, v)| v.len() != rows) || rows * 8 > MAX_PAGE_BYTES {
        return Err(io::Error::other(
            "plain Parquet: columns differ in length or are too long",
        ));
    }
    let mut offset: u64 = 4;
    out.write_all(b"PAR1")?;
    // (page header offset, page header + data bytes) per column.
    let mut chunks = Vec::with_capacity(columns.len());
    let mut data = Vec::with_capacity(rows * 8);
    for (_, values) in columns {
        data.clear();
        for v in *values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let mut h = Compact::new();
        // PageHeader: 1 type, 2 uncompressed_page_size, 3 compressed_page_size,
        // 5 data_page_header.
        h.i32(1, PAGE_DATA);
        h.i32(2, data.len() as i32);
        h.i32(3, data.len() as i32);
        h.begin(Some(5));
        // DataPageHeader: 1 num_values, 2 encoding, 3 definition_level_encoding,
        // 4 repetition_level_encoding.
        h.i32(1, rows as i32);
        h.i32(2, ENCODING_PLAIN);
        h.i32(3, ENCODING_RLE);
        h.i32(4, ENCODING_RLE);
        h.end();
        h.end();
        out.write_all(&h.buf)?;
        out.write_all(&data)?;
        let size = (h.buf.len() + data.len()) as u64;
        chunks.push((offset, size));
        offset += size;
    }
    let total: u64 = chunks.iter().map(|c| c.1).sum();
    let mut f = Compact::new();
    // FileMetaData: 1 version, 2 schema, 3 num_rows, 4 row_groups, 6 created_by.
    f.i32(1, 1);
    f.list(2, columns.len() + 1, ct::STRUCT);
    // SchemaElement: 1 type, 3 repetition_type, 4 name, 5 num_children.
    f.begin(None);
    f.string(4, "schema");
    f.i32(5, columns.len() as i32);
    f.end();
    for (name, _) in columns {
        f.begin(None);
        f.i32(1, TYPE_DOUBLE);
        f.i32(3, REPETITION_REQUIRED);
        f.string(4, name);
        f.end();
    }
    f.i64(3, rows as i64);
    f.list(4, 1, ct::STRUCT);
    // RowGroup: 1 columns, 2 total_byte_size, 3 num_rows.
    f.begin(None);
    f.list(1, columns.len(), ct::STRUCT);
    for ((name, _), &(start, size)) in columns.iter().zip(&chunks) {
        // ColumnChunk: 2 file_offset, 3 meta_data.
        f.begin(None);
        f.i64(2, start as i64);
        f.begin(Some(3));
        // ColumnMetaData: 1 type, 2 encodings, 3 path_in_schema, 4 codec, 5 num_values,
        // 6 total_uncompressed_size, 7 total_compressed_size, 9 data_page_offset.
        f.i32(1, TYPE_DOUBLE);
        f.list(2, 2, ct::I32);
        f.zigzag(ENCODING_PLAIN as i64);
        f.zigzag(ENCODING_RLE as i64);
        f.list(3, 1, ct::BINARY);
        f.raw_string(name);
        f.i32(4, CODEC_UNCOMPRESSED);
        f.i64(5, rows as i64);
        f.i64(6, size as i64);
        f.i64(7, size as i64);
        f.i64(9, start as i64);
        f.end();
        f.end();
    }
    f.i64(2, total as i64);
    f.i64(3, rows as i64);
    f.end();
    f.string(6, concat!("ovk ", env!("CARGO_PKG_VERSION")));
    f.end();
    out.write_all(&f.buf)?;
    out.write_all(&(f.buf.len() as u32).to_le_bytes())?;
    out.write_all(b"PAR1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_field_headers_and_varints() {
        let mut c = Compact::new();
        c.i32(1, -1);
        c.i64(3, 300);
        c.i32(20, 0);
        c.end();
        // id 1 I32 (delta 1), zigzag(-1) = 1; id 3 I64 (delta 2), zigzag(300) = 600 =
        // 0xD8 0x04; id 20 (delta 17): type byte then zigzag(20) = 40; stop.
        assert_eq!(
            c.buf,
            vec![0x15, 0x01, 0x26, 0xD8, 0x04, 0x05, 40, 0x00, 0x00]
        );
    }
}
