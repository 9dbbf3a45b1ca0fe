//! What the scan knows of commands: the shells and wrappers that run a command or a script, the
//! builtins that evaluate arithmetic or name variables, and where the command word stands.

/// Shells whose `-c` parses its script argument as shell code.
pub(super) const SHELLS: [(&str, &str); 7] = [
    ("sh", "sh -c"),
    ("bash", "bash -c"),
    ("dash", "dash -c"),
    ("zsh", "zsh -c"),
    ("ksh", "ksh -c"),
    ("mksh", "mksh -c"),
    ("ash", "ash -c"),
];

/// Commands besides the shells whose `-c` (or `--command`) argument a shell parses.
pub(super) const RUNS_C_SCRIPT: [(&str, &str); 4] = [
    ("su", "su -c"),
    ("runuser", "su -c"),
    ("flock", "flock -c"),
    ("script", "script -c"),
];

/// Interpreters of other languages, the option letters after which their program follows (in
/// the rest of the option's word or in the next word), and their label. A value there is code
/// in that language: `python3 -c "print('$V')"` runs `'); import os; ...`.
pub(super) const INTERPRETERS: [(&str, &str, &str); 11] = [
    ("python", "c", "python -c"),
    ("python2", "c", "python -c"),
    ("python3", "c", "python -c"),
    ("perl", "eE", "perl -e"),
    ("ruby", "e", "ruby -e"),
    ("node", "ep", "node -e"),
    ("nodejs", "ep", "node -e"),
    ("php", "r", "php -r"),
    ("lua", "e", "lua -e"),
    ("Rscript", "e", "Rscript -e"),
    ("osascript", "e", "osascript -e"),
];

/// Programs whose first operand (or `-e`'s argument, for `sed`) is a program: `awk`'s `system()`
/// and GNU `sed`'s `e` run commands.
pub(super) const PROGRAM_OPERAND: [(&str, &str); 6] = [
    ("awk", "awk"),
    ("gawk", "awk"),
    ("mawk", "awk"),
    ("nawk", "awk"),
    ("busybox", "awk"),
    ("sed", "sed"),
];

/// Whether the word at `index` (or `current`, the word being read, when it is that word) is the
/// program of an interpreter of another language in `words`: its label.
pub(super) fn program_word(
    words: &[String],
    index: usize,
    current: Option<&str>,
) -> Option<&'static str> {
    let first = command_word(words)?;
    let name = basename(&words[first]);
    let option_of = |word: &str, letters: &str| {
        word.strip_prefix('-')
            .filter(|rest| !rest.starts_with('-'))
            .is_some_and(|rest| rest.chars().any(|c| letters.contains(c)))
    };
    if let Some((_, letters, label)) = INTERPRETERS.iter().find(|(s, _, _)| *s == name) {
        // The value in an option word that carries its program (`-e'...'`), or the word after.
        if current.is_some_and(|w| option_of(w, letters)) {
            return Some(label);
        }
        let after_option = index > first + 1 && option_of(&words[index - 1], letters);
        let long = index > first + 1 && matches!(words[index - 1].as_str(), "--eval" | "--print");
        let long_here =
            current.is_some_and(|w| w.starts_with("--eval=") || w.starts_with("--print="));
        return (after_option || long || long_here).then_some(*label);
    }
    let (_, label) = PROGRAM_OPERAND.iter().find(|(s, _)| *s == name)?;
    let mut k = first + 1;
    if name == "busybox" {
        if words.get(k).is_none_or(|w| basename(w) != "awk") {
            return None;
        }
        k += 1;
    }
    let mut from_file = false;
    while k < index {
        let word = words[k].as_str();
        if word == "--" {
            k += 1;
            break;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        // `-e SCRIPT` (sed) holds a program; `-f FILE` means no program operand follows;
        // `-F`, `-v`, `-l` take an argument that is data.
        match word {
            "-e" | "--expression" if k + 1 == index => return Some(label),
            "-f" | "--file" => from_file = true,
            "-e" | "--expression" | "-F" | "-v" | "-l" => {}
            _ => {
                k += 1;
                continue;
            }
        }
        if word.starts_with("-e") && *label == "sed" {
            from_file = true;
        }
        k += 2;
    }
    if current.is_some_and(|w| {
        w.starts_with("--expression=") || (*label == "sed" && w.starts_with("-e") && w.len() > 2)
    }) {
        return Some(label);
    }
    (!from_file && k == index).then_some(*label)
}

