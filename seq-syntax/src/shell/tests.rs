#![allow(clippy::unwrap_used, reason = "tests may unwrap")]
use super::*;
use crate::escape::OffsetMap;
use crate::template::parse_template;

fn scan(text: &str) -> Result<Vec<Context>, Problem> {
    let (template, _) = parse_template(text, &OffsetMap::default());
    contexts(&template.parts)
}

#[test]
fn contexts_of_references() {
    use Context::{Double, Word};
    assert_eq!(scan("echo $args.x"), Ok(vec![Word]));
    assert_eq!(scan("echo \"a $args.x\" $args.y"), Ok(vec![Double, Word]));
    assert_eq!(
        scan("echo '$args.y'"),
        Err(Problem::Unsafe(Place::SingleQuotes))
    );
    assert_eq!(scan("echo \"$(cat $args.x)\""), Ok(vec![Word]));
    assert_eq!(scan("echo \\'$args.x"), Ok(vec![Word]));
    assert_eq!(scan("echo a#b $args.x"), Ok(vec![Word]));
}

#[test]
fn problems() {
    assert_eq!(
        scan("echo 'a $args.x"),
        Err(Problem::Unclosed(Opener::SingleQuote))
    );
    assert_eq!(
        scan("echo \"$args.x"),
        Err(Problem::Unclosed(Opener::DoubleQuote))
    );
    assert_eq!(
        scan("echo $(ls"),
        Err(Problem::Unclosed(Opener::Substitution))
    );
    assert_eq!(scan("ls # $args.x"), Err(Problem::Unsafe(Place::Comment)));
    assert_eq!(
        scan("cat <<'E'\n$args.x\nE"),
        Err(Problem::Unsafe(Place::HereDocument))
    );
    assert_eq!(
        scan("echo `echo $args.x`"),
        Err(Problem::Unsafe(Place::Backquotes))
    );
    assert_eq!(
        scan("echo $'$args.x'"),
        Err(Problem::Unsafe(Place::DollarQuote))
    );
}

#[test]
fn backslashes_and_braces() {
    use Context::{Double, Word};
    let uncertain = |u| Err(Problem::Uncertain(u));
    assert_eq!(
        scan("echo \"C:\\$args.v\""),
        uncertain(Uncertain::AfterBackslash)
    );
    assert_eq!(scan("echo \\$args.v"), uncertain(Uncertain::AfterBackslash));
    assert_eq!(scan("echo \"C:\\\\$args.v\""), Ok(vec![Double]));
    assert_eq!(scan("echo \"\\\"\" $args.v"), Ok(vec![Word]));
    assert_eq!(scan("printf %s \"${X:-\"$args.v\"}\""), Ok(vec![Double]));
    assert_eq!(scan("printf %s \"${X:+\"$args.v\"}\""), Ok(vec![Double]));
    assert_eq!(scan("printf %s \"${X#\"$args.v\"}\""), Ok(vec![Double]));
    assert_eq!(scan("printf %s ${X:-$args.v}"), Ok(vec![Word]));
    assert_eq!(
        scan("printf %s ${X:-'$args.v'}"),
        Err(Problem::Unsafe(Place::SingleQuotes))
    );
    assert_eq!(
        scan("printf %s \"${X:-$args.v}\""),
        uncertain(Uncertain::BareInQuotedBrace)
    );
    assert_eq!(
        scan("printf %s \"${X#'a'}\" $args.v"),
        uncertain(Uncertain::QuoteInQuotedBrace)
    );
    assert_eq!(
        scan("echo $((1 + $args.v))"),
        uncertain(Uncertain::Arithmetic)
    );
    assert_eq!(scan("((n = $args.v))"), uncertain(Uncertain::Arithmetic));
    // bash evaluates offsets, subscripts and `$[...]` as arithmetic.
    assert_eq!(
        scan("X=abc; echo ${X:$args.v}"),
        uncertain(Uncertain::Arithmetic)
    );
    assert_eq!(
        scan("echo \"${X:\"$args.v\"}\""),
        uncertain(Uncertain::Arithmetic)
    );
    assert_eq!(scan("echo ${A[$args.v]}"), uncertain(Uncertain::Arithmetic));
    assert_eq!(scan("echo $[$args.v]"), uncertain(Uncertain::Arithmetic));
    assert_eq!(
        scan("echo \"$[1]\" $args.v"),
        uncertain(Uncertain::Arithmetic)
    );
    // The other operators are not: `:-` and friends, lengths, special parameters.
    assert_eq!(scan("printf %s ${X:-$args.v} ${#X} ${@}"), Ok(vec![Word]));
    assert_eq!(
        scan("printf %s ${X: -$args.v}"),
        uncertain(Uncertain::Arithmetic)
    );
    // An assigning expansion unquoted is split and globbed after it assigns.
    assert_eq!(
        scan("echo ${X:=$args.v}"),
        uncertain(Uncertain::AssignedUnquoted)
    );
    assert_eq!(
        scan("echo ${X=\"$args.v\"}"),
        uncertain(Uncertain::AssignedUnquoted)
    );
    assert_eq!(scan("echo \"${X:=\"$args.v\"}\""), Ok(vec![Double]));
    assert_eq!(scan("echo $( (ls) ) $args.v"), Ok(vec![Word]));
    assert_eq!(scan("echo ${X"), Err(Problem::Unclosed(Opener::Brace)));
}

