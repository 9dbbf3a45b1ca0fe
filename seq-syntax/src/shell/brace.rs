//! The `${...}` being read by the scan: the operators that make it arithmetic or an assignment.

/// How far a `${...}` has been read, for the operators that make it arithmetic or an assignment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum BraceAt {
    /// In the parameter's name; `true` before its first character.
    Name(bool),
    /// Right after a `:` following the name.
    Colon,
    /// Past the operator.
    Operand,
}

/// One `${...}` open (kept beside its [`Frame::Brace`](super::Frame::Brace)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Brace {
    pub(super) at: BraceAt,
    /// In double quotes.
    pub(super) quoted: bool,
    /// A subscript or an offset: what follows is arithmetic.
    pub(super) arithmetic: bool,
    /// `=` or `:=`: the value is assigned, and the expansion is what it assigned.
    pub(super) assigns: bool,
}

impl Brace {
    pub(super) fn new(quoted: bool) -> Brace {
        Brace {
            at: BraceAt::Name(true),
            quoted,
            arithmetic: false,
            assigns: false,
        }
    }

    /// A value standing in the braces' own text: as the name or right after `:`, it would be
    /// read as a name or an offset, never as plain text.
    pub(super) fn value(&mut self) {
        match self.at {
            BraceAt::Name(_) | BraceAt::Colon => self.arithmetic = true,
            BraceAt::Operand => {}
        }
        self.at = BraceAt::Operand;
    }

    /// Reads `c`, an unescaped character of the braces' own text.
    pub(super) fn read(&mut self, c: char) {
        match self.at {
            BraceAt::Name(first) => {
                let special = first && matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-');
                if c.is_ascii_alphanumeric() || c == '_' || special {
                    self.at = BraceAt::Name(false);
                    return;
                }
                self.at = BraceAt::Operand;
                match c {
                    '[' => self.arithmetic = true,
                    ':' => self.at = BraceAt::Colon,
                    '=' => self.assigns = true,
                    _ => {}
                }
            }
            BraceAt::Colon => {
                self.at = BraceAt::Operand;
                match c {
                    '=' => self.assigns = true,
                    '-' | '?' | '+' => {}
                    // `${X:OFFSET}`: the offset is an arithmetic expression.
                    _ => self.arithmetic = true,
                }
            }
            BraceAt::Operand => {}
        }
    }
}