/// The last `/`-separated part of `word` (`/usr/bin/env` is `env`). It runs for every word the
/// scan reads, so it finds the last `/` once rather than splitting.
pub(super) fn basename(word: &str) -> &str {
    match word.rfind('/') {
        Some(slash) => word.get(slash + 1..).unwrap_or(word),
        None => word,
    }
}

/// `NAME=value` before a command.
pub(super) fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `[[ ... ]]`'s tests that evaluate both sides as arithmetic.
pub(super) const ARITHMETIC_TESTS: [&str; 6] = ["-eq", "-ne", "-lt", "-le", "-gt", "-ge"];

/// Builtins whose `-i` gives a variable the integer attribute: every later assignment to it is
/// evaluated as arithmetic.
pub(super) const DECLARERS: [&str; 4] = ["declare", "typeset", "local", "readonly"];

/// `declare -i` (or `-ai`, `typeset -i`, `local -i`) among `words`.
pub(super) fn declares_integers(words: &[String]) -> bool {
    let Some(first) = command_word(words) else {
        return false;
    };
    DECLARERS.contains(&basename(&words[first]))
        && words[first + 1..].iter().any(|w| {
            w.strip_prefix('-')
                .is_some_and(|flags| !flags.starts_with('-') && flags.contains('i'))
        })
}

/// A word read so far as `NAME[` with the subscript still open: bash evaluates the subscript
/// of an indexed array as arithmetic (in assignments, `unset`, `read`, `printf -v`, `[[ -v ]]`).
pub(super) fn in_subscript(word: &str) -> bool {
    let Some((name, subscript)) = word.split_once('[') else {
        return false;
    };
    let name = name.trim_start_matches(['(', ' ']);
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !subscript.contains(']')
}

/// Builtins whose arguments name variables: bash evaluates a name's subscript
/// (`a[$(touch P)]`) as arithmetic, running what it holds.
pub(super) const NAMERS: [&str; 10] = [
    "declare",
    "typeset",
    "local",
    "readonly",
    "export",
    "read",
    "unset",
    "mapfile",
    "readarray",
    "getopts",
];

/// Whether a value about to be read (in the word `cur`, if one is being read) would name a
/// variable: an argument of a [`NAMERS`] builtin outside an assignment's value part, or the
/// argument of `-v` to `printf`, `test` or `[`.
pub(super) fn names_variable(words: &[String], cur: Option<&str>) -> bool {
    let Some(first) = command_word(words) else {
        return false;
    };
    let name = basename(&words[first]);
    if NAMERS.contains(&name) {
        return !cur.is_some_and(|cur| cur.contains('='));
    }
    matches!(name, "printf" | "test" | "[")
        && cur.is_none()
        && words.last().is_some_and(|w| w == "-v")
}

/// Reserved words that may stand before a command (`if eval ...`, `! sh -c ...`).
pub(super) const RESERVED_WORDS: [&str; 9] = [
    "if", "then", "else", "elif", "do", "while", "until", "!", "{",
];

/// The index of the command word, past reserved words, assignments and wrappers with their
/// options (and the options' arguments: `nice -n 5`, `sudo -u bob`, `timeout 5`).
pub(super) fn command_word(words: &[String]) -> Option<usize> {
    let mut wrapper: Option<&Wrapper> = None;
    let mut skip_next = false;
    let mut operands = 0;
    for (i, word) in words.iter().enumerate() {
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if let Some(w) = wrapper {
            if word.starts_with('-') && word.len() > 1 {
                skip_next = w.takes_argument(word);
                continue;
            }
            if operands > 0 {
                operands -= 1;
                continue;
            }
        }
        if wrapper.is_none() && RESERVED_WORDS.contains(&word.as_str()) {
            continue;
        }
        if is_assignment(word) {
            continue;
        }
        let name = basename(word);
        if let Some(w) = WRAPPERS.iter().find(|w| w.name == name) {
            wrapper = Some(w);
            operands = w.operands;
            continue;
        }
        return Some(i);
    }
    None
}

/// A command that runs the command after it.
pub(super) struct Wrapper {
    name: &'static str,
    /// Its options that take the next word as their argument.
    options: &'static [&'static str],
    /// Operands before the command (`timeout DURATION`, `chroot DIR`).
    operands: usize,
}

