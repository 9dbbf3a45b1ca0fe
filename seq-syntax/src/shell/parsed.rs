//! The shell parser's reading of where each value stands (tree-sitter-bash).
//!
//! The text parsed is the author's literal text with each reference replaced by the expansion of
//! its own variable, `${SEQ_V1}`, `${SEQ_V2}`, ...: the text the shell will read, up to the
//! quotes the engine adds around a word. Each reference's context is read from the node that
//! holds its expansion and the nodes around it. Anything the parser cannot place for certain —
//! a syntax error anywhere, an expansion that did not come out as one — is a problem, never a
//! guess.
//!
//! The reading depends on that text alone (the values never enter it), so it is kept per text
//! ([`Cache`]): a file or a server that checks the same command shape again, whatever the names
//! of its values, parses it once.

use super::{Context, Place, Problem, Uncertain, value_variable_into};
use crate::ast::TemplatePart;
use std::cell::RefCell;
use std::collections::HashMap;
use tree_sitter::{Node, Parser, Tree};

/// The parser's reading of each reference of a text, in order.
type Reading = Vec<Result<Context, Problem>>;

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// What each thread keeps between checks.
#[derive(Default)]
struct State {
    /// One parser per thread: making one loads the grammar's tables.
    parser: Option<Parser>,
    cache: Cache,
    /// Room for the text parsed and its expansions' spans, used again for every check.
    text: String,
    spans: Vec<(usize, usize)>,
}

/// The readings of the texts parsed last on this thread, bounded in bytes: when a new text
/// would pass [`Cache::MAX_BYTES`], all are forgotten (a bound, not a policy: one file's shapes
/// fit many times over).
#[derive(Default)]
struct Cache {
    readings: HashMap<Box<str>, Reading>,
    bytes: usize,
}

impl Cache {
    /// What the texts kept may take, keys and readings together.
    const MAX_BYTES: usize = 1 << 20;
    /// A text longer than this is parsed every time (a bound on what one entry may take).
    const MAX_TEXT: usize = 16 << 10;

    fn keep(&mut self, text: &str, reading: Reading) {
        if text.len() > Self::MAX_TEXT {
            return;
        }
        let bytes = text.len() + std::mem::size_of_val(reading.as_slice());
        if self.bytes + bytes > Self::MAX_BYTES {
            self.forget();
        }
        self.bytes += bytes;
        self.readings.insert(text.into(), reading);
    }

    fn forget(&mut self) {
        self.readings.clear();
        self.bytes = 0;
    }
}

/// Forgets every reading kept on this thread: the benchmark measures a file checked for the
/// first time with it.
pub fn forget() {
    STATE.with(|state| {
        if let Ok(mut state) = state.try_borrow_mut() {
            state.cache.forget();
        }
    });
}

/// Gives `apply` the parser's context for each reference of `parts`, in order (borrowed from
/// what the thread keeps: nothing is copied for a text seen before).
pub(super) fn with_contexts(
    parts: &[TemplatePart],
    apply: impl FnOnce(&[Result<Context, Problem>]),
) {
    STATE.with(|state| {
        let Ok(mut state) = state.try_borrow_mut() else {
            // Only a re-entrant call could find it borrowed: read without keeping.
            let (text, spans) = render(parts, String::new(), Vec::new());
            apply(&read(&mut None, &text, &spans));
            return;
        };
        let state = &mut *state;
        let (text, spans) = render(
            parts,
            std::mem::take(&mut state.text),
            std::mem::take(&mut state.spans),
        );
        match state.cache.readings.get(text.as_str()) {
            Some(reading) => apply(reading),
            None => {
                let reading = read(&mut state.parser, &text, &spans);
                apply(&reading);
                state.cache.keep(&text, reading);
            }
        }
        state.text = text;
        state.spans = spans;
    });
}

/// The text the shell reads (each reference as `${SEQ_Vn}`) in `text`, and each expansion's
/// span in `spans`, both cleared first. The text ends with a newline: the grammar reads a
/// command that ends the input without one (a pipeline of three commands, a word after `-c`)
/// through its error recovery, which finds no error but costs many times the parse; the shell
/// reads the end of its input as the end of the last line, so the newline changes no place.
fn render(
    parts: &[TemplatePart],
    mut text: String,
    mut spans: Vec<(usize, usize)>,
) -> (String, Vec<(usize, usize)>) {
    text.clear();
    spans.clear();
    for part in parts {
        match part {
            TemplatePart::Text(t) => text.push_str(t),
            TemplatePart::Ref(_) => {
                let start = text.len();
                text.push_str("${");
                value_variable_into(&mut text, spans.len());
                text.push('}');
                spans.push((start, text.len()));
            }
        }
    }
    text.push('\n');
    (text, spans)
}

/// The parse of `text` and the context of the expansion at each of `spans`.
fn read(parser: &mut Option<Parser>, text: &str, spans: &[(usize, usize)]) -> Reading {
    let unplaced = Err(Problem::Uncertain(Uncertain::Unparsed));
    let Some(tree) = parse(parser, text) else {
        return vec![unplaced; spans.len()];
    };
    let root = tree.root_node();
    // An error node anywhere: the parser guessed at the text's structure, so no place is sure.
    if root.has_error() {
        return vec![unplaced; spans.len()];
    }
    let mut path = Vec::new();
    spans
        .iter()
        .map(|&(start, end)| place(root, text, start, end, &mut path))
        .collect()
}

