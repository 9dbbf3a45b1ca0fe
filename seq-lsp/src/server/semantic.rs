//! Semantic tokens for the languages inside strings: the legend, and the relative encoding LSP
//! wants (each token's line and start relative to the previous token's).

use super::encoding::Lines;
use crate::ide::{self, TokenKind};
use lsp_types::{SemanticToken, SemanticTokenType, SemanticTokensLegend};

/// The standard token types the ide's kinds map onto, each once, in the order of
/// [`TokenKind::ALL`]: a token's type is its index here.
pub fn legend() -> SemanticTokensLegend {
    let mut token_types: Vec<SemanticTokenType> = Vec::new();
    for kind in TokenKind::ALL {
        let name = SemanticTokenType::new(kind.lsp_name());
        if !token_types.contains(&name) {
            token_types.push(name);
        }
    }
    SemanticTokensLegend {
        token_types,
        token_modifiers: Vec::new(),
    }
}

fn type_index(kind: TokenKind) -> u32 {
    let mut seen: Vec<&str> = Vec::new();
    for other in TokenKind::ALL {
        if !seen.contains(&other.lsp_name()) {
            seen.push(other.lsp_name());
        }
        if other == kind {
            break;
        }
    }
    seen.iter()
        .position(|&n| n == kind.lsp_name())
        .and_then(|i| u32::try_from(i).ok())
        .unwrap_or(0)
}

/// Tokens in LSP's relative form. Tokens are sorted and on one line each (they lie inside one
/// JSON string); one that is not is left out rather than sent wrong.
pub fn encode(tokens: &[ide::SemanticToken], lines: Lines<'_>) -> Vec<SemanticToken> {
    let mut out = Vec::with_capacity(tokens.len());
    let (mut line, mut start) = (0, 0);
    for token in tokens {
        let range = lines.range(token.span);
        if range.start.line != range.end.line || range.end.character <= range.start.character {
            continue;
        }
        // Out of order (never, by the ide's contract): dropped, not wrapped around.
        let Some(delta_line) = range.start.line.checked_sub(line) else {
            continue;
        };
        let delta_start = if delta_line == 0 {
            match range.start.character.checked_sub(start) {
                Some(delta) => delta,
                None => continue,
            }
        } else {
            range.start.character
        };
        out.push(SemanticToken {
            delta_line,
            delta_start,
            length: range.end.character - range.start.character,
            token_type: type_index(token.kind),
            token_modifiers_bitset: 0,
        });
        (line, start) = (range.start.line, range.start.character);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_standard_type_in_the_legend() {
        let legend = legend();
        for kind in TokenKind::ALL {
            let index = type_index(kind) as usize;
            assert_eq!(
                legend.token_types[index].as_str(),
                kind.lsp_name(),
                "{kind:?}"
            );
        }
    }
}
