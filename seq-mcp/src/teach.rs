//! What `seqc mcp` teaches besides `tools/list`: the full reference as a resource, and a prompt
//! that puts the language in front of a model before it writes a sequence.

use rmcp::model::{
    ErrorData, GetPromptResult, Prompt, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, Role,
};

/// The reference, as the repository has it: one text for people and for models.
const REFERENCE: &str = include_str!("../../docs/reference.md");

/// Where a client reads it.
pub const REFERENCE_URI: &str = "seqc://docs/reference.md";

/// The prompt's name in `prompts/list`.
pub const PROMPT: &str = "write_sequence";

pub(crate) fn resources() -> Vec<Resource> {
    vec![
        Resource::new(REFERENCE_URI, "reference")
            .with_title("seqc reference")
            .with_description(
                "The whole language of tool sequences (fields, items, references, conditions, \
                 calls, every diagnostic) and how seqc checks, stores and runs them",
            )
            .with_mime_type("text/markdown")
            .with_size(REFERENCE.len() as u64),
    ]
}

pub(crate) fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    if uri != REFERENCE_URI {
        return Err(ErrorData::resource_not_found(
            format!("no resource `{uri}`: the one resource is `{REFERENCE_URI}`"),
            None,
        ));
    }
    let contents = ResourceContents::TextResourceContents {
        uri: REFERENCE_URI.to_owned(),
        mime_type: Some("text/markdown".to_owned()),
        text: REFERENCE.to_owned(),
        meta: None,
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

pub(crate) fn prompts() -> Vec<Prompt> {
    vec![Prompt::new(
        PROMPT,
        Some(
            "How to write a tool sequence for seq_create: the language in brief, a worked example, and the tools available here",
        ),
        None,
    )]
}

/// The prompt: `guide` is `seq_create`'s description as this server lists it (the language in
/// brief and the tools a sequence may use here).
pub(crate) fn prompt(name: &str, guide: &str) -> Result<GetPromptResult, ErrorData> {
    if name != PROMPT {
        return Err(ErrorData::invalid_params(
            format!("no prompt `{name}`: the one prompt is `{PROMPT}`"),
            None,
        ));
    }
    let text = format!(
        "You will write tool sequences for seqc and store them with `seq_create`, then run them \
         with `seq_run`. This is how a sequence is written.\n\n{guide}\n\nThe whole reference is \
         the resource `{REFERENCE_URI}`. `seq_create` answers every mistake at once, each with \
         its code, place and a hint: follow the hints."
    );
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description("How to write a tool sequence"),
    )
}
