//! `seq_create`'s guide: the language in brief, as a model reads it before the tool list, and
//! what a server that offers `cmd_run` adds to it.

/// A complete sequence of two groups, as `seq_create`'s arguments: one home for the guide and
/// the test that stores and runs it.
pub const GUIDE_EXAMPLE: &str = r#"{"name":"notes","groups":[{"name":"gather","in":{"file":"string"},"out":{"names":"any","text":"string"},"tools":"{\"tool\":\"files_list\",\"args\":{\"path\":\".\"},\"as\":\"names\"}; {\"tool\":\"files_read\",\"args\":{\"path\":$args.file},\"as\":\"text\"};"},{"name":"report","in":{"file":"string"},"out":{"g":"object"},"parallel":false,"tools":"{\"tool\":\"seq_call\",\"args\":{\"target\":\"gather\",\"args\":{\"file\":$args.file}},\"as\":\"g\"}; {\"tool\":\"output_send__stdout\",\"args\":{\"text\":\"${args.file}: $out.g.text\"}};"}]}"#;

/// A `jq` item as written in a `tools` string of `seq_create`'s `groups` (quotes escaped twice):
/// the guide's example of that quoting, which a test checks.
pub const GUIDE_JQ: &str = r#""tools":"{\"tool\":\"jq\",\"args\":{\"filter\":\"map(.name) | join(\\\",\\\")\",\"input\":$args.rows},\"as\":\"csv\"};""#;

/// `seq_create`'s description: the language in brief (the schema has every field).
pub(super) fn seq_create_guide() -> String {
    format!(
        "Checks and stores a sequence as `name` (`groups` inline or `file` under the root; \
         `replace: true` overwrites). \
         Example (run: `seq_run {{\"name\":\"notes\",\"args\":{{\"file\":\"notes.txt\"}}}}`):\n\
         {GUIDE_EXAMPLE}\n\
         A run runs the groups no item calls, in array order; a called group runs only when \
         called. `tools` is a string of JSON items, each followed by `;`: \
         `{{\"tool\": NAME, \"args\": {{...}}, \"as\": SLOT}};`. A \
         group's items run at the same time unless it says `\"parallel\": false`, so no item \
         sees a sibling's output; calls to the same `output_send__<channel>` keep \
         their order, and tools that are not parallel-safe never run concurrently (put one \
         in a `parallel: false` group, with `\"unsafe_serial\": true`). `$args.x` reads the \
         group's input `x` (`in`), `$args.xs[0].name` a path; bare it keeps its \
         type, in a string it is text; `${{args.x}}`, `${{out.x}}`, `${{each}}`, `${{each_index}}` \
         delimit it, paths too (`\"${{args.f}}.txt\"`, `${{out.r.stdout}}`). \
         `$out.x` reads slot `x` of an earlier item in a `parallel: false` group. A group's \
         `when` (`$args.env == \\\"prod\\\" && !$args.dry`; `==` `!=` `<` `<=` `>` `>=` `contains`, then \
         `!` `&&` `||`, parentheses; `true` `false` `null` are literals; a bool alone is a test) \
         skips it when false. A path that does not exist (an input not passed, an unset \
         `$out` slot, a missing field, an index past the end) reads `null` in a `when` \
         (`$args.x != null && $args.x.y > 0`: `&&` stops at a false left side) and fails an \
         item anywhere else (`required`). `in` may declare \
         `{{\"dry\": {{\"type\": \"bool\", \"default\": true}}, \"branch\": {{\"type\": \"string\", \
         \"required\": true}}}}`: a default fills an input not passed; a required one not passed \
         fails the run or call. Data between groups: a group sees only its own \
         `in` and `out` (a run's `args` go to uncalled groups); for \
         another group's outputs, call it with `seq_call` from a `parallel: false` group. Calls \
         return objects: `as` an `object` slot, read `$out.SLOT.x`. An `array` slot collects \
         the values written to it, in item order \
         (`files_list` into it: `[[\"a.txt\"]]`; an `any` slot keeps it whole; an `each` \
         item adds one per element). `\"each\": $args.hosts` (or a literal \
         array) runs an item once per element: in its `args` `$each` is the element \
         (`$each.name`), `$each_index` its place from 0; `as` an `array` slot gets a result \
         per element, in order (`null` for a failure `continue` tolerates; none: \
         `[]`), e.g. \
         `{{\"tool\":\"echo\",\"each\":$args.hosts,\"args\":{{\"value\":\"up $each\"}},\"as\":\"all\"}};`. \
         Elements run as items do (in turn if `parallel: false`, unless the item has \
         `max_parallel: N`: N at once). `on_error`: `abort` (default) \
         fails the group and run; `continue` makes it `partial` (run goes on); `retry` \
         (`retries`: tries after the first, N or `\"$args.n\"`; `retry_delay` \"1s\"). `missing` (tool not found): `fail`, `skip` \
         or `degrade` (`fallback`). `timeout` (\"30s\") covers retries. \
         `error_as: SLOT` catches a failure \
         into SLOT (`{{reason, detail, field, hint}}`, item `caught`); after a success SLOT is \
         unset and an item reading it fails: test it with `seq_when_call`, whose `when` is a \
         condition in a string (`{{\"tool\":\"seq_when_call\",\"args\":{{\"target\":\"report\",\
         \"when\":\"$out.e != null\"}}}};`); \
         on an `each` item SLOT is an `array`: failed elements' errors in place, else `null`. \
         A `jq` filter is a literal (`$args.x` in it is refused, `$x` is jq's): pass values in \
         `input` (`{{\"x\": $args.x}}`, read `.x`). A `\"` in a filter is `\\\\\\\"` in `tools`: \
         `{GUIDE_JQ}`. A run returns every declared slot its groups set (`out`: `{{group: \
         {{slot: value}}}}`; a called group's only in its caller's slot); a `skipped` group's \
         `when` was false."
    )
}

/// What `seq_create`'s guide says of `cmd_run`, added by a server that offers it (one that
/// does not should not teach it).
pub const CMD_RUN_GUIDE: &str = concat!(
    " `cmd_run` returns `{stdout, stderr, exit_code}` (`as` an `object` slot; `stdout` keeps its \
     final newline). Its `ok_exit` is an array of integers (`[0,1]` for `grep -c`). ",
    cmd_run_exit_rule!(),
    " Its `timeout` is a duration (\"1m30s\", default 60s)."
);
