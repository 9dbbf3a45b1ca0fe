//! Opening the authorization address for the person at the terminal: `$BROWSER` if set (as
//! `xdg-open` and `sensible-browser` read it), else the system's opener. Best effort: the
//! address is printed anyway, and a machine without a browser simply shows it.

use std::process::Stdio;

/// The program and arguments that open `address`: `browser` (the `$BROWSER` value) when it
/// names one, else `xdg-open` (or `open` on macOS). The address is one argument, never shell
/// text.
pub(super) fn opener(browser: Option<&str>, address: &str) -> (String, Vec<String>) {
    // `$BROWSER` may list several, `:`-separated, the first being the one to try.
    let chosen = browser
        .and_then(|list| list.split(':').map(str::trim).find(|b| !b.is_empty()))
        .map(str::to_owned);
    let program = chosen.unwrap_or_else(|| {
        if cfg!(target_os = "macos") {
            "open".to_owned()
        } else {
            "xdg-open".to_owned()
        }
    });
    (program, vec![address.to_owned()])
}

/// Starts the opener for `address`, detached from seqc's input and output; its exit is
/// awaited in the background so that it leaves no zombie. Whether it started.
pub(super) fn open(address: &str) -> bool {
    let browser = std::env::var("BROWSER").ok();
    let (program, args) = opener(browser.as_deref(), address);
    let started = tokio::process::Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    match started {
        Ok(mut child) => {
            tokio::spawn(async move {
                let _ = child.wait().await;
            });
            true
        }
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::opener;

    #[test]
    fn the_browser_variable_comes_first_and_the_address_is_one_argument() {
        let address = "https://as.example/authorize?a=1&b=$(touch P)";
        assert_eq!(
            opener(Some("firefox:chromium"), address),
            ("firefox".to_owned(), vec![address.to_owned()])
        );
        let (program, args) = opener(None, address);
        assert!(program == "xdg-open" || program == "open", "{program}");
        assert_eq!(args, [address]);
        assert_eq!(opener(Some(" : "), address).0, program);
    }
}
