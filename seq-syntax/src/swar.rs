//! Byte searches a word (eight bytes) at a time in plain integer arithmetic. The runs they skip,
//! between the escapes of a `tools` string or inside the strings of its items, are a few bytes
//! long: too short for `memchr`'s vector setup to pay off, long enough that a byte-wise loop is
//! the cost.

/// The bytes searched at once.
pub(crate) const WORD: usize = 8;

const ONES: u64 = u64::from_le_bytes([0x01; WORD]);
const HIGHS: u64 = u64::from_le_bytes([0x80; WORD]);

/// The high bit of each byte equal to `b`. A borrow can flag a byte above the lowest true
/// match, never one under it: only the lowest flag is exact.
fn equal(x: u64, b: u8) -> u64 {
    let zero = x ^ (ONES * u64::from(b));
    zero.wrapping_sub(ONES) & !zero & HIGHS
}

/// The index of the lowest flagged byte, [`WORD`] when none is.
fn lowest(flags: u64) -> usize {
    (flags.trailing_zeros() / 8) as usize
}

/// The index of the first `\` in `word`, or [`WORD`].
pub(crate) fn first_backslash(word: &[u8; WORD]) -> usize {
    lowest(equal(u64::from_le_bytes(*word), b'\\'))
}

/// The index of the first `"` or `\` in `word`, or [`WORD`].
pub(crate) fn first_quote_or_backslash(word: &[u8; WORD]) -> usize {
    let x = u64::from_le_bytes(*word);
    lowest(equal(x, b'"') | equal(x, b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive(word: &[u8; WORD], wanted: impl Fn(u8) -> bool) -> usize {
        word.iter().position(|&b| wanted(b)).unwrap_or(WORD)
    }

    proptest! {
        // Bytes drawn mostly from around the searched ones, where borrows go wrong.
        #[test]
        fn searches_agree_with_a_byte_wise_loop(
            word in prop::array::uniform8(prop_oneof![
                Just(b'"'), Just(b'\\'), Just(0x1f), Just(0x20), Just(0x21), Just(0x00),
                Just(0x5b), Just(0x5d), Just(0x80), Just(0xff), any::<u8>(),
            ])
        ) {
            prop_assert_eq!(first_backslash(&word), naive(&word, |b| b == b'\\'));
            prop_assert_eq!(
                first_quote_or_backslash(&word),
                naive(&word, |b| b == b'"' || b == b'\\')
            );
        }
    }
}
