//! JSON has no NaN: serde_json writes a NaN (an objective a method never computed, an undefined
//! metric) as `null`. These read `null` back as NaN, so such a session still loads.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

/// A number, `null` read as NaN.
pub fn f64<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// A map of names to numbers, each `null` read as NaN.
pub fn map<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, f64>, D::Error> {
    let raw = BTreeMap::<String, Option<f64>>::deserialize(d)?;
    Ok(raw
        .into_iter()
        .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
        .collect())
}

pub(crate) fn opt_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, f64>>, D::Error> {
    let raw = Option::<BTreeMap<String, Option<f64>>>::deserialize(d)?;
    Ok(raw.map(|m| {
        m.into_iter()
            .map(|(k, v)| (k, v.unwrap_or(f64::NAN)))
            .collect()
    }))
}

/// A list of numbers, each `null` read as NaN.
pub fn vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    let raw = Vec::<Option<f64>>::deserialize(d)?;
    Ok(raw.into_iter().map(|v| v.unwrap_or(f64::NAN)).collect())
}
