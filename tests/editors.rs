//! End to end under real editors: Neovim, Emacs with eglot and Vim with ALE each start
//! `seqc lsp` over stdio for a broken sequence file and show its diagnostics, which a small script
//! in the editor's own language writes out as JSON: `{"shown", "diagnostics": [{"code", "line",
//! "col", "end_col"}]}`, lines from 0 and columns from 0 as the editor holds them. The versions are
//! Debian 12's, the oldest clients this must work with: Neovim 0.7 has no `vim.lsp.start` (0.8),
//! so its script uses `start_client` + `buf_attach_client`, which every later version keeps;
//! Emacs 28 has no built-in eglot, Debian's `elpa-eglot` (1.9) brings it; ALE is 3.3.
//!
//! `.ci/run` installs the three from Debian's packages. Without one on the PATH its test fails:
//! a skipped editor test would look like a passing one.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The culprits sit after CJK text and escaped quotes: the server speaks UTF-16 positions, which
/// each editor turns into its own columns, so a wrong conversion shows as a wrong column.
const BROKEN: &str = r#"{
  "name": "巡检",
  "groups": [
    {
      "name": "拉取",
      "in": { "host": "string" },
      "tools": "{\"tool\":\"cmd_run\",\"args\":{\"command\":\"echo \\\"主机\\\" $args.hots\"}} ;"
    }
  ]
}
"#;

