//! Rename of a group, slot or sequence: the declaration and every reference, each edit escaped
//! for the strings around it. New names are checked against the rules of "Files" in
//! docs/reference.md before anything is edited, and against the names already taken.

use super::index::{Def, Name, Occurrence};
use super::text::escape_depth;
use super::{Analysis, FileEdit, FileId, RenameError};
use seq_syntax::ast::Sequence;
use seq_syntax::names::{group_name_problem, is_slot_name, sequence_name_problem};

/// The renamable name at `offset`, or why there is none.
pub(crate) fn target(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
) -> Result<(&Occurrence, Def), RenameError> {
    let Some(occurrence) = analysis.index().at(file.index(), offset) else {
        return Err(RenameError::new(
            "nothing to rename here: put the cursor on a group, slot or sequence name",
        ));
    };
    match &occurrence.name {
        Name::Def(def) => Ok((occurrence, *def)),
        Name::Tool(tool) => Err(RenameError::new(format!(
            "`{tool}` is a tool: its name comes from the catalog, not from this file"
        ))),
        Name::Undeclared { slot, .. } => Err(RenameError::new(format!(
            "`{slot}` is declared nowhere: declare it in the group first"
        ))),
        Name::Element { root, .. } => Err(RenameError::new(format!(
            "`${}` is the language's own name for the element, not a name of this file",
            root.as_str()
        ))),
    }
}

pub(crate) fn rename(
    analysis: &Analysis,
    file: FileId,
    offset: u32,
    new_name: &str,
) -> Result<Vec<FileEdit>, RenameError> {
    let (_, def) = target(analysis, file, offset)?;
    validate(analysis, def, new_name)?;
    let mut edits: Vec<FileEdit> = analysis
        .index()
        .of(def)
        .into_iter()
        .map(|o| FileEdit {
            file: FileId::of(o.file),
            span: o.span,
            new_text: escape_depth(new_name, o.depth),
        })
        .collect();
    edits.sort();
    edits.dedup_by(|a, b| a.file == b.file && a.span == b.span);
    Ok(edits)
}

fn sequence(analysis: &Analysis, file: usize) -> Option<&Sequence> {
    analysis.check.files.get(file)?.sequence.as_ref()
}

fn validate(analysis: &Analysis, def: Def, new: &str) -> Result<(), RenameError> {
    let fail = |message: String| Err(RenameError::new(message));
    match def {
        Def::Input { file, group, slot } | Def::Output { file, group, slot } => {
            let input = matches!(def, Def::Input { .. });
            if !is_slot_name(new) {
                return fail(format!(
                    "`{new}` cannot name a slot: slot names are identifiers (letters, digits and `_`, not starting with a digit), so that `${}.NAME` can reach them",
                    if input { "args" } else { "out" }
                ));
            }
            let Some(group) = sequence(analysis, file).and_then(|s| s.groups.get(group)) else {
                return Ok(());
            };
            let slots: Vec<_> = if input {
                group.inputs.iter().collect()
            } else {
                group.slots().collect()
            };
            let taken = slots
                .iter()
                .enumerate()
                .any(|(i, s)| i != slot && s.name.value == new);
            if taken {
                return fail(format!(
                    "group `{}` already has an {} named `{new}`",
                    group.name.value,
                    if input { "input" } else { "output" }
                ));
            }
            Ok(())
        }
        Def::Group { file, group } => {
            if let Some(problem) = group_name_problem(new) {
                return fail(problem.into_owned());
            }
            let Some(sequence) = sequence(analysis, file) else {
                return Ok(());
            };
            let taken = sequence
                .groups
                .iter()
                .enumerate()
                .any(|(i, g)| i != group && g.name.value == new);
            if taken {
                return fail(format!(
                    "sequence `{}` already has a group named `{new}`",
                    sequence.name.value
                ));
            }
            Ok(())
        }
        Def::Sequence { file } => {
            if let Some(problem) = sequence_name_problem(new) {
                return fail(problem.into_owned());
            }
            match analysis.index().sequence(new) {
                Some(other) if other != file => {
                    let path = analysis.sources.get(other).map_or("", |s| s.path.as_str());
                    fail(format!(
                        "a sequence named `{new}` is already defined in {path}"
                    ))
                }
                Some(_) | None => Ok(()),
            }
        }
    }
}
