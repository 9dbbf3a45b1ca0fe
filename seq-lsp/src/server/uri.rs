//! `file:` URIs and paths. lsp-types 0.97 carries URIs as text, so the two conversions the server
//! needs (the workspace walk names files by path, clients name them by URI) live here.

use lsp_types::Uri;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The path of a `file:` URI (`file:///a%20b/c.json` → `/a b/c.json`); `None` for other schemes
/// or a host other than the local one.
pub fn to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = percent_decode(path)?;
    Some(bytes_to_path(bytes))
}

/// The `file:` URI of an absolute path, every byte outside the unreserved set percent-encoded.
pub fn from_path(path: &Path) -> Option<Uri> {
    let mut text = String::from("file://");
    let raw = path_bytes(path);
    if raw.first() != Some(&b'/') {
        text.push('/');
    }
    for &byte in &raw {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            text.push(char::from(byte));
        } else {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    Uri::from_str(&text).ok()
}

/// The URI under which the workspace keeps a document: `file:` URIs go through their path, so that
/// `file:///a%3Ab` from one client and `file:///a:b` from the walk name the same file.
pub fn normalize(uri: &Uri) -> Uri {
    to_path(uri)
        .and_then(|path| from_path(&path))
        .unwrap_or_else(|| uri.clone())
}

fn percent_decode(text: &str) -> Option<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(byte);
            i += 1;
        }
    }
    Some(out)
}

#[cfg(unix)]
fn bytes_to_path(bytes: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(bytes))
}

#[cfg(not(unix))]
fn bytes_to_path(bytes: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().replace('\\', "/").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uri(text: &str) -> Uri {
        Uri::from_str(text).unwrap()
    }

    #[test]
    fn paths_with_spaces_and_cjk_round_trip() {
        let path = Path::new("/tmp/my seqs/巡检.json");
        let made = from_path(path).unwrap();
        assert_eq!(
            made.as_str(),
            "file:///tmp/my%20seqs/%E5%B7%A1%E6%A3%80.json"
        );
        assert_eq!(to_path(&made).unwrap(), path);
    }

    #[test]
    fn differently_escaped_uris_normalize_alike() {
        let a = normalize(&uri("file:///c%3A/x.json"));
        let b = normalize(&uri("file:///c:/x.json"));
        assert_eq!(a, b);
        assert_eq!(
            to_path(&uri("file://localhost/x.json")).unwrap(),
            Path::new("/x.json")
        );
    }

    #[test]
    fn other_schemes_are_not_paths() {
        assert_eq!(to_path(&uri("untitled:Untitled-1")), None);
        assert_eq!(
            normalize(&uri("untitled:Untitled-1")).as_str(),
            "untitled:Untitled-1"
        );
    }
}
