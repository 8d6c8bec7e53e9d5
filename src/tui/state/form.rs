//! The Kernel pane's form: one field per kernel setting and per `ParamSpec` of the chosen
//! method, parsed and validated here (the only place text becomes a kernel or parameters).

use crate::kernels::{InputRank, KernelName, KernelSpec, Landmarks, Sigma};
use crate::methods::{Method, ParamKind, ParamSpec, Params, Value};

/// What an editable field stands for.
#[derive(Debug, Clone, Copy)]
pub enum FieldKind {
    KernelName,
    Sigma,
    Degree,
    Coef0,
    /// `--input-rank`: exact, auto or a rank R (a low-rank Nyström factor K ≈ ZZᵀ).
    InputRank,
    /// `--landmarks`: how a low-rank factor picks its landmarks.
    Landmarks,
    Param(ParamSpec),
}

#[derive(Debug, Clone)]
pub struct Field {
    pub kind: FieldKind,
    pub text: String,
    /// The reason the text is refused, checked on every keystroke.
    pub error: Option<String>,
}

impl Field {
    pub fn new(kind: FieldKind, text: String) -> Field {
        let mut f = Field {
            kind,
            text,
            error: None,
        };
        f.validate();
        f
    }

    /// A setting of the input kernel (shared by every method), not a method hyperparameter.
    pub fn is_kernel(&self) -> bool {
        !matches!(self.kind, FieldKind::Param(_))
    }

    pub fn key(&self) -> &'static str {
        match self.kind {
            FieldKind::KernelName => "kernel",
            FieldKind::Sigma => "sigma",
            FieldKind::Degree => "degree",
            FieldKind::Coef0 => "coef0",
            FieldKind::InputRank => "input_rank",
            FieldKind::Landmarks => "landmarks",
            FieldKind::Param(s) => s.key,
        }
    }

    pub fn label(&self) -> &'static str {
        match self.kind {
            FieldKind::KernelName => "input kernel",
            FieldKind::Sigma => "width",
            FieldKind::Degree => "degree",
            FieldKind::Coef0 => "offset",
            FieldKind::InputRank => "input rank",
            FieldKind::Landmarks => "landmarks",
            FieldKind::Param(s) => s.label,
        }
    }

    pub fn unit(&self) -> &'static str {
        match self.kind {
            FieldKind::KernelName => "",
            FieldKind::Sigma => "σ",
            FieldKind::Degree => "d",
            FieldKind::Coef0 => "c",
            FieldKind::InputRank => "r",
            FieldKind::Landmarks => "",
            FieldKind::Param(s) => s.unit,
        }
    }

    pub fn help(&self) -> String {
        match self.kind {
            FieldKind::KernelName => {
                "scalar input kernel: linear, gaussian, polynomial or laplacian (space cycles)"
                    .into()
            }
            FieldKind::Sigma => {
                "kernel width σ: a positive number, or 'median' for the median distance between \
                 training rows"
                    .into()
            }
            FieldKind::Degree => "polynomial degree d, 1 to 20".into(),
            FieldKind::Coef0 => "polynomial offset c ≥ 0 in (xᵀz + c)^d".into(),
            FieldKind::InputRank => "auto (exact up to 5000 training rows, rank 2000 beyond), \
                                     exact, or a rank R: a Nyström factor K ≈ ZZᵀ, no n×n matrix"
                .into(),
            FieldKind::Landmarks => {
                "landmarks of the low-rank factor: rpcholesky (randomly pivoted Cholesky) or \
                 uniform"
                    .into()
            }
            FieldKind::Param(s) => s.help.into(),
        }
    }

    pub fn default_text(&self) -> String {
        match self.kind {
            FieldKind::KernelName => "gaussian".into(),
            FieldKind::Sigma => "median".into(),
            FieldKind::Degree => "2".into(),
            FieldKind::Coef0 => "1".into(),
            FieldKind::InputRank => "auto".into(),
            FieldKind::Landmarks => "rpcholesky".into(),
            FieldKind::Param(s) => s.default_value().map(|v| v.to_string()).unwrap_or_default(),
        }
    }

    /// Re-check the text; sets `error` to the reason it is refused.
    pub fn validate(&mut self) {
        self.error = self.value().err();
    }

    /// The parsed parameter value (`None`: left empty, the method's default applies).
    pub fn value(&self) -> Result<Option<Value>, String> {
        let t = self.text.trim();
        match self.kind {
            FieldKind::KernelName => KernelName::parse(t)
                .map(|_| None)
                .map_err(|e| e.to_string()),
            FieldKind::Sigma => Sigma::parse(t).map(|_| None).map_err(|e| e.to_string()),
            FieldKind::Degree => match t.parse::<u32>() {
                Ok(d) if (1..=20).contains(&d) => Ok(None),
                _ => Err(format!("degree: '{t}' is not a whole number from 1 to 20")),
            },
            FieldKind::Coef0 => match t.parse::<f64>() {
                Ok(c) if c.is_finite() && c >= 0.0 => Ok(None),
                _ => Err(format!("coef0: '{t}' is not a number ≥ 0")),
            },
            FieldKind::InputRank => InputRank::parse(t).map(|_| None).map_err(|e| e.to_string()),
            FieldKind::Landmarks => Landmarks::parse(t).map(|_| None).map_err(|e| e.to_string()),
            FieldKind::Param(spec) => {
                if t.is_empty() {
                    Ok(None)
                } else {
                    spec.parse(t).map(Some).map_err(|e| e.to_string())
                }
            }
        }
    }

    /// Space on a choice field moves to the next option.
    pub fn cycle(&mut self) {
        let next = |opts: &[&str], cur: &str| -> String {
            let i = opts
                .iter()
                .position(|o| *o == cur)
                .map_or(0, |i| (i + 1) % opts.len());
            opts[i].to_string()
        };
        match self.kind {
            FieldKind::KernelName => {
                let names: Vec<&str> = KernelName::ALL.iter().map(|k| k.as_str()).collect();
                self.text = next(&names, self.text.trim());
            }
            FieldKind::Landmarks => {
                let names: Vec<&str> = Landmarks::ALL.iter().map(|k| k.as_str()).collect();
                self.text = next(&names, self.text.trim());
            }
            FieldKind::Param(ParamSpec {
                kind: ParamKind::Choice(opts),
                ..
            }) if !opts.is_empty() => self.text = next(opts, self.text.trim()),
            FieldKind::Param(ParamSpec {
                kind: ParamKind::Bool,
                ..
            }) => {
                self.text = if self.text.trim() == "true" {
                    "false"
                } else {
                    "true"
                }
                .into();
            }
            _ => {}
        }
        self.validate();
    }

    pub fn cycles(&self) -> bool {
        matches!(
            self.kind,
            FieldKind::KernelName
                | FieldKind::Landmarks
                | FieldKind::Param(ParamSpec {
                    kind: ParamKind::Choice(_) | ParamKind::Bool,
                    ..
                })
        )
    }
}

