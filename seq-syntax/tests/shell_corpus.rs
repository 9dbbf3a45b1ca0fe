//! A generated corpus for the shell-text guarantee (docs/reference.md, "Shell text"): every
//! context the scan accepts × hostile values, each command rendered as the engine renders it
//! (each reference replaced by the expansion of its own variable, the value in the environment)
//! and run under dash, bash, and bash as `sh`. No value may add a command (the marker files `P`
//! and `M` never appear) and each arrives byte for byte. Shapes whose context the scan misjudges
//! are run too: there a value may be split into words, never run. The shapes the scan refuses
//! are checked to be refused.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_syntax::ast::TemplatePart;
use seq_syntax::escape::OffsetMap;
use seq_syntax::shell;
use seq_syntax::template::parse_template;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Values meant to break out: substitutions, quotes of both kinds, backslashes, newlines,
/// parameter expansions, glob and option look-alikes.
const VALUES: &[&str] = &[
    "$(touch P)",
    "`touch P`",
    "\"; touch P; \"",
    "'; touch P; '",
    "\\",
    "\\\\",
    "\n",
    "a\nb; touch P",
    "${IFS}",
    "$IFS$(touch${IFS}P)",
    "a b",
    "*",
    "",
    "-n",
    "$HOME",
    "\\$(touch P)",
    "\\\"$(touch P)\\\"",
    "'\"$(touch P)\"'",
    "}",
    "\"}$(touch P)",
    "}\"; touch P; \"",
    "\\\"; touch P #",
    "$((1+1))",
    "!",
    "~",
    "'",
    "\"",
    "$'\\x41'",
    "%s",
    "é ✓",
    "a\tb",
    "x\\",
    "\\'",
    ";|&<>()",
    "x; touch P",
    "a[$(touch M)]",
    "#",
    "# touch P",
    ")",
    ";;",
    ") touch P;;",
    "-e",
    "\\\n$(touch P)",
    "1",
    "x[$(touch M)]=1",
];

/// A context: the command (`V` stands for the reference) and what it prints for a value.
struct Shape {
    command: &'static str,
    prints: fn(&str) -> String,
}

fn same(v: &str) -> String {
    v.to_owned()
}

/// `$(...)` drops trailing newlines.
fn substituted(v: &str) -> String {
    v.trim_end_matches('\n').to_owned()
}

const SHAPES: &[Shape] = &[
    Shape {
        command: "printf '[%s]' V",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' \"V\"",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' \"a V b\"",
        prints: |v| format!("a {v} b"),
    },
    Shape {
        command: "printf '[%s]' x\"V\"y\"V\"V",
        prints: |v| format!("x{v}y{v}{v}"),
    },
    Shape {
        command: "printf '[%s]' \"$(printf %s V)\"",
        prints: substituted,
    },
    Shape {
        command: "printf '[%s]' \"$(printf %s \"V\")\"",
        prints: substituted,
    },
    Shape {
        command: "unset X; printf '[%s]' \"${X:-\"V\"}\"",
        prints: same,
    },
    Shape {
        command: "X=1; printf '[%s]' \"${X:+\"V\"}\"",
        prints: same,
    },
    Shape {
        command: "X=ab; printf '[%s]' \"${X#\"V\"}\"",
        prints: |v| "ab".strip_prefix(v).unwrap_or("ab").to_owned(),
    },
    Shape {
        command: "unset X; printf '[%s]' ${X:-V}",
        prints: same,
    },
    Shape {
        command: "unset X; printf '[%s]' ${X:-\"V\"}",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' \"C:\\\\V\"",
        prints: |v| format!("C:\\{v}"),
    },
    Shape {
        command: "printf '[%s]' 'C:\\'V",
        prints: |v| format!("C:\\{v}"),
    },
    Shape {
        command: "sh -c 'printf \"[%s]\" \"$1\"' _ V",
        prints: same,
    },
    Shape {
        command: "case V in *) printf '[%s]' \"V\";; esac",
        prints: same,
    },
    Shape {
        command: "for x in V; do printf '[%s]' \"$x\"; done",
        prints: same,
    },
    Shape {
        command: "x=V; printf '[%s]' \"$x\"",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' V # a comment after",
        prints: same,
    },
    Shape {
        command: "case V in V) printf '[%s]' V;; *) printf no;; esac",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' \"$(printf %s \"$(printf %s V)\")\"",
        prints: substituted,
    },
    Shape {
        command: "printf '[%s]' \\\nV",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' \"a\\\nV\"",
        prints: |v| format!("a{v}"),
    },
    Shape {
        command: "for x in V; do printf '[%s]' \"$x\"; done",
        prints: same,
    },
    Shape {
        command: "x=V y=\"V\"; printf '[%s]' \"$x$y\"",
        prints: |v| format!("{v}{v}"),
    },
    Shape {
        command: "printf %s V > out; printf '[%s]' \"$(cat out; printf .)\"",
        prints: |v| format!("{v}."),
    },
    Shape {
        command: "[ V = V ] && printf '[%s]' V",
        prints: same,
    },
    Shape {
        command: "f() { printf '[%s]' \"$1\"; }; f V",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' \"$(cat <<E\nV\nE\n)\"",
        prints: substituted,
    },
    Shape {
        command: "printf '[%s]' \"$(cat <<-E\n\t'a' \"V\"\n\tE\n)\"",
        prints: |v| format!("'a' \"{v}\""),
    },
    // From the shell parser's side: a comment right after `$(`, a `#` inside a word, a `case`
    // whose patterns open with `(` inside `"$(...)"`, a continuation inside `$(...)`.
    Shape {
        command: "printf '[%s]' \"$(# a comment\nprintf %s V)\"",
        prints: substituted,
    },
    Shape {
        command: "printf '[%s]' a#V",
        prints: |v| format!("a#{v}"),
    },
    Shape {
        command: "printf '[%s]' \"$(case V in (*) printf %s \"V\";; esac)\"",
        prints: substituted,
    },
    Shape {
        command: "printf '[%s]' \"$(printf %s \\\nV)\"",
        prints: substituted,
    },
];

