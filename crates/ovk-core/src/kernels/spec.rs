//! Which kernel, with which parameters: `KernelSpec` is what the user chose (σ may be "median"),
//! `Kernel` is the resolved function with every number fixed.

use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};

use super::heuristics::median_distance;
use super::lowrank::Landmarks;
use super::options::{COEF0, COEF0_DEFAULT, DEGREE, DEGREE_DEFAULT};
use super::precomputed::{check_gram_files, GramFile};
use crate::util::choice::choice_enum;
use crate::util::param::Value;
use crate::{ErrorKind, OvkError, Result};

choice_enum! {
    /// The scalar input kernel, by name.
    pub enum KernelName: "kernel" {
        /// k(x, z) = ⟨x, z⟩.
        Linear = "linear",
        /// k(x, z) = exp(−‖x − z‖² / (2σ²)).
        Gaussian = "gaussian",
        /// k(x, z) = (⟨x, z⟩ + coef0)^degree.
        Polynomial = "polynomial",
        /// k(x, z) = exp(−‖x − z‖ / σ).
        Laplacian = "laplacian",
        /// k(x, z) = ⟨x, z⟩ / (‖x‖ ‖z‖), 0 when either is the zero vector.
        Cosine = "cosine",
        /// K[i, j] read from a Gram matrix the user gives (`--gram K.npy`).
        Precomputed = "precomputed",
    }
}

impl KernelName {
    /// Whether the kernel has a width σ.
    pub fn uses_sigma(self) -> bool {
        matches!(self, KernelName::Gaussian | KernelName::Laplacian)
    }
}

/// The kernel width as the user gave it: a number, or the median heuristic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sigma {
    /// The median pairwise distance of the training inputs.
    Median,
    /// This width (> 0).
    Value(f64),
}

impl Sigma {
    /// `median` or a positive number; anything else is an input error.
    pub fn parse(s: &str) -> Result<Self> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("median") {
            return Ok(Sigma::Median);
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v > 0.0 => Ok(Sigma::Value(v)),
            _ => Err(OvkError::input_as(
                ErrorKind::InvalidParameter,
                format!("sigma must be a positive number or 'median', got '{s}'"),
            )),
        }
    }
}

impl std::fmt::Display for Sigma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Sigma::Median => write!(f, "median"),
            Sigma::Value(v) => write!(f, "{v}"),
        }
    }
}

impl Serialize for Sigma {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Sigma::Median => s.serialize_str("median"),
            Sigma::Value(v) => s.serialize_f64(*v),
        }
    }
}

impl<'de> Deserialize<'de> for Sigma {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(f64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Num(v) if v.is_finite() && v > 0.0 => Ok(Sigma::Value(v)),
            Raw::Num(v) => Err(serde::de::Error::custom(format!(
                "sigma must be positive, got {v}"
            ))),
            Raw::Text(t) => Sigma::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

/// Whether the methods solve on the exact Gram matrix or on a low-rank factor `K ≈ ZZᵀ`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum InputRank {
    /// Exact up to `methods::input::AUTO_EXACT_MAX` training rows, a rank-`AUTO_RANK` factor
    /// beyond (the session notes say which was taken).
    #[default]
    Auto,
    /// Always the exact n×n Gram matrix.
    Exact,
    /// A Nyström factor of rank r.
    Rank(usize),
}

impl InputRank {
    /// `auto`, `exact` (or `full`) or a rank ≥ 1; anything else is an input error.
    pub fn parse(s: &str) -> Result<Self> {
        let t = s.trim().to_ascii_lowercase();
        let invalid = |msg: String| OvkError::input_as(ErrorKind::InvalidParameter, msg);
        match t.as_str() {
            "auto" => Ok(InputRank::Auto),
            "exact" | "full" => Ok(InputRank::Exact),
            _ => match t.parse::<u64>() {
                Ok(0) => Err(invalid(
                    "--input-rank must be at least 1 (or exact, or auto)".into(),
                )),
                Ok(r) => usize::try_from(r)
                    .map(InputRank::Rank)
                    .map_err(|_| invalid(format!("--input-rank {s} is too large"))),
                Err(_) => Err(invalid(format!(
                    "--input-rank: '{s}' is not a whole number ≥ 1, exact or auto"
                ))),
            },
        }
    }

    /// True for the default `auto` (serde skips writing it).
    pub fn is_auto(&self) -> bool {
        *self == InputRank::Auto
    }
}

impl std::fmt::Display for InputRank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputRank::Auto => write!(f, "auto"),
            InputRank::Exact => write!(f, "exact"),
            InputRank::Rank(r) => write!(f, "{r}"),
        }
    }
}

