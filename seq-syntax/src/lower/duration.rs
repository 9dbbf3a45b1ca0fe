//! Durations (D-5): `"500ms"`, `"30s"`, `"1m30s"`, `"2h"` — whole numbers with units `h`, `m`,
//! `s`, `ms`, largest first, each at most once, positive in total.

use std::time::Duration;

pub(crate) fn parse(text: &str) -> Result<Duration, &'static str> {
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
        let (rank, millis_per_unit) = match &text[unit_start..i] {
            "h" => (1, 3_600_000),
            "m" => (2, 60_000),
            "s" => (3, 1_000),
            "ms" => (4, 1),
            "" => return Err("a unit is missing (h, m, s or ms)"),
            _ => return Err("units are h, m, s and ms"),
        };
        if rank <= last_rank {
            return Err("units go largest first, each at most once");
        }
        last_rank = rank;
        let millis = number
            .checked_mul(millis_per_unit)
            .ok_or("the duration is too large")?;
        total = total
            .checked_add(Duration::from_millis(millis))
            .ok_or("the duration is too large")?;
    }
    if total.is_zero() {
        return Err("it must be positive");
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

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
