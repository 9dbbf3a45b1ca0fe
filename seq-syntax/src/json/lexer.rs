//! The logos lexer shared by the file level and the item language.

use logos::Logos;

#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n]+")]
pub enum Token<'src> {
    // TODO(json helper): the full token set.
    #[token("{")]
    LBrace,
    #[regex(r#""([^"\\\x00-\x1F]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*""#)]
    String(&'src str),
}
