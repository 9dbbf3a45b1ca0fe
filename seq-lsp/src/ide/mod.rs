//! The editor's questions, answered over checked sequences: pure functions in the style of
//! rust-analyzer's `ide` crate. No I/O, no LSP types, no threads: the server converts positions
//! and results, this module knows only files, texts and byte offsets.
//!
//! # Coordinates
//!
//! Every offset and [`Span`] is a **byte offset into the file's text** as given to
//! [`Analysis::new`]; spans are half-open (`start..end`). That holds inside `tools` and `when`
//! strings too: a span of a name inside an item string covers exactly its bytes in the file,
//! escapes included (`\\\"` for a `"` two strings deep). The server converts offsets to LSP
//! positions with [`seq_syntax::LineIndex`] in the negotiated encoding, and positions back with
//! [`seq_syntax::LineIndex::offset_utf16`] (or its own UTF-8 equivalent).
//!
//! A cursor offset is *between* characters: it is on a name when it is inside it or just after
//! its last character. No offset makes anything panic: one inside a multi-byte character or past
//! the end finds at most what the nearest boundary would (completion: nothing).
//!
//! # Texts of edits
//!
//! Every edit ([`FileEdit`], a completion's [`CompletionItem::insert_text`]) is ready to be
//! inserted as it is: text that lands inside a JSON string is already escaped for it, once in a
//! top-level string (a group name), twice inside an item's string (a `target`).
//!
//! # Lifetime
//!
//! An [`Analysis`] is a snapshot of the whole workspace: the server builds a new one after every
//! change (one [`seq_check::check`] call; the name index behind navigation is built lazily on the
//! first request that needs it) and answers requests from the latest one. It is `Send + Sync`,
//! so it can be shared with a worker through an `Arc`.

mod actions;
mod completion;
mod hover;
mod index;
mod rename;
mod symbols;
mod text;
mod tokens;

/// The file set's content rule, from its one home in the checker.
pub use seq_check::file_set::is_sequence_document;

use index::{Def, Index, Name};
use seq_catalog::Catalog;
use seq_check::{Check, Source, check};
use seq_syntax::{Code, Diagnostic, Span};
use std::fmt;
use std::sync::{Arc, OnceLock};

/// A file of an [`Analysis`]: its position in the list given to [`Analysis::new`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

impl FileId {
    fn index(self) -> usize {
        self.0 as usize
    }

    fn of(index: usize) -> FileId {
        FileId(u32::try_from(index).unwrap_or(u32::MAX))
    }
}

/// A span in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    pub file: FileId,
    pub span: Span,
}

/// Replace the bytes at `span` of `file` with `new_text` (already escaped for where it lands).
/// Edits of one result never overlap; they are sorted by file, then span.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileEdit {
    pub file: FileId,
    pub span: Span,
    pub new_text: String,
}

/// What [`Analysis::hover`] shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hover {
    /// The name hovered (the server highlights it).
    pub span: Span,
    /// The content, as Markdown.
    pub markdown: String,
}

/// Why a rename cannot be done; `message` is for the user (LSP: a `RequestFailed` error, or
/// the message of `prepareRename`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RenameError {
    pub message: String,
}

impl RenameError {
    fn new(message: impl Into<String>) -> RenameError {
        RenameError {
            message: message.into(),
        }
    }
}

impl fmt::Display for RenameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RenameError {}

/// What a completion proposes; each maps onto one LSP `CompletionItemKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompletionKind {
    /// A field name (`name`, `tools`, `as`, a tool's parameter): LSP `Field`.
    Field,
    /// A value of an enumeration (`abort`, `string`, `true`): LSP `EnumMember`.
    EnumValue,
    /// An input or output slot (`$args.host`, an `as` value): LSP `Variable`.
    Slot,
    /// A tool name from the catalog: LSP `Function`.
    Tool,
    /// A group name as a call target: LSP `Method`.
    Group,
    /// A `#sequence` target or a sequence name: LSP `Module`.
    Sequence,
    /// A whole item with the tool's required arguments: LSP `Snippet`.
    Snippet,
}

