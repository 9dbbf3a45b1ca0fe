//! Where a cursor stands in JSON being typed, for the editor, read from the grammar's own tree
//! ([`parse`]) and the lexer's tokens ([`Tokens`]). The tree keeps every member it
//! can read, a half-written one as an error key and value, also in structures left open at the
//! end of the text, where a cursor typing usually is; the tokens give the one under the cursor
//! and the separator before it. Both levels are served: a sequence file ([`Mode::File`]), and the
//! items of a `tools` string ([`Mode::Item`], see [`roots`]), where `;` between items is a token
//! outside every structure and bare references are tokens of their own.

mod tokens;

pub use tokens::{Kind, Tok, Tokens, tokenize};

use super::{Key, Mode, Node, NodeKind, parse};
use crate::escape::unescape;
use crate::fields::key;
use crate::split::split_items;
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
    /// The key unescaped; an error key's text as typed, without its quotes.
    pub key: String,
    pub key_range: Range<usize>,
    /// The value's text when it is a string (also one still unterminated).
    pub text: Option<String>,
    /// When the value is an object: its members' keys and string values.
    pub children: Vec<(String, Option<String>)>,
}

/// An object or array enclosing the cursor.
#[derive(Clone, Debug)]
pub struct Frame {
    /// Offset of the `{` or `[`.
    pub open: usize,
    pub object: bool,
    /// An object's members, also those after the cursor (an array's: none).
    pub members: Vec<Member>,
}

impl Frame {
    pub fn member(&self, key: &str) -> Option<&Member> {
        self.members.iter().find(|m| m.key == key)
    }
}

/// Where a token at the cursor would stand.
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

/// The structure around offset `cursor` of `text`.
#[derive(Debug)]
pub struct Context {
    /// The frames enclosing the cursor, outermost first, each with all its members (also those
    /// after the cursor).
    pub frames: Vec<Frame>,
    /// The path at the cursor: to the value being written, or at a [`Place::Key`] to the object
    /// whose key is being written.
    pub path: Vec<Seg>,
    pub place: Place,
    /// The string or word the cursor is in.
    pub token: Option<Tok>,
}

impl Context {
    /// The keys of the object the cursor is in, except the one being edited.
    pub fn sibling_keys(&self) -> Vec<&str> {
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

/// A top-level value of a text, and the offset of the text it was parsed from.
#[derive(Debug)]
pub struct Root<'src> {
    pub base: usize,
    pub node: Node<'src>,
}

impl Root<'_> {
    /// A span of the tree as a range of the whole text.
    pub fn range(&self, span: &Range<usize>) -> Range<usize> {
        self.base + span.start..self.base + span.end
    }
}

/// The top-level values of `text` (with `tokens`, its tokens): the file's one, or the items of a
/// `tools` string, each parsed by the item grammar over its range as [`split_items`] finds it
/// (one it drops, unclosed or broken, from its first token on); what follows (`;`, or the next
/// item where the `;` is missing) starts the next. An item left open at the end of the text is
/// read as far as it goes.
pub fn roots<'src>(text: &'src str, mode: Mode, tokens: &[Tok]) -> Vec<Root<'src>> {
    if mode == Mode::File {
        return parse(text, mode)
            .0
            .map(|node| Root { base: 0, node })
            .into_iter()
            .collect();
    }
    // The splitter's items bound their parse: without a bound, each item's parse would run on
    // to the end of the string (the `;` after it is junk to the item grammar).
    let items = split_items(text).items;
    let mut roots = Vec::new();
    let mut next = 0;
    while let Some(tok) = tokens.get(next) {
        let base = tok.range.start;
        let until = items
            .get(items.partition_point(|item| item.start < base))
            .filter(|item| item.start == base)
            .map_or(text.len(), |item| item.end);
        let parsed = match tok.kind {
            // A `;`, or a character no value starts with.
            Kind::Other | Kind::RBrace | Kind::RBrack | Kind::Colon | Kind::Comma => None,
            Kind::LBrace
            | Kind::LBrack
            | Kind::String { .. }
            | Kind::Number
            | Kind::Word
            | Kind::Ref => text.get(base..until).and_then(|item| parse(item, mode).0),
        };
        let end = match parsed {
            Some(node) => {
                let end = base + node.span.end;
                roots.push(Root { base, node });
                end.max(tok.range.end)
            }
            None => tok.range.end,
        };
        next = tokens.partition_point(|t| t.range.start < end);
    }
    roots
}

