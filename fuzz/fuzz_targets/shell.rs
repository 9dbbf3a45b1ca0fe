//! The shell parser's reading of `cmd_run` text (seq-syntax's `shell`, tree-sitter-bash): never
//! panics, whatever the text; its reading kept per text is the one a fresh parse gives; plain
//! text, placed without the parser, reads as the parser reads it wherever the parser can; a
//! reference is placed only as a word or inside double quotes; and the command shown with its
//! values in place stays within its bound.
//!
//! The input is a command (references written `$args.NAME`) and, after each NUL byte, a value:
//! seed.sh feeds the shapes and hostile values of seq-syntax/tests/shell_corpus.rs.

#![no_main]

use libfuzzer_sys::fuzz_target;
use seq_syntax::escape::OffsetMap;
use seq_syntax::shell::{self, Context};
use seq_syntax::template::parse_template;

fuzz_target!(|input: &str| {
    let mut pieces = input.split('\0');
    let command = pieces.next().unwrap_or_default();
    let values: Vec<&str> = pieces.collect();
    let (template, _) = parse_template(command, &OffsetMap::default());
    let parts = &template.parts;
    let references = parts
        .iter()
        .filter(|p| matches!(p, seq_syntax::ast::TemplatePart::Ref(_)))
        .count();

    shell::forget_parses();
    let fresh = shell::scan(parts);
    assert_eq!(fresh.refs.len(), references, "{command:?}");
    // The second time the reading is the one kept: it must be the same.
    let kept = shell::scan(parts);
    assert_eq!(fresh, kept, "{command:?}");
    // Plain text is placed without the parser: wherever the parser places a reference, it must
    // place it the same. The parser may refuse what it cannot parse (`[ V "a"= V ]`, which the
    // shells read as plain words): a refusal is never a reading that differs.
    if shell::is_plain(parts) {
        let parsed = shell::scan_parsed(parts);
        assert_eq!(fresh.refs.len(), parsed.refs.len(), "{command:?}");
        let unparsed = Err(shell::Problem::Uncertain(shell::Uncertain::Unparsed));
        for (plain, parsed) in fresh.refs.iter().zip(&parsed.refs) {
            if parsed.context != unparsed {
                assert_eq!(plain, parsed, "{command:?}");
            }
        }
    }

    let Ok(contexts) = shell::contexts(parts) else {
        return;
    };
    assert_eq!(contexts.len(), references, "{command:?}");
    assert!(
        contexts
            .iter()
            .all(|c| matches!(c, Context::Word | Context::Double)),
        "{command:?}"
    );
    let shown = shell::shown(
        parts,
        contexts
            .iter()
            .enumerate()
            .map(|(n, &c)| (values.get(n % values.len().max(1)).copied().unwrap_or(""), c)),
    );
    assert!(shown.len() <= shell::SHOWN_MAX + '…'.len_utf8(), "{command:?}");
});