/// One completion proposal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompletionItem {
    /// What the list shows (and what the client filters on).
    pub label: String,
    pub kind: CompletionKind,
    /// A one-line detail: a type, a signature.
    pub detail: Option<String>,
    /// More, as Markdown: a description, the parameters.
    pub documentation: Option<String>,
    /// The text that replaces [`edit`](Self::edit), escaped for where it lands. When
    /// [`snippet`](Self::snippet) is set it is in LSP snippet syntax (`${1:name}` tab stops,
    /// `\\`, `\$` and `\}` escaped), to be sent with `InsertTextFormat::Snippet`.
    pub insert_text: String,
    /// The bytes the insertion replaces: the part of the word typed so far (or the whole string
    /// body the cursor is in); empty at the cursor when nothing is typed yet. It always contains
    /// the cursor, so it can be the `range` of an LSP `TextEdit`.
    pub edit: Span,
    pub snippet: bool,
}

/// A fix the checker knows for a diagnostic in the requested range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeAction {
    pub title: String,
    /// The edits, all in the diagnostic's file, already escaped (the checker's own fix).
    pub edits: Vec<FileEdit>,
    /// The code of the diagnostic fixed.
    pub code: Code,
    /// Whether the fix is machine-applicable: only those are preferred (applied by an editor's
    /// "fix all" as `seqc check --fix` applies them).
    pub preferred: bool,
    /// The index of that diagnostic in [`Analysis::diagnostics`] of the file (for the LSP
    /// code action's `diagnostics` field).
    pub diagnostic: usize,
}

/// The kinds of [`Symbol`]s; LSP: `Module`, `Function`, `Event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Sequence,
    Group,
    Item,
}

/// An entry of the document outline: the sequence, its groups, their items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    /// The sequence or group name; for an item its tool, and ` → slot` when it has `as`.
    pub name: String,
    /// A short signature or description.
    pub detail: Option<String>,
    pub kind: SymbolKind,
    /// The whole object.
    pub span: Span,
    /// The name inside it (the item's tool), within `span`.
    pub selection_span: Span,
    pub children: Vec<Symbol>,
}

/// The kinds of [`SemanticToken`]s, for the two languages inside strings. [`lsp_name`] gives
/// the standard LSP token type each one is reported as; [`ALL`] is the order of a legend.
///
/// [`lsp_name`]: TokenKind::lsp_name
/// [`ALL`]: TokenKind::ALL
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TokenKind {
    /// `$args` / `$out` (with the `$`, and `${`): LSP `namespace`.
    RefRoot,
    /// The slot of `$args.slot`: LSP `parameter`.
    Input,
    /// The slot of `$out.slot`: LSP `variable`.
    Output,
    /// A field after the slot (`.name`, without the dot): LSP `property`.
    Field,
    /// An index after the slot (`0` in `[0]`): LSP `number`.
    Index,
    /// A comparison operator of a condition (`==`, `contains`): LSP `operator`.
    Operator,
    /// The value of an item's `tool`, quotes included: LSP `function`.
    Tool,
    /// A key inside an item, quotes included: LSP `property`.
    Key,
    /// A string literal inside an item or a condition (minus the references it holds): LSP
    /// `string`.
    String,
    /// LSP `number`.
    Number,
    /// `true`, `false`, `null`, and a jq filter's keywords (`if`, `as`): LSP `keyword`.
    Keyword,
    /// A jq variable in a filter (`$x`): LSP `variable`.
    Variable,
}

impl TokenKind {
    pub const ALL: [TokenKind; 12] = [
        TokenKind::RefRoot,
        TokenKind::Input,
        TokenKind::Output,
        TokenKind::Field,
        TokenKind::Index,
        TokenKind::Operator,
        TokenKind::Tool,
        TokenKind::Key,
        TokenKind::String,
        TokenKind::Number,
        TokenKind::Keyword,
        TokenKind::Variable,
    ];

    /// The standard LSP semantic token type (`SemanticTokenType`'s string) for this kind.
    pub fn lsp_name(self) -> &'static str {
        match self {
            TokenKind::RefRoot => "namespace",
            TokenKind::Input => "parameter",
            TokenKind::Output | TokenKind::Variable => "variable",
            TokenKind::Field | TokenKind::Key => "property",
            TokenKind::Index | TokenKind::Number => "number",
            TokenKind::Operator => "operator",
            TokenKind::Tool => "function",
            TokenKind::String => "string",
            TokenKind::Keyword => "keyword",
        }
    }
}

