//! End to end under a real editor: Neovim (headless, no user config) starts `seqc lsp` over stdio
//! for a broken sequence file and shows its diagnostics, which a small Lua script writes out as
//! JSON. Neovim 0.7 (Debian 12) is the oldest client this must work with: `vim.lsp.start` came in
//! 0.8, so the script uses `start_client` + `buf_attach_client`, which every later version keeps.
//!
//! `.ci/run` installs Neovim from Debian's packages. Without `nvim` on the PATH this test fails:
//! a skipped editor test would look like a passing one.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The culprits sit after CJK text and escaped quotes: Neovim asks for UTF-16 positions and
/// turns them into byte columns itself, so a wrong conversion shows as a wrong column.
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

const INIT: &str = r#"
local seqc, root, file, out = os.getenv('SEQC_BIN'), os.getenv('SEQC_ROOT'), os.getenv('SEQC_FILE'), os.getenv('SEQC_OUT')
vim.cmd('edit ' .. vim.fn.fnameescape(file))
local id = vim.lsp.start_client({ name = 'seqc', cmd = { seqc, 'lsp' }, root_dir = root })
vim.lsp.buf_attach_client(0, id)
local shown = vim.wait(20000, function() return #vim.diagnostic.get(0) >= 2 end, 20)
local found = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  table.insert(found, { code = d.code, lnum = d.lnum, col = d.col, end_col = d.end_col,
                        severity = d.severity, source = d.source })
end
table.sort(found, function(a, b) return a.lnum < b.lnum end)
local f = io.open(out, 'w')
f:write(vim.fn.json_encode({ shown = shown, diagnostics = found }))
f:close()
vim.lsp.stop_client(id)
vim.wait(5000, function() return vim.lsp.client_is_stopped(id) end, 20)
vim.cmd('qa!')
"#;

#[test]
fn neovim_shows_the_diagnostics_of_a_broken_file() {
    let nvim = which("nvim").unwrap_or_else(|| {
        panic!(
            "nvim is not on the PATH: this end-to-end test needs Neovim \
             (`apt-get install -y neovim`; .ci/run installs it)"
        )
    });
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("nvim-lsp");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dir = dir.canonicalize().unwrap();
    let file = dir.join("broken.json");
    std::fs::write(&file, BROKEN).unwrap();
    let init = dir.join("init.lua");
    std::fs::write(&init, INIT).unwrap();
    let out = dir.join("diagnostics.json");

    let mut child = Command::new(nvim)
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", init.display()))
        .env("SEQC_BIN", common::SEQC)
        .env("SEQC_ROOT", &dir)
        .env("SEQC_FILE", &file)
        .env("SEQC_OUT", &out)
        // Neovim's LSP log and state stay in the test's directory.
        .env("XDG_CACHE_HOME", dir.join("cache"))
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // A deadline against a hang, not a timing assertion: the script itself waits at most ~25 s.
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("nvim did not exit; its LSP log is under {}", dir.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "nvim exited with {status}");

    let result: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(result["shown"], true, "{result:#}");
    let found: Vec<(String, u64, u64, u64)> = result["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            assert_eq!(d["source"], "seqc");
            let code = d["code"].as_str().unwrap().to_owned();
            let n = |key: &str| d[key].as_u64().unwrap();
            (code, n("lnum"), n("col"), n("end_col"))
        })
        .collect();
    // Byte columns of the culprits in their lines.
    let line = |n: usize| BROKEN.lines().nth(n).unwrap();
    let col = |n: usize, word: &str| line(n).find(word).unwrap() as u64;
    let unused = col(5, "host");
    let undeclared = col(6, "$args.hots");
    assert_eq!(
        found,
        [
            ("W0503".to_owned(), 5, unused, unused + 4),
            ("E0502".to_owned(), 6, undeclared, undeclared + 10),
        ]
    );
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