const NVIM_INIT: &str = r#"
local seqc, root, file, out = os.getenv('SEQC_BIN'), os.getenv('SEQC_ROOT'), os.getenv('SEQC_FILE'), os.getenv('SEQC_OUT')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local id = vim.lsp.start_client({ name = 'seqc', cmd = { seqc, 'lsp' }, root_dir = root })
vim.lsp.buf_attach_client(0, id)
local shown = vim.wait(20000, function() return #vim.diagnostic.get(0) >= 2 end, 20)
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  assert(d.source == 'seqc', 'a diagnostic of another source: ' .. tostring(d.source))
  table.insert(found, { code = d.code, line = d.lnum, col = d.col, end_col = d.end_col })
end
local f = io.open(out, 'w')
f:write(vim.fn.json_encode({ shown = shown, diagnostics = found }))
f:close()
vim.lsp.stop_client(id)
vim.wait(5000, function() return vim.lsp.client_is_stopped(id) end, 20)
vim.cmd('qa!')
"#;

/// Emacs's columns count characters; the script gives byte columns, as Neovim's are, from the
/// text before each diagnostic on its line. Flymake keeps the code in the text: `seqc [E0502]: …`.
const EMACS_INIT: &str = r#"
(require 'eglot)
(require 'json)
(add-to-list 'eglot-server-programs `(js-mode . (,(getenv "SEQC_BIN") "lsp")))
(find-file (getenv "SEQC_FILE"))
(eglot-ensure)
;; eglot-ensure connects after the current command, which a batch session never ends.
(run-hooks 'post-command-hook)
(let ((deadline (+ (float-time) 20)))
  (while (and (< (float-time) deadline) (< (length (flymake-diagnostics)) 2))
    (accept-process-output nil 0.05)))
(let* ((column (lambda (pos)
                 (save-excursion
                   (goto-char pos)
                   (string-bytes (buffer-substring-no-properties (line-beginning-position) pos)))))
       (found (mapcar (lambda (d)
                        (let ((beg (flymake-diagnostic-beg d)) (text (flymake-diagnostic-text d)))
                          (string-match "\\`seqc \\[\\([EW][0-9]+\\)\\]" text)
                          `((code . ,(match-string 1 text))
                            (line . ,(1- (line-number-at-pos beg)))
                            (col . ,(funcall column beg))
                            (end_col . ,(funcall column (flymake-diagnostic-end d))))))
                      (flymake-diagnostics))))
  (with-temp-file (getenv "SEQC_OUT")
    (insert (json-encode `((shown . ,(if (>= (length found) 2) t :json-false))
                           (diagnostics . ,(vconcat found)))))))
(kill-emacs 0)
"#;

/// ALE's columns count bytes from 1, its `end_col` inclusive; ALE 3.3 takes the protocol's UTF-16
/// columns as they come, as byte columns.
const VIM_RC: &str = r#"
set nocompatible
packadd! ale
filetype plugin on
let g:ale_linters = {'json': ['seqc']}
let g:ale_lint_delay = 0
call ale#linter#Define('json', {
\   'name': 'seqc',
\   'lsp': 'stdio',
\   'executable': $SEQC_BIN,
\   'command': '%e lsp',
\   'project_root': $SEQC_ROOT,
\})
"#;

const VIM_RUN: &str = r#"
execute 'edit ' . fnameescape($SEQC_FILE)
ALELint
let s:waited = 0
while s:waited < 200 && len(ale#engine#GetLoclist(bufnr(''))) < 2
  sleep 100m
  let s:waited += 1
endwhile
let s:found = map(copy(ale#engine#GetLoclist(bufnr(''))),
\ {_, d -> {'code': d.code, 'line': d.lnum - 1, 'col': d.col - 1, 'end_col': d.end_col}})
call writefile([json_encode({'shown': len(s:found) >= 2 ? v:true : v:false, 'diagnostics': s:found})], $SEQC_OUT)
qall!
"#;

/// Where a culprit stands, as `(code, line, start, end)`, its columns counted by `unit` over the
/// text of its line before it.
fn expected(unit: fn(&str) -> u64) -> Vec<(String, u64, u64, u64)> {
    let at = |code: &str, line: usize, word: &str| {
        let text = BROKEN.lines().nth(line).unwrap();
        let start = text.find(word).unwrap();
        let end = start + word.len();
        (
            code.to_owned(),
            line as u64,
            unit(&text[..start]),
            unit(&text[..end]),
        )
    };
    vec![at("W0503", 5, "host"), at("E0502", 6, "$args.hots")]
}

fn bytes(text: &str) -> u64 {
    text.len() as u64
}

fn utf16_units(text: &str) -> u64 {
    text.encode_utf16().count() as u64
}

#[test]
fn neovim_shows_the_diagnostics_of_a_broken_file() {
    let dir = Setup::new("nvim", NVIM_INIT, "init.lua");
    let mut nvim = dir.command("nvim", "apt-get install -y neovim");
    nvim.args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", dir.script.display()))
        // Neovim's LSP log and state stay in the test's directory.
        .env("XDG_CACHE_HOME", dir.path.join("cache"))
        .env("XDG_STATE_HOME", dir.path.join("state"));
    assert_eq!(dir.shown(nvim), expected(bytes));
}

#[test]
fn emacs_with_eglot_shows_the_diagnostics_of_a_broken_file() {
    let dir = Setup::new("emacs", EMACS_INIT, "init.el");
    let mut emacs = dir.command("emacs", "apt-get install -y emacs-nox elpa-eglot");
    // Not `-Q`: Debian's site start-up is what puts elpa-eglot on the load path.
    emacs
        .arg("--batch")
        .arg("-l")
        .arg(&dir.script)
        .env("HOME", &dir.path);
    assert_eq!(dir.shown(emacs), expected(bytes));
}

#[test]
fn vim_with_ale_shows_the_diagnostics_of_a_broken_file() {
    let dir = Setup::new("vim", VIM_RUN, "run.vim");
    let vimrc = dir.path.join("vimrc");
    std::fs::write(&vimrc, VIM_RC).unwrap();
    let mut vim = dir.command("vim", "apt-get install -y vim vim-ale");
    vim.arg("-N")
        .arg("-u")
        .arg(&vimrc)
        .args(["-i", "NONE", "--not-a-term", "-c"])
        .arg(format!("source {}", dir.script.display()))
        .env("HOME", &dir.path);
    assert_eq!(dir.shown(vim), expected(utf16_units));
}

/// An editor's directory: the broken file, its script, and where the script writes.
struct Setup {
    path: PathBuf,
    script: PathBuf,
}

impl Setup {
    fn new(editor: &str, script: &str, script_name: &str) -> Setup {
        let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{editor}-lsp"));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        let path = path.canonicalize().unwrap();
        std::fs::write(path.join("broken.json"), BROKEN).unwrap();
        let script_path = path.join(script_name);
        std::fs::write(&script_path, script).unwrap();
        Setup {
            path,
            script: script_path,
        }
    }

    /// `program`, with the environment every script reads; `install` says how to get it.
    fn command(&self, program: &str, install: &str) -> Command {
        let found = which(program).unwrap_or_else(|| {
            panic!(
                "{program} is not on the PATH: this end-to-end test needs it \
                 (`{install}`; .ci/run installs it)"
            )
        });
        let mut command = Command::new(found);
        command
            .env("SEQC_BIN", common::SEQC)
            .env("SEQC_ROOT", &self.path)
            .env("SEQC_FILE", self.path.join("broken.json"))
            .env("SEQC_OUT", self.path.join("diagnostics.json"))
            .current_dir(&self.path)
            .stdin(Stdio::null())
            .stdout(Stdio::null());
        command
    }

    /// Runs the editor to its end and reads what its script wrote, sorted by line.
    fn shown(&self, mut command: Command) -> Vec<(String, u64, u64, u64)> {
        let mut child = command.spawn().unwrap();
        // A deadline against a hang, not a timing assertion: the scripts wait at most ~25 s.
        let deadline = Instant::now() + Duration::from_secs(120);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!(
                    "the editor did not exit; its files are under {}",
                    self.path.display()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "the editor exited with {status}");
        let written =
            std::fs::read_to_string(self.path.join("diagnostics.json")).unwrap_or_else(|e| {
                panic!(
                    "the editor's script wrote nothing ({e}) under {}",
                    self.path.display()
                )
            });
        let result: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(result["shown"], true, "{result:#}");
        let mut found: Vec<(String, u64, u64, u64)> = result["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let n = |key: &str| d[key].as_u64().unwrap();
                (
                    d["code"].as_str().unwrap().to_owned(),
                    n("line"),
                    n("col"),
                    n("end_col"),
                )
            })
            .collect();
        found.sort_by_key(|(_, line, col, _)| (*line, *col));
        found
    }
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
