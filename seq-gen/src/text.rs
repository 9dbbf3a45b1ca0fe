//! JSON string escaping for the file level, and finding the inputs a text reads.

use crate::pools::INPUTS;

/// Appends `text` as a JSON string literal, quotes included. Beyond what JSON requires, `é` and
/// characters outside the BMP are written as `\u` escapes (surrogate pairs for the latter), as
/// some editors and serializers do, so offset maps meet escapes of every width.
pub(crate) fn push_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            'é' => out.push_str("\\u00e9"),
            c if (c as u32) < 0x20 => push_unit(out, c as u32),
            c if (c as u32) > 0xFFFF => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    push_unit(out, u32::from(*unit));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn push_unit(out: &mut String, unit: u32) {
    out.push_str(&format!("\\u{unit:04x}"));
}

/// The set of [`INPUTS`] that `text` reads through `$args.NAME` or `${args.NAME}`, as a bit mask
/// over their indexes.
pub(crate) fn inputs_read(text: &str) -> u16 {
    let mut mask = 0;
    for (at, _) in text.match_indices("args.") {
        let before = &text[..at];
        if !(before.ends_with('$') || before.ends_with("${")) {
            continue;
        }
        let rest = &text[at + "args.".len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if let Some(index) = INPUTS.iter().position(|input| input.name == &rest[..end]) {
            mask |= 1 << index;
        }
    }
    mask
}

/// The indexes of the inputs in `mask`, in declaration order.
pub(crate) fn mask_inputs(mask: u16) -> impl Iterator<Item = usize> {
    (0..INPUTS.len()).filter(move |i| mask & (1 << i) != 0)
}

#[cfg(test)]
mod tests {
    use super::{inputs_read, mask_inputs, push_string};

    #[test]
    fn escapes_quotes_backslashes_and_wide_characters() {
        let mut out = String::new();
        push_string(&mut out, "a\"b\\c\nd é 主 🚀");
        assert_eq!(out, r#""a\"b\\c\nd \u00e9 主 \ud83d\ude80""#);
        let back: String = serde_json::from_str(&out).unwrap();
        assert_eq!(back, "a\"b\\c\nd é 主 🚀");
    }

    #[test]
    fn finds_plain_and_braced_references_only() {
        let mask = inputs_read("ssh $args.host; ${args.主机}.log $args.hosts[0] args.path $HOME");
        let names: Vec<usize> = mask_inputs(mask).collect();
        assert_eq!(names, vec![0, 4, 5]);
    }
}
