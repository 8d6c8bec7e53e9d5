//! Type codes of Thrift's compact protocol, the encoding of Parquet's footer and page headers:
//! the footer check (`parquet_footer`) reads them and the plain writer (`parquet_write`) writes
//! them.

pub(crate) const I32: u8 = 5;
pub(crate) const I64: u8 = 6;
pub(crate) const BINARY: u8 = 8;
pub(crate) const LIST: u8 = 9;
pub(crate) const STRUCT: u8 = 12;