#[test]
fn arithmetic_everywhere() {
    let arithmetic = Err(Problem::Uncertain(Uncertain::Arithmetic));
    for text in [
        "[[ $args.v -eq 1 ]]",
        "[[ \"$args.v\" -gt 1 && -n x ]] && echo y",
        "[[ x == y || $args.v -le 2 ]]",
        "let x=$args.v",
        "let \"x = $args.v\"",
        "declare -i n=$args.v",
        "local -ai n; n=$args.v",
        "x=$args.v; typeset -i x",
        "x[$args.v]=1",
        "unset \"a[$args.v]\"",
        "read -r 'a'[$args.v] < /dev/null",
        "echo ${a[@]:$args.v}",
    ] {
        assert_eq!(scan(text), arithmetic, "{text}");
    }
    // A value naming a variable: bash evaluates its subscript.
    for text in [
        "declare \"$args.v\"=1",
        "printf -v $args.v x",
        "read -r $args.v",
        "unset $args.v",
        "[[ -v $args.v ]]",
        "test -v $args.v",
    ] {
        assert_eq!(scan(text), arithmetic, "{text}");
    }
    assert_eq!(scan("export A=$args.v"), Ok(vec![Context::Word]));
    assert_eq!(scan("grep -v $args.v f"), Ok(vec![Context::Word]));
    // Not arithmetic: string tests, plain words with brackets closed, `[`.
    assert_eq!(scan("[[ $args.v == x ]]"), Ok(vec![Context::Word]));
    assert_eq!(scan("[ $args.v -eq 1 ]"), Ok(vec![Context::Word]));
    assert_eq!(scan("echo a[1]$args.v"), Ok(vec![Context::Word]));
    // Blanks before a value inside double quotes (the grammar's node takes them).
    assert_eq!(
        scan("printf %s \" ${args.x}ja\""),
        Ok(vec![Context::Double])
    );
    assert_eq!(scan("declare x=$args.v"), Ok(vec![Context::Word]));
}

