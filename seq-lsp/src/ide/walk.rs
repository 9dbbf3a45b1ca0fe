//! Where each token of forgiving JSON stands: the object keys and array indexes leading to it,
//! and whether it is a key or a value. Structure errors are absorbed the way a reader would
//! guess (a missing `:` or `,`, an unquoted key, a closer of the wrong kind), so a file being
//! typed still has a shape. Objects also collect their members (and their object members' keys),
//! which completion reads for sibling keys, the item's tool and the group's slots.

use super::scan::{Kind, Tok};
use seq_syntax::escape::unescape;
use std::ops::Range;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    Index(usize),
}

/// A member of an object as far as it was read.
#[derive(Clone, Debug, Default)]
pub(crate) struct Member {
    pub key: String,
    pub key_range: Range<usize>,
    /// The value's text when it is a string.
    pub text: Option<String>,
    /// When the value is an object: its members' keys and string values.
    pub children: Vec<(String, Option<String>)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    Key,
    Colon,
    Value,
    Comma,
}

#[derive(Clone, Debug)]
pub(crate) struct Frame {
    /// Offset of the `{` or `[`.
    pub open: usize,
    pub object: bool,
    expect: Expect,
    /// Objects: the key of the member being read. Arrays: unused.
    pub key: Option<String>,
    /// Arrays: the index of the element being read.
    pub index: usize,
    pub members: Vec<Member>,
}

impl Frame {
    fn seg(&self) -> Seg {
        if self.object {
            Seg::Key(self.key.clone().unwrap_or_default())
        } else {
            Seg::Index(self.index)
        }
    }

    pub(crate) fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// What a token is in its structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// An object's key (unescaped).
    Key(String),
    /// A value (a scalar, or the opener of an array or object).
    Value,
    /// A closer, `:`, `,`, `;`, or what fits nowhere.
    Other,
}

/// Where a token at the current point would stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    /// Outside every structure (the item list of a `tools` string).
    Top,
    /// Where an object's key goes.
    Key,
    /// Where the value of `key` goes.
    Value(String),
    /// Where an array's element goes.
    Element,
    /// Nowhere a new token makes sense (after a value, before its `,`).
    Nowhere,
}

#[derive(Debug, Default)]
pub(crate) struct Walker {
    pub frames: Vec<Frame>,
    /// Frames closed by the last token fed (innermost first), with their final members.
    pub closed: Vec<Frame>,
    /// Only the shape: no members collected, no string value unescaped (document detection,
    /// which reads whole files that are not sequences on every keystroke).
    shape_only: bool,
}

impl Walker {
    /// A walker that tells roles and paths but collects no members.
    pub(crate) fn shape_only() -> Walker {
        Walker {
            shape_only: true,
            ..Walker::default()
        }
    }

    /// The path to the value at the current point: each frame's key or index.
    pub(crate) fn path(&self) -> Vec<Seg> {
        self.frames.iter().map(Frame::seg).collect()
    }

    /// Where a token of kind `next` would stand (`None`: whatever comes).
    pub(crate) fn place(&self, next: Option<Kind>) -> Place {
        let Some(top) = self.frames.last() else {
            return Place::Top;
        };
        let named = matches!(next, Some(Kind::String { .. } | Kind::Word));
        match (top.object, top.expect) {
            (true, Expect::Key) => Place::Key,
            (true, Expect::Comma) if named => Place::Key,
            (true, Expect::Value) => Place::Value(top.key.clone().unwrap_or_default()),
            (true, Expect::Colon) if next.is_some() => {
                Place::Value(top.key.clone().unwrap_or_default())
            }
            (false, Expect::Value | Expect::Key) => Place::Element,
            (false, Expect::Comma) if next.is_some() => Place::Element,
            (true, Expect::Colon | Expect::Comma) | (false, Expect::Colon | Expect::Comma) => {
                Place::Nowhere
            }
        }
    }

