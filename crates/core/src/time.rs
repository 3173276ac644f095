//! Time is integer nanoseconds end to end. Trace timestamps are decimal microseconds
//! (`4458676416788.066`); they are converted from their text, never through `f64`, because an
//! epoch-scale value in `f64` keeps only about 0.25 µs of resolution.

/// Nanoseconds; signed so differences and offsets need no casts.
pub type Ns = i64;

/// Why a time value could not be converted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeError {
    /// Not a JSON number (nor a string holding one).
    NotANumber,
    /// The value does not fit in i64 nanoseconds.
    Overflow,
    /// The value fits, but lies outside [`MIN_NS`, `MAX_NS`]: no clock a profiler uses
    /// gives it, and differences of such values would overflow.
    OutOfRange,
}

/// The earliest instant an event may start: 2^60 ns (36.5 years) before its clock's zero.
/// With [`MAX_NS`], any difference of two instants fits in i64 with room to spare (2^62 +
/// 2^60 < 2^63), so spans, gaps, offsets and pixel positions computed from them cannot overflow.
pub const MIN_NS: Ns = -(1 << 60);

/// The latest instant an event may end: 2^62 ns (146 years) after its clock's zero; epoch
/// clocks reach it in 2116.
pub const MAX_NS: Ns = 1 << 62;

/// The widest one rank's events may spread, first start to last end: 2^50 ns (13 days). A
/// profile covers seconds to hours; an event days away from the others has a corrupt
/// timestamp (or another unit), and would stretch every span it falls in.
pub const MAX_RANK_EXTENT_NS: Ns = 1 << 50;

/// The most a job's event durations may add up to, over all its ranks (and, apart, the
/// widths of its ranks' windows): 2^62 ns (146 years; a job of ten thousand ranks profiled
/// for an hour, twenty events deep, sums to 2^56). Every sum of durations or of spans an
/// analysis forms then fits in i64.
pub const MAX_JOB_SUM_NS: Ns = 1 << 62;

/// `a × num / den` (truncated) without overflow: a result out of range saturates to `Ns::MAX`
/// when positive and to 0 when negative; 0 when `den` is 0. Scales a time by an exact ratio (a share, a speed) without going through f64.
pub fn mul_div(a: Ns, num: i128, den: i128) -> Ns {
    if den == 0 {
        return 0;
    }
    match i128::from(a).checked_mul(num) {
        Some(x) => {
            let x = x / den;
            Ns::try_from(x).unwrap_or(if x < 0 { 0 } else { Ns::MAX })
        }
        // The product overflowed: positive (an even count of negative factors) saturates
        // high, negative low.
        None if (a < 0) == ((num < 0) != (den < 0)) => Ns::MAX,
        None => 0,
    }
}

/// The end of an event starting at `start` lasting `dur` (≥ 0), when both ends lie within
/// [`MIN_NS`, `MAX_NS`] and the event is no longer than [`MAX_RANK_EXTENT_NS`].
pub fn event_end(start: Ns, dur: Ns) -> Result<Ns, TimeError> {
    if !(MIN_NS..=MAX_NS).contains(&start) || !(0..=MAX_RANK_EXTENT_NS).contains(&dur) {
        return Err(TimeError::OutOfRange);
    }
    let end = start + dur;
    if end > MAX_NS {
        return Err(TimeError::OutOfRange);
    }
    Ok(end)
}

impl std::fmt::Display for TimeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeError::NotANumber => f.write_str("not a number"),
            TimeError::Overflow => f.write_str("out of range for 64-bit nanoseconds"),
            TimeError::OutOfRange => f.write_str(
                "out of range: an event must lie within 2^60 ns before and 2^62 ns after its \
                 clock's zero, and last at most 2^50 ns (13 days)",
            ),
        }
    }
}

/// Converts the JSON text of a number of microseconds (optionally quoted) into nanoseconds.
/// Digits beyond nanosecond precision are rounded half away from zero.
pub fn micros_text_to_ns(text: &[u8]) -> Result<Ns, TimeError> {
    decimal_text_scaled(text, 3)
}

/// Converts the JSON text of an integer count of nanoseconds (optionally quoted).
pub fn nanos_text_to_ns(text: &[u8]) -> Result<Ns, TimeError> {
    decimal_text_scaled(text, 0)
}

/// Converts decimal text to nanoseconds when its unit is `10^scale` ns (`scale` 6 for
/// milliseconds, 9 for seconds), exactly, never through `f64`.
pub fn unit_text_to_ns(text: &[u8], scale: i32) -> Result<Ns, TimeError> {
    decimal_text_scaled(text, scale)
}

/// Parses `[-]digits[.digits][(e|E)[+-]digits]`, multiplied by `10^scale`, into an i64 exactly.
fn decimal_text_scaled(text: &[u8], scale: i32) -> Result<Ns, TimeError> {
    if let Some(v) = plain_decimal(text, scale) {
        return Ok(v);
    }
    general_decimal(text, scale)
}