#[test]
fn here_documents() {
    use Context::{Double, Word};
    let unsafe_here = Err(Problem::Unsafe(Place::HereDocument));
    assert_eq!(
        scan("cat <<E\na $args.x b\nE\necho $args.y"),
        Ok(vec![Double, Word])
    );
    assert_eq!(scan("cat <<E >f\n$args.x\nE\n"), Ok(vec![Double]));
    // `<<-` strips leading tabs: a value placed by the parser is accepted.
    assert_eq!(scan("cat <<-E >f\n\tx $args.x\n\tE\n"), Ok(vec![Double]));
    assert_eq!(scan("cat <<-E\n$args.x\nE"), Ok(vec![Double]));
    // Bodies the shell parser misreads (in a `<<-` body, a value right after a line's
    // leading tabs, which the grammar reads as text; a command after the operator; two
    // here-documents on one line, an ERROR node): refused as not certain, never guessed.
    let unparsed = Err(Problem::Uncertain(Uncertain::Unparsed));
    assert_eq!(scan("cat <<-E >f\n\t$args.x\n\tE\n"), unparsed);
    assert_eq!(scan("cat <<E; echo $args.y\n'$args.x\nE"), unparsed);
    assert_eq!(scan("cat <<A <<'B'\n$args.x\nA\n$args.y\nB"), unparsed);
    assert_eq!(scan("cat <<A <<'B'\n$args.x\nA\nB"), unparsed);
    assert_eq!(scan("cat <<\\E\n$args.x\nE"), unsafe_here);
    assert_eq!(scan("cat <<\"E\"\n$args.x\nE"), unsafe_here);
    assert_eq!(scan("cat <<$args.x\nE"), unsafe_here);
    assert_eq!(scan("cat <<E\n$(echo $args.x)\nE"), unsafe_here);
    assert_eq!(
        scan("cat <<E\n\\$args.x\nE"),
        Err(Problem::Uncertain(Uncertain::AfterBackslash))
    );
    // A line holding the delimiter among other text does not end the body.
    assert_eq!(scan("cat <<E\nE x\n$args.x\nE"), unparsed);
    assert_eq!(scan("cat <<<$args.x"), Ok(vec![Word]));
    // A shell reading the body as its script parses the value.
    assert_eq!(reparsed("sh <<E\necho $args.x\nE"), [Some("sh")]);
    assert_eq!(reparsed("ssh h <<E\necho $args.x\nE"), [Some("ssh")]);
}

/// Plain text is not parsed: there the parser would have agreed with the scan.
#[test]
fn plain_text_reads_as_parsed() {
    for text in [
        "grep -rn $args.p $args.dir | head -n 20",
        "cd $args.repo && git log --oneline -n 5 -- \"$args.path\"",
        "curl -fsS \"https://x.example/items/$args.id\" -H \"Auth: $args.token\"",
        "sh -c 'echo \"$1\" | tr a-z A-Z' sh $args.text",
        "find $args.dir -name '*.rs' -newer \"$args.stamp\" | xargs wc -l",
        "test -f \"$args.p\" && echo \"e: $args.p\" || echo missing # check $args.q",
        "jq -r '.items[] | .name' \"$out.fetch.stdout\" | sort | uniq -c",
        "tar -czf \"b-$args.date.tgz\" -C \"$args.dir\" . 2>/dev/null; echo ok",
        "A=$args.v env | grep A= >>log &\nls \"$HOME\"$args.w'x'#y",
        "echo '$args.v' a#$args.w",
    ] {
        let (template, _) = parse_template(text, &OffsetMap::default());
        assert!(plain::plain(&template.parts), "{text}");
        let words = scan_words(&template.parts);
        parsed::with_contexts(&template.parts, |parsed| {
            assert_eq!(parsed.len(), words.refs.len(), "{text}");
            for (r, &p) in words.refs.iter().zip(parsed) {
                assert_eq!(agree(r.context, p), r.context, "{text}");
            }
        });
    }
}

#[test]
fn dollar_pairs() {
    // `$$` (the process id) is read as a pair, as the shell reads it: `$$args.v` holds no
    // reference, `$$$args.v` is the id followed by the value.
    assert_eq!(scan("echo $$args.v"), Ok(vec![]));
    assert_eq!(scan("echo \"$$args.v\""), Ok(vec![]));
    assert_eq!(scan("echo $$$args.v"), Ok(vec![Context::Word]));
    assert_eq!(scan("echo \"$$$args.v\""), Ok(vec![Context::Double]));
}

#[test]
fn reserved_prefix() {
    assert_eq!(scan("SEQ_V1=x; echo $args.v"), Err(Problem::Reserved));
    assert_eq!(scan("echo \"$SEQ_V2\""), Err(Problem::Reserved));
    assert!(is_reserved("SEQ_V1") && !is_reserved("SEQ_X"));
}

fn reparsed(text: &str) -> Vec<Option<&'static str>> {
    let (template, _) = parse_template(text, &OffsetMap::default());
    scan_all(&template.parts)
        .refs
        .iter()
        .map(|r| r.reparse.as_ref().map(|r| r.command))
        .collect()
}

use super::scan as scan_all;

