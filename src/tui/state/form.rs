//! The Kernel pane's form: one field per kernel setting and per `ParamSpec` of the chosen
//! method, parsed and validated here (the only place text becomes a kernel or parameters).

use ovk_core::kernels::options as k;
use ovk_core::kernels::{InputRank, KernelName, KernelSpec, Landmarks, Sigma};
use ovk_core::methods::{mvml, Method, ParamKind, ParamSpec, Params, Value};
use ovk_core::util::choice::Choice;

/// What an editable field stands for.
#[derive(Debug, Clone, Copy)]
pub enum FieldKind {
    KernelName,
    Sigma,
    Degree,
    Coef0,
    /// `--input-rank`: exact, auto or a rank R (a low-rank Nyström factor K ≈ ZZᵀ); a rank only
    /// for a method that takes one (`rank`).
    InputRank {
        rank: bool,
    },
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

    /// The declaration of the field: the method's `ParamSpec`, or the kernel option's
    /// (`kernels::options`), where its key, label, unit, help, default and range live.
    pub fn spec(&self) -> ParamSpec {
        match self.kind {
            FieldKind::KernelName => k::KERNEL,
            FieldKind::Sigma => k::SIGMA,
            FieldKind::Degree => k::DEGREE,
            FieldKind::Coef0 => k::COEF0,
            FieldKind::InputRank { .. } => k::INPUT_RANK,
            FieldKind::Landmarks => k::LANDMARKS,
            FieldKind::Param(s) => s,
        }
    }

    pub fn key(&self) -> &'static str {
        self.spec().key
    }

    pub fn label(&self) -> &'static str {
        self.spec().label
    }

    pub fn unit(&self) -> &'static str {
        self.spec().unit
    }

    pub fn help(&self) -> String {
        let spec = self.spec();
        let range = spec.kind.range();
        match self.kind {
            FieldKind::KernelName => format!("{} (space cycles)", spec.help),
            FieldKind::Param(_) => spec.help.into(),
            _ if !range.is_empty() => format!("{}, in {range}", spec.help),
            _ => spec.help.into(),
        }
    }

    pub fn default_text(&self) -> String {
        self.spec()
            .default_value()
            .map(|v| v.to_string())
            .unwrap_or_default()
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
            FieldKind::Degree | FieldKind::Coef0 => self
                .spec()
                .parse(t)
                .map(|_| None)
                .map_err(|e| e.to_string()),
            FieldKind::InputRank { rank } => match InputRank::parse(t) {
                Ok(InputRank::Rank(_)) if !rank => {
                    Err("auto or exact: this method has no low-rank input route".to_string())
                }
                Ok(_) => Ok(None),
                Err(e) => Err(e.to_string()),
            },
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
        fn next<C: Choice>(text: &str) -> String {
            C::parse(text).map_or(C::ALL[0], C::next).name().to_string()
        }
        match self.kind {
            FieldKind::KernelName => {
                // precomputed needs a Gram file, which only `ovk run --gram` gives
                let t = next::<KernelName>(&self.text);
                self.text = match KernelName::parse(&t) {
                    Ok(KernelName::Precomputed) => next::<KernelName>(&t),
                    _ => t,
                };
            }
            FieldKind::Landmarks => self.text = next::<Landmarks>(&self.text),
            FieldKind::Param(ParamSpec {
                kind: ParamKind::Choice(opts),
                ..
            }) if !opts.is_empty() => {
                // a method's choice, known here by its declared words
                let cur = self.text.trim();
                let i = opts
                    .iter()
                    .position(|o| *o == cur)
                    .map_or(0, |i| (i + 1) % opts.len());
                self.text = opts[i].to_string();
            }
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
    FieldKind::InputRank { rank: true },
    FieldKind::Landmarks,
];

#[derive(Debug, Clone)]
pub struct KernelState {
    pub fields: Vec<Field>,
    /// The method solves on a low-rank input factor: landmarks and an input rank R apply to
    /// it (the others take input_rank auto or exact).
    pub factor_route: bool,
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
        let factor = method.input_factor();
        let rank = method.takes_input_rank();
        let mut fields: Vec<Field> = KERNEL_FIELDS
            .into_iter()
            .map(|k| match k {
                FieldKind::InputRank { .. } => FieldKind::InputRank { rank },
                other => other,
            })
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
            factor_route: factor,
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
                FieldKind::Landmarks => self.factor_route,
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
            self.field_error(i)
                .map(|e| (self.fields[i].key().to_string(), e))
        })
    }

    /// Why field `i` is refused: its own value, or (mvml) a Nyström fraction beside an input
    /// rank that chooses the landmarks too — the run would refuse the pair.
    pub fn field_error(&self, i: usize) -> Option<String> {
        let f = &self.fields[i];
        if f.error.is_some() {
            return f.error.clone();
        }
        if f.key() != mvml::NYSTROM.key || f.text.trim().is_empty() {
            return None;
        }
        let rank = self
            .fields
            .iter()
            .find(|g| matches!(g.kind, FieldKind::InputRank { .. }))?;
        match InputRank::parse(&rank.text).ok()? {
            InputRank::Auto => None,
            InputRank::Exact => {
                Some("input_rank exact asks for the exact fit: empty one of them".into())
            }
            r => Some(format!(
                "input_rank {r} chooses the landmarks too: empty one of them"
            )),
        }
    }

    pub fn kernel_spec(&self) -> Result<KernelSpec, String> {
        let text = |spec: ParamSpec| {
            self.fields
                .iter()
                .find(|f| f.key() == spec.key)
                .map(|f| f.text.trim().to_string())
                .unwrap_or_default()
        };
        let name = KernelName::parse(&text(k::KERNEL)).map_err(|e| e.to_string())?;
        let mut spec = KernelSpec {
            name,
            ..KernelSpec::default()
        };
        if name.uses_sigma() {
            spec.sigma = Sigma::parse(&text(k::SIGMA)).map_err(|e| e.to_string())?;
        }
        if name == KernelName::Polynomial {
            spec.degree = text(k::DEGREE)
                .parse()
                .map_err(|_| "bad degree".to_string())?;
            spec.coef0 = text(k::COEF0)
                .parse()
                .map_err(|_| "bad coef0".to_string())?;
        }
        spec.input_rank = InputRank::parse(&text(k::INPUT_RANK)).map_err(|e| e.to_string())?;
        // landmarks are kept for the methods that have the factor route
        if self.factor_route {
            spec.landmarks = Landmarks::parse(&text(k::LANDMARKS)).map_err(|e| e.to_string())?;
        }
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
