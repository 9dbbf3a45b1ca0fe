//! One generated group: its flags, its items, and the `in`/`out` declarations that make it check
//! clean (every input read, every output written, no read of an unset slot).

use crate::pools::{
    ARRAY_SLOT, CALL_CONDITIONS, CMD_TIMEOUTS, COMMANDS, CONDITIONS, DESCRIPTIONS, EACH_LISTS,
    EACH_VALUES, ECHO_VALUES, INPUTS, LIST_PATHS, MESSAGES, READ_PATHS, SLOTS, TIMEOUTS,
};
use crate::rng::Rng;
use crate::text::{inputs_read, mask_inputs, push_string};

/// Something a group may `seq_call`: a group of the same sequence or `#sequence`, with the inputs
/// it declares (a bit mask over [`INPUTS`]); a call passes all of them.
#[derive(Clone, Debug)]
pub(crate) struct Callee {
    pub(crate) target: String,
    pub(crate) inputs: u16,
}

#[derive(Debug)]
pub(crate) struct Plan<'a> {
    pub(crate) name: String,
    /// Earlier groups of the sequence that may be called.
    pub(crate) local: &'a [Callee],
    /// Calls this group must make (cross-sequence calls of a batch).
    pub(crate) must_call: &'a [Callee],
    /// Whether a `files_write` (not parallel-safe) may appear; never in sequences that others
    /// call, so every `seq_call` stays parallel-safe.
    pub(crate) allow_unsafe: bool,
}

#[derive(Debug)]
pub(crate) struct Built {
    /// The group object, indented for a place in `groups`.
    pub(crate) text: String,
    /// The inputs the group declares.
    pub(crate) inputs: u16,
    /// Whether other groups may call it: always runs, always writes its slots, parallel-safe.
    pub(crate) callable: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OnError {
    Unset,
    Abort,
    Retry(Retries),
    Continue,
}

/// How many more attempts `on_error: retry` gives: a count, or the value of an `integer` input
/// (`"retries": "$args.NAME"`), which the group then declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Retries {
    Count(u32),
    /// The input's name.
    From(&'static str),
}

/// The input a group's `retries` may be taken from: the first `integer` of [`INPUTS`] (its
/// literal, what a call may pass, is within the run-time bound of 0 to 10).
fn retries_input() -> Option<&'static str> {
    INPUTS
        .iter()
        .find(|input| input.ty == "integer")
        .map(|input| input.name)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Missing {
    Unset,
    Fail,
    Skip,
    Degrade,
}

struct Items<'r> {
    rng: &'r mut Rng,
    /// Compact (`{"a":1}`) or spaced (`{"a": 1}`) JSON, chosen per group.
    spaced: bool,
    items: Vec<String>,
    /// Declared outputs: name and type, in first-write order.
    outputs: Vec<(&'static str, &'static str)>,
    /// What reads the single-write slots written so far in a serial group, after `$out.`: the
    /// slot, or the text inside a `cmd_run` result (`X.stdout`).
    readable: Vec<String>,
    /// Writes still owed to the array slot.
    array_writes: usize,
    /// The slots read through `$out` so far: only these may be made `local` (a local nobody
    /// reads is a warning).
    read: Vec<&'static str>,
}

