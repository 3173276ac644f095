use super::parse_size;

proptest::proptest! {
    /// Any value: accepted exactly when it is digits and a known unit, to the byte;
    /// refused in a short line otherwise (never a panic, never a wrap).
    #[test]
    fn any_size_value_is_parsed_or_refused_in_short(
        v in "\\PC{0,80}|[ ]?[0-9]{1,22}[ ]?(|b|k|KiB|mb|G|gib|T|TB|X|KK|\\.5G)[ ]?"
    ) {
        let t = v.trim();
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        let unit = t[digits..].trim().to_ascii_uppercase();
        let shift = match unit.as_str() {
            "" | "B" => Some(0),
            "K" | "KB" | "KIB" => Some(10),
            "M" | "MB" | "MIB" => Some(20),
            "G" | "GB" | "GIB" => Some(30),
            "T" | "TB" | "TIB" => Some(40),
            _ => None,
        };
        let want = match (t[..digits].parse::<u128>(), shift) {
            (Ok(n), Some(s)) if digits > 0 => Some(n << s),
            _ => None,
        };
        match parse_size(&v) {
            Ok(b) => proptest::prop_assert_eq!(Some(u128::from(b)), want),
            Err(e) => {
                proptest::prop_assert!(
                    want.is_none_or(|w| w == 0 || w > u128::from(u64::MAX)),
                    "{v:?} refused: {e}"
                );
                proptest::prop_assert!(e.chars().count() < 160, "{e}");
            }
        }
    }
}

#[test]
fn sizes_take_binary_units_and_refuse_the_rest() {
    assert_eq!(parse_size("123"), Ok(123));
    assert_eq!(parse_size(" 64K "), Ok(64 << 10));
    assert_eq!(parse_size("1KiB"), Ok(1024));
    assert_eq!(parse_size("512mb"), Ok(512 << 20));
    assert_eq!(parse_size("8G"), Ok(8 << 30));
    assert_eq!(parse_size("2T"), Ok(2 << 40));
    for bad in ["abc", "-1", "1.5G", "", "G", "12 apples", "1KiBB"] {
        let e = parse_size(bad).unwrap_err();
        assert!(e.contains("not a size"), "{bad}: {e}");
    }
    assert!(parse_size("0").unwrap_err().contains("at least 1"));
    assert!(parse_size("99999999T").unwrap_err().contains("16 EiB"));
    // An echoed value is cut.
    assert!(parse_size(&"x".repeat(10_000)).unwrap_err().len() < 200);
}