    /// Reads one token of `text`, returning its role.
    pub(crate) fn feed(&mut self, text: &str, tok: &Tok) -> Role {
        self.closed.clear();
        match tok.kind {
            Kind::LBrace | Kind::LBrack => {
                self.value_starts(None);
                self.frames.push(Frame {
                    open: tok.range.start,
                    object: tok.kind == Kind::LBrace,
                    expect: if tok.kind == Kind::LBrace {
                        Expect::Key
                    } else {
                        Expect::Value
                    },
                    key: None,
                    index: 0,
                    members: Vec::new(),
                });
                Role::Value
            }
            Kind::RBrace | Kind::RBrack => {
                let object = tok.kind == Kind::RBrace;
                // A closer of the other kind closes the frames opened since the matching one.
                if let Some(depth) = self.frames.iter().rposition(|f| f.object == object) {
                    while self.frames.len() > depth {
                        self.close();
                    }
                }
                Role::Other
            }
            Kind::Colon => {
                if let Some(top) = self.frames.last_mut()
                    && top.object
                    && top.expect == Expect::Colon
                {
                    top.expect = Expect::Value;
                }
                Role::Other
            }
            Kind::Comma => {
                if let Some(top) = self.frames.last_mut() {
                    if top.object {
                        top.expect = Expect::Key;
                    } else {
                        top.index += 1;
                        top.expect = Expect::Value;
                    }
                }
                Role::Other
            }
            Kind::Semicolon | Kind::Other => Role::Other,
            Kind::String { .. } | Kind::Word | Kind::Number | Kind::Ref => {
                if self.place(Some(tok.kind)) == Place::Key {
                    let key = unescaped(text, tok);
                    if let Some(top) = self.frames.last_mut() {
                        top.key = Some(key.clone());
                        top.expect = Expect::Colon;
                        if !self.shape_only {
                            top.members.push(Member {
                                key: key.clone(),
                                key_range: tok.range.clone(),
                                ..Member::default()
                            });
                        }
                    }
                    return Role::Key(key);
                }
                let string = (matches!(tok.kind, Kind::String { .. }) && !self.shape_only)
                    .then(|| unescaped(text, tok));
                self.value_starts(string);
                self.value_ends();
                Role::Value
            }
        }
    }

    /// A value begins in the top frame; `text` is its text when it is a string.
    fn value_starts(&mut self, text: Option<String>) {
        let Some(top) = self.frames.last_mut() else {
            return;
        };
        if top.object {
            if top.expect == Expect::Key {
                // A value where a key belongs: a member without a key.
                top.key = None;
            }
            top.expect = Expect::Value;
            if let (Some(text), Some(member)) = (text, top.members.last_mut())
                && top.key.as_deref() == Some(member.key.as_str())
            {
                member.text = Some(text);
            }
        } else if top.expect == Expect::Comma {
            // A missing `,` between elements.
            top.index += 1;
        }
    }

    fn value_ends(&mut self) {
        if let Some(top) = self.frames.last_mut() {
            top.expect = Expect::Comma;
        }
    }

    fn close(&mut self) {
        let Some(frame) = self.frames.pop() else {
            return;
        };
        if let Some(parent) = self.frames.last_mut()
            && parent.object
            && frame.object
            && let Some(member) = parent.members.last_mut()
            && parent.key.as_deref() == Some(member.key.as_str())
        {
            member.children = frame
                .members
                .iter()
                .map(|m| (m.key.clone(), m.text.clone()))
                .collect();
        }
        self.value_ends();
        self.closed.push(frame);
    }
}

/// A string token's body unescaped (leniently), or a word as it is.
fn unescaped(text: &str, tok: &Tok) -> String {
    let range = match tok.kind {
        Kind::String { .. } => tok.body(),
        Kind::LBrace
        | Kind::RBrace
        | Kind::LBrack
        | Kind::RBrack
        | Kind::Colon
        | Kind::Comma
        | Kind::Semicolon
        | Kind::Number
        | Kind::Word
        | Kind::Ref
        | Kind::Other => tok.range.clone(),
    };
    let raw = text.get(range).unwrap_or("");
    unescape(raw, 0).0.text.into_owned()
}

/// The structure around offset `cursor` of `text`.
#[derive(Debug)]
pub(crate) struct Context {
    /// The frames enclosing the cursor, outermost first, each with all its members (also those
    /// after the cursor).
    pub frames: Vec<Frame>,
    /// The path at the cursor (see [`Walker::path`]): to the value being written, or at a
    /// [`Place::Key`] to the object whose key is being written.
    pub path: Vec<Seg>,
    pub place: Place,
    /// The string or word the cursor is in.
    pub token: Option<Tok>,
}

impl Context {
    /// The keys of the object the cursor is in, except the one being edited.
    pub(crate) fn sibling_keys(&self) -> Vec<&str> {
        let edited = self.token.as_ref().map(|t| t.range.start);
        self.frames.last().map_or_else(Vec::new, |f| {
            f.members
                .iter()
                .filter(|m| Some(m.key_range.start) != edited)
                .map(|m| m.key.as_str())
                .collect()
        })
    }
}

/// The string values of group fields (`groups[i].FIELD`), with the field's name: where the
/// `tools` and `when` strings are, also in a file whose JSON is broken elsewhere.
pub(crate) fn group_strings(text: &str) -> Vec<(String, Tok)> {
    let mut walker = Walker::default();
    let mut found = Vec::new();
    for tok in super::scan::tokenize(text) {
        let field = match (&tok.kind, walker.frames.len()) {
            (Kind::String { .. }, 3) => match walker.path().as_slice() {
                [Seg::Key(groups), Seg::Index(_), Seg::Key(field)] if groups == "groups" => {
                    Some(field.clone())
                }
                [..] => None,
            },
            (_, _) => None,
        };
        if walker.feed(text, &tok) == Role::Value
            && let Some(field) = field
        {
            found.push((field, tok));
        }
    }
    found
}

