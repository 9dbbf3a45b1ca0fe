//! The envelope: what a storage keeps for one sequence, `{"format": 1, "owner": <caller id>,
//! "sequence": <the checked AST>}`, the same bytes in a data directory's file and in a durable
//! engine's state; and the owner rule read from it.

use super::{StorageError, Stored};
use seq_syntax::ast::Sequence;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The version written in every stored file; a file with another is refused, not guessed at.
pub const FORMAT: u32 = 1;

/// Deepest nesting of arrays and objects a stored file may have. The AST of a checked sequence
/// needs up to about 530 levels (an `args` value nested to the front end's bound, several JSON
/// levels per AST level); reading deeper would only risk the stack.
pub const MAX_STORED_DEPTH: usize = 1024;

/// The largest stored file read. A stored file holds the AST as JSON, a few times the text it
/// was parsed from (at most [`seq_syntax::limits::MAX_FILE_BYTES`]).
pub const MAX_STORED_BYTES: usize = 4 * seq_syntax::limits::MAX_FILE_BYTES;

#[derive(Serialize)]
struct EnvelopeOut<'a> {
    format: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    owner: Option<&'a str>,
    sequence: &'a Sequence,
}

#[derive(Deserialize)]
struct EnvelopeIn {
    format: serde_json::Value,
    #[serde(default)]
    owner: Option<String>,
    sequence: serde_json::Value,
}

/// How deeply the JSON text `bytes` nests arrays and objects (strings skipped), counted in one
/// pass without recursion.
fn nesting(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in bytes {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                (false, _) => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// A sequence and its owner as stored: `{"format": 1, "owner": ..., "sequence": ...}`.
pub fn encode(sequence: &Sequence, owner: Option<&str>) -> Result<Vec<u8>, StorageError> {
    serde_json::to_vec(&EnvelopeOut {
        format: FORMAT,
        owner,
        sequence,
    })
    .map_err(|error| StorageError::corrupt(&sequence.name.value, error))
}

/// `bytes` read as a `T`, bounded in depth first: serde_json's own bound (128 levels) is below
/// what a checked sequence can need (the AST of an `args` value nested 40 deep already passes
/// it), so the scan of [`nesting`] bounds the recursion instead.
fn read<T: DeserializeOwned>(name: &str, bytes: &[u8]) -> Result<T, StorageError> {
    let depth = nesting(bytes);
    if depth > MAX_STORED_DEPTH {
        return Err(StorageError::corrupt(
            name,
            format_args!("it nests {depth} levels deep, more than {MAX_STORED_DEPTH}"),
        ));
    }
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    reader.disable_recursion_limit();
    T::deserialize(&mut reader)
        .and_then(|read| reader.end().map(|()| read))
        .map_err(|error| StorageError::corrupt(name, error))
}

/// The owner an envelope [`encode`] wrote names (`None`: ownerless), read without reading its
/// sequence; an envelope that is not one is an error.
pub fn owner_of(name: &str, bytes: &[u8]) -> Result<Option<String>, StorageError> {
    #[derive(Deserialize)]
    struct Owner {
        #[serde(default)]
        owner: Option<String>,
        #[serde(rename = "sequence")]
        _sequence: serde::de::IgnoredAny,
    }
    read::<Owner>(name, bytes).map(|envelope| envelope.owner)
}

/// What [`encode`] wrote for the sequence `name`, read back: a corrupt or foreign envelope, or
/// one holding another name, is an error.
pub fn decode(name: &str, bytes: &[u8]) -> Result<Stored, StorageError> {
    let envelope: EnvelopeIn = read(name, bytes)?;
    if envelope.format.as_u64() != Some(u64::from(FORMAT)) {
        return Err(StorageError::UnknownFormat {
            name: name.to_owned(),
            found: envelope.format.to_string(),
        });
    }
    let sequence: Sequence = serde_json::from_value(envelope.sequence)
        .map_err(|error| StorageError::corrupt(name, error))?;
    if sequence.name.value != name {
        return Err(StorageError::corrupt(
            name,
            format_args!("the file holds the sequence `{}`", sequence.name.value),
        ));
    }
    Ok(Stored {
        sequence: Arc::new(sequence),
        owner: envelope.owner,
    })
}

/// Whether `asker` (`None`: the command line's user) may replace or delete a stored sequence
/// owned by `owner` (`None`: ownerless, or unreadable: no owner anyone can prove): its owner
/// may, a caller holding the store administrator permission (`admin`) may. The command line's
/// user owns nothing: it may change ownerless sequences only.
pub fn may_change(owner: Option<&str>, asker: Option<&str>, admin: bool) -> bool {
    (admin && asker.is_some()) || owner == asker
}