/// The common case, `digits[.ddd]` with at most `scale` fraction digits and at most 18 digits
/// in all, in u64 arithmetic; `None` for anything else.
#[inline]
fn plain_decimal(t: &[u8], scale: i32) -> Option<Ns> {
    if t.is_empty() || t.len() > 19 {
        return None;
    }
    let mut v: u64 = 0;
    let mut frac: i32 = -1;
    for &c in t {
        match c {
            b'0'..=b'9' => {
                v = v * 10 + u64::from(c - b'0');
                if frac >= 0 {
                    frac += 1;
                }
            }
            b'.' if frac < 0 => frac = 0,
            _ => return None,
        }
    }
    let frac = frac.max(0);
    if frac > scale || (frac == 0 && t.last() == Some(&b'.')) || t[0] == b'.' {
        return None;
    }
    let v = v.checked_mul(10u64.pow((scale - frac) as u32))?;
    i64::try_from(v).ok()
}

fn general_decimal(text: &[u8], scale: i32) -> Result<Ns, TimeError> {
    let mut t = text;
    if t.len() >= 2 && t[0] == b'"' && t[t.len() - 1] == b'"' {
        t = t[1..t.len() - 1].trim_ascii();
    }
    let (neg, i) = match t.first() {
        Some(b'-') => (true, 1),
        Some(_) => (false, 0),
        None => return Err(TimeError::NotANumber),
    };
    let (mant, frac_len, i) = mantissa(t, i)?;
    let (exp, i) = exponent(t, i)?;
    if i != t.len() {
        return Err(TimeError::NotANumber);
    }
    let value = scaled(mant, exp.saturating_add(scale).saturating_sub(frac_len))?;
    let value = if neg { -value } else { value };
    i64::try_from(value).map_err(|_| TimeError::Overflow)
}

/// The digits of `t` from `i`, with an optional fraction: (significand, digits after the
/// point, where they end). Significant digits accumulate in i128; 36 digits is far beyond
/// any i64 result.
fn mantissa(t: &[u8], mut i: usize) -> Result<(i128, i32, usize), TimeError> {
    let mut mant: i128 = 0;
    let mut digits = 0u32;
    let mut frac_len: i32 = 0;
    let mut seen_digit = false;
    let mut push = |d: u8, mant: &mut i128| -> Result<(), TimeError> {
        // Leading zeros are not significant (`d` is the digit's byte).
        if *mant != 0 || d != b'0' {
            digits += 1;
        }
        if digits > 36 {
            return Err(TimeError::Overflow);
        }
        *mant = *mant * 10 + i128::from(d - b'0');
        Ok(())
    };
    while i < t.len() && t[i].is_ascii_digit() {
        push(t[i], &mut mant)?;
        seen_digit = true;
        i += 1;
    }
    if i < t.len() && t[i] == b'.' {
        i += 1;
        while i < t.len() && t[i].is_ascii_digit() {
            push(t[i], &mut mant)?;
            frac_len += 1;
            seen_digit = true;
            i += 1;
        }
    }
    if !seen_digit {
        return Err(TimeError::NotANumber);
    }
    Ok((mant, frac_len, i))
}

/// An optional exponent (`e-3`, `E+2`) at `i`: (its value, where it ends).
fn exponent(t: &[u8], mut i: usize) -> Result<(i32, usize), TimeError> {
    let mut exp: i32 = 0;
    if i < t.len() && (t[i] == b'e' || t[i] == b'E') {
        i += 1;
        let eneg = match t.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        while i < t.len() && t[i].is_ascii_digit() {
            exp = exp
                .saturating_mul(10)
                .saturating_add(i32::from(t[i] - b'0'));
            i += 1;
        }
        if i == start {
            return Err(TimeError::NotANumber);
        }
        if eneg {
            exp = -exp;
        }
    }
    Ok((exp, i))
}

/// `mant × 10^shift`, rounded half up when shifting down.
fn scaled(mant: i128, shift: i32) -> Result<i128, TimeError> {
    if mant == 0 {
        return Ok(0);
    }
    if shift >= 0 {
        if shift > 38 {
            return Err(TimeError::Overflow);
        }
        return mant
            .checked_mul(10i128.pow(shift as u32))
            .ok_or(TimeError::Overflow);
    }
    // `shift` can be i32::MIN (a saturated exponent): its magnitude, not its negation.
    let down = shift.unsigned_abs();
    if down > 38 {
        return Ok(0);
    }
    let p = 10i128.pow(down);
    Ok((mant + p / 2) / p)
}

/// Strategies for property tests of time arithmetic (proptest).
#[cfg(any(test, feature = "testing"))]
pub mod strategies {
    use super::{MAX_NS, MIN_NS, Ns};
    use proptest::prelude::*;