/// A token of the embedded languages. Tokens are sorted, never overlap, and each lies inside
/// one JSON string of the file (so on one line: JSON strings hold no raw line break).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SemanticToken {
    pub span: Span,
    pub kind: TokenKind,
}

/// The checked workspace: every sequence file, its diagnostics, and what the editor asks of it.
#[derive(Debug)]
pub struct Analysis {
    sources: Vec<Source>,
    check: Check,
    catalog: Arc<Catalog>,
    index: OnceLock<Index>,
}

impl Analysis {
    /// Checks `files` (path or URI, text) together as one batch against `catalog`: `#name` in
    /// one file resolves to another. Pass only sequence documents (see
    /// [`is_sequence_document`]); file `i` of the list is `FileId(i)`.
    pub fn new(files: Vec<(String, String)>, catalog: Arc<Catalog>) -> Analysis {
        let sources: Vec<Source> = files
            .into_iter()
            .map(|(path, text)| Source::new(path, text))
            .collect();
        let check = check(&sources, &catalog);
        Analysis {
            sources,
            check,
            catalog,
            index: OnceLock::new(),
        }
    }

    /// The files, in order.
    pub fn files(&self) -> impl Iterator<Item = FileId> + '_ {
        (0..self.sources.len()).map(FileId::of)
    }

    /// The file given with this path, if any.
    pub fn file_id(&self, path: &str) -> Option<FileId> {
        self.sources
            .iter()
            .position(|s| s.path == path)
            .map(FileId::of)
    }

    pub fn path(&self, file: FileId) -> Option<&str> {
        self.source(file).map(|s| s.path.as_str())
    }

    pub fn text(&self, file: FileId) -> Option<&str> {
        self.source(file).map(|s| s.text.as_str())
    }

    /// The checker's whole result (sequences and diagnostics of every file).
    pub fn check(&self) -> &Check {
        &self.check
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The file's diagnostics, sorted by position (empty for an unknown file).
    pub fn diagnostics(&self, file: FileId) -> &[Diagnostic] {
        self.check
            .files
            .get(file.index())
            .map_or(&[][..], |f| f.diagnostics.as_slice())
    }

    /// What the name at `offset` is:
    /// - a group name, or a `seq_call`/`seq_when_call` `target` naming one: its signature
    ///   (inputs and outputs with types, `when`, `parallel`, `timeout`, ...) and description;
    /// - the sequence name, or a `#name` target (or `seq_run`'s `name`): that sequence's
    ///   description and its groups' signatures;
    /// - an item's `tool` value: the tool's description, parameters and parallel safety from the
    ///   catalog;
    /// - a slot (`in`/`out` keys, `$args.x`/`$out.x` — on the root or the slot —, `as` values,
    ///   call argument keys, `fallback` keys): its declared type and group;
    /// - `$each` / `$each_index`: what they are, and the element's type when `each` shows it;
    /// - a `jq` item's literal `filter`: the result type the checker derives, and the tool;
    /// - a field's key (of the file, a group, an input declaration): what the field is.
    pub fn hover(&self, file: FileId, offset: u32) -> Option<Hover> {
        if let Some(occurrence) = self.index().at(file.index(), offset) {
            let markdown = hover::markdown(self, &occurrence.name)?;
            return Some(Hover {
                span: occurrence.span,
                markdown,
            });
        }
        if let Some((span, markdown)) = hover::filter_at(self, file.index(), offset) {
            return Some(Hover { span, markdown });
        }
        let (field, span) = hover::field_at(self.text(file)?, offset)?;
        Some(Hover {
            span,
            markdown: hover::field_markdown(field),
        })
    }

    /// Where the name at `offset` is declared: `$args.x` → the `in` key; `$out.x`, `as` and
    /// `fallback` keys → the `out` key; a call target → the group's `name` value; `#name` →
    /// the other file's sequence `name` value; a call argument key → the callee's `in` key (for
    /// `#name`, of each group declaring it). On a declaration: itself. Empty when nothing is
    /// there or the name resolves to nothing.
    pub fn definition(&self, file: FileId, offset: u32) -> Vec<Location> {
        let index = self.index();
        let mut out: Vec<Location> = defs_at(index, file, offset)
            .into_iter()
            .flat_map(|def| self.locations(index, def, |o| o.decl))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Every use of the name at `offset`, across files: all `$args.x` of an input (and call
    /// arguments passing it), all `as`/`$out.x`/`fallback` keys of an output, all call sites of
    /// a group or sequence. With `include_declaration`, its declaration too. Sorted by file and
    /// position.
    pub fn references(
        &self,
        file: FileId,
        offset: u32,
        include_declaration: bool,
    ) -> Vec<Location> {
        let index = self.index();
        let mut out: Vec<Location> = defs_at(index, file, offset)
            .into_iter()
            .flat_map(|def| self.locations(index, def, |o| include_declaration || !o.decl))
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The name a rename at `offset` would change (LSP `prepareRename`), or why none can be.
    pub fn prepare_rename(&self, file: FileId, offset: u32) -> Result<Span, RenameError> {
        rename::target(self, file, offset).map(|(occurrence, _)| occurrence.span)
    }

    /// Renames the group, slot or sequence at `offset` to `new_name`, everywhere: its
    /// declaration and every reference, also inside `tools` strings and in other files. Fails
    /// when nothing renamable is there, when `new_name` is not a legal name for it (slots are
    /// identifiers; group and sequence names follow "Files" in docs/reference.md), or when it is
    /// taken.
    pub fn rename(
        &self,
        file: FileId,
        offset: u32,
        new_name: &str,
    ) -> Result<Vec<FileEdit>, RenameError> {
        rename::rename(self, file, offset, new_name)
    }

    /// Completions at `offset`, worked out from the text around the cursor (so they work while
    /// the file is broken): field names at each level (file, group, item, an input's
    /// declaration object, a tool's arguments, a called group's inputs), enumeration values
    /// (`on_error`, `missing`, slot types, booleans),
    /// `$args.`/`$out.` slots of the enclosing group, tool names (and whole items with the
    /// tool's required arguments, as snippets, between items), group and `#sequence` names in
    /// `target`, sequence names in `seq_run`'s `name`, `out` slots in `as`.
    pub fn completion(&self, file: FileId, offset: u32) -> Vec<CompletionItem> {
        completion::complete(self, file, offset)
    }

    /// The fixes of every diagnostic of `file` that has one and overlaps `range` (touching
    /// counts, so a cursor on a diagnostic's edge, or on an empty diagnostic, finds it).
    pub fn code_actions(&self, file: FileId, range: Span) -> Vec<CodeAction> {
        actions::code_actions(self, file, range)
    }

    /// The outline: the sequence, its groups, their items.
    pub fn document_symbols(&self, file: FileId) -> Vec<Symbol> {
        symbols::document_symbols(self, file)
    }

    /// Tokens of the languages inside strings: the items of `tools` strings (keys, tool names,
    /// strings, numbers, literals, references), group `when` conditions and `seq_when_call`'s
    /// `when` argument (operands and operators), and a `jq` item's literal `filter` (its
    /// functions, fields, variables, literals and operators). References are split into root,
    /// slot and path.
    pub fn semantic_tokens(&self, file: FileId) -> Vec<SemanticToken> {
        self.text(file)
            .map_or_else(Vec::new, tokens::semantic_tokens)
    }

    fn source(&self, file: FileId) -> Option<&Source> {
        self.sources.get(file.index())
    }

    fn index(&self) -> &Index {
        self.index
            .get_or_init(|| Index::build(&self.sources, &self.check))
    }

    fn locations(
        &self,
        index: &Index,
        def: Def,
        keep: impl Fn(&index::Occurrence) -> bool,
    ) -> Vec<Location> {
        index
            .of(def)
            .into_iter()
            .filter(|o| keep(o))
            .map(|o| Location {
                file: FileId::of(o.file),
                span: o.span,
            })
            .collect()
    }
}

/// What the name at `offset` stands for: one definition, or (a call argument of `#name`) the
/// inputs of several groups.
fn defs_at(index: &Index, file: FileId, offset: u32) -> Vec<Def> {
    index
        .all_at(file.index(), offset)
        .into_iter()
        .filter_map(|o| match o.name {
            Name::Def(def) => Some(def),
            Name::Tool(_) | Name::Undeclared { .. } | Name::Element { .. } => None,
        })
        .collect()
}