impl Wrapper {
    pub(super) fn takes_argument(&self, word: &str) -> bool {
        self.options.contains(&word)
    }
}

pub(super) const fn wrapper(
    name: &'static str,
    options: &'static [&'static str],
    operands: usize,
) -> Wrapper {
    Wrapper {
        name,
        options,
        operands,
    }
}

/// Commands that run the command after them: `sudo -u bob sh -c ...`.
pub(super) const WRAPPERS: [Wrapper; 19] = [
    wrapper(
        "sudo",
        &[
            "-u",
            "-g",
            "-C",
            "-D",
            "-h",
            "-p",
            "-r",
            "-t",
            "-U",
            "-T",
            "--user",
            "--group",
            "--chdir",
            "--prompt",
            "--role",
            "--type",
            "--host",
            "--other-user",
        ],
        0,
    ),
    wrapper("doas", &["-u", "-C"], 0),
    wrapper("env", &["-u", "-C", "--unset", "--chdir"], 0),
    wrapper("command", &[], 0),
    wrapper("builtin", &[], 0),
    wrapper("exec", &["-a"], 0),
    wrapper("nohup", &[], 0),
    wrapper("time", &["-f", "-o", "--format", "--output"], 0),
    wrapper("nice", &["-n", "--adjustment"], 0),
    wrapper("timeout", &["-s", "-k", "--signal", "--kill-after"], 1),
    wrapper(
        "xargs",
        &[
            "-a",
            "-d",
            "-E",
            "-I",
            "-L",
            "-n",
            "-P",
            "-s",
            "--arg-file",
            "--delimiter",
            "--max-lines",
            "--max-args",
            "--max-procs",
            "--max-chars",
        ],
        0,
    ),
    wrapper("stdbuf", &["-i", "-o", "-e"], 0),
    wrapper("setsid", &[], 0),
    wrapper("ionice", &["-c", "-n", "-t", "--class", "--classdata"], 0),
    wrapper("chrt", &[], 1),
    wrapper("taskset", &[], 1),
    wrapper("chroot", &["--userspec", "--groups"], 1),
    wrapper("unbuffer", &[], 0),
    wrapper("runuser", &["-u", "-g", "-l"], 0),
];

/// ssh's options that take an argument (as its manual lists them).
pub(super) const SSH_ARGUMENT_OPTIONS: &str = "BbcDEeFIiJLlmOoPpQRSWw";

/// The index of the first word of ssh's remote command, its options and destination read from
/// `from`: past the end when the words so far hold no destination.
pub(super) fn remote_command(words: &[String], from: usize) -> usize {
    let mut i = from;
    while let Some(word) = words.get(i) {
        match word.strip_prefix('-') {
            Some(flags) if !flags.is_empty() => {
                // `-p 22` takes the next word; `-p22` holds it.
                let takes = flags
                    .char_indices()
                    .find(|(_, c)| SSH_ARGUMENT_OPTIONS.contains(*c))
                    .is_some_and(|(at, c)| at + c.len_utf8() == flags.len());
                i += if takes { 2 } else { 1 };
            }
            _ => return i + 1,
        }
    }
    usize::MAX
}

/// `-c` or a cluster of short options holding it (`-ec`).
pub(super) fn is_c_option(word: &str) -> bool {
    word.strip_prefix('-').is_some_and(|flags| {
        !flags.is_empty() && flags.chars().all(|c| c.is_ascii_alphabetic()) && flags.contains('c')
    }) || word == "--command"
}

/// A shell (anywhere: `xargs sh -c`, `find -exec sh -c`), `su`, `flock` or `script`, then `-c`
/// (and `--`, if any), then the word at `index`: the script it parses. With the command's label
/// and whether the script takes positional arguments after it (a shell's does; `flock -c` and
/// `script -c` pass the script alone to a shell).
pub(super) fn script_option(words: &[String], index: usize) -> Option<(&'static str, bool)> {
    for (j, word) in words.iter().enumerate().take(index) {
        let name = basename(word);
        // Options anywhere (`su bob -c`, `flock FILE -c`), or only before the script (a shell).
        let (label, anywhere, positional) =
            if let Some((_, label)) = SHELLS.iter().find(|(s, _)| *s == name) {
                (*label, false, true)
            } else if name.starts_with('$') {
                // A program named by a variable (`$SHELL -c`): a shell, for all the scan knows.
                ("$SHELL -c", false, true)
            } else if let Some((_, label)) = RUNS_C_SCRIPT.iter().find(|(s, _)| *s == name) {
                (*label, true, name == "su")
            } else {
                continue;
            };
        let mut script = None;
        let mut k = j + 1;
        while k < index {
            let option = &words[k];
            if is_c_option(option) {
                let end_of_options = words.get(k + 1).is_some_and(|w| w == "--");
                script = Some(k + 1 + usize::from(end_of_options));
            } else if option == "-o" || option == "+o" {
                k += 1;
            } else if !option.starts_with(['-', '+']) && !anywhere {
                break;
            }
            k += 1;
        }
        if script == Some(index) {
            return Some((label, positional));
        }
    }
    None
}

