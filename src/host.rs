//! What the commands that run sequences set up alike (`run`, `mcp`, `worker`): the root the
//! file tools and commands are confined to, and the caller's policy from `--allow`/`--deny`.

use crate::files::reason;
use seq_exec::policy::Policy;
use std::path::{Path, PathBuf};

/// `--root`, else the current directory; it must be a directory.
pub fn root(given: Option<&Path>) -> Result<PathBuf, String> {
    let root = match given {
        Some(root) => root.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|error| format!("cannot find the current directory: {}", reason(&error)))?,
    };
    match std::fs::metadata(&root) {
        Ok(meta) if meta.is_dir() => Ok(root),
        Ok(_) => Err(format!("--root {} is not a directory", root.display())),
        Err(error) => Err(format!(
            "cannot use --root {}: {}",
            root.display(),
            reason(&error)
        )),
    }
}

/// `--allow` patterns (every tool when none), then `--deny`, which wins.
pub fn policy(allow: &[String], deny: &[String]) -> Policy {
    let policy = allow
        .iter()
        .fold(Policy::allow_all(), |policy, pattern| policy.allow(pattern));
    deny.iter()
        .fold(policy, |policy, pattern| policy.deny(pattern))
}

#[cfg(test)]
mod tests {
    use super::*;
    use seq_exec::Caller;

    #[test]
    fn deny_wins_over_allow() {
        let policy = policy(&["files_*".to_owned()], &["files_write".to_owned()]);
        let caller = Caller::new("cli");
        assert!(policy.allows(&caller, "files_read"));
        assert!(!policy.allows(&caller, "files_write"));
        assert!(!policy.allows(&caller, "cmd_run"));
    }
}
