//! A generated corpus for the shell-text guarantee (docs/reference.md, "Shell text"): every
//! context the scan accepts × hostile values, each command rendered as the engine renders it
//! (the scan's contexts, each value escaped for its own) and run under dash and bash. No value
//! may add a command (the marker file `P` never appears) and each arrives verbatim. The shapes
//! the scan refuses are checked to be refused.

#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

use seq_syntax::ast::TemplatePart;
use seq_syntax::escape::OffsetMap;
use seq_syntax::shell;
use seq_syntax::template::parse_template;
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
        command: "printf '[%s]' 'V'",
        prints: same,
    },
    Shape {
        command: "printf '[%s]' \"a V b\"",
        prints: |v| format!("a {v} b"),
    },
    Shape {
        command: "printf '[%s]' x'V'y\"V\"V",
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
        command: "unset X; printf '[%s]' ${X:-'V'}",
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
    "cat <<E\nV\nE",
];

fn template(shape: &str) -> Vec<TemplatePart> {
    let text = shape.replace('V', "$args.v");
    parse_template(&text, &OffsetMap::default()).0.parts
}

/// The command as the engine renders it for `value`.
fn render(parts: &[TemplatePart], value: &str) -> String {
    let contexts = shell::contexts(parts).unwrap();
    let mut contexts = contexts.into_iter();
    let mut out = String::new();
    for part in parts {
        match part {
            TemplatePart::Text(text) => out.push_str(text),
            TemplatePart::Ref(_) => shell::escape_into(&mut out, value, contexts.next().unwrap()),
        }
    }
    out
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("seqc-shell-corpus-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(shell: &str, command: &str, dir: &Path) -> String {
    let output = Command::new(shell)
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("HOME", "/home/nobody")
        .output()
        .unwrap_or_else(|e| panic!("{shell} cannot run (dash is installed by .ci/run): {e}"));
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn no_value_adds_a_command_under_dash_or_bash() {
    let mut failures = Vec::new();
    let mut runs = 0;
    for shell in ["dash", "bash"] {
        let dir = scratch(shell);
        for shape in SHAPES {
            let parts = template(shape.command);
            for value in VALUES {
                let command = render(&parts, value);
                let printed = run(shell, &command, &dir);
                runs += 1;
                let expected = format!("[{}]", (shape.prints)(value));
                let marker = dir.join("P");
                if marker.exists() {
                    failures.push(format!("{shell}: {command:?} created P"));
                    std::fs::remove_file(&marker).unwrap();
                }
                if printed != expected {
                    failures.push(format!(
                        "{shell}: {command:?} printed {printed:?}, not {expected:?}"
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
    assert_eq!(runs, 2 * SHAPES.len() * VALUES.len());
}

#[test]
fn uncertain_shapes_are_refused() {
    for shape in REFUSED {
        assert!(
            shell::contexts(&template(shape)).is_err(),
            "{shape:?} was given a context"
        );
    }
}
