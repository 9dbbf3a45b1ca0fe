//! Where each token stands: the object keys and array indexes leading to it, and whether it is a
//! key or a value. Structure errors are absorbed the way a reader would guess (a missing `:` or
//! `,`, an unquoted key, a closer of the wrong kind), so a file being typed still has a shape.
//! Objects also collect their members (and their object members' keys): sibling keys, an item's
//! tool, a group's slots.

use super::tokens::{Kind, Tok};
use crate::escape::unescape;
use std::ops::Range;

/// One step of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

/// A member of an object as far as it was read.
#[derive(Clone, Debug, Default)]
pub struct Member {
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
pub struct Frame {
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

    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// What a token is in its structure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// An object's key (unescaped).
    Key(String),
    /// A value (a scalar, or the opener of an array or object).
    Value,
    /// A closer, `:`, `,`, `;`, or what fits nowhere.
    Other,
}

/// Where a token at the current point would stand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
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
pub struct Walker {
    pub frames: Vec<Frame>,
    /// Frames closed by the last token fed (innermost first), with their final members.
    pub closed: Vec<Frame>,
    /// Only the shape: no members collected, no string value unescaped (document detection,
    /// which reads whole files that are not sequences on every keystroke).
    shape_only: bool,
}

impl Walker {
    /// A walker that tells roles and paths but collects no members.
    pub fn shape_only() -> Walker {
        Walker {
            shape_only: true,
            ..Walker::default()
        }
    }

    /// The path to the value at the current point: each frame's key or index.
    pub fn path(&self) -> Vec<Seg> {
        self.frames.iter().map(Frame::seg).collect()
    }

    /// Where a token of kind `next` would stand (`None`: whatever comes).
    pub fn place(&self, next: Option<Kind>) -> Place {
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
    pub fn feed(&mut self, text: &str, tok: &Tok) -> Role {
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
            Kind::Other => Role::Other,
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
    let raw = text.get(tok.content()).unwrap_or("");
    unescape(raw, 0).0.text.into_owned()
}