/// The structure around offset `cursor` of `text`, whose tokens are `tokens`.
pub fn context(text: &str, mode: Mode, tokens: &[Tok], cursor: usize) -> Context {
    let token = tokens
        .get(tokens.partition_point(|t| t.range.end < cursor)..)
        .and_then(|rest| rest.iter().take(2).find(|t| t.holds_cursor(cursor)))
        .cloned();
    let mut cx = Context {
        frames: Vec::new(),
        path: Vec::new(),
        place: Place::Top,
        token,
    };
    let roots = roots(text, mode, tokens);
    let reader = Reader {
        text,
        tokens,
        cursor,
    };
    let Some(root) = roots.iter().find(|r| reader.encloses(r, &r.node)) else {
        return cx;
    };
    let mut node = &root.node;
    // Down the structures enclosing the cursor, each a frame; `node` ends at the innermost.
    loop {
        cx.frames.push(reader.frame(root, node));
        let in_member = node.kind.as_object().and_then(|members| {
            members
                .iter()
                .find(|m| reader.encloses(root, &m.value))
                .map(|m| (Seg::Key(key_text(text, root, m)), &m.value))
        });
        let inner = in_member.or_else(|| {
            node.kind.as_array().and_then(|elements| {
                elements
                    .iter()
                    .enumerate()
                    .find(|(_, e)| reader.encloses(root, e))
                    .map(|(i, e)| (Seg::Index(i), e))
            })
        });
        let Some((seg, inner)) = inner else { break };
        cx.path.push(seg);
        node = inner;
    }
    let at = cx.token.as_ref().map_or(cursor, |t| t.range.start);
    let open = root.base + node.span.start;
    // The token before the cursor, within the innermost structure.
    let before = tokens
        .get(..tokens.partition_point(|t| t.range.end <= at))
        .and_then(<[Tok]>::last)
        .filter(|t| t.range.start >= open);
    let named = matches!(
        cx.token.as_ref().map(|t| t.kind),
        Some(Kind::String { .. } | Kind::Word)
    );
    let members = cx.frames.last().map_or(&[][..], |f| f.members.as_slice());
    let (seg, place) = match (&node.kind, before) {
        (NodeKind::Object(_), Some(t)) if matches!(t.kind, Kind::LBrace | Kind::Comma) => {
            (None, Place::Key)
        }
        (NodeKind::Object(_), Some(colon)) if colon.kind == Kind::Colon => {
            let key = members
                .iter()
                .rev()
                .find(|m| m.key_range.end <= colon.range.start)
                .map(|m| m.key.clone())
                .unwrap_or_default();
            (Some(Seg::Key(key.clone())), Place::Value(key))
        }
        (NodeKind::Object(_), before) => {
            let key = before.and_then(|t| members.iter().find(|m| m.key_range == t.range));
            match key {
                // A key without its `:`: what is typed after it is its value.
                Some(member) if cx.token.is_some() => (
                    Some(Seg::Key(member.key.clone())),
                    Place::Value(member.key.clone()),
                ),
                // A value without its `,`: a name typed after it is the next key.
                None if named => (None, Place::Key),
                Some(_) | None => (None, Place::Nowhere),
            }
        }
        (NodeKind::Array(elements), before) => {
            let index = elements
                .iter()
                .filter(|e| !e.span.is_empty() && root.base + e.span.end <= at)
                .count();
            let after_value = !matches!(
                before.map(|t| t.kind),
                Some(Kind::LBrack | Kind::Comma) | None
            );
            let place = if after_value && cx.token.is_none() {
                Place::Nowhere
            } else {
                Place::Element
            };
            (Some(Seg::Index(index)), place)
        }
        (
            NodeKind::Null
            | NodeKind::Bool(_)
            | NodeKind::Number(_)
            | NodeKind::String(_)
            | NodeKind::Ref(_)
            | NodeKind::Error,
            _,
        ) => (None, Place::Nowhere),
    };
    cx.path.extend(seg);
    cx.place = place;
    cx
}

