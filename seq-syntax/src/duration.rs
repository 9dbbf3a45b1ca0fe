//! Durations as the language writes them ("Groups" in docs/reference.md, `timeout`): `"500ms"`,
//! `"30s"`, `"1m30s"`, `"2h"` — whole numbers with units `h`, `m`, `s`, `ms`, largest first, each
//! at most once, positive in total. [`parse`] reads them and [`format`](fn@format) writes them, its inverse.

use std::fmt::Write as _;
use std::time::Duration;

/// The units, largest first, with their length in milliseconds: the one table both directions
/// read.
const UNITS: [(&str, u64); 4] = [("h", 3_600_000), ("m", 60_000), ("s", 1_000), ("ms", 1)];

/// Writes a duration as the language does, largest unit first, zero units left out: `1m30s`,
/// `500ms`; `0s` for zero. Below a millisecond is dropped. `parse(&format(d)) == Ok(d)` for every
/// positive whole number of milliseconds.
pub fn format(duration: Duration) -> String {
    let mut millis = u64::try_from(duration.as_millis()).unwrap_or(u64::MAX);
    if millis == 0 {
        return "0s".to_owned();
    }
    let mut out = String::new();
    for (unit, per) in UNITS {
        let amount = millis / per;
        millis %= per;
        if amount > 0 {
            // Writing to a `String` cannot fail.
            let _ = write!(out, "{amount}{unit}");
        }
    }
    out
}

/// Reads a duration; the error says what is wrong, for a message to a user.
pub fn parse(text: &str) -> Result<Duration, &'static str> {
    let total = parse_zero_allowed(text)?;
    if total.is_zero() {
        return Err("it must be positive");
    }
    Ok(total)
}

/// Reads a duration that may be zero (`"0s"`), for a pause that may be none.
pub fn parse_zero_allowed(text: &str) -> Result<Duration, &'static str> {
    if text.is_empty() {
        return Err("it is empty");
    }
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut total = Duration::ZERO;
    // Rank of the last unit seen, so that units come largest first and at most once.
    let mut last_rank = 0u8;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        if start == i {
            return Err("expected a whole number before each unit");
        }
        let number: u64 = text[start..i]
            .parse()
            .map_err(|_| "the number is too large")?;
        let unit_start = i;
        while i < bytes.len() && bytes[i].is_ascii_alphabetic() {
            i += 1;
        }
        let unit = &text[unit_start..i];
        if unit.is_empty() && bytes.get(i) == Some(&b'.') {
            return Err("fractions are not allowed: write whole numbers of smaller units");
        }
        if unit.is_empty() {
            return Err("a unit is missing (h, m, s or ms)");
        }
        let Some((rank, (_, millis_per_unit))) = UNITS
            .iter()
            .zip(1u8..)
            .map(|(u, rank)| (rank, u))
            .find(|(_, (name, _))| *name == unit)
        else {
            return Err("units are h, m, s and ms");
        };
        if rank <= last_rank {
            return Err("units go largest first, each at most once");
        }
        last_rank = rank;
        let millis = number
            .checked_mul(*millis_per_unit)
            .ok_or("the duration is too large")?;
        total = total
            .checked_add(Duration::from_millis(millis))
            .ok_or("the duration is too large")?;
    }
    Ok(total)
}

/// The duration a number with a fraction and one unit means (`1.5s`, `0.25h`), when it is a
/// whole number of milliseconds: what [`parse`] refuses, read for a suggestion.
pub fn from_fraction(text: &str) -> Option<Duration> {
    let (whole, rest) = text.split_once('.')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (fraction, unit) = rest.split_at(digits);
    let per = UNITS.iter().find(|(name, _)| *name == unit)?.1;
    if whole.is_empty() || fraction.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = 10u64.checked_pow(u32::try_from(fraction.len()).ok()?)?;
    let whole: u64 = whole.parse().ok()?;
    let fraction: u64 = fraction.parse().ok()?;
    let part = fraction.checked_mul(per)?;
    if part % scale != 0 {
        return None;
    }
    let millis = whole.checked_mul(per)?.checked_add(part / scale)?;
    (millis > 0).then(|| Duration::from_millis(millis))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn format_is_the_inverse_of_parse(millis in 1u64..=10_000_000_000_000) {
            let duration = Duration::from_millis(millis);
            prop_assert_eq!(parse(&format(duration)), Ok(duration));
        }
    }

    #[test]
    fn fractions_are_read_for_a_suggestion_when_whole_in_milliseconds() {
        assert_eq!(from_fraction("1.5s"), Some(Duration::from_millis(1500)));
        assert_eq!(from_fraction("0.25h"), Some(Duration::from_secs(900)));
        assert_eq!(from_fraction("2.5ms"), None);
        assert_eq!(from_fraction("0.0s"), None);
        assert_eq!(from_fraction(".5s"), None);
        assert_eq!(from_fraction("1.5"), None);
        assert_eq!(from_fraction("1.5x"), None);
        assert_eq!(
            parse("1.5s"),
            Err("fractions are not allowed: write whole numbers of smaller units")
        );
    }

    #[test]
    fn formats_as_the_language_writes() {
        assert_eq!(format(Duration::from_secs(30)), "30s");
        assert_eq!(format(Duration::from_millis(90_500)), "1m30s500ms");
        assert_eq!(format(Duration::from_secs(7200)), "2h");
        assert_eq!(format(Duration::ZERO), "0s");
    }

    #[test]
    fn accepts_the_documented_forms() {
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse("1h2m3s4ms"), Ok(Duration::from_millis(3_723_004)));
    }

    #[test]
    fn rejects_everything_else() {
        for bad in [
            "",
            "30",
            "s",
            "0s",
            "1.5s",
            "30 s",
            "1s1m",
            "1s1s",
            "10x",
            "-1s",
            "99999999999999999999s",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
