//! A group's `in` and `out`: slot names and their types; for `in`, also a declaration object
//! with a `default`, `required` and a `description`.

use super::fields::Fields;
use super::maps::span_in;
use super::scalars::body_range;
use super::{Lower, fields};
use crate::ast::{CompactString, SlotDecl, Type};
use crate::code::Code;
use crate::diagnostic::{Diagnostic, did_you_mean, list};
use crate::escape::MapOffset;
use crate::fields::key;
use crate::json::{Node, NodeKind};
use crate::limits::MAX_SLOTS;
use crate::names;
use crate::span::{Span, Spanned};

const INPUT_FIELDS: &[&str] =
    &crate::fields::names::<{ crate::fields::INPUT.len() }>(crate::fields::INPUT);

impl Lower {
    /// `in` / `out`: `{"name": "type", ...}`.
    pub(super) fn slots(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        field: &str,
    ) -> Vec<SlotDecl> {
        let NodeKind::Object(members) = &node.kind else {
            self.wrong_kind(
                node,
                map,
                field,
                "an object from slot names to types, such as {\"host\": \"string\"}",
            );
            return Vec::new();
        };
        let keys = fields::unique_members(self, members, map);
        if let Some((excess, _)) = keys.get(MAX_SLOTS) {
            self.too_many(
                &excess.value,
                map,
                &format!("`{field}` slots"),
                MAX_SLOTS,
                "group",
            );
        }
        let mut slots = Vec::with_capacity(keys.len().min(MAX_SLOTS));
        for (member, key) in keys.into_iter().take(MAX_SLOTS) {
            let key_range = fields::key_body(member);
            let name = Spanned::new(CompactString::from(key), span_in(map, &key_range));
            if !names::is_slot_name(&name.value) {
                self.report(
                    Diagnostic::new(
                        Code::InvalidName,
                        name.span,
                        format!("`{}` cannot name a slot: `$args.{}` could not refer to it", name.value, name.value),
                    )
                    .with_help("slot names are identifiers: letters, digits and `_`, not starting with a digit"),
                );
            }
            let decl = match member.value.kind.as_object() {
                Some(fields) if field == key::IN => {
                    self.input_declaration(name, &member.value, fields, map)
                }
                Some(_) | None => {
                    let expected = if field == key::IN {
                        "a type name such as \"string\", or a declaration such as {\"type\": \"string\", \"default\": \"a\"}"
                    } else {
                        "a type name such as \"string\""
                    };
                    let label = format!("{field}.{}", name.value);
                    let ty = self.type_name(&member.value, map, &label, expected);
                    SlotDecl::typed(name, ty)
                }
            };
            slots.push(decl);
        }
        slots
    }

    /// A type name; an unknown one is reported and read as `any`, so that the slot's uses are
    /// not reported as undeclared.
    fn type_name(
        &mut self,
        node: &Node<'_>,
        map: &impl MapOffset,
        label: &str,
        expected: &str,
    ) -> Spanned<Type> {
        let Some(body) = node.kind.as_string() else {
            self.wrong_kind(node, map, label, expected);
            return Spanned::new(Type::Any, span_in(map, &node.span));
        };
        let (text, _) = self.unescape(node, body, map);
        let span = span_in(map, &body_range(node));
        match Type::parse(&text) {
            Some(ty) => Spanned::new(ty, span),
            None => {
                let mut d =
                    Diagnostic::new(Code::UnknownType, span, format!("unknown type `{text}`"));
                d = match did_you_mean(&text, Type::NAMES.iter().copied()) {
                    Some(best) => d
                        .with_help(format!(
                            "did you mean `{best}`? The types are {}",
                            list(Type::NAMES)
                        ))
                        .with_replacement(format!("use `{best}`"), span, best),
                    None => d.with_help(format!("the types are {}", list(Type::NAMES))),
                };
                self.report(d);
                // Keep the slot so that its uses are not reported as undeclared.
                Spanned::new(Type::Any, span)
            }
        }
    }

    /// `"NAME": {"type": T, "default": V, "required": B, "description": S}`.
    fn input_declaration(
        &mut self,
        name: Spanned<CompactString>,
        node: &Node<'_>,
        members: &[crate::json::Member<'_>],
        map: &impl MapOffset,
    ) -> SlotDecl {
        let fields = Fields::new(self, members, INPUT_FIELDS, "an input's declaration", map);
        let label = format!("in.{}.type", name.value);
        let ty = match fields.get(key::TYPE) {
            Some(n) => self.type_name(n, map, &label, "a type name such as \"string\""),
            None => {
                let open = map.span(Span::from_range(node.span.start..node.span.start + 1));
                self.missing_field(open, key::TYPE, "this input", "\"type\": \"string\"");
                Spanned::new(Type::Any, span_in(map, &node.span))
            }
        };
        let default = fields.get(key::DEFAULT).and_then(|n| {
            self.literal(n, map)
                .map(|v| Spanned::new(v, span_in(map, &n.span)))
        });
        let required = fields
            .get(key::REQUIRED)
            .and_then(|n| self.bool_field(n, map, key::REQUIRED));
        let description = fields
            .get(key::DESCRIPTION)
            .and_then(|n| self.string_field(n, map, key::DESCRIPTION));
        SlotDecl {
            name,
            ty,
            default,
            required,
            description,
        }
    }

    /// A JSON value as written (a `default`); `None` where the parser already reported an error.
    fn literal(&mut self, node: &Node<'_>, map: &impl MapOffset) -> Option<serde_json::Value> {
        use serde_json::Value;
        Some(match &node.kind {
            NodeKind::Null => Value::Null,
            NodeKind::Bool(b) => Value::Bool(*b),
            NodeKind::Number(raw) => Value::Number(raw.parse().ok()?),
            NodeKind::String(body) => {
                let (text, _) = self.unescape(node, body, map);
                Value::String(text.into_owned())
            }
            NodeKind::Array(items) => Value::Array(
                items
                    .iter()
                    .map(|item| self.literal(item, map))
                    .collect::<Option<_>>()?,
            ),
            NodeKind::Object(members) => {
                let mut object = serde_json::Map::new();
                for (member, key) in fields::unique_members(self, members, map) {
                    object.insert(key.into_owned(), self.literal(&member.value, map)?);
                }
                Value::Object(object)
            }
            NodeKind::Ref(_) | NodeKind::Error => return None,
        })
    }
}