/// The string values of group fields (`groups[i].FIELD`), with the field's name: where the
/// `tools` and `when` strings are, also in a file whose JSON is broken elsewhere.
pub fn group_strings(text: &str) -> Vec<(String, Tok)> {
    let mut found = Vec::new();
    let Some(root) = roots(text, Mode::File, &[]).pop() else {
        return found;
    };
    let NodeKind::Object(members) = &root.node.kind else {
        return found;
    };
    let groups = members
        .iter()
        .filter(|m| key_text(text, &root, m) == key::GROUPS);
    for groups in groups {
        let NodeKind::Array(groups) = &groups.value.kind else {
            continue;
        };
        for group in groups {
            let NodeKind::Object(fields) = &group.kind else {
                continue;
            };
            for field in fields {
                if let Some(tok) = string_token(text, root.range(&field.value.span)) {
                    found.push((key_text(text, &root, field), tok));
                }
            }
        }
    }
    found
}

/// The string token over `range` of `text`, if it is one (also a string the grammar kept as an
/// error, unterminated or malformed).
pub fn string_token(text: &str, range: Range<usize>) -> Option<Tok> {
    if !text.get(range.clone())?.starts_with('"') {
        return None;
    }
    let mut tok = Tokens::new(text.get(range.start..)?).next()?;
    tok.range = range.start + tok.range.start..range.start + tok.range.end;
    (matches!(tok.kind, Kind::String { .. }) && tok.range == range).then_some(tok)
}

/// A member's key unescaped; an error key as it was typed, without its quotes.
pub fn key_text(text: &str, root: &Root<'_>, member: &super::Member<'_>) -> String {
    let raw = match member.key {
        Key::String(raw) => raw,
        Key::Error => {
            let typed = text.get(root.range(&member.key_span)).unwrap_or("");
            let typed = typed.strip_prefix('"').unwrap_or(typed);
            typed.strip_suffix('"').unwrap_or(typed)
        }
    };
    unescape(raw, 0).0.text.into_owned()
}

struct Reader<'a> {
    text: &'a str,
    tokens: &'a [Tok],
    cursor: usize,
}

impl Reader<'_> {
    /// Whether `node` is an object or array whose inside holds the cursor. One never closed runs
    /// to the next token after it (the end of the text, for one being typed there).
    fn encloses(&self, root: &Root<'_>, node: &Node<'_>) -> bool {
        let (closer, last) = if let Some(members) = node.kind.as_object() {
            (
                b'}',
                members.last().map(|m| m.value.span.end.max(m.key_span.end)),
            )
        } else if let Some(elements) = node.kind.as_array() {
            (b']', elements.last().map(|e| e.span.end))
        } else {
            return false;
        };
        let Range { start, end } = root.range(&node.span);
        let last = last.map_or(start + 1, |l| root.base + l);
        let closed =
            end >= start + 2 && last < end && self.text.as_bytes().get(end - 1) == Some(&closer);
        let inside_end = if closed {
            end - 1
        } else {
            let next = self.tokens.partition_point(|t| t.range.start < end);
            self.tokens
                .get(next)
                .map_or(self.text.len(), |t| t.range.start)
        };
        start < self.cursor && self.cursor <= inside_end
    }

    fn frame(&self, root: &Root<'_>, node: &Node<'_>) -> Frame {
        let members = node
            .kind
            .as_object()
            .unwrap_or_default()
            .iter()
            .map(|m| Member {
                key: key_text(self.text, root, m),
                key_range: root.range(&m.key_span),
                text: string_text(self.text, root, &m.value),
                children: m
                    .value
                    .kind
                    .as_object()
                    .unwrap_or_default()
                    .iter()
                    .map(|c| {
                        (
                            key_text(self.text, root, c),
                            string_text(self.text, root, &c.value),
                        )
                    })
                    .collect(),
            })
            .collect();
        Frame {
            open: root.base + node.span.start,
            object: matches!(node.kind, NodeKind::Object(_)),
            members,
        }
    }
}