#[test]
fn reparsing_commands() {
    assert_eq!(reparsed("eval \"echo $args.v\""), [Some("eval")]);
    assert_eq!(reparsed("alias x=\"ls $args.v\"; x"), [Some("alias")]);
    // An alias for a command that evaluates its words, used later (dash expands aliases in
    // `-c` text): every value of a text that defines an alias.
    assert_eq!(reparsed("alias q=eval\nq $args.v"), [Some("alias")]);
    assert_eq!(reparsed("q $args.v; alias q=eval"), [Some("alias")]);
    assert_eq!(reparsed("echo alias $args.v"), [None]);
    // Another language's program: the value in it is code in that language.
    assert_eq!(
        reparsed("python3 -c \"print('$args.v')\""),
        [Some("python -c")]
    );
    assert_eq!(reparsed("perl -le \"print '$args.v'\""), [Some("perl -e")]);
    assert_eq!(reparsed("perl -e\"print '$args.v'\""), [Some("perl -e")]);
    assert_eq!(reparsed("node --eval=\"f('$args.v')\""), [Some("node -e")]);
    assert_eq!(
        reparsed("awk \"BEGIN{print \\\"$args.v\\\"}\""),
        [Some("awk")]
    );
    assert_eq!(
        reparsed("awk -F: \"{print \\$1, \\\"$args.v\\\"}\" f"),
        [Some("awk")]
    );
    assert_eq!(reparsed("sed \"s/x/$args.v/\" f"), [Some("sed")]);
    assert_eq!(reparsed("sed -n -e \"s/x/$args.v/p\" f"), [Some("sed")]);
    // As data: an argument after a fixed program, an awk variable, a file operand.
    assert_eq!(
        reparsed("python3 -c 'import sys; print(sys.argv[1])' $args.v"),
        [None]
    );
    assert_eq!(reparsed("awk -v v=$args.v 'BEGIN { print v }'"), [None]);
    assert_eq!(reparsed("awk '{print}' $args.v"), [None]);
    assert_eq!(reparsed("sed 's/a/b/' $args.v"), [None]);
    assert_eq!(reparsed("sed -e 's/a/b/' $args.v"), [None]);
    assert_eq!(reparsed("awk -f prog.awk $args.v"), [None]);
    assert_eq!(reparsed("python3 tool.py $args.v"), [None]);
}

