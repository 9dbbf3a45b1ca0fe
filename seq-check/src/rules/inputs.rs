//! Input declarations: a `default` has the input's declared type, and an input with a `default`
//! is not also `required` (it could never be missing).

use super::Cx;
use seq_catalog::type_accepts;
use seq_syntax::kind::described;
use seq_syntax::{Code, Diagnostic};

pub(crate) fn check(cx: &Cx<'_>, out: &mut Vec<Diagnostic>) {
    for input in &cx.group.inputs {
        let name = &input.name.value;
        let ty = input.ty.value;
        if let Some(default) = &input.default
            && !type_accepts(ty, &default.value)
        {
            out.push(
                Diagnostic::new(
                    Code::DefaultType,
                    default.span,
                    format!(
                        "the default of `{name}` is {}, but `{name}` is declared `{}`",
                        described(&default.value),
                        ty.as_str()
                    ),
                )
                .with_label(input.ty.span, "declared here")
                .with_help(format!(
                    "give a default of type `{}`, or change the declared type",
                    ty.as_str()
                )),
            );
        }
        if let (Some(required), Some(default)) = (&input.required, &input.default)
            && required.value
        {
            out.push(
                Diagnostic::new(
                    Code::RequiredWithDefault,
                    required.span,
                    format!("`{name}` is `required` and has a `default`, which it could never use"),
                )
                .with_label(default.span, "default")
                .with_help(
                    "keep `required` to make every run or call pass it, or keep the `default` to make it optional",
                ),
            );
        }
    }
}
