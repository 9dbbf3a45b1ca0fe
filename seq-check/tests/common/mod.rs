//! What the checker's test binaries share.

#![allow(dead_code, reason = "each test binary uses a part of this module")]

use std::path::{Path, PathBuf};

/// The `*.json` files directly in `dir`, sorted.
pub fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
}
