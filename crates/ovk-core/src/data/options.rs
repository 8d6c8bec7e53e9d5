//! The data options of a run that carry a numeric rule (a range), declared once as
//! `ParamSpec`s: `ovk run`'s flags and config keys (`cli::options`), `docs/config.md`, and the
//! checks of the split and of `RunConfig` are made from these.

use crate::util::param::{ParamDefault, ParamKind, ParamSpec};

/// `TEST_FRACTION`'s default, as a number (`DataConfig::new`).
pub(crate) const TEST_FRACTION_DEFAULT: f64 = 0.25;

/// The `test_fraction` setting: the share of rows held out for testing.
pub const TEST_FRACTION: ParamSpec = ParamSpec {
    key: "test_fraction",
    label: "test fraction",
    help: "fraction of the rows held out for testing",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: 1.0,
        min_open: false,
        max_open: true,
        log: false,
    },
    default: ParamDefault::Float(TEST_FRACTION_DEFAULT),
};

/// The `labeled` setting: semi-supervised runs keep this many (or this fraction of) labels.
pub const LABELED: ParamSpec = ParamSpec {
    key: "labeled",
    label: "labeled",
    help: "semi-supervised: keep N labels (or a fraction < 1) of the training part, hide the rest",
    unit: "",
    kind: ParamKind::Float {
        min: 0.0,
        max: f64::INFINITY,
        min_open: true,
        max_open: false,
        log: false,
    },
    default: ParamDefault::None,
};