impl Serialize for InputRank {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            InputRank::Rank(r) => s.serialize_u64(*r as u64),
            other => s.serialize_str(&other.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for InputRank {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Num(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Num(v) => InputRank::parse(&v.to_string()),
            Raw::Text(t) => InputRank::parse(&t),
        }
        .map_err(serde::de::Error::custom)
    }
}

/// The user's kernel choice, before σ = median is resolved on the training inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelSpec {
    /// Which kernel.
    pub name: KernelName,
    /// Width σ (Gaussian, Laplacian), or the median heuristic.
    #[serde(default = "default_sigma")]
    pub sigma: Sigma,
    /// Degree of the polynomial kernel.
    #[serde(default = "default_degree")]
    pub degree: u32,
    /// Constant added before the power (polynomial kernel).
    #[serde(default = "default_coef0")]
    pub coef0: f64,
    /// Exact Gram matrix or low-rank factor (absent in sessions made before it existed: auto).
    #[serde(default, skip_serializing_if = "InputRank::is_auto")]
    pub input_rank: InputRank,
    /// How a low-rank factor picks its landmarks.
    #[serde(default, skip_serializing_if = "Landmarks::is_default")]
    pub landmarks: Landmarks,
    /// The precomputed kernel's Gram files (one, or one per view); empty for the others.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gram: Vec<GramFile>,
    /// The ids of the Gram's rows (`--gram-ids`): the table's rows are matched to K's by an id
    /// column instead of by position (`kernels::precomputed::GramIds`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gram_ids: Option<GramFile>,
}

fn default_sigma() -> Sigma {
    Sigma::Median
}
fn default_degree() -> u32 {
    DEGREE_DEFAULT
}
fn default_coef0() -> f64 {
    COEF0_DEFAULT
}

impl Default for KernelSpec {
    fn default() -> Self {
        KernelSpec {
            name: KernelName::Gaussian,
            sigma: Sigma::Median,
            degree: default_degree(),
            coef0: default_coef0(),
            input_rank: InputRank::Auto,
            landmarks: Landmarks::Rpcholesky,
            gram: Vec::new(),
            gram_ids: None,
        }
    }
}

impl KernelSpec {
    /// Check the numbers against their declarations (`kernels::options`).
    pub fn check(&self) -> Result<()> {
        DEGREE.check(&Value::Int(i64::from(self.degree)))?;
        COEF0.check(&Value::Float(self.coef0))?;
        check_gram_files(self.name, &self.gram)?;
        if self.gram_ids.is_some() && self.name != KernelName::Precomputed {
            return Err(OvkError::input(format!(
                "--gram-ids goes with --kernel precomputed, not --kernel {}",
                self.name
            )));
        }
        Ok(())
    }

    /// Fix every parameter: σ = median becomes the median distance between distinct rows of
    /// the (scaled) training inputs.
    pub fn resolve(&self, x_train: ArrayView2<f64>) -> Result<Kernel> {
        self.check()?;
        let sigma = || -> Result<f64> {
            match self.sigma {
                // σ² must be a normal positive number: 1e-300² underflows to 0 and the kernel
                // becomes 0/0 on the diagonal, which no λ repairs.
                Sigma::Value(v) => sigma_in_range(v).map(|_| v).map_err(|why| {
                    OvkError::input(format!(
                        "--sigma {why}; give σ on the scale of the distances between the \
                         (scaled) rows, or --sigma median"
                    ))
                }),
                Sigma::Median => {
                    let m = median_distance(x_train);
                    if x_train.nrows() < 2 {
                        Err(OvkError::input(format!(
                            "σ = median needs at least 2 training rows, and the training part \
                             has {}; add rows, lower --test-fraction, or give --sigma a number",
                            x_train.nrows()
                        )))
                    } else if m.is_infinite()
                        || (m.is_nan() && x_train.iter().all(|v| v.is_finite()))
                    {
                        Err(OvkError::input(
                            "the median distance between training rows overflows (features \
                             near ±1e308?); rescale the features or give --sigma a number",
                        ))
                    } else if m > 0.0 && m.is_finite() {
                        Ok(m)
                    } else {
                        Err(OvkError::input(
                            "the median distance between training rows is 0 (all rows equal?); \
                             give --sigma a number",
                        ))
                    }
                }
            }
        };
        Ok(match self.name {
            KernelName::Linear => Kernel::Linear,
            KernelName::Gaussian => Kernel::Gaussian { sigma: sigma()? },
            KernelName::Laplacian => Kernel::Laplacian { sigma: sigma()? },
            KernelName::Polynomial => Kernel::Polynomial {
                degree: self.degree,
                coef0: self.coef0,
            },
            KernelName::Cosine => Kernel::Cosine,
            KernelName::Precomputed => Kernel::Precomputed,
        })
    }
}

/// σ as a fit takes it: σ² a normal positive number (1e-300² underflows to 0 and the kernel
/// becomes 0/0 on the diagonal, which no λ repairs).
fn sigma_in_range(v: f64) -> std::result::Result<(), String> {
    if (1e-150..=1e150).contains(&v) {
        return Ok(());
    }
    Err(format!(
        "{v:e} is outside [1e-150, 1e150]: σ² {} in double precision",
        if v.is_nan() {
            "is not a number"
        } else if v < 1e-150 {
            "underflows to 0 (or σ is not positive)"
        } else {
            "overflows"
        }
    ))
}

