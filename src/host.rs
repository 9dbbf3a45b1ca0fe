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

/// Refuses a root and a data directory of which either contains the other, compared as
/// canonical paths: a root holding the data directory would let the file tools rewrite the
/// stored sequences past the checker and the policy; a root inside it (`--root DATA/sequences`)
/// the same, and the stored files would be the tools' to read.
pub fn separate(root: &Path, data: &Path) -> Result<(), String> {
    let canonical_root = std::fs::canonicalize(root)
        .map_err(|error| format!("cannot use --root {}: {}", root.display(), reason(&error)))?;
    let canonical_data = seq_exec::builtin::canonical_beyond(data).map_err(|error| {
        format!(
            "cannot resolve the data directory {}: {}",
            data.display(),
            reason(&error)
        )
    })?;
    if canonical_data.starts_with(&canonical_root) {
        return Err(format!(
            "--root {} contains the data directory {}: the file tools could rewrite the stored \
             sequences; give a --data-dir outside the root",
            canonical_root.display(),
            canonical_data.display()
        ));
    }
    if canonical_root.starts_with(&canonical_data) {
        return Err(format!(
            "--root {} is inside the data directory {}: the file tools could rewrite the stored \
             sequences; give a --root outside the data directory",
            canonical_root.display(),
            canonical_data.display()
        ));
    }
    // Where the stored files are, links followed: a `sequences` that links into the root would
    // hand them to the file tools as surely as a data directory inside it.
    let stored = data.join("sequences");
    let canonical_stored = seq_exec::builtin::canonical_beyond(&stored).map_err(|error| {
        format!(
            "cannot resolve the data directory's {}: {}",
            stored.display(),
            reason(&error)
        )
    })?;
    if canonical_stored.starts_with(&canonical_root)
        || canonical_root.starts_with(&canonical_stored)
    {
        return Err(format!(
            "{} leads to {}, which is inside --root {} or holds it: the file tools could rewrite \
             the stored sequences; make it a directory of its own outside the root",
            stored.display(),
            canonical_stored.display(),
            canonical_root.display()
        ));
    }
    Ok(())
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