impl Items<'_> {
    fn object(&self, members: &[(&str, &str)]) -> String {
        let (colon, comma) = if self.spaced {
            (": ", ", ")
        } else {
            (":", ",")
        };
        let mut out = String::from("{");
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                out.push_str(comma);
            }
            out.push('"');
            out.push_str(key);
            out.push('"');
            out.push_str(colon);
            out.push_str(value);
        }
        out.push('}');
        out
    }

    /// A fresh slot for a result of type `ty`, or the shared array slot while it is owed writes.
    fn slot(&mut self, ty: &'static str, may_share: bool) -> &'static str {
        if may_share && self.array_writes > 0 {
            self.array_writes -= 1;
            if !self.outputs.iter().any(|(name, _)| *name == ARRAY_SLOT) {
                self.outputs.push((ARRAY_SLOT, "array"));
            }
            return ARRAY_SLOT;
        }
        let free: Vec<&'static str> = SLOTS
            .iter()
            .copied()
            .filter(|s| !self.outputs.iter().any(|(name, _)| name == s))
            .collect();
        let name = *self.rng.pick(&free);
        self.outputs.push((name, ty));
        self.readable.push(name.to_owned());
        name
    }

    /// Notes a read of `$out.READ` (a slot, or a path into one such as `status.stdout`).
    fn note_read(&mut self, read: &str) {
        let slot = read.split('.').next().unwrap_or(read);
        if let Some(&(name, _)) = self.outputs.iter().find(|(name, _)| *name == slot)
            && !self.read.contains(&name)
        {
            self.read.push(name);
        }
    }

    fn push(&mut self, tool: &str, args: &str, output: Option<&str>, unsafe_serial: bool) {
        let tool = format!("\"{tool}\"");
        let output = output.map(|o| format!("\"{o}\""));
        let mut members = vec![("tool", tool.as_str()), ("args", args)];
        if let Some(output) = &output {
            members.push(("as", output.as_str()));
        }
        if unsafe_serial {
            members.push(("unsafe_serial", "true"));
        }
        let item = self.object(&members);
        self.items.push(item);
    }

    fn cmd_run(&mut self) {
        let command = format!("\"{}\"", self.rng.pick(COMMANDS));
        let timeout = format!("\"{}\"", self.rng.pick(CMD_TIMEOUTS));
        let args = if self.rng.chance(30) {
            self.object(&[("command", &command), ("timeout", &timeout)])
        } else {
            self.object(&[("command", &command)])
        };
        // `cmd_run` returns `{stdout, stderr, exit_code}`: an object slot, its text read as
        // `.stdout`.
        let output = self.rng.chance(85).then(|| self.slot("object", true));
        if let Some(read) = self
            .readable
            .last_mut()
            .filter(|r| output == Some(r.as_str()))
        {
            read.push_str(".stdout");
        }
        self.push("cmd_run", &args, output, false);
    }

    fn echo(&mut self) {
        if self.rng.chance(25) {
            return self.each_echo();
        }
        let value = *self.rng.pick(ECHO_VALUES);
        let args = self.object(&[("value", value)]);
        let output = self.rng.chance(50).then(|| self.slot("any", false));
        self.push("echo", &args, output, false);
    }

    /// `echo` once per element of a literal array, into a fresh `array` slot.
    fn each_echo(&mut self) {
        let list = *self.rng.pick(EACH_LISTS);
        let value = *self.rng.pick(EACH_VALUES);
        let args = self.object(&[("value", value)]);
        let output = self.rng.chance(70).then(|| self.slot("array", false));
        let output = output.map(|o| format!("\"{o}\""));
        let mut members = vec![
            ("tool", "\"echo\""),
            ("each", list),
            ("args", args.as_str()),
        ];
        if let Some(output) = &output {
            members.push(("as", output.as_str()));
        }
        // A fan-out now and then: `echo` is parallel-safe, so any group may run it.
        if self.rng.chance(30) {
            members.push(("max_parallel", *self.rng.pick(&["1", "2", "16"])));
        }
        let item = self.object(&members);
        self.items.push(item);
    }

    fn files_read(&mut self) {
        let path = format!("\"{}\"", self.rng.pick(READ_PATHS));
        let args = self.object(&[("path", &path)]);
        let output = self.slot("string", false);
        self.push("files_read", &args, Some(output), false);
    }

    fn files_list(&mut self) {
        let path = format!("\"{}\"", self.rng.pick(LIST_PATHS));
        let args = self.object(&[("path", &path)]);
        let output = self.rng.chance(70).then(|| self.slot("any", false));
        self.push("files_list", &args, output, false);
    }

    fn sleep(&mut self) {
        let ms = if self.rng.chance(50) {
            "$args.count"
        } else {
            "250"
        };
        let args = self.object(&[("ms", ms)]);
        self.push("sleep", &args, None, false);
    }

    /// `output_send__stdout`, reading a slot written earlier when `read_out` allows it.
    fn send(&mut self, read_out: bool) {
        let text = if read_out && !self.readable.is_empty() {
            let read = self.rng.pick(&self.readable).clone();
            self.note_read(&read);
            format!("\"摘要: $out.{read}\"")
        } else {
            format!("\"{}\"", self.rng.pick(MESSAGES))
        };
        let args = self.object(&[("text", &text)]);
        self.push("output_send__stdout", &args, None, false);
    }

    /// `files_write`, not parallel-safe: only in serial groups, acknowledged with `unsafe_serial`.
    fn files_write(&mut self, read_out: bool) {
        let content = match self.readable.first().cloned() {
            Some(slot) if read_out => {
                self.note_read(&slot);
                format!("\"$out.{slot}\"")
            }
            _ => r#""line1\nline2 \"quoted\" \\ end""#.to_string(),
        };
        let args = self.object(&[
            ("path", r#""/tmp/report-${args.host}.txt""#),
            ("content", &content),
        ]);
        self.push("files_write", &args, None, true);
    }

    /// The arguments a call passes to `callee`: every input it declares, each by reference to
    /// the caller's own input of the same name, or as a literal.
    fn call_args(&mut self, callee: &Callee) -> String {
        let values: Vec<(&str, String)> = mask_inputs(callee.inputs)
            .map(|i| {
                let input = &INPUTS[i];
                let value = match self.rng.below(10) {
                    0..=4 => format!("$args.{}", input.name),
                    5 if input.name == "host" => "$args.hosts[0]".to_string(),
                    5..=7 => input.literal.to_string(),
                    _ if input.ty == "string" => format!("\"$args.{}\"", input.name),
                    _ => format!("$args.{}", input.name),
                };
                (input.name, value)
            })
            .collect();
        let members: Vec<(&str, &str)> = values.iter().map(|(k, v)| (*k, v.as_str())).collect();
        self.object(&members)
    }

    fn seq_call(&mut self, callee: &Callee) {
        let target = format!("\"{}\"", callee.target);
        let inner = self.call_args(callee);
        let args = self.object(&[("target", &target), ("args", &inner)]);
        let output = self.rng.chance(90).then(|| self.slot("object", true));
        self.push("seq_call", &args, output, false);
    }

    /// `seq_when_call`, now and then with an `else` target: then it writes its slot on both
    /// branches (both callees always run and write theirs), like a `seq_call`.
    fn seq_when_call(&mut self, callee: &Callee, otherwise: Option<&Callee>) {
        let target = format!("\"{}\"", callee.target);
        let inner = self.call_args(callee);
        let when = format!("\"{}\"", self.rng.pick(CALL_CONDITIONS));
        let mut members = vec![("target", target), ("args", inner), ("when", when)];
        let mut output = None;
        if let Some(otherwise) = otherwise {
            members.push(("else", format!("\"{}\"", otherwise.target)));
            // `else_args` default to `args`, which fit the `else` target only when it declares
            // the same inputs (more would go unpassed, fewer would be undeclared arguments).
            if otherwise.inputs != callee.inputs || self.rng.chance(30) {
                let else_args = self.call_args(otherwise);
                members.push(("else_args", else_args));
            }
            output = self.rng.chance(80).then(|| self.slot("object", true));
        }
        let members: Vec<(&str, &str)> = members.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let args = self.object(&members);
        self.push("seq_when_call", &args, output, false);
    }
}

/// Generates one group per `plan`.
pub(crate) fn group(rng: &mut Rng, plan: &Plan<'_>) -> Built {
    let parallel = match rng.below(20) {
        0..=4 => None,
        5..=10 => Some(true),
        _ => Some(false),
    };
    let serial = parallel == Some(false);
    let when = rng.chance(25).then(|| *rng.pick(CONDITIONS));
    let on_error = match rng.below(20) {
        0..=9 => OnError::Unset,
        10..=13 => OnError::Abort,
        14..=16 => match retries_input() {
            Some(input) if rng.chance(35) => OnError::Retry(Retries::From(input)),
            Some(_) | None => OnError::Retry(Retries::Count(1 + rng.below(3) as u32)),
        },
        _ => OnError::Continue,
    };
    let mut missing = match rng.below(20) {
        0..=15 => Missing::Unset,
        16 => Missing::Fail,
        17 => Missing::Skip,
        _ => Missing::Degrade,
    };
    let writes_file = serial && plan.allow_unsafe && rng.chance(15);
    // A caller must be able to count on the callee running, writing its slots, and being
    // parallel-safe; groups that may be skipped are left uncalled.
    let callable =
        when.is_none() && on_error != OnError::Continue && missing != Missing::Skip && !writes_file;
    // `$out` reads need writers that cannot be skipped within the group.
    let read_out = serial && on_error != OnError::Continue && missing != Missing::Skip;

    let mut items = Items {
        spaced: rng.chance(50),
        array_writes: if rng.chance(20) { 2 + rng.below(2) } else { 0 },
        rng,
        items: Vec::new(),
        outputs: Vec::new(),
        readable: Vec::new(),
        read: Vec::new(),
    };
    for callee in plan.must_call {
        items.seq_call(callee);
    }
    let count = *items.rng.pick(&[2, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 7, 8]);
    let (call_weight, when_call_weight) = if plan.local.is_empty() {
        (0, 0)
    } else {
        (12, 2)
    };
    let read_weight = if read_out { 12 } else { 0 };
    while items.items.len() < count {
        let weights = [
            40,
            15,
            10,
            5,
            5,
            10,
            read_weight,
            call_weight,
            when_call_weight,
        ];
        let kind = items.rng.weighted(&weights);
        match kind {
            0 => items.cmd_run(),
            1 => items.echo(),
            2 => items.files_read(),
            3 => items.files_list(),
            4 => items.sleep(),
            5 => items.send(false),
            6 => items.send(true),
            7 | 8 => {
                // Mostly the latest callable group, so calls chain deep within the sequence.
                let at = if items.rng.chance(50) {
                    plan.local.len().saturating_sub(1)
                } else {
                    items.rng.below(plan.local.len())
                };
                match (kind, plan.local.get(at)) {
                    (7, Some(callee)) => items.seq_call(callee),
                    (_, Some(callee)) => {
                        let otherwise = items.rng.chance(50).then(|| items.rng.pick(plan.local));
                        items.seq_when_call(callee, otherwise);
                    }
                    (_, None) => items.cmd_run(),
                }
            }
            _ => items.cmd_run(),
        }
    }
    if writes_file {
        items.files_write(read_out);
    }
    // Some slots read within the group become `local`: written and read the same way, but no
    // part of the group's result.
    let mut locals = Vec::new();
    let mut outputs = Vec::new();
    for &(name, ty) in &items.outputs {
        if items.read.contains(&name) && items.rng.chance(50) {
            locals.push((name, ty));
        } else {
            outputs.push((name, ty));
        }
    }
    if missing == Missing::Degrade && items.outputs.is_empty() {
        missing = Missing::Fail;
    }

    let mut tools = String::new();
    let separator = *items.rng.pick(&[" ; ", ";", "; ", " ;\n"]);
    for item in &items.items {
        tools.push_str(item);
        tools.push_str(separator);
    }
    let tools = tools.trim_end().to_string();

    let mut read = inputs_read(&tools);
    if let Some(when) = when {
        read |= inputs_read(when);
    }
    let retries = match on_error {
        OnError::Retry(Retries::Count(count)) => Some(count.to_string()),
        OnError::Retry(Retries::From(input)) => {
            let reference = format!("$args.{input}");
            read |= inputs_read(&reference);
            Some(format!("\"{reference}\""))
        }
        OnError::Unset | OnError::Abort | OnError::Continue => None,
    };

    let description = items.rng.chance(40).then(|| *items.rng.pick(DESCRIPTIONS));
    let timeout = items.rng.chance(60).then(|| *items.rng.pick(TIMEOUTS));

    let mut fields: Vec<(&str, String)> = Vec::new();
    let mut name = String::new();
    push_string(&mut name, &plan.name);
    fields.push(("name", name));
    if let Some(description) = description {
        fields.push(("description", format!("\"{description}\"")));
    }
    if read != 0 {
        let decls: Vec<String> = mask_inputs(read)
            .map(|i| format!("\"{}\": \"{}\"", INPUTS[i].name, INPUTS[i].ty))
            .collect();
        fields.push(("in", format!("{{ {} }}", decls.join(", "))));
    }
    for (field, slots) in [("out", &outputs), ("local", &locals)] {
        if !slots.is_empty() {
            let decls: Vec<String> = slots
                .iter()
                .map(|(name, ty)| format!("\"{name}\": \"{ty}\""))
                .collect();
            fields.push((field, format!("{{ {} }}", decls.join(", "))));
        }
    }
    if let Some(when) = when {
        fields.push(("when", format!("\"{when}\"")));
    }
    if let Some(parallel) = parallel {
        fields.push(("parallel", parallel.to_string()));
    }
    if let Some(timeout) = timeout {
        fields.push(("timeout", format!("\"{timeout}\"")));
    }
    match on_error {
        OnError::Unset => {}
        OnError::Abort => fields.push(("on_error", "\"abort\"".to_string())),
        OnError::Continue => fields.push(("on_error", "\"continue\"".to_string())),
        OnError::Retry(_) => fields.push(("on_error", "\"retry\"".to_string())),
    }
    if let Some(retries) = retries {
        fields.push(("retries", retries));
    }
    match missing {
        Missing::Unset => {}
        Missing::Fail => fields.push(("missing", "\"fail\"".to_string())),
        Missing::Skip => fields.push(("missing", "\"skip\"".to_string())),
        Missing::Degrade => {
            fields.push(("missing", "\"degrade\"".to_string()));
            // Locals too: a degraded item writes its slot, whichever kind it is.
            let values: Vec<String> = items
                .outputs
                .iter()
                .map(|(name, ty)| format!("\"{name}\": {}", fallback(ty)))
                .collect();
            fields.push(("fallback", format!("{{ {} }}", values.join(", "))));
        }
    }
    let mut tools_literal = String::new();
    push_string(&mut tools_literal, &tools);
    fields.push(("tools", tools_literal));

    let mut text = String::from("    {\n");
    for (i, (key, value)) in fields.iter().enumerate() {
        text.push_str("      \"");
        text.push_str(key);
        text.push_str("\": ");
        text.push_str(value);
        text.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
    }
    text.push_str("    }");
    Built {
        text,
        inputs: read,
        callable,
    }
}

/// A fallback value of a slot type (values of the slots' types).
fn fallback(ty: &str) -> &'static str {
    match ty {
        "string" => "\"不可用\"",
        "array" => "[]",
        "object" => "{}",
        "integer" | "number" => "0",
        "bool" => "false",
        _ => "null",
    }
}
