//! Serialization of derived ratios: rounded to 6 decimals so the JSON report is byte-stable
//! across platforms and readable (time itself is always integer ns).

use serde::Serializer;

/// Rounds to 6 decimals.
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

/// `serialize_with` for `f64`.
pub fn f64_6<S: Serializer>(x: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round6(*x))
}

/// `serialize_with` for `Option<f64>`.
pub fn opt_f64_6<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) => s.serialize_f64(round6(*v)),
        None => s.serialize_none(),
    }
}
