//! The JSON type of a filter's output where the filter makes it evident: literals, `[…]`,
//! `{…}`, comparisons, and the last step of a pipe being a function whose result has one type
//! (`length`, `tonumber`, `tostring`, `split`, `add` over numbers, …). Anything else is unknown,
//! never guessed: the checker only reports a slot that could never hold the result.

use crate::JsonType;
use jaq_core::load::parse::{BinaryOp, Term};
use jaq_core::path::Part;

/// What is known of a value: its type, or that it is an array of one element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    Of(JsonType),
    ArrayOf(JsonType),
}

impl Ty {
    fn json(self) -> JsonType {
        match self {
            Ty::Of(t) => t,
            Ty::ArrayOf(_) => JsonType::Array,
        }
    }

    /// An element's type, when this is an array of known elements.
    fn element(self) -> Option<Ty> {
        match self {
            Ty::ArrayOf(t) => Some(Ty::Of(t)),
            Ty::Of(_) => None,
        }
    }
}

/// The type of `filter`'s output on an input of type `input`, when evident.
/// Nothing is evident of a filter past the bounds of its size (`bounds`).
pub fn result_type(filter: &str, input: Option<JsonType>) -> Option<JsonType> {
    super::bounds::check(filter).ok()?;
    super::bounds::on_stack(|| {
        let term = jaq_core::load::parse(filter, |p| p.term())?;
        ty(&term, input.map(Ty::Of)).map(Ty::json)
    })
}

fn array_of(element: Option<Ty>) -> Ty {
    match element {
        Some(Ty::Of(t)) => Ty::ArrayOf(t),
        Some(Ty::ArrayOf(_)) => Ty::ArrayOf(JsonType::Array),
        None => Ty::Of(JsonType::Array),
    }
}

fn same(types: impl IntoIterator<Item = Option<Ty>>) -> Option<Ty> {
    let mut types = types.into_iter();
    let first = types.next()??;
    types.all(|t| t == Some(first)).then_some(first)
}

fn is_number(t: Option<Ty>) -> bool {
    matches!(t, Some(Ty::Of(JsonType::Integer | JsonType::Number)))
}

fn ty(term: &Term<&str>, input: Option<Ty>) -> Option<Ty> {
    use JsonType as J;
    match term {
        Term::Id => input,
        Term::Num(n) => Some(Ty::Of(if n.contains(['.', 'e', 'E']) {
            J::Number
        } else {
            J::Integer
        })),
        Term::Str(..) => Some(Ty::Of(J::String)),
        Term::Arr(None) => Some(Ty::Of(J::Array)),
        Term::Arr(Some(t)) => Some(array_of(ty(t, input))),
        Term::Obj(_) => Some(Ty::Of(J::Object)),
        Term::Neg(_) => Some(Ty::Of(J::Number)),
        Term::BinOp(l, op, r) => binary(l, op, r, input),
        Term::IfThenElse(branches, otherwise) => same(
            branches
                .iter()
                .map(|(_, then)| ty(then, input))
                .chain([otherwise.as_ref().map_or(input, |t| ty(t, input))]),
        ),
        Term::TryCatch(t, None) => ty(t, input),
        Term::TryCatch(t, Some(c)) => same([ty(t, input), ty(c, None)]),
        // A local definition may shadow the functions known here.
        Term::Def(defs, body) if defs.iter().all(|d| call(d.name, 0, &[], None).is_none()) => {
            ty(body, input)
        }
        Term::Call(name, args) => call(name, args.len(), args, input),
        Term::Path(base, path) => match path.0.as_slice() {
            [(Part::Range(None, None), _)] => ty(base, input)?.element(),
            _ => None,
        },
        Term::Def(..)
        | Term::Recurse
        | Term::Label(..)
        | Term::Break(_)
        | Term::Fold(..)
        | Term::Var(_) => None,
    }
}