/// Shapes the scan reads wrongly (a `case` pattern's `)` inside `$(...)` ends the substitution
/// for the scan). The shell parser reads them otherwise, so they are refused; were either
/// reading used, the expansion would land unquoted: a value split or globbed, never run.
const MISJUDGED: &[&str] = &[
    "printf '[%s]' \"$(case x in x) printf %s V;; esac)\"",
    "printf '[%s]' \"$(case V in *) printf %s V;; esac)\"",
];

/// The audit's shapes and their kin: the scan must refuse them, never guess.
const REFUSED: &[&str] = &[
    "echo \"C:\\V\"",
    "echo \\V",
    "printf %s \"${X:-V}\"",
    "printf %s \"${X#'a'}V\"",
    "echo $((V))",
    "((n = V))",
    "echo `echo V`",
    "echo $'V'",
    "ls # V",
    "cat <<'E'\nV\nE",
    "cat <<\\E\nV\nE",
    "cat <<E\n\\V\nE",
    "cat <<E\n$(echo V)\nE",
    "sh <<E\necho V\nE",
    "bash -s <<E\necho V\nE",
    "printf %s 'V'",
    "let x=V",
    "[[ V -eq 1 ]]",
    "[[ 1 -lt \"V\" ]]",
    "declare -i n=V",
    "local -i n; n=V",
    "x[V]=1",
    "unset \"a[V]\"",
    "echo ${X:V}",
    "declare \"V\"=1",
    "printf -v V x",
    "read -r V",
    "[[ -v V ]]",
    "test -v V",
    "eval V",
    "eval \"echo V\"",
    "sh -c \"echo V\"",
    "bash -c 'echo V'",
    "$SHELL -c \"V\"",
    "ssh host \"uptime V\"",
    "su -c \"ls V\" bob",
    "su --command=\"ls V\" bob",
    "watch ls V",
    "ls | xargs sh -c \"echo V\"",
    "find . -exec sh -c \"echo V\" \\;",
    "env A=1 sh -c \"V\"",
    "nice -n 5 eval V",
    "timeout 5 sh -c \"V\"",
    "nohup eval V",
    "sudo -u x eval V",
    "if eval V; then :; fi",
    "! eval V",
    "while :; do eval V; done",
    // dash expands an alias defined earlier in the same text.
    "alias q=eval\nq V",
    // A value flowing through a variable or a function's argument into a re-parse.
    "f() { eval \"$1\"; }; f V",
    "x=V; eval \"$x\"",
    // Another language's program.
    "python3 -c \"print('V')\"",
    "awk \"BEGIN { print \\\"V\\\" }\"",
    "sed \"s/x/V/\" f",
    "perl -e \"print 'V'\"",
    // A program reading its code on a standard input the text feeds, or from a file the
    // text writes.
    "printf %s V | sh",
    "echo V | bash -s",
    "sh <<< V",
    "x=V; printf %s \"$x\" | sh",
    "echo V > s.sh; sh s.sh",
    "python3 <<E\nprint(V)\nE",
    // The shell parser and the scan read these two ways (see MISJUDGED).
    "printf '[%s]' \"$(case x in x) printf %s V;; esac)\"",
    "printf '[%s]' \"$(case V in *) printf %s V;; esac)\"",
    // Text the shell parser cannot place for certain.
    "cat <<-E\n\tV\n\tE",
    "echo \"$(echo V\"",
];

fn template(shape: &str) -> Vec<TemplatePart> {
    let text = shape.replace('V', "$args.v");
    parse_template(&text, &OffsetMap::default()).0.parts
}

/// The command as the engine renders it for `value`, and the variables it runs with.
fn render(parts: &[TemplatePart], value: &str) -> (String, Vec<(String, String)>) {
    render_as(parts, value, shell::contexts(parts).unwrap())
}