/// A string value's text unescaped, also one still unterminated.
fn string_text(text: &str, root: &Root<'_>, node: &Node<'_>) -> Option<String> {
    let tok = string_token(text, root.range(&node.span))?;
    let body = text.get(tok.body())?;
    Some(unescape(body, 0).0.text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(marked: &str, mode: Mode) -> (String, Context) {
        let cursor = marked.find('|').unwrap_or(marked.len());
        let text = marked.replacen('|', "", 1);
        let tokens = tokenize(&text);
        let cx = context(&text, mode, &tokens, cursor);
        (text, cx)
    }

    fn key(k: &str) -> Seg {
        Seg::Key(k.to_owned())
    }

    #[test]
    fn places_in_broken_text() {
        let file = Mode::File;
        let (_, cx) = at(
            r#"{"name": "x", "groups": [{"in": {"a": "string"}, "ti|"#,
            file,
        );
        assert_eq!(cx.place, Place::Key);
        assert_eq!(cx.path, [key("groups"), Seg::Index(0)]);
        assert_eq!(cx.frames.len(), 3);
        let group = &cx.frames[2];
        assert_eq!(group.member("in").map(|m| m.children.len()), Some(1));
        assert_eq!(cx.sibling_keys(), ["in"]);

        let (_, cx) = at(r#"{"groups": [{"on_error": "re|", "name": "g"}]}"#, file);
        assert_eq!(cx.place, Place::Value("on_error".to_owned()));
        assert_eq!(cx.sibling_keys(), ["on_error", "name"]);

        let (_, cx) = at("{\"groups\": [{\"on_er|\n\"tools\": \"\"}]}", file);
        assert_eq!(cx.place, Place::Key);
        assert_eq!(cx.sibling_keys(), ["tools"]);

        let (_, cx) = at(r#"{"groups": [{"parallel": |}]}"#, file);
        assert_eq!(cx.place, Place::Value("parallel".to_owned()));
        assert!(cx.token.is_none());

        let (_, cx) = at(r#"{"a": 1 |}"#, file);
        assert_eq!(cx.place, Place::Nowhere);

        let (_, cx) = at(r#"{"a": [1, |"#, file);
        assert_eq!(cx.place, Place::Element);
        assert_eq!(cx.path, [key("a"), Seg::Index(1)]);

        let item = Mode::Item;
        let (_, cx) = at(r#"{"tool":"x"} ; |"#, item);
        assert_eq!(cx.place, Place::Top);
        let (_, cx) = at(r#"{"tool":"x","args":{"target":"g","args":{|}}} ;"#, item);
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
        let (_, cx) = at(r#"{"tool":"a"} ; {"tool":"b","args":{"v|"#, item);
        assert_eq!(cx.place, Place::Key);
        assert_eq!(cx.path, [key("args")]);
        assert_eq!(
            cx.frames[0].member("tool").and_then(|m| m.text.as_deref()),
            Some("b")
        );
    }

    #[test]
    fn group_strings_are_found_in_broken_files() {
        let text = r#"{"name": x, "groups": [{"tools": "a", "when": "$args.b"#;
        let found: Vec<_> = group_strings(text)
            .into_iter()
            .map(|(field, tok)| (field, text[tok.range].to_owned()))
            .collect();
        assert_eq!(
            found,
            [
                ("tools".to_owned(), r#""a""#.to_owned()),
                ("when".to_owned(), r#""$args.b"#.to_owned())
            ]
        );
    }
}