/// A scalar kernel with every parameter fixed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", rename_all = "lowercase")]
pub enum Kernel {
    /// `xᵀz`
    Linear,
    /// `exp(−‖x−z‖²/(2σ²))`
    Gaussian {
        /// Width σ, in the (scaled) inputs' units.
        sigma: f64,
    },
    /// `(xᵀz + c)^d`
    Polynomial {
        /// Degree d.
        degree: u32,
        /// Offset c.
        coef0: f64,
    },
    /// `exp(−‖x−z‖/σ)`
    Laplacian {
        /// Width σ, in the (scaled) inputs' units.
        sigma: f64,
    },
    /// `xᵀz / (‖x‖ ‖z‖)`: the linear kernel on rows scaled to unit length (text, counts).
    Cosine,
    /// `K[i, j]` looked up in a given Gram matrix: each row of the inputs is `[j | K[i, ·]]`,
    /// its own column index then its row of K (`kernels::precomputed`).
    Precomputed,
}

impl Kernel {
    /// The bounds a fit puts on the parameters it resolves, for a kernel read back from a file
    /// (a saved model): σ within [1e-150, 1e150], the polynomial's degree and a finite offset
    /// in their declared ranges.
    pub fn check(&self) -> Result<()> {
        match *self {
            Kernel::Linear | Kernel::Cosine | Kernel::Precomputed => Ok(()),
            Kernel::Gaussian { sigma } | Kernel::Laplacian { sigma } => {
                sigma_in_range(sigma).map_err(|why| OvkError::input(format!("sigma {why}")))
            }
            Kernel::Polynomial { degree, coef0 } => {
                DEGREE.check(&Value::Int(i64::from(degree)))?;
                COEF0.check(&Value::Float(coef0))?;
                if !coef0.is_finite() {
                    return Err(OvkError::input(format!("coef0: {coef0} is not finite")));
                }
                Ok(())
            }
        }
    }

    /// The kernel's name, without its parameters.
    pub fn name(&self) -> KernelName {
        match self {
            Kernel::Linear => KernelName::Linear,
            Kernel::Gaussian { .. } => KernelName::Gaussian,
            Kernel::Polynomial { .. } => KernelName::Polynomial,
            Kernel::Laplacian { .. } => KernelName::Laplacian,
            Kernel::Cosine => KernelName::Cosine,
            Kernel::Precomputed => KernelName::Precomputed,
        }
    }

    /// Whether the kernel is a function of the squared distance (else of the inner product).
    pub(crate) fn is_distance_based(&self) -> bool {
        matches!(self, Kernel::Gaussian { .. } | Kernel::Laplacian { .. })
    }

    /// k from the inner product `xᵀz` or the squared distance `‖x−z‖²`, whichever it needs.
    #[inline]
    pub(crate) fn of_inner_or_dist(&self, v: f64) -> f64 {
        match *self {
            // The cosine's division by the norms happens where the norms are known.
            Kernel::Linear | Kernel::Cosine | Kernel::Precomputed => v,
            Kernel::Polynomial { degree, coef0 } => (v + coef0).powi(degree as i32),
            Kernel::Gaussian { sigma } => (-v.max(0.0) / (2.0 * sigma * sigma)).exp(),
            Kernel::Laplacian { sigma } => (-v.max(0.0).sqrt() / sigma).exp(),
        }
    }

    /// k(x, z) for two single points.
    pub fn eval(&self, x: &[f64], z: &[f64]) -> f64 {
        if *self == Kernel::Precomputed {
            return super::precomputed::lookup(x, z);
        }
        if super::packed::is_packed_row(x) {
            return super::packed::eval(self, x, z);
        }
        let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
        let v = if self.is_distance_based() {
            x.iter().zip(z).map(|(a, b)| (a - b) * (a - b)).sum()
        } else if *self == Kernel::Cosine {
            cosine(dot(x, z), dot(x, x), dot(z, z))
        } else {
            dot(x, z)
        };
        self.of_inner_or_dist(v)
    }
}

impl std::fmt::Display for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Kernel::Linear => write!(f, "linear"),
            Kernel::Gaussian { sigma } => write!(f, "gaussian(σ={sigma:.4})"),
            Kernel::Polynomial { degree, coef0 } => write!(f, "polynomial(d={degree}, c={coef0})"),
            Kernel::Laplacian { sigma } => write!(f, "laplacian(σ={sigma:.4})"),
            Kernel::Cosine => write!(f, "cosine"),
            Kernel::Precomputed => write!(f, "precomputed"),
        }
    }
}

/// `xᵀz / (‖x‖ ‖z‖)` from the inner product and the squared norms; 0 when either norm is 0.
#[inline]
pub(crate) fn cosine(xz: f64, xx: f64, zz: f64) -> f64 {
    let d = (xx * zz).sqrt();
    if d > 0.0 {
        (xz / d).clamp(-1.0, 1.0)
    } else {
        0.0
    }
}