/// A value may flow through a variable, a function's argument or a positional parameter into a
/// command that parses an expansion again: every value of such a text is refused. Literal text
/// for `eval`, and a script in single quotes, hand no expansion over.
#[test]
fn expansions_parsed_again_refuse_every_value() {
    let refused = Err(Problem::Uncertain(Uncertain::ExpansionReparsed));
    for text in [
        "f() { eval \"$1\"; }; f $args.v",
        "x=$args.v; eval \"$x\"",
        "set -- $args.v; eval $1",
        "printf %s $args.v > f; eval \"$(cat f)\"",
        "x=$args.v; sh -c \"$x\"",
    ] {
        assert_eq!(contexts_of(text), std::slice::from_ref(&refused), "{text}");
    }
    for text in [
        "eval \"echo hi\"; echo $args.v",
        "x=$args.v; eval 'echo \"$x\"'",
        "sh -c 'echo \"$1\"' sh $args.v",
        "echo \"$HOME\" $args.v",
    ] {
        assert_eq!(contexts_of(text), [Ok(Context::Word)], "{text}");
    }
    assert_eq!(reparsed("sh -c 'echo $args.v'"), [Some("sh -c")]);
    assert_eq!(reparsed("bash -ec \"echo $args.v\""), [Some("bash -c")]);
    assert_eq!(reparsed("ssh host \"cat $args.v\""), [Some("ssh")]);
    assert_eq!(reparsed("ssh -p 22 -v $args.host uptime"), [None]);
    assert_eq!(reparsed("ssh -p22 h ls $args.v"), [Some("ssh")]);
    assert_eq!(reparsed("su -c \"id $args.v\" bob"), [Some("su -c")]);
    assert_eq!(reparsed("ls | xargs sh -c 'echo $args.v'"), [Some("sh -c")]);
    assert_eq!(
        reparsed("find . -exec sh -c 'rm $args.v' \\;"),
        [Some("sh -c")]
    );
    assert_eq!(reparsed("sudo -E FOO=1 eval $args.v"), [Some("eval")]);
    assert_eq!(reparsed("echo $(eval $args.v)"), [Some("eval")]);
    // A positional argument after the script, and a word that only names a shell, are data.
    assert_eq!(reparsed("sh -c 'echo \"$1\"' _ $args.v"), [None]);
    assert_eq!(
        reparsed("echo eval $args.v; echo sh -x $args.v"),
        [None, None]
    );
    assert_eq!(reparsed("eval true; echo $args.v"), [None]);
    assert_eq!(reparsed("sh -c -- 'echo $args.v'"), [Some("sh -c")]);
    assert_eq!(reparsed("trap $args.v EXIT"), [Some("trap")]);
    assert_eq!(reparsed("trap -- \"echo $args.v\" EXIT"), [Some("trap")]);
    assert_eq!(reparsed("trap 'echo hi' $args.v"), [None]);
    assert_eq!(
        reparsed("flock /tmp/l -c \"ls $args.v\""),
        [Some("flock -c")]
    );
    assert_eq!(reparsed("flock /tmp/l ls $args.v"), [None]);
    assert_eq!(
        reparsed("script -q -c \"ls $args.v\" /dev/null"),
        [Some("script -c")]
    );
    assert_eq!(reparsed("watch -n 1 ls $args.v"), [Some("watch")]);
    assert_eq!(reparsed("watch -x ls $args.v"), [None]);
    // Wrappers' option arguments and reserved words before the command.
    assert_eq!(reparsed("nice -n 5 eval $args.v"), [Some("eval")]);
    assert_eq!(reparsed("timeout 5 sh -c \"$args.v\""), [Some("sh -c")]);
    assert_eq!(reparsed("timeout -s KILL 5 eval $args.v"), [Some("eval")]);
    assert_eq!(reparsed("nohup ssh h \"ls $args.v\""), [Some("ssh")]);
    assert_eq!(reparsed("sudo -u bob eval $args.v"), [Some("eval")]);
    assert_eq!(reparsed("if eval $args.v; then :; fi"), [Some("eval")]);
    assert_eq!(reparsed("! eval $args.v"), [Some("eval")]);
    assert_eq!(
        reparsed("while true; do eval $args.v; done"),
        [Some("eval")]
    );
    assert_eq!(reparsed("$SHELL -c \"$args.v\""), [Some("$SHELL -c")]);
    assert_eq!(reparsed("env A=1 bash -c \"$args.v\""), [Some("bash -c")]);
    assert_eq!(reparsed("su --command=\"ls $args.v\" bob"), [Some("su -c")]);
    assert_eq!(reparsed("ssh -o ProxyCommand=$args.v h"), [Some("ssh")]);
    assert_eq!(reparsed("ssh $args.host uptime"), [None]);
    assert_eq!(reparsed("nice -n 5 ls $args.v"), [None]);
    let (template, _) = parse_template("sh -c 'echo \"$args.a\" $args.b' x", &OffsetMap::default());
    let scanned = scan_all(&template.parts);
    let inner: Vec<_> = scanned
        .refs
        .iter()
        .map(|r| {
            r.reparse
                .as_ref()
                .and_then(|r| r.script.as_ref())
                .and_then(|s| s.inner)
        })
        .collect();
    assert_eq!(inner, [Some(Context::Double), Some(Context::Word)]);
    // The command that parses again decides, before the quotes around the value.
    assert_eq!(
        scanned.refs[0].expansion(),
        Err(Problem::Reparsed("sh -c", Via::Argument))
    );
}

/// How each value of `text` reaches a program that reads it as code, if any.
fn reached(text: &str) -> Vec<Option<(&'static str, Via)>> {
    let (template, _) = parse_template(text, &OffsetMap::default());
    scan_all(&template.parts)
        .refs
        .iter()
        .map(|r| r.reparse.as_ref().map(|r| (r.command, r.via)))
        .collect()
}

