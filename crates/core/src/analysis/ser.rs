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

/// `serialize_with` for a unit's pipe ratios (`[f32; 7]` in [`crate::model::Pipe::ALL`]
/// order): an object by pipe name, each rounded to 6 decimals; `null` when absent.
pub fn opt_pipes_6<S: Serializer>(x: &Option<[f32; 7]>, s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let Some(r) = x else {
        return s.serialize_none();
    };
    let mut m = s.serialize_map(Some(r.len()))?;
    for (p, v) in crate::model::Pipe::ALL.iter().zip(r) {
        // Through the shortest decimal text of the f32: 0.84 stays 0.84, not 0.8400000334.
        let exact: f64 = v.to_string().parse().unwrap_or(0.0);
        m.serialize_entry(p.as_str(), &round6(exact))?;
    }
    m.end()
}

/// `serialize_with` for `Option<f64>`.
pub fn opt_f64_6<S: Serializer>(x: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match x {
        Some(v) => s.serialize_f64(round6(*v)),
        None => s.serialize_none(),
    }
}