fn binary(l: &Term<&str>, op: &BinaryOp<&str>, r: &Term<&str>, input: Option<Ty>) -> Option<Ty> {
    use JsonType as J;
    use jaq_core::ops::Math;
    match op {
        BinaryOp::Pipe(None) => ty(r, ty(l, input)),
        BinaryOp::Pipe(Some(_)) => ty(r, input),
        BinaryOp::Or | BinaryOp::And | BinaryOp::Cmp(_) => Some(Ty::Of(J::Boolean)),
        BinaryOp::Alt => same([ty(l, input), ty(r, input)]),
        BinaryOp::Math(op) => {
            let (l, r) = (ty(l, input), ty(r, input));
            if is_number(l) && is_number(r) {
                let integers = l == Some(Ty::Of(J::Integer)) && r == Some(Ty::Of(J::Integer));
                return Some(Ty::Of(if integers && !matches!(op, Math::Div) {
                    J::Integer
                } else {
                    J::Number
                }));
            }
            match (op, l?, r?) {
                (Math::Add, Ty::Of(J::String), Ty::Of(J::String)) => Some(Ty::Of(J::String)),
                (Math::Add | Math::Mul, Ty::Of(J::Object), Ty::Of(J::Object)) => {
                    Some(Ty::Of(J::Object))
                }
                (Math::Add | Math::Sub, a, b) if a.json() == J::Array && b.json() == J::Array => {
                    same([Some(a), Some(b)]).or(Some(Ty::Of(J::Array)))
                }
                _ => None,
            }
        }
        // `,` gives several outputs, and the update operators keep the input's type or not.
        BinaryOp::Comma
        | BinaryOp::Assign
        | BinaryOp::Update
        | BinaryOp::UpdateMath(_)
        | BinaryOp::UpdateAlt => None,
    }
}

/// The type of a call of a library function `name` with `arity` arguments, when it has one.
fn call(name: &str, arity: usize, args: &[Term<&str>], input: Option<Ty>) -> Option<Ty> {
    use JsonType as J;
    let of = |t| Some(Ty::Of(t));
    match (name, arity) {
        ("length" | "utf8bytelength" | "floor" | "round" | "ceil", 0) => of(J::Integer),
        ("tonumber" | "sqrt" | "fabs" | "abs" | "log" | "exp" | "pow10", 0) => of(J::Number),
        ("pow" | "log" | "min" | "max", 2) => None,
        (
            "tostring" | "tojson" | "ascii_downcase" | "ascii_upcase" | "trim" | "ltrim" | "rtrim"
            | "implode" | "type" | "todate" | "todateiso8601" | "escape_sh" | "@text" | "@json"
            | "@html" | "@uri" | "@sh" | "@base64" | "@base64d",
            0,
        )
        | ("join" | "ltrimstr" | "rtrimstr" | "strftime", 1)
        | ("sub" | "gsub", 2 | 3) => of(J::String),
        ("split", 1 | 2) => Some(Ty::ArrayOf(J::String)),
        ("explode", 0) | ("indices", 1) => Some(Ty::ArrayOf(J::Integer)),
        ("to_entries", 0) => Some(Ty::ArrayOf(J::Object)),
        ("keys" | "keys_unsorted" | "flatten", 0) | ("group_by" | "flatten", 1) => of(J::Array),
        ("map", 1) => Some(array_of(
            args.first()
                .and_then(|f| ty(f, input.and_then(Ty::element))),
        )),
        ("sort" | "unique", 0) | ("sort_by" | "unique_by", 1) => match input {
            Some(t @ Ty::ArrayOf(_)) => Some(t),
            Some(Ty::Of(_)) | None => of(J::Array),
        },
        ("from_entries", 0) | ("with_entries", 1) => of(J::Object),
        ("not" | "true" | "false", 0)
        | (
            "test" | "startswith" | "endswith" | "contains" | "has" | "inside" | "in" | "any"
            | "all" | "isempty",
            1,
        )
        | ("any" | "all", 0 | 2)
        | ("test", 2) => of(J::Boolean),
        ("null", 0) => of(J::Null),
        ("add", 0) => input
            .and_then(Ty::element)
            .filter(|t| matches!(t, Ty::Of(J::Integer | J::Number | J::String))),
        ("select", 1) | ("reverse", 0) => input,
        ("first" | "last" | "min" | "max", 0) | ("min_by" | "max_by", 1) => {
            input.and_then(Ty::element)
        }
        ("first" | "last", 1) => args.first().and_then(|f| ty(f, input)),
        _ => None,
    }
}
