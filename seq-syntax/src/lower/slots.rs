//! A group's `in` and `out`: slot names and their types.

use super::maps::span_in;
use super::scalars::body_range;
use super::{Lower, fields};
use crate::ast::{CompactString, SlotDecl, Type};
use crate::code::Code;
use crate::diagnostic::{Diagnostic, did_you_mean, list};
use crate::escape::MapOffset;
use crate::json::{Node, NodeKind};
use crate::limits::MAX_SLOTS;
use crate::names;
use crate::span::Spanned;

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
            let ty = match member.value.kind {
                NodeKind::String(body) => {
                    let (text, _) = self.unescape(&member.value, body, map);
                    let span = span_in(map, &body_range(&member.value));
                    match Type::parse(&text) {
                        Some(ty) => Spanned::new(ty, span),
                        None => {
                            let mut d = Diagnostic::new(
                                Code::UnknownType,
                                span,
                                format!("unknown type `{text}`"),
                            );
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
                NodeKind::Null
                | NodeKind::Bool(_)
                | NodeKind::Number(_)
                | NodeKind::Ref(_)
                | NodeKind::Array(_)
                | NodeKind::Object(_)
                | NodeKind::Error => {
                    self.wrong_kind(
                        &member.value,
                        map,
                        &format!("{field}.{}", name.value),
                        "a type name such as \"string\"",
                    );
                    Spanned::new(Type::Any, span_in(map, &member.value.span))
                }
            };
            slots.push(SlotDecl { name, ty });
        }
        slots
    }
}
