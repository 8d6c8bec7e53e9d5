//! The terminal workbench.
