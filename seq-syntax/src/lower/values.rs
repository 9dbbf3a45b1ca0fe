//! The values of `args` and `fallback`: JSON values whose strings are templates and whose bare
//! references are parsed where they stand.

use super::maps::{Identity, Shifted, span_in};
use super::{Lower, fields};
use crate::ast::{CompactString, Member as AstMember, Value, ValueKind};
use crate::code::Code;
use crate::diagnostic::Diagnostic;
use crate::escape::{Composed, MapOffset};
use crate::json::{self, Node, NodeKind};
use crate::reference::parse_reference;
use crate::span::Spanned;
use crate::template::parse_template_cow;

impl Lower {
    pub(super) fn members(
        &mut self,
        members: &[json::Member<'_>],
        map: &impl MapOffset,
    ) -> Vec<AstMember> {
        let mut out = Vec::with_capacity(members.len());
        if fields::plainly_unique(members) {
            for member in members {
                if let Some(key) = member.key.text() {
                    out.extend(self.member(member, key.into(), map));
                }
            }
        } else {
            for (member, key) in fields::unique_members(self, members, map) {
                out.extend(self.member(member, key.into(), map));
            }
        }
        out
    }

    /// A member whose key, unescaped, is `key`.
    fn member(
        &mut self,
        member: &json::Member<'_>,
        key: CompactString,
        map: &impl MapOffset,
    ) -> Option<AstMember> {
        let key = Spanned::new(key, span_in(map, &fields::key_body(member)));
        let value = self.value(&member.value, map)?;
        Some(AstMember { key, value })
    }

    /// An object field (`args`, `fallback`) as members; anything else is reported.
    pub(super) fn object(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        field: &str,
        expected: &str,
    ) -> Option<Spanned<Vec<AstMember>>> {
        if let NodeKind::Object(members) = &node.kind {
            return Some(Spanned::new(
                self.members(members, map),
                span_in(map, &node.span),
            ));
        }
        self.wrong_kind(node, map, field, expected);
        None
    }

    /// A value in `args` or `fallback`. Strings become templates; error nodes are left out.
    pub(super) fn value(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<Value> {
        let span = span_in(map, &node.span);
        let kind = match &node.kind {
            NodeKind::Null => ValueKind::Null,
            NodeKind::Bool(b) => ValueKind::Bool(*b),
            NodeKind::Number(raw) => match raw.parse::<serde_json::Number>() {
                Ok(n) => ValueKind::Number(n),
                Err(_) => {
                    self.report(
                        Diagnostic::new(
                            Code::JsonNumber,
                            span,
                            format!("the number `{raw}` is out of range"),
                        )
                        .with_help("numbers must fit a 64-bit float"),
                    );
                    return None;
                }
            },
            NodeKind::String(body) => {
                let (text, inner) = self.unescape(node, body, map);
                let composed = Composed {
                    inner: &inner,
                    outer: map,
                };
                let (template, diagnostics) = parse_template_cow(text, &composed);
                self.nested(1, diagnostics, &Identity);
                ValueKind::String(template)
            }
            NodeKind::Ref(raw) => {
                let at = Shifted {
                    by: u32::try_from(node.span.start).unwrap_or(u32::MAX),
                    outer: map,
                };
                match parse_reference(raw, &at) {
                    Ok(reference) => ValueKind::Ref(Box::new(reference)),
                    Err(d) => {
                        self.report(d);
                        return None;
                    }
                }
            }
            NodeKind::Array(elements) => {
                ValueKind::Array(elements.iter().filter_map(|e| self.value(e, map)).collect())
            }
            NodeKind::Object(members) => ValueKind::Object(self.members(members, map)),
            NodeKind::Error => return None,
        };
        Some(Value { kind, span })
    }

    /// `each`: a literal array or a bare reference; anything else is reported.
    pub(super) fn each(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<Value> {
        match &node.kind {
            NodeKind::Array(_) | NodeKind::Ref(_) => self.value(node, map),
            // `"$out.files"`: one reference in quotes, which would be its text, not its list.
            NodeKind::String(body)
                if !body.contains('\\')
                    && !body.starts_with("${")
                    && parse_reference(body, &Identity).is_ok() =>
            {
                let field = crate::fields::key::EACH;
                let span = span_in(map, &node.span);
                self.report(
                    Diagnostic::new(
                        Code::WrongJsonType,
                        span,
                        format!("`{field}` must be an array, found a string holding `{body}`"),
                    )
                    .with_help(format!(
                        "write the reference bare, without quotes: `{body}`; in a string a \
                         reference becomes its text"
                    ))
                    .with_replacement(
                        format!("write `{body}` without quotes"),
                        span,
                        *body,
                    ),
                );
                None
            }
            NodeKind::Null
            | NodeKind::Bool(_)
            | NodeKind::Number(_)
            | NodeKind::String(_)
            | NodeKind::Object(_) => {
                self.wrong_kind(
                    node,
                    map,
                    crate::fields::key::EACH,
                    "an array, or a bare reference to one such as $args.hosts",
                );
                None
            }
            NodeKind::Error => None,
        }
    }
}