fn parse(parser: &mut Option<Parser>, text: &str) -> Option<Tree> {
    if parser.is_none() {
        let mut made = Parser::new();
        made.set_language(&tree_sitter_bash::LANGUAGE.into()).ok()?;
        *parser = Some(made);
    }
    parser.as_mut()?.parse(text, None)
}

/// The context of the expansion written at `start..end`. `path` is room for the nodes from
/// the root down to it, found once top-down (each `Node::parent` would search from the root).
fn place<'t>(
    root: Node<'t>,
    text: &str,
    start: usize,
    end: usize,
    path: &mut Vec<Node<'t>>,
) -> Result<Context, Problem> {
    let Some(node) = root.descendant_for_byte_range(start, end) else {
        return Err(Problem::Uncertain(Uncertain::Unparsed));
    };
    path.clear();
    let mut at = root;
    while at != node {
        path.push(at);
        match at.child_with_descendant(node) {
            Some(child) => at = child,
            None => return Err(Problem::Uncertain(Uncertain::Unparsed)),
        }
    }
    // Inside double quotes the grammar lets an expansion's node take the blanks before it
    // (`" ${SEQ_V1}"`): they are the string's text, not part of the expansion.
    let whole = node.end_byte() == end
        && text
            .get(node.start_byte()..start)
            .is_some_and(|gap| gap.bytes().all(|b| b == b' ' || b == b'\t'));
    if !(whole && node.kind() == "expansion") {
        // The expansion did not come out as one: it is text of whatever holds it. (In a
        // here-document that is a quoted delimiter's body, which the scan refuses, or a body
        // the grammar reads as text where shells expand: not certain either way.)
        return Err(match node.kind() {
            "comment" => Problem::Unsafe(Place::Comment),
            "raw_string" => return Ok(Context::Single),
            "ansi_c_string" => Problem::Unsafe(Place::DollarQuote),
            _ => Problem::Uncertain(Uncertain::Unparsed),
        });
    }
    // The grammar can misread a here-document's delimiter (the `;` of `cat <<E; echo ...` taken
    // into it, and the rest of the line as the same command): a place under it is not certain.
    if path
        .iter()
        .any(|&parent| parent.kind() == "heredoc_redirect" && misread_heredoc(parent, text))
    {
        return Err(Problem::Uncertain(Uncertain::Unparsed));
    }
    // The first level up that sets quoting decides the context; every level is then checked
    // for places where the shell evaluates or re-reads the text.
    let mut context = None;
    // The expansion is an unquoted operand of a `${...}`.
    let mut operand = false;
    for &parent in path.iter().rev() {
        match parent.kind() {
            "arithmetic_expansion" | "subscript" | "c_style_for_statement" => {
                return Err(Problem::Uncertain(Uncertain::Arithmetic));
            }
            // `((...))` is a compound statement opened by `((`.
            "compound_statement" if opens_with(parent, "((") => {
                return Err(Problem::Uncertain(Uncertain::Arithmetic));
            }
            "command_substitution" if opens_with(parent, "`") => {
                return Err(Problem::Unsafe(Place::Backquotes));
            }
            // A substitution of its own inside a body: a level the engine does not place.
            "heredoc_body" if context.is_some() => {
                return Err(Problem::Unsafe(Place::HereDocument));
            }
            "string" | "heredoc_body" if context.is_none() => {
                if operand {
                    // Unquoted inside a quoted `${...}`: shells differ on its quoting.
                    return Err(Problem::Uncertain(Uncertain::BareInQuotedBrace));
                }
                context = Some(Context::Double);
            }
            "expansion" if context.is_none() => operand = true,
            "command_substitution" | "process_substitution" | "program" if context.is_none() => {
                context = Some(Context::Word);
            }
            _ => {}
        }
    }
    context.ok_or(Problem::Uncertain(Uncertain::Unparsed))
}

/// Whether the grammar read the here-document of `node` (a `heredoc_redirect`) otherwise than
/// the shell: a delimiter holding an operator (`cat <<E; echo ...` read as the delimiter `E;`
/// and one command), or a body ended by a line that is not its delimiter.
fn misread_heredoc(node: Node<'_>, text: &str) -> bool {
    let source = |n: Node<'_>| text.get(n.byte_range()).unwrap_or_default();
    let mut cursor = node.walk();
    let mut start = None;
    let mut end = None;
    for child in node.children(&mut cursor) {
        match child.kind() {
            "heredoc_start" => start = Some(source(child)),
            "heredoc_end" => end = Some(source(child)),
            _ => {}
        }
    }
    let Some(start) = start else {
        return true;
    };
    if start.contains([';', '&', '|', '<', '>', '(', ')']) {
        return true;
    }
    end.is_some_and(|end| {
        let end = end.trim_start_matches('\t').trim_end_matches(['\n', '\r']);
        !start
            .chars()
            .filter(|c| !matches!(c, '\'' | '"' | '\\'))
            .eq(end.chars())
    })
}

/// Whether the first token of `node` is `token` (`((` or a backquote).
fn opens_with(node: Node<'_>, token: &str) -> bool {
    node.child(0).is_some_and(|c| c.kind() == token)
}