/// Whether the command of `words` may read code on its standard input, for a here-document
/// given to it: any shell (its `-c` script may read it too), `ssh`, `su`, `.`, `source`, a
/// program named by a variable, or whatever [`reads_program_on_stdin`] names. Its name.
pub(super) fn stdin_script(words: &[String]) -> Option<&'static str> {
    let name = basename(&words[command_word(words)?]);
    if let Some((shell, _)) = SHELLS.iter().find(|(s, _)| *s == name) {
        return Some(shell);
    }
    match name {
        "ssh" => Some("ssh"),
        "su" | "runuser" => Some("su"),
        "." => Some("."),
        "source" => Some("source"),
        _ if name.starts_with('$') => Some("$SHELL"),
        _ => reads_program_on_stdin(words),
    }
}

/// The index of the first word of watch's command, its options read from `from`; past the end
/// when the words so far hold none, or when `-x` runs the command without a shell.
pub(super) fn watch_command(words: &[String], from: usize) -> usize {
    let mut i = from;
    while let Some(word) = words.get(i) {
        match word.as_str() {
            "-x" | "--exec" => return usize::MAX,
            "-n" | "--interval" | "-q" | "--equexit" => i += 2,
            "--" => return i + 1,
            flags if flags.starts_with('-') && flags.len() > 1 => {
                if !flags.starts_with("--") && flags.contains('x') {
                    return usize::MAX;
                }
                i += 1;
            }
            _ => return i,
        }
    }
    usize::MAX
}

/// The words naming standard input as a file: a program given one reads its program there.
const STDIN_FILES: [&str; 4] = ["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// The first operand of a shell or interpreter at `first`, past its options (and the argument of
/// a shell's `-o`), with whether an option names where its program comes from (`-c`, `-e`, `-m`;
/// `-s`, a shell reading its script on standard input, gives `-` as the operand).
fn program_operand<'w>(
    words: &'w [String],
    first: usize,
    letters: &str,
) -> (Option<&'w str>, bool) {
    let mut k = first + 1;
    while let Some(word) = words.get(k) {
        if word == "--" {
            return (words.get(k + 1).map(String::as_str), false);
        }
        let Some(flags) = word.strip_prefix(['-', '+']).filter(|f| !f.is_empty()) else {
            return (Some(word), false);
        };
        if word.starts_with('-') && !flags.starts_with('-') {
            if flags.chars().any(|c| letters.contains(c)) {
                return (None, true);
            }
            if letters == "c" && flags.contains('s') {
                return (Some("-"), false);
            }
        }
        if word == "--command" || word.starts_with("--eval") || word.starts_with("--print") {
            return (None, true);
        }
        k += 1 + usize::from(matches!(word.as_str(), "-o" | "+o"));
    }
    (None, false)
}

/// The options after which an interpreter's program is not read from a file or standard input:
/// its program options, and python's `-m` (a module).
fn program_letters(name: &str, letters: &str) -> String {
    if name.starts_with("python") {
        format!("{letters}m")
    } else {
        letters.to_owned()
    }
}

