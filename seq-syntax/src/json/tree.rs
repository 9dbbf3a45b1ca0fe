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

/// Projections onto one kind each: what is not of that kind, a kind added later included, is
/// `None`, so no caller needs to list the others.
impl<'src> NodeKind<'src> {
    /// The raw body of a string literal.
    pub fn as_string(&self) -> Option<&'src str> {
        if let NodeKind::String(body) = self {
            Some(body)
        } else {
            None
        }
    }

    /// The elements of an array.
    pub fn as_array(&self) -> Option<&[Node<'src>]> {
        if let NodeKind::Array(elements) = self {
            Some(elements)
        } else {
            None
        }
    }

    /// The members of an object.
    pub fn as_object(&self) -> Option<&[Member<'src>]> {
        if let NodeKind::Object(members) = self {
            Some(members)
        } else {
            None
        }
    }
}

/// A member of an object. One that recovery could not read as `"key": value` (its key
/// malformed, or its `:` missing) is kept with an error key, so that what was typed stays in the
/// tree; a diagnostic has been reported for it, and lowering leaves it out.
#[derive(Clone, Debug, PartialEq)]
pub struct Member<'src> {
    pub key: Key<'src>,
    /// The key's span, quotes included; for an error key, the text where the key was expected.
    pub key_span: std::ops::Range<usize>,
    /// The value; an error node when it is missing or could not be read.
    pub value: Node<'src>,
}

/// An object member's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key<'src> {
    /// The body of a string literal, between the quotes, escapes not processed.
    String(&'src str),
    /// Text that is no key (an unterminated or malformed string, a word, a number), or a key
    /// whose member lacks its `:`; a diagnostic has been reported for it.
    Error,
}

impl<'src> Key<'src> {
    /// The key's body, unless it is an error key.
    pub fn text(self) -> Option<&'src str> {
        match self {
            Key::String(text) => Some(text),
            Key::Error => None,
        }
    }
}
