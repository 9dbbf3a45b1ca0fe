//! A lenient reading of JSON being typed, for the editor: the lexer's own tokens ([`Tokens`])
//! and where each stands in the structure around it ([`Walker`], [`context`]). The grammar
//! ([`parse`](super::parse)) keeps a half-written member as an error key and value, but gives up
//! on a structure still open at the end of the text, where a cursor typing usually is; this
//! reading keeps its shape. It serves both levels: a sequence file, and the items of a `tools`
//! string (where `;` between items is a token outside every structure, and bare references are
//! tokens of their own).

mod tokens;
mod walker;

pub use tokens::{Kind, Tok, Tokens, tokenize};

use crate::fields::key;
pub use walker::{Frame, Member, Place, Role, Seg, Walker};

/// The structure around offset `cursor` of `text`.
#[derive(Debug)]
pub struct Context {
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

/// The string values of group fields (`groups[i].FIELD`), with the field's name: where the
/// `tools` and `when` strings are, also in a file whose JSON is broken elsewhere.
pub fn group_strings(text: &str) -> Vec<(String, Tok)> {
    let mut walker = Walker::default();
    let mut found = Vec::new();
    for tok in Tokens::new(text) {
        let field = match (&tok.kind, walker.frames.len()) {
            (Kind::String { .. }, 3) => match walker.path().as_slice() {
                [Seg::Key(groups), Seg::Index(_), Seg::Key(field)] if groups == key::GROUPS => {
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

pub fn context(text: &str, tokens: &[Tok], cursor: usize) -> Context {
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