#[test]
fn code_on_standard_input_or_in_a_written_script() {
    use Via::{ScriptFile, StandardInput};
    let cases: &[(&str, Option<(&str, Via)>)] = &[
        // A program reading its code on a standard input the text feeds: every value of the
        // text may flow there (through a pipe, a variable, a file).
        ("printf %s $args.v | sh", Some(("sh", StandardInput))),
        ("echo $args.v | bash -s", Some(("bash", StandardInput))),
        ("echo $args.v |& sh -", Some(("sh", StandardInput))),
        ("sh <<< $args.v", Some(("sh", StandardInput))),
        ("python3 <<< \"$args.v\"", Some(("python3", StandardInput))),
        ("echo $args.v | python3", Some(("python3", StandardInput))),
        ("echo $args.v | node -", Some(("node", StandardInput))),
        ("printf %s $args.v > s; sh < s", Some(("sh", StandardInput))),
        ("sh <(echo $args.v)", Some(("sh", StandardInput))),
        ("echo $args.v | xargs sh -c", Some(("sh", StandardInput))),
        (
            "echo $args.v | xargs -I{} sh -c 'echo {}'",
            Some(("sh", StandardInput)),
        ),
        ("echo $args.v | ssh host", Some(("ssh", StandardInput))),
        ("echo $args.v | su bob", Some(("su", StandardInput))),
        ("echo $args.v | (sh)", Some(("sh", StandardInput))),
        ("echo $args.v | { sh; }", Some(("sh", StandardInput))),
        ("echo $args.v | . /dev/stdin", Some((".", StandardInput))),
        ("echo $args.v | awk -f - f", Some(("awk", StandardInput))),
        (
            "x=$args.v; printf %s \"$x\" | sh",
            Some(("sh", StandardInput)),
        ),
        (
            "python3 <<E\nprint($args.v)\nE",
            Some(("python3", StandardInput)),
        ),
        // A file the text writes, then runs as a program.
        ("echo $args.v > s.sh; sh s.sh", Some(("sh", ScriptFile))),
        ("echo $args.v >s.sh; . ./s.sh", Some((".", ScriptFile))),
        (
            "echo $args.v | tee s.py; python3 s.py",
            Some(("python3", ScriptFile)),
        ),
        (
            "echo $args.v >> run; chmod +x run; ./run",
            Some(("sh", ScriptFile)),
        ),
        // Data: the value reaches a program's arguments or a standard input read as data.
        ("echo $args.v | grep x", None),
        ("echo $args.v || sh", None),
        ("echo $args.v | sh -c 'read -r x; echo \"$x\"'", None),
        (
            "printf '%s\\n' $args.v | ssh h 'IFS= read -r v; echo \"$v\"'",
            None,
        ),
        ("echo $args.v | python3 -m json.tool", None),
        ("echo $args.v | python3 script.py", None),
        ("echo $args.v | sh script.sh", None),
        ("echo $args.v | xargs -n1 sh -c 'echo \"$1\"' _", None),
        ("echo $args.v | xargs rm", None),
        ("echo $args.v > out.txt; sh build.sh out.txt", None),
        ("sh -s -- $args.v <<'E'\necho \"$1\"\nE", None),
        ("cat < $args.v", None),
        ("echo $args.v 2>&1 | cat", None),
    ];
    for (text, expected) in cases {
        assert_eq!(reached(text), [*expected], "{text:?}");
    }
}

#[test]
fn expansions() {
    let mut out = String::new();
    expansion_into(&mut out, &value_variable(0), Context::Word);
    out.push(' ');
    expansion_into(&mut out, &value_variable(1), Context::Double);
    assert_eq!(out, "\"${SEQ_V1}\" ${SEQ_V2}");
}

#[test]
fn escapes() {
    assert_eq!(escape("a.b-c", Context::Word), "a.b-c");
    assert_eq!(escape("", Context::Word), "''");
    assert_eq!(escape("a'b", Context::Word), "'a'\\''b'");
    assert_eq!(escape("a\"$`\\", Context::Double), "a\\\"\\$\\`\\\\");
    assert_eq!(escape("it's", Context::Single), "it'\\''s");
}

fn contexts_of(text: &str) -> Vec<Result<Context, Problem>> {
    let (template, _) = parse_template(text, &OffsetMap::default());
    scan_all(&template.parts)
        .refs
        .into_iter()
        .map(|r| r.context)
        .collect()
}
