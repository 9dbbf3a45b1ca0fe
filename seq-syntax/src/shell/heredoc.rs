//! Here-documents for the scan: the one announced by `<<` and the body being read.

/// A here-document announced by `<<`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct HereDoc {
    pub(super) delimiter: String,
    /// Its delimiter was quoted: the body is literal text, expanding nothing.
    pub(super) quoted: bool,
    /// `<<-`: leading tabs are stripped from each line.
    pub(super) strip_tabs: bool,
    /// The command reading it parses it as shell code (`sh <<E`, `ssh host <<E`): its label.
    pub(super) script_of: Option<&'static str>,
}

/// A here-document's body being read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Body {
    pub(super) doc: HereDoc,
    pub(super) line: String,
    /// The last character was an unescaped backslash.
    pub(super) escaped: bool,
    /// The last character was an unescaped `$`.
    pub(super) dollar: bool,
    /// A `$(`, `${`, `$[` or backquote was read in the body: what follows it is not followed.
    pub(super) substituted: bool,
}

impl Body {
    pub(super) fn new(doc: HereDoc) -> Body {
        Body {
            doc,
            line: String::new(),
            escaped: false,
            dollar: false,
            substituted: false,
        }
    }

    /// Reads `c`; true when its line is the delimiter, which ends the body.
    pub(super) fn read(&mut self, c: char) -> bool {
        if c == '\n' && !self.escaped {
            let line = std::mem::take(&mut self.line);
            let line = if self.doc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                &line[..]
            };
            self.dollar = false;
            return line == self.doc.delimiter;
        }
        self.line.push(c);
        if self.doc.quoted {
            return false;
        }
        let dollar = std::mem::take(&mut self.dollar);
        if std::mem::take(&mut self.escaped) {
            // A backslash-newline joins lines: the delimiter test of the joined line is not
            // followed.
            if c == '\n' {
                self.substituted = true;
            }
            return false;
        }
        match c {
            '\\' => self.escaped = true,
            '`' => self.substituted = true,
            '(' | '{' | '[' if dollar => self.substituted = true,
            '$' => self.dollar = true,
            _ => {}
        }
        false
    }
}