    /// Instants of the time range, biased to its ends and to zero.
    pub fn instant() -> impl Strategy<Value = Ns> {
        prop_oneof![
            MIN_NS..=MAX_NS,
            MIN_NS..=MIN_NS + 10_000,
            MAX_NS - 10_000..=MAX_NS,
            -10_000i64..=10_000,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mul_div_is_exact_and_saturates_on_the_side_of_its_sign() {
        assert_eq!(mul_div(10, 3, 4), 7);
        assert_eq!(mul_div(10, 3, 0), 0);
        assert_eq!(mul_div(-10, 3, 4), -7);
        // a × num overflows i128: a positive result saturates high, a negative one low.
        let big = i128::MAX / 2;
        assert_eq!(mul_div(Ns::MAX, big, 1), Ns::MAX);
        assert_eq!(mul_div(-Ns::MAX, -big, 1), Ns::MAX);
        assert_eq!(mul_div(Ns::MAX, big, -1), 0);
        assert_eq!(mul_div(-Ns::MAX, big, 1), 0);
    }

    #[test]
    fn exponents_past_i32_saturate_instead_of_overflowing() {
        let tiny = format!("0.{}1e-2147483648", "0".repeat(40));
        assert_eq!(micros_text_to_ns(tiny.as_bytes()), Ok(0));
        assert_eq!(unit_text_to_ns(b"5e-99999999999", 6), Ok(0));
        assert_eq!(
            micros_text_to_ns(b"5e99999999999"),
            Err(TimeError::Overflow)
        );
    }

    #[test]
    fn event_ends_within_the_documented_range() {
        assert_eq!(event_end(10, 5), Ok(15));
        assert_eq!(event_end(MIN_NS, 0), Ok(MIN_NS));
        assert_eq!(event_end(MAX_NS - 5, 5), Ok(MAX_NS));
        assert_eq!(event_end(MAX_NS - 5, 6), Err(TimeError::OutOfRange));
        assert_eq!(event_end(MIN_NS - 1, 0), Err(TimeError::OutOfRange));
        assert_eq!(
            event_end(0, MAX_RANK_EXTENT_NS + 1),
            Err(TimeError::OutOfRange)
        );
        assert_eq!(event_end(0, -1), Err(TimeError::OutOfRange));
        assert_eq!(event_end(i64::MAX, i64::MAX), Err(TimeError::OutOfRange));
        // Any two instants in range are a difference that fits, with room for an extent.
        assert!(
            (MAX_NS - MIN_NS)
                .checked_add(MAX_RANK_EXTENT_NS * 1024)
                .is_some()
        );
    }

    #[test]
    fn decimal_micros_are_exact() {
        assert_eq!(
            micros_text_to_ns(b"4458676416788.066"),
            Ok(4_458_676_416_788_066)
        );
        assert_eq!(
            micros_text_to_ns(b"1682725898079292"),
            Ok(1_682_725_898_079_292_000)
        );
        assert_eq!(micros_text_to_ns(b"0.001"), Ok(1));
        assert_eq!(micros_text_to_ns(b"\"12.5\""), Ok(12_500));
        assert_eq!(micros_text_to_ns(b"-3.25"), Ok(-3_250));
        assert_eq!(micros_text_to_ns(b"607312.0"), Ok(607_312_000));
        assert_eq!(micros_text_to_ns(b"1.5e3"), Ok(1_500_000));
        assert_eq!(micros_text_to_ns(b"2E-3"), Ok(2));
    }

    #[test]
    fn extra_digits_round_half_away_from_zero() {
        assert_eq!(micros_text_to_ns(b"1.0004"), Ok(1_000));
        assert_eq!(micros_text_to_ns(b"1.0005"), Ok(1_001));
        assert_eq!(micros_text_to_ns(b"-1.0005"), Ok(-1_001));
    }

    #[test]
    fn f64_would_be_wrong_here() {
        // 1712867402367683.123 µs is not representable in f64 to the nanosecond.
        let exact = micros_text_to_ns(b"1712867402367683.123").unwrap();
        assert_eq!(exact, 1_712_867_402_367_683_123);
        let via_f64 = (1712867402367683.123f64 * 1000.0) as i64;
        assert_ne!(exact, via_f64);
    }

    #[test]
    fn rejects_garbage_and_overflow() {
        assert_eq!(micros_text_to_ns(b"abc"), Err(TimeError::NotANumber));
        assert_eq!(micros_text_to_ns(b"{}"), Err(TimeError::NotANumber));
        assert_eq!(micros_text_to_ns(b""), Err(TimeError::NotANumber));
        assert_eq!(micros_text_to_ns(b"1e"), Err(TimeError::NotANumber));
        assert_eq!(
            micros_text_to_ns(b"99999999999999999"),
            Err(TimeError::Overflow)
        );
        assert_eq!(
            nanos_text_to_ns(b"1711964646000000000"),
            Ok(1_711_964_646_000_000_000)
        );
    }
}
