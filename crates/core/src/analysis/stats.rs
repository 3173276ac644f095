//! The small statistics the analyses share, defined once: medians of sorted values (an even
//! count takes the floor of the mean of the middle two, in integers) and ratios that are 0
//! over an empty whole.

use crate::time::Ns;

/// Median of sorted values; even count: floor of the mean of the middle two (0 when empty).
pub fn median_sorted(v: &[Ns]) -> Ns {
    let n = v.len();
    if n == 0 {
        return 0;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]).div_euclid(2)
    }
}

/// Median of sorted unsigned values (floor of the mean of the middle two).
pub fn median_u64(sorted: &[u64]) -> u64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2
    }
}

/// Median of sorted floats (mean of the middle two); `None` when empty.
pub fn median_f64(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

/// a / b as a fraction, 0 when b is 0.
pub fn ratio(a: i64, b: i64) -> f64 {
    if b > 0 { a as f64 / b as f64 } else { 0.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_median_floors() {
        assert_eq!(median_sorted(&[1, 2, 3, 4]), 2);
        assert_eq!(median_sorted(&[10, 13]), 11);
        assert_eq!(median_sorted(&[]), 0);
        assert_eq!(median_u64(&[1, 4]), 2);
        assert_eq!(median_f64(&[1.0, 4.0]), Some(2.5));
        assert_eq!((ratio(1, 4), ratio(1, 0)), (0.25, 0.0));
    }
}
