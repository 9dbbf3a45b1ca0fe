//! The untyped, spanned JSON tree. Strings stay raw slices of the source (escapes not processed):
//! most are unescaped once, on demand, by lowering.

/// A JSON value with its span in the parsed text (byte offsets).
#[derive(Clone, Debug, PartialEq)]
pub struct Node<'src> {
    pub kind: NodeKind<'src>,
    pub span: std::ops::Range<usize>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind<'src> {
    Null,
    Bool(bool),
    /// The number's text, validated by the lexer against JSON's grammar.
    Number(&'src str),
    /// The body of a string literal, between the quotes, escapes not processed.
    String(&'src str),
    /// A bare reference such as `$args.hosts[0]` (item mode only).
    Ref(&'src str),
    Array(Vec<Node<'src>>),
    /// Members in source order; duplicates are kept (lowering reports them).
    Object(Vec<Member<'src>>),
    /// Input that recovery skipped; a diagnostic has been reported for it.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Member<'src> {
    /// The key's body, between the quotes, escapes not processed.
    pub key: &'src str,
    /// The key's span, quotes included.
    pub key_span: std::ops::Range<usize>,
    pub value: Node<'src>,
}
