//! Small pieces every layer uses, depending on nothing else in ovk: a seeded generator
//! (`rng`), large buffers freed on a thread of their own (`drop_later`), a fast fingerprint of
//! arrays for caches (`fingerprint`), NaN-tolerant JSON readers (`nan`), JSON written
//! compactly readable (`json`), settings declared as data (`param`), named choices (`choice`),
//! and text helpers (`text`: the nearest valid name, terminal-safe display).

pub mod choice;
pub(crate) mod drop_later;
pub(crate) mod fingerprint;
pub mod json;
pub mod limits;
pub mod nan;
pub(crate) mod param;
pub mod rng;
pub mod text;