/// The path of the value at `place`, or of the object whose key is at `place`.
fn path_at(walker: &Walker, place: &Place) -> Vec<Seg> {
    let mut path = walker.path();
    if *place == Place::Key {
        path.pop();
    }
    path
}

/// The walker's state when it reached the cursor.
struct AtCursor {
    /// The `open` offsets of the frames enclosing the cursor.
    opens: Vec<usize>,
    path: Vec<Seg>,
    place: Place,
    token: Option<Tok>,
}

impl AtCursor {
    fn take(walker: &Walker, token: Option<Tok>) -> AtCursor {
        let place = walker.place(token.as_ref().map(|t| t.kind));
        AtCursor {
            opens: walker.frames.iter().map(|f| f.open).collect(),
            path: path_at(walker, &place),
            place,
            token,
        }
    }
}

pub(crate) fn context(text: &str, tokens: &[Tok], cursor: usize) -> Context {
    let mut walker = Walker::default();
    let mut at: Option<AtCursor> = None;
    let mut frames: Vec<Option<Frame>> = Vec::new();
    for tok in tokens {
        if at.is_none() && (tok.holds_cursor(cursor) || tok.range.start >= cursor) {
            let token = tok.holds_cursor(cursor).then(|| tok.clone());
            let taken = AtCursor::take(&walker, token);
            frames = vec![None; taken.opens.len()];
            at = Some(taken);
        }
        walker.feed(text, tok);
        if let Some(at) = &at {
            for frame in walker.closed.drain(..) {
                if let Some(i) = at.opens.iter().position(|&o| o == frame.open)
                    && let Some(slot) = frames.get_mut(i)
                {
                    *slot = Some(frame);
                }
            }
        }
    }
    let at = at.unwrap_or_else(|| {
        let taken = AtCursor::take(&walker, None);
        frames = vec![None; taken.opens.len()];
        taken
    });
    // Frames still open at the end of the text (it is being typed) are as complete as they get.
    for frame in walker.frames.drain(..) {
        if let Some(i) = at.opens.iter().position(|&o| o == frame.open)
            && let Some(slot) = frames.get_mut(i)
            && slot.is_none()
        {
            *slot = Some(frame);
        }
    }
    Context {
        frames: frames.into_iter().flatten().collect(),
        path: at.path,
        place: at.place,
        token: at.token,
    }
}

#[cfg(test)]
mod tests {
    use super::super::scan::tokenize;
    use super::*;

    fn at(marked: &str) -> (String, Context) {
        let cursor = marked.find('|').unwrap_or(marked.len());
        let text = marked.replacen('|', "", 1);
        let tokens = tokenize(&text);
        let cx = context(&text, &tokens, cursor);
        (text, cx)
    }

    fn key(k: &str) -> Seg {
        Seg::Key(k.to_owned())
    }

    #[test]
    fn places_in_broken_text() {
        let (_, cx) = at(r#"{"name": "x", "groups": [{"in": {"a": "string"}, "ti|"#);
        assert_eq!(cx.place, Place::Key);
        assert_eq!(cx.path, [key("groups"), Seg::Index(0)]);
        assert_eq!(cx.frames.len(), 3);
        let group = &cx.frames[2];
        assert_eq!(group.member("in").map(|m| m.children.len()), Some(1));
        assert_eq!(cx.sibling_keys(), ["in"]);

        let (_, cx) = at(r#"{"groups": [{"on_error": "re|", "name": "g"}]}"#);
        assert_eq!(cx.place, Place::Value("on_error".to_owned()));
        assert_eq!(cx.sibling_keys(), ["on_error", "name"]);

        let (_, cx) = at(r#"{"groups": [{"parallel": |}]}"#);
        assert_eq!(cx.place, Place::Value("parallel".to_owned()));
        assert!(cx.token.is_none());

        let (_, cx) = at(r#"{"a": 1 |}"#);
        assert_eq!(cx.place, Place::Nowhere);

        let (_, cx) = at(r#"{"tool":"x"} ; |"#);
        assert_eq!(cx.place, Place::Top);
        let (_, cx) = at(r#"{"tool":"x","args":{"target":"g","args":{|}}} ;"#);
        assert_eq!(cx.place, Place::Key);
        assert_eq!(cx.path, [key("args"), key("args")]);
        assert_eq!(
            cx.frames[1]
                .member("target")
                .and_then(|m| m.text.as_deref()),
            Some("g")
        );
        assert_eq!(
            cx.frames[0].member("tool").and_then(|m| m.text.as_deref()),
            Some("x")
        );
    }
}