fn render_as(
    parts: &[TemplatePart],
    value: &str,
    contexts: Vec<shell::Context>,
) -> (String, Vec<(String, String)>) {
    let mut contexts = contexts.into_iter();
    let mut out = String::new();
    let mut env = Vec::new();
    for part in parts {
        match part {
            TemplatePart::Text(text) => out.push_str(text),
            TemplatePart::Ref(_) => {
                let name = shell::value_variable(env.len());
                shell::expansion_into(&mut out, &name, contexts.next().unwrap());
                env.push((name, value.to_owned()));
            }
        }
    }
    (out, env)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("seqc-shell-corpus-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The shells: dash, bash, and bash started as `sh` (its POSIX mode).
const SHELLS: [(&str, &str); 3] = [("dash", "dash"), ("bash", "bash"), ("bash", "sh")];

fn run(shell: (&str, &str), command: &str, env: &[(String, String)], dir: &Path) -> Vec<u8> {
    let output = Command::new(shell.0)
        .arg0(shell.1)
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("HOME", "/home/nobody")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap_or_else(|e| panic!("{} cannot run (dash is installed by .ci/run): {e}", shell.0));
    output.stdout
}

fn values() -> Vec<String> {
    let mut values: Vec<String> = VALUES.iter().map(|v| (*v).to_owned()).collect();
    // Long, and holding every hostile character.
    values.push(format!("{}$(touch P)'\"`", "x".repeat(100_000)));
    values
}

/// Marker files that only running a value creates.
fn ran(dir: &Path) -> bool {
    let mut found = false;
    for marker in ["P", "M"] {
        if dir.join(marker).exists() {
            std::fs::remove_file(dir.join(marker)).unwrap();
            found = true;
        }
    }
    found
}

#[test]
fn no_value_adds_a_command_and_each_arrives_byte_for_byte() {
    let mut failures = Vec::new();
    let mut runs = 0;
    let values = values();
    for shell in SHELLS {
        let dir = scratch(shell.1);
        for shape in SHAPES {
            let parts = template(shape.command);
            for value in &values {
                let (command, env) = render(&parts, value);
                let printed = run(shell, &command, &env, &dir);
                runs += 1;
                let expected = format!("[{}]", (shape.prints)(value));
                if ran(&dir) {
                    failures.push(format!("{}: {command:?} ran {value:?}", shell.1));
                }
                if printed != expected.as_bytes() {
                    failures.push(format!(
                        "{}: {command:?} with {:?} printed {:?}, not {:?}",
                        shell.1,
                        value.chars().take(80).collect::<String>(),
                        String::from_utf8_lossy(&printed)
                            .chars()
                            .take(80)
                            .collect::<String>(),
                        expected.chars().take(80).collect::<String>(),
                    ));
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(runs, SHELLS.len() * SHAPES.len() * values.len());
}

#[test]
fn a_misjudged_context_never_runs_a_value() {
    let mut failures = Vec::new();
    for shell in SHELLS {
        let dir = scratch(&format!("misjudged-{}", shell.1));
        for shape in MISJUDGED {
            let parts = template(shape);
            for value in values() {
                // Every context either reading could give.
                for context in [shell::Context::Word, shell::Context::Double] {
                    let count = parts
                        .iter()
                        .filter(|p| matches!(p, TemplatePart::Ref(_)))
                        .count();
                    let (other, env) = render_as(&parts, &value, vec![context; count]);
                    run(shell, &other, &env, &dir);
                }
                if ran(&dir) {
                    failures.push(format!("{}: {shape:?} ran {value:?}", shell.1));
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn uncertain_and_evaluated_shapes_are_refused() {
    for shape in REFUSED {
        assert!(
            shell::contexts(&template(shape)).is_err(),
            "{shape:?} was given a context"
        );
    }
    // The engine's own variables are not the text's to set.
    let parts = parse_template("SEQ_V1=x; echo $args.v", &OffsetMap::default())
        .0
        .parts;
    assert_eq!(shell::contexts(&parts), Err(shell::Problem::Reserved));
}

#[path = "../benches/support/shell_shapes.rs"]
mod bench_shapes;

/// Where the plain reader accepts a text (and so the parser is not asked), the parser reads
/// every reference as the scan does: for every shape here and every shape of the benchmark.
#[test]
fn plain_text_reads_as_parsed() {
    let corpus = SHAPES.iter().map(|s| s.command.replace('V', "$args.v"));
    let others = MISJUDGED
        .iter()
        .chain(REFUSED)
        .map(|s| s.replace('V', "$args.v"));
    let bench = bench_shapes::SHAPES.iter().map(|s| s.replace("{}", "1"));
    let mut plain = 0;
    for text in corpus.chain(others).chain(bench) {
        let parts = parse_template(&text, &OffsetMap::default()).0.parts;
        if shell::is_plain(&parts) {
            plain += 1;
            assert_eq!(shell::scan(&parts), shell::scan_parsed(&parts), "{text:?}");
        }
    }
    assert!(plain > 0);
}
