//! The registry of diagnostic codes. A code is stable once released: it is never renumbered or
//! reused. Every code has an explanation in `explain/CODE.md` (shown by `seqc explain CODE`)
//! holding an example that triggers it and its fix; the test suite runs both.

use crate::diagnostic::Severity;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! codes {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal, $severity:ident, $title:literal; )*) => {
        /// A stable diagnostic code. `E` codes are errors, `W` codes warnings.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $( $(#[$doc])* $variant, )*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => $code,)* }
            }

            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$severity,)* }
            }

            /// A short title, such as "unknown field".
            pub fn title(self) -> &'static str {
                match self { $(Code::$variant => $title,)* }
            }

            /// The long explanation, in Markdown.
            pub fn explanation(self) -> &'static str {
                match self {
                    $(Code::$variant => include_str!(concat!("../explain/", $code, ".md")),)*
                }
            }

            /// Looks a code up by its text, case-insensitively (`e0101` finds `E0101`).
            pub fn parse(text: &str) -> Option<Code> {
                Code::ALL.iter().copied().find(|c| c.as_str().eq_ignore_ascii_case(text.trim()))
            }
        }
    };
}

codes! {
    // The file's JSON.
    JsonSyntax = "E0001", Error, "invalid JSON syntax";
    JsonComment = "E0002", Error, "comments are not JSON";
    JsonTrailingComma = "E0003", Error, "trailing comma";
    JsonString = "E0004", Error, "invalid string literal";
    JsonNumber = "E0005", Error, "invalid number literal";
    TooDeep = "E0006", Error, "nesting too deep";
    NotUtf8 = "E0007", Error, "file is not UTF-8";
    DuplicateKey = "E0008", Error, "duplicate key";
    TooLarge = "E0009", Error, "input past a size bound";

    // The shape of a sequence: fields and their values.
    UnknownField = "E0101", Error, "unknown field";
    MissingField = "E0102", Error, "missing required field";
    WrongJsonType = "E0103", Error, "field has the wrong kind of value";
    InvalidEnumValue = "E0104", Error, "invalid value";
    InvalidDuration = "E0105", Error, "invalid duration";
    UnknownType = "E0106", Error, "unknown type name";
    RetriesOutOfRange = "E0107", Error, "`retries` out of range";
    InvalidName = "E0108", Error, "invalid name";
    BackoffOutOfRange = "E0109", Error, "`retry_backoff` out of range";

    // The item language inside `tools`.
    EmptyItem = "E0201", Error, "empty item";
    MissingSemicolon = "E0202", Error, "missing `;` between items";
    MissingFinalSemicolon = "E0203", Error, "missing `;` after the last item";
    Unclosed = "E0204", Error, "unclosed structure or string in `tools`";
    ItemNotObject = "E0205", Error, "item is not an object";
    ItemSyntax = "E0206", Error, "invalid item syntax";
    NoItems = "E0207", Error, "group has no items";

    // References and templates.
    MalformedReference = "E0301", Error, "malformed reference";

    // Conditions.
    ConditionSyntax = "E0401", Error, "invalid condition";
    /// No longer emitted: conditions now combine tests with `!`, `&&`, `||` and parentheses.
    /// Kept so that the code keeps its meaning and is never reused.
    UnsupportedOperator = "E0402", Error, "operator not supported in a condition";

    // The checker: the rules of one sequence.
    UndeclaredOutput = "E0501", Error, "`as` writes an undeclared slot";
    UndeclaredInput = "E0502", Error, "reference to an undeclared input";
    SlotWrittenTwice = "E0503", Error, "slot written by several items";
    UnsafeInParallel = "E0504", Error, "tool that is not parallel-safe in a parallel group";
    UnsafeSerialMissing = "E0505", Error, "tool that is not parallel-safe without `unsafe_serial`";
    OutInParallel = "E0506", Error, "`$out` read in a parallel group";
    OutBeforeWrite = "E0507", Error, "`$out` read before it is written";
    OutOutsideItems = "E0508", Error, "`$out` read in `when` or `fallback`";
    MissingTarget = "E0509", Error, "call without `target`";
    GroupInsteadOfTarget = "E0510", Error, "`group` instead of `target`";
    MalformedTarget = "E0511", Error, "malformed call target";
    UnknownGroup = "E0512", Error, "call to an unknown group";
    UnknownCallArgument = "E0513", Error, "argument the called group does not declare";
    DuplicateGroup = "E0514", Error, "duplicate group name";
    ArgumentType = "E0515", Error, "argument of the wrong type";
    MissingParameter = "E0516", Error, "missing required parameter";
    IncomparableTypes = "E0517", Error, "comparison of values of different types";
    OrderingNonNumber = "E0518", Error, "ordering of values that are not numbers";
    ContainsType = "E0519", Error, "`contains` on the wrong types";
    ConditionNotBool = "E0520", Error, "condition is not a bool";
    FallbackType = "E0521", Error, "fallback value of the wrong type";
    FallbackUndeclared = "E0522", Error, "fallback for an undeclared slot";
    RetriesWithoutRetry = "E0523", Error, "`retries` without `on_error: retry`";
    DegradeWithoutFallback = "E0524", Error, "`missing: degrade` without `fallback`";
    PathIntoScalar = "E0525", Error, "field or index on a slot that has none";
    UnknownParameterClosed = "E0526", Error, "parameter the tool does not accept";
    DuplicateSequence = "E0527", Error, "two files define the same sequence";
    LiteralLookalike = "E0528", Error, "`$NAME.x` naming a group or slot is literal text";
    SlotTypeMismatch = "E0529", Error, "slot declared with a type its writer never returns";
    ErrorAsUndeclared = "E0540", Error, "`error_as` writes an undeclared slot";
    ErrorAsType = "E0541", Error, "`error_as` slot cannot hold the error";
    PauseWithoutRetry = "E0542", Error, "retry pause without `on_error: retry`";
    ErrorAsEachSlot = "E0543", Error, "`error_as` of an `each` item into a slot not an array";
    DefaultType = "E0544", Error, "input default of the wrong type";
    RequiredWithDefault = "E0545", Error, "input both `required` and with a `default`";
    CallLeavesOutRequired = "E0546", Error, "call leaves out a required input";
    UnknownSequence = "W0501", Warning, "call to an unknown sequence";
    FallbackWithoutDegrade = "W0502", Warning, "`fallback` without `missing: degrade`";
    UnusedInput = "W0503", Warning, "input never read";
    UnwrittenOutput = "W0504", Warning, "output never written";
    UnknownTool = "W0505", Warning, "tool no catalog knows";
    PointlessUnsafeSerial = "W0506", Warning, "`unsafe_serial` has no effect";
    UnknownParameter = "W0507", Warning, "parameter the tool does not declare";
    NestedSeqRun = "W0508", Warning, "`seq_run` inside a group";
    TimeoutPastBound = "W0509", Warning, "a tool's `timeout` longer than its call may run";
    CallLeavesOutInput = "W0510", Warning, "a call leaves out an input its group reads";
    UnknownResultField = "W0511", Warning, "field the writer's result does not have";
    ArrayIntoCollectingSlot = "W0512", Warning, "one list written to an `array` slot arrives nested";
    PausesReachTimeout = "W0540", Warning, "retry pauses alone reach the group's timeout";

    // `each` items and `max_parallel` ("Each: one item per element" in docs/reference.md).
    EachOutsideEach = "E0550", Error, "`$each` or `$each_index` outside an `each` item";
    EachSlotNotArray = "E0551", Error, "`as` of an `each` item names a slot that is not `array` or `any`";
    EachNotArray = "E0552", Error, "`each` reads a value that is not an array";
    EachTooLong = "E0553", Error, "`each` lists more elements than an item may run";
    MaxParallelOutOfRange = "E0554", Error, "`max_parallel` out of range";
    MaxParallelWithoutEach = "E0556", Error, "an item's `max_parallel` without `each`";
    FanOutReadsOwnSlot = "E0557", Error, "a fan-out `each` reads a slot it writes";
    FanOutPastBudget = "W0555", Warning, "a fan-out through calls whose worst case passes the run's budget";

    // Local slots ("Local slots" in docs/reference.md).
    SlotDeclaredTwice = "E0560", Error, "a local slot's name also in `in` or `out`";
    UnreadLocal = "W0560", Warning, "local slot never read";

    // Counts from inputs ("Groups" in docs/reference.md).
    RetriesInputType = "E0561", Error, "`retries` reads an input that is not an `integer`";
    QuotedReference = "W0561", Warning, "a reference in quotes passes the text of a value that is not a string";

    // The call graph and slot dataflow.
    GroupCallCycle = "E0601", Error, "calls between groups form a cycle";
    SequenceCallCycle = "E0602", Error, "calls across sequences form a cycle";
    CallChainTooDeep = "E0603", Error, "cross-sequence calls nested too deep";
    UnsafeCallInParallelGroup = "E0604", Error, "a parallel group calls something that is not parallel-safe";
    UnsafeCallNotAcknowledged = "E0605", Error, "a call reaches a tool that is not parallel-safe without `unsafe_serial`";
    GroupNestingTooDeep = "E0606", Error, "groups nested too deep through calls";
    SlotMayBeUnset = "W0601", Warning, "a slot may be unset where it is read";
    CallResultFieldMayBeUnset = "W0602", Warning, "a field of a call's result may be unset";

    // Shell text: `cmd_run`'s `command` and `argv` (docs/reference.md, "Shell text").
    ShellUnclosed = "E0701", Error, "unclosed quote or substitution in shell text";
    ShellUnsafePlace = "E0702", Error, "value where shell text cannot keep it literal";
    CommandAndArgv = "E0703", Error, "`cmd_run` needs exactly one of `command` and `argv`";
    ShellUncertainPlace = "E0704", Error, "value where the shell's reading of it is uncertain";
    ShellReparsed = "W0701", Warning, "value reaching a command that parses it as shell code again";
    ShellReparsedError = "E0705", Error, "value reaching a command that parses it as shell code again";
    ShellReservedName = "E0706", Error, "shell text or `env` names a variable reserved for values";

    // Catalog files: `--catalog` files and a workspace's `seq-catalog.json` ("Tool arguments and
    // the catalog" in docs/reference.md).
    CatalogNotUtf8 = "E0801", Error, "catalog file is not UTF-8";
    CatalogJson = "E0802", Error, "catalog file is not valid JSON";
    CatalogInvalid = "E0803", Error, "invalid catalog";
    CatalogDuplicateTool = "E0804", Error, "tool defined twice in one catalog";
    CatalogRedefinesSeqTool = "W0801", Warning, "catalog redefines a built-in `seq_*` tool";

    // The creator's policy: what `seq_create` refuses to store ("Permissions" in docs/reference.md).
    UnauthorizedTool = "E0901", Error, "the sequence reaches a tool its creator may not use";
    ManagementStep = "E0902", Error, "`seq_create` or `seq_delete` as a step of a sequence";

    // jq filters: the `filter` of the built-in `jq` tool ("The `jq` tool" in docs/reference.md).
    JqSyntax = "E1001", Error, "jq filter that does not parse";
    JqUnknownName = "E1002", Error, "jq filter calling a function or variable that does not exist";
    JqInterpolated = "E1003", Error, "value interpolated into a jq filter";
    JqTooBig = "E1004", Error, "jq filter nested too deep or too long to read";
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Code, D::Error> {
        let text = String::deserialize(deserializer)?;
        Code::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown diagnostic code `{text}`")))
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_prefixed_by_severity() {
        let mut seen = std::collections::HashSet::new();
        for &code in Code::ALL {
            assert!(seen.insert(code.as_str()), "{code} listed twice");
            let prefix = match code.severity() {
                Severity::Error => 'E',
                Severity::Warning => 'W',
            };
            assert!(
                code.as_str().starts_with(prefix),
                "{code} has the wrong prefix"
            );
            assert_eq!(Code::parse(&code.as_str().to_lowercase()), Some(code));
        }
    }
}