/// The input kernel's settings, in the order the Kernel pane lists them, before the method's
/// own `ParamSpec`s. A new kernel option is one entry here plus its `FieldKind` arms.
pub const KERNEL_FIELDS: [FieldKind; 6] = [
    FieldKind::KernelName,
    FieldKind::Sigma,
    FieldKind::Degree,
    FieldKind::Coef0,
    FieldKind::InputRank,
    FieldKind::Landmarks,
];

#[derive(Debug, Clone)]
pub struct KernelState {
    pub fields: Vec<Field>,
    /// Index into `visible()`.
    pub cursor: usize,
    pub editing: bool,
    /// The text before editing began (Esc puts it back).
    pub backup: String,
}

impl KernelState {
    pub fn for_method(method: &dyn Method, previous: Option<&KernelState>) -> KernelState {
        // The input kernel is shared by every method: carry over what the user typed.
        let keep = |key: &str, default: String| -> String {
            previous
                .and_then(|p| p.fields.iter().find(|f| f.key() == key))
                .filter(|f| f.text != f.default_text())
                .map(|f| f.text.clone())
                .unwrap_or(default)
        };
        let mut fields: Vec<Field> = KERNEL_FIELDS
            .into_iter()
            .map(|k| {
                let f = Field::new(k, String::new());
                Field::new(k, keep(f.key(), f.default_text()))
            })
            .collect();
        // The method's own hyperparameters start at its defaults: a λ typed for okl must not
        // turn lowrank-okl's λ path off (the State keeps each method's form for its return).
        for spec in method.params() {
            let f = Field::new(FieldKind::Param(*spec), String::new());
            let text = f.default_text();
            fields.push(Field::new(FieldKind::Param(*spec), text));
        }
        KernelState {
            fields,
            cursor: 0,
            editing: false,
            backup: String::new(),
        }
    }

    fn kernel_name(&self) -> KernelName {
        self.fields
            .iter()
            .find(|f| matches!(f.kind, FieldKind::KernelName))
            .and_then(|f| KernelName::parse(&f.text).ok())
            .unwrap_or(KernelName::Gaussian)
    }

    /// Indices of the fields that apply to the chosen kernel.
    pub fn visible(&self) -> Vec<usize> {
        let k = self.kernel_name();
        (0..self.fields.len())
            .filter(|&i| match self.fields[i].kind {
                FieldKind::Sigma => k.uses_sigma(),
                FieldKind::Degree | FieldKind::Coef0 => k == KernelName::Polynomial,
                _ => true,
            })
            .collect()
    }

    pub fn current(&self) -> Option<usize> {
        self.visible().get(self.cursor).copied()
    }

    /// The first refused field among those that apply: (key, reason).
    pub fn first_error(&self) -> Option<(String, String)> {
        self.visible().into_iter().find_map(|i| {
            let f = &self.fields[i];
            f.error.clone().map(|e| (f.key().to_string(), e))
        })
    }

    pub fn kernel_spec(&self) -> Result<KernelSpec, String> {
        let text = |key: &str| {
            self.fields
                .iter()
                .find(|f| f.key() == key)
                .map(|f| f.text.trim().to_string())
                .unwrap_or_default()
        };
        let name = KernelName::parse(&text("kernel")).map_err(|e| e.to_string())?;
        let mut spec = KernelSpec {
            name,
            ..KernelSpec::default()
        };
        if name.uses_sigma() {
            spec.sigma = Sigma::parse(&text("sigma")).map_err(|e| e.to_string())?;
        }
        if name == KernelName::Polynomial {
            spec.degree = text("degree")
                .parse()
                .map_err(|_| "bad degree".to_string())?;
            spec.coef0 = text("coef0").parse().map_err(|_| "bad coef0".to_string())?;
        }
        spec.input_rank = InputRank::parse(&text("input_rank")).map_err(|e| e.to_string())?;
        spec.landmarks = Landmarks::parse(&text("landmarks")).map_err(|e| e.to_string())?;
        Ok(spec)
    }

    pub fn params(&self) -> Result<Params, String> {
        let mut p = Params::new();
        for f in &self.fields {
            if let FieldKind::Param(spec) = f.kind {
                if let Some(v) = f.value().map_err(|e| e.to_string())? {
                    p.set(spec.key, v);
                }
            }
        }
        Ok(p)
    }
}
