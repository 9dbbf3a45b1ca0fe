//! The pieces of a filter as an editor colours them, from jaq's own lexer: the words, variables,
//! literals and operators of a filter, each at its bytes in the filter's text.

use jaq_core::load::Lexer;
use jaq_core::load::lex::{StrPart, Tok, Token};
use std::ops::Range;

/// What a piece of a filter is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// `if`, `then`, `as`, `reduce`, `and`, … .
    Keyword,
    /// A function's name: `length`, `map`, `select`.
    Function,
    /// `.name`, a field of the input.
    Field,
    /// `$x`, a jq variable.
    Variable,
    Number,
    /// A string literal's text (interpolations `\(…)` are pieces of their own).
    String,
    /// `|`, `==`, `+`, `.`, `,`, `@csv` … .
    Operator,
}

/// jq's keywords, which the lexer reads as words.
const KEYWORDS: &[&str] = &[
    "def", "if", "then", "elif", "else", "end", "as", "reduce", "foreach", "try", "catch", "label",
    "import", "include", "and", "or", "__loc__",
];

/// The pieces of `filter`, in order and disjoint; empty when it does not lex (the checker then
/// reports it), and for a filter past the bounds of its size (`bounds`), which the lexer
/// would descend as deep as it nests.
pub fn pieces(filter: &str) -> Vec<(Range<usize>, Piece)> {
    if super::bounds::check(filter).is_err() {
        return Vec::new();
    }
    super::bounds::on_stack(|| {
        let Ok(tokens) = Lexer::new(filter).lex() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for token in &tokens {
            token_pieces(filter, token, &mut out);
        }
        out
    })
}

/// Where `part`, a slice of `whole`, lies in it.
fn range(whole: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).saturating_sub(whole.as_ptr() as usize);
    let start = start.min(whole.len());
    start..(start + part.len()).min(whole.len())
}

fn token_pieces(whole: &str, Token(text, tok): &Token<&str>, out: &mut Vec<(Range<usize>, Piece)>) {
    let at = range(whole, text);
    let piece = match tok {
        Tok::Word if KEYWORDS.contains(text) => Piece::Keyword,
        Tok::Word => Piece::Function,
        Tok::Var => Piece::Variable,
        Tok::Num => Piece::Number,
        Tok::Fmt => Piece::Operator,
        Tok::Sym if text.len() > 1 && text.starts_with('.') && !text.starts_with("..") => {
            Piece::Field
        }
        Tok::Sym => Piece::Operator,
        // The lexer keeps a block's closing delimiter as its last token, not its opening one:
        // neither is a piece.
        Tok::Block(inner) => {
            for token in inner.iter().filter(|t| !matches!(t.0, ")" | "]" | "}")) {
                token_pieces(whole, token, out);
            }
            return;
        }
        Tok::Str(parts) => {
            // The string around its interpolations, each of which is a filter.
            let mut from = at.start;
            for part in parts {
                match part {
                    StrPart::Term(term) => {
                        let term_at = range(whole, term.0);
                        out.push((from..term_at.start, Piece::String));
                        token_pieces(whole, term, out);
                        from = term_at.end;
                    }
                    StrPart::Str(_) | StrPart::Char(_) => {}
                }
            }
            out.push((from..at.end, Piece::String));
            return;
        }
    };
    out.push((at, piece));
}
