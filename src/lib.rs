//! ovk — the two faces of the ovk-core engine: the terminal workbench (`tui`) and the headless
//! commands (`cli`), and the figures both export (`figure`). Both run fits through `ovk_core::train` and read results through
//! `ovk_core::session`; neither holds numerical code. The crates, and what each may use, are
//! in docs/architecture.md.

pub mod cli;
pub mod figure;
pub mod tui;