/// Whether the command of `words`, given something on its standard input (a pipe, `<<<` or
/// `<`), reads its program there: a shell without a script, `. /dev/stdin`, `su` or `ssh`
/// without a command, an interpreter without a program, `awk -f -`, or `xargs` making the
/// script of a shell or interpreter out of what it reads. Its name.
pub(super) fn reads_program_on_stdin(words: &[String]) -> Option<&'static str> {
    let first = command_word(words)?;
    let name = basename(&words[first]);
    let stdin = |operand: Option<&str>| operand.is_none_or(|o| STDIN_FILES.contains(&o));
    // `xargs` appends what it reads to the command, or puts it in place of `-I`'s string.
    let xargs = words[..first].iter().any(|w| basename(w) == "xargs");
    let replaces = xargs
        && words[..first].iter().any(|w| {
            ["-I", "-i", "-J", "--replace"]
                .iter()
                .any(|o| w.starts_with(o))
        });
    if let Some((shell, _)) = SHELLS.iter().find(|(s, _)| *s == name) {
        let (operand, scripted) = program_operand(words, first, "c");
        // `xargs sh -c` with no script of its own takes the script from what xargs read.
        let xargs_script =
            xargs && scripted && (replaces || words.last().is_some_and(|w| is_c_option(w)));
        return ((!scripted && !xargs && stdin(operand)) || xargs_script).then_some(*shell);
    }
    if let Some((interpreter, letters, _)) = INTERPRETERS.iter().find(|(s, _, _)| *s == name) {
        let (operand, programmed) = program_operand(words, first, &program_letters(name, letters));
        return ((!programmed && !xargs && stdin(operand)) || (replaces && programmed))
            .then_some(*interpreter);
    }
    if let Some((program, _)) = PROGRAM_OPERAND.iter().find(|(s, _)| *s == name) {
        let from_stdin = words[first..].windows(2).any(|pair| {
            matches!(pair[0].as_str(), "-f" | "--file") && STDIN_FILES.contains(&pair[1].as_str())
        });
        return (from_stdin || replaces).then_some(*program);
    }
    match name {
        "." | "source" => STDIN_FILES
            .iter()
            .any(|f| words.get(first + 1).is_some_and(|w| w == f))
            .then_some(if name == "." { "." } else { "source" }),
        "su" | "runuser" => (!words[first..]
            .iter()
            .any(|w| is_c_option(w) || w.starts_with("--command")))
        .then_some("su"),
        "ssh" => (remote_command(words, first + 1) >= words.len()).then_some("ssh"),
        _ if name.starts_with('$') => {
            let (operand, scripted) = program_operand(words, first, "c");
            (!scripted && stdin(operand)).then_some("$SHELL")
        }
        _ => None,
    }
}

/// The file the command of `words` runs as a program, if any: a shell's or interpreter's script
/// operand, what `.` or `source` reads, `awk -f FILE`, or a command named by a path (`./s.sh`).
/// With the name of what runs it.
pub(super) fn script_file(words: &[String]) -> Option<(&str, &'static str)> {
    let first = command_word(words)?;
    let word = words[first].as_str();
    let name = basename(word);
    let operand = |letters: &str| match program_operand(words, first, letters) {
        (Some(file), false) if !STDIN_FILES.contains(&file) => Some(file),
        _ => None,
    };
    if let Some((shell, _)) = SHELLS.iter().find(|(s, _)| *s == name) {
        return operand("c").map(|file| (file, *shell));
    }
    if let Some((interpreter, letters, _)) = INTERPRETERS.iter().find(|(s, _, _)| *s == name) {
        return operand(&program_letters(name, letters)).map(|file| (file, *interpreter));
    }
    if let Some((program, _)) = PROGRAM_OPERAND.iter().find(|(s, _)| *s == name) {
        return words[first..]
            .windows(2)
            .find(|pair| matches!(pair[0].as_str(), "-f" | "--file"))
            .map(|pair| (pair[1].as_str(), *program));
    }
    match name {
        "." | "source" => words
            .get(first + 1)
            .map(|file| (file.as_str(), if name == "." { "." } else { "source" })),
        _ if word.contains('/') => Some((word, "sh")),
        _ => None,
    }
}

/// The files `tee` in `words` writes: its operands.
pub(super) fn tee_files(words: &[String]) -> impl Iterator<Item = &str> {
    let first = command_word(words).filter(|&i| basename(&words[i]) == "tee");
    first
        .map(|i| &words[i + 1..])
        .unwrap_or_default()
        .iter()
        .map(String::as_str)
        .filter(|w| !w.starts_with('-'))
}

/// Whether two file words name the same file as far as their text tells (`./s.sh` is `s.sh`).
pub(super) fn same_file(a: &str, b: &str) -> bool {
    a.trim_start_matches("./") == b.trim_start_matches("./")
}
