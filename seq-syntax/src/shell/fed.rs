//! What a text feeds to programs that read code: their standard input (a pipe, a here-string,
//! a file) and the files it writes and then runs.

use super::Via;
use super::commands::{reads_program_on_stdin, same_file, script_file, tee_files};
use super::scan::Scan;
use std::borrow::Cow;

/// Which way the redirection before the next word goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Redirect {
    /// `>` or `>>`: the word is a file the text writes.
    Out,
    /// `<`, `<<<`: the word is a file or text on the command's standard input.
    In,
}

impl Scan {
    /// Notes what the command just read does with code a value may reach: reads it on its
    /// standard input, runs a file as a program, or writes files (`tee`).
    pub(super) fn read_command(&mut self) {
        let Some(command) = self.commands.last() else {
            return;
        };
        // The command's own words, without what its redirections name.
        let words: Cow<[String]> = if command.targets.is_empty() {
            Cow::Borrowed(&command.words)
        } else {
            let words = command.words.iter().enumerate();
            words
                .filter(|(i, _)| !command.targets.contains(i))
                .map(|(_, w)| w.clone())
                .collect()
        };
        let words = &words[..];
        if command.fed && self.stdin_code.is_none() {
            self.stdin_code = reads_program_on_stdin(words);
        }
        if let Some((file, runner)) = script_file(words) {
            self.scripts.push((file.to_owned(), runner));
        }
        self.written.extend(tee_files(words).map(str::to_owned));
    }

    /// Whether the next command has something on its standard input (after `|` or `|&`).
    pub(super) fn feed(&mut self, fed: bool) {
        if let Some(command) = self.commands.last_mut() {
            command.fed = fed;
        }
    }

    /// The program that reads code a value of the text may reach, and how: on a standard input
    /// the text feeds, or in a file the text writes and runs.
    pub(super) fn code_reader(&self) -> Option<(&'static str, Via)> {
        let stdin = self.stdin_code.map(|c| (c, Via::StandardInput));
        stdin.or_else(|| {
            self.scripts
                .iter()
                .find(|(file, _)| self.written.iter().any(|w| same_file(w, file)))
                .map(|(_, runner)| (*runner, Via::ScriptFile))
        })
    }
}
