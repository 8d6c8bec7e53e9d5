//! The data options of a run that carry a rule (a range or a choice), declared once as
//! `ParamSpec`s: `ovk run`'s flags and config keys (`cli::options`), `docs/config.md`, and the
//! checks of the split and of `RunConfig` are made from these.

use crate::util::param::{ParamDefault, ParamKind, ParamSpec};

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
    default: ParamDefault::Float(0.25),
};

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

pub const SCALE: ParamSpec = ParamSpec {
    key: "scale",
    label: "scaling",
    help: "feature scaling: standard (training mean, population std) | none",
    unit: "",
    kind: ParamKind::Choice(&["standard", "none"]),
    default: ParamDefault::Text("standard"),
};

pub const CLASS_CODING: ParamSpec = ParamSpec {
    key: "class_coding",
    label: "class coding",
    help: "one-hot coding of class/label targets: pm1 (+1/-1) | 01 (1/0)",
    unit: "",
    kind: ParamKind::Choice(&["pm1", "01"]),
    default: ParamDefault::Text("pm1"),
};
