//! Storage in the engine: the stored sequences kept as Restate state, so that every worker,
//! every `seqc mcp --restate` and every `seqc run --restate` sees the same ones.
//!
//! - [`SeqStore`], a virtual object keyed by the sequence's name, holds its envelope (the bytes
//!   a data directory's file would hold, as text: [`seq_store::storage::encode`], owner
//!   included). Its handlers that write are exclusive per name: of two creators of one name
//!   without `replace`, the first to reach the object stores, the second finds it taken.
//! - [`SeqIndex`], one virtual object (key [`INDEX_KEY`]), holds the stored names, one state
//!   key each: listing needs them, and a new name that looks like a stored one (the same UTS #39
//!   skeleton) is refused there, by one exclusive handler for all names. `SeqStore` adds a new
//!   name to it before storing, and removes a deleted one after, both as calls journaled in its
//!   own handler, so that a worker's death between the two is replayed, not left half done.
//!   Chosen over the admin API's SQL (`state` table): the ingress alone suffices, and a name is
//!   listed as soon as its creation has answered.
//! - [`RestateStorage`] is the client side, a [`SequenceStorage`] over the ingress: the seq
//!   tools and the command line use it as they use a data directory.
//!
//! The objects never parse a sequence: checking is the seq tools' job, before they store, and
//! reading back is [`seq_store::storage::decode`]'s, on the client.

use crate::submit::path_segment;
use restate_sdk::prelude::*;
use seq_exec::SequenceSource;
use seq_exec::engine::NoSequences;
use seq_store::quota;
use seq_store::storage::{self, Put, SequenceStorage, StorageError, Stored};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::Arc;

/// The key of the one [`SeqIndex`] object.
pub const INDEX_KEY: &str = "all";

/// The state key of a [`SeqStore`] object's envelope.
const ENVELOPE: &str = "envelope";

/// What `SeqStore/put` is given: on whose behalf, and what.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PutRequest {
    /// The caller writing (absent: the command line's user, who owns nothing). The envelope
    /// must name this caller as its owner: nobody writes in another's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// The envelope, as [`storage::encode`] wrote it.
    pub envelope: String,
    pub replace: bool,
    /// Whether the writer holds the store administrator permission.
    #[serde(default)]
    pub admin: bool,
}

/// What `SeqStore/delete` is given: on whose behalf.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeleteRequest {
    /// The caller deleting (absent: the command line's user).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caller: Option<String>,
    /// Whether the caller holds the store administrator permission.
    #[serde(default)]
    pub admin: bool,
}

/// What `SeqStore/delete` answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum DeleteAnswer {
    Deleted,
    /// No sequence has this name.
    Absent,
    /// The sequence is `owner`'s (`None`: ownerless), not the caller's.
    NotOwner {
        owner: Option<String>,
    },
}

/// What `SeqStore/put` answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "answer", rename_all = "snake_case")]
pub enum PutAnswer {
    Stored,
    /// The name is taken and `replace` was not given.
    Exists,
    /// The name looks like the stored `stored`.
    Confusable {
        stored: String,
    },
    /// The stored sequence is `owner`'s (`None`: ownerless), not the writer's.
    NotOwner {
        owner: Option<String>,
    },
    /// The envelope names `owner` (`None`: no one), not the caller writing it.
    NotTheCaller {
        owner: Option<String>,
    },
}

/// Whether `asker` (`None`: the command line's user) may replace or delete the stored
/// `envelope`: the rule the seq tools apply before they write (its owner may, a store
/// administrator may), asked again here because a request may reach the object without them.
/// The command line's user owns nothing: it may change ownerless sequences only. Refused: the
/// stored owner.
fn refused(name: &str, envelope: &str, asker: Option<&str>, admin: bool) -> Option<Option<String>> {
    // An envelope that cannot be read has no owner anyone can prove.
    let owner = storage::owner_of(name, envelope.as_bytes()).unwrap_or(None);
    (!storage::may_change(owner.as_deref(), asker, admin)).then_some(owner)
}

/// One stored sequence, keyed by its name.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqStore;

#[restate_sdk::object]
impl SeqStore {
    /// Stores the envelope under this name, unless it is taken (without `replace`) or looks like
    /// another stored name.
    #[handler]
    async fn put(
        &self,
        ctx: ObjectContext<'_>,
        request: Json<PutRequest>,
    ) -> HandlerResult<Json<PutAnswer>> {
        let PutRequest {
            caller,
            envelope,
            replace,
            admin,
        } = request.into_inner();
        let owner = storage::owner_of(ctx.key(), envelope.as_bytes())
            .map_err(|error| TerminalError::new_with_code(400, error.to_string()))?;
        if owner != caller {
            return Ok(Json(PutAnswer::NotTheCaller { owner }));
        }
        let stored = ctx.get::<String>(ENVELOPE).await?;
        let exists = stored.is_some();
        if exists && !replace {
            return Ok(Json(PutAnswer::Exists));
        }
        if let Some(stored) = &stored
            && let Some(owner) = refused(ctx.key(), stored, caller.as_deref(), admin)
        {
            return Ok(Json(PutAnswer::NotOwner { owner }));
        }
        if !exists {
            let Json(look_alike) = ctx
                .object_client::<SeqIndexClient>(INDEX_KEY)
                .add(ctx.key().to_owned())
                .call()
                .await?;
            if let Some(stored) = look_alike {
                return Ok(Json(PutAnswer::Confusable { stored }));
            }
        }
        ctx.set(ENVELOPE, envelope);
        Ok(Json(PutAnswer::Stored))
    }

    /// The envelope, or nothing (an empty answer) when no sequence has this name.
    #[handler]
    async fn get(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Option<String>> {
        Ok(ctx.get::<String>(ENVELOPE).await?)
    }

    /// Deletes the sequence on behalf of the request's caller.
    #[handler]
    async fn delete(
        &self,
        ctx: ObjectContext<'_>,
        request: Json<DeleteRequest>,
    ) -> HandlerResult<Json<DeleteAnswer>> {
        let DeleteRequest { caller, admin } = request.into_inner();
        let Some(stored) = ctx.get::<String>(ENVELOPE).await? else {
            return Ok(Json(DeleteAnswer::Absent));
        };
        if let Some(owner) = refused(ctx.key(), &stored, caller.as_deref(), admin) {
            return Ok(Json(DeleteAnswer::NotOwner { owner }));
        }
        ctx.clear(ENVELOPE);
        ctx.object_client::<SeqIndexClient>(INDEX_KEY)
            .remove(ctx.key().to_owned())
            .call()
            .await?;
        Ok(Json(DeleteAnswer::Deleted))
    }
}

/// The stored names, one state key each.
#[derive(Clone, Copy, Debug, Default)]
pub struct SeqIndex;

#[restate_sdk::object]
impl SeqIndex {
    /// Adds `name`, unless another stored name looks like it: then that name.
    #[handler]
    async fn add(
        &self,
        ctx: ObjectContext<'_>,
        name: String,
    ) -> HandlerResult<Json<Option<String>>> {
        let look_alike = seq_syntax::names::looks_alike(&name, ctx.get_keys().await?);
        if look_alike.is_none() {
            ctx.set(&name, true);
        }
        Ok(Json(look_alike))
    }

    #[handler]
    async fn remove(&self, ctx: ObjectContext<'_>, name: String) -> HandlerResult<()> {
        ctx.clear(&name);
        Ok(())
    }

    /// Every stored name, sorted.
    #[handler]
    async fn names(&self, ctx: SharedObjectContext<'_>) -> HandlerResult<Json<Vec<String>>> {
        let mut names = ctx.get_keys().await?;
        names.sort();
        Ok(Json(names))
    }
}

/// The stored sequences of the Restate server whose ingress is at a URL, as a
/// [`SequenceStorage`]. Blocking, as storage is: each operation runs its requests on a runtime
/// of its own, so it may be called from any thread outside an async task (the seq tools call
/// storage on tokio's blocking pool).
pub struct RestateStorage {
    ingress: String,
    client: reqwest::Client,
    /// Shut down in the background when dropped: dropping a runtime may happen inside another.
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for RestateStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RestateStorage")
            .field("ingress", &self.ingress)
            .finish_non_exhaustive()
    }
}

impl Drop for RestateStorage {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl RestateStorage {
    /// The storage of the server whose ingress is at `ingress` (`http://HOST:PORT`). Nothing is
    /// asked of the server until the first operation.
    pub fn new(ingress: &str) -> std::io::Result<RestateStorage> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("seqc-storage")
            .enable_all()
            .build()?;
        Ok(RestateStorage {
            ingress: ingress.trim_end_matches('/').to_owned(),
            client: reqwest::Client::new(),
            runtime: Some(runtime),
        })
    }

    fn block_on<T>(
        &self,
        work: impl Future<Output = Result<T, StorageError>>,
    ) -> Result<T, StorageError> {
        match &self.runtime {
            Some(runtime) => runtime.handle().block_on(work),
            None => Err(self.unreachable("its client is shut down")),
        }
    }

    fn unreachable(&self, detail: impl std::fmt::Display) -> StorageError {
        StorageError::Unavailable {
            location: self.location(),
            detail: detail.to_string(),
        }
    }

    /// `POST ingress/SERVICE/KEY/HANDLER` with `body`: the answer's bytes, or why none.
    async fn post(
        &self,
        service: &str,
        key: &str,
        handler: &str,
        body: Vec<u8>,
    ) -> Result<Vec<u8>, StorageError> {
        let url = format!("{}/{service}/{}/{handler}", self.ingress, path_segment(key));
        let mut request = self.client.post(&url);
        // A handler without input refuses a content type.
        if !body.is_empty() {
            request = request
                .header("content-type", "application/json")
                .body(body);
        }
        let response = request
            .send()
            .await
            .map_err(|error| self.unreachable(error))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|error| self.unreachable(error))?;
        if status.is_success() {
            Ok(bytes.to_vec())
        } else {
            Err(self.unreachable(format_args!(
                "{service}/{handler} answered {status}: {}",
                String::from_utf8_lossy(&bytes)
            )))
        }
    }

    async fn read(&self, name: &str) -> Result<Option<Stored>, StorageError> {
        let answer = self.post("SeqStore", name, "get", Vec::new()).await?;
        if answer.is_empty() {
            return Ok(None);
        }
        let envelope: String =
            serde_json::from_slice(&answer).map_err(|error| StorageError::corrupt(name, error))?;
        storage::decode(name, envelope.as_bytes()).map(Some)
    }

    async fn names(&self) -> Result<Vec<String>, StorageError> {
        let answer = self
            .post("SeqIndex", INDEX_KEY, "names", Vec::new())
            .await?;
        serde_json::from_slice(&answer)
            .map_err(|error| self.unreachable(format_args!("SeqIndex/names: {error}")))
    }
}

/// The primitives alone: names are checked before they reach the server, the quota is
/// [`quota::check`]'s, the envelope [`storage::encode`]'s and [`storage::decode`]'s, and the
/// owner rule, asked by the objects, [`storage::may_change`].
impl SequenceStorage for RestateStorage {
    fn location(&self) -> String {
        format!("the Restate server at {}", self.ingress)
    }

    fn get(&self, name: &str) -> Result<Option<Stored>, StorageError> {
        storage::valid_name(name)?;
        self.block_on(self.read(name))
    }

    fn put(&self, put: Put<'_>) -> Result<(), StorageError> {
        let name = put.sequence.name.value.as_str();
        storage::valid_name(name)?;
        quota::check(self, &put)?;
        let envelope = String::from_utf8(storage::encode(put.sequence, put.owner)?)
            .map_err(|error| StorageError::corrupt(name, error))?;
        let body = serde_json::to_vec(&PutRequest {
            caller: put.owner.map(str::to_owned),
            envelope,
            replace: put.replace,
            admin: put.admin,
        })
        .map_err(|error| self.unreachable(error))?;
        let answer = self.block_on(self.post("SeqStore", name, "put", body))?;
        let answer: PutAnswer = serde_json::from_slice(&answer)
            .map_err(|error| self.unreachable(format_args!("SeqStore/put: {error}")))?;
        match answer {
            PutAnswer::Stored => Ok(()),
            PutAnswer::Exists => Err(StorageError::Exists {
                name: name.to_owned(),
            }),
            PutAnswer::Confusable { stored } => Err(StorageError::Confusable {
                name: name.to_owned(),
                stored,
            }),
            PutAnswer::NotOwner { owner } | PutAnswer::NotTheCaller { owner } => {
                Err(StorageError::NotOwner {
                    name: name.to_owned(),
                    owner,
                    caller: put.owner.unwrap_or_default().to_owned(),
                })
            }
        }
    }

    fn delete(&self, name: &str, caller: Option<&str>, admin: bool) -> Result<(), StorageError> {
        storage::valid_name(name)?;
        let request = DeleteRequest {
            caller: caller.map(str::to_owned),
            admin,
        };
        let body = serde_json::to_vec(&request).map_err(|error| self.unreachable(error))?;
        let answer = self.block_on(self.post("SeqStore", name, "delete", body))?;
        match serde_json::from_slice::<DeleteAnswer>(&answer) {
            Ok(DeleteAnswer::Deleted) => Ok(()),
            Ok(DeleteAnswer::Absent) => Err(StorageError::NotFound {
                name: name.to_owned(),
            }),
            Ok(DeleteAnswer::NotOwner { owner }) => Err(StorageError::NotOwner {
                name: name.to_owned(),
                owner,
                caller: caller.unwrap_or_default().to_owned(),
            }),
            Err(error) => Err(self.unreachable(format_args!("SeqStore/delete: {error}"))),
        }
    }

    fn load(
        &self,
        each: &mut dyn FnMut(&str, Result<&Stored, StorageError>),
    ) -> Result<(), StorageError> {
        let (names, reads) = self.block_on(async {
            let names = self.names().await?;
            // One request per sequence, all in flight at once.
            let reads = futures::future::join_all(names.iter().map(|name| self.read(name))).await;
            Ok((names, reads))
        })?;
        for (name, read) in names.iter().zip(reads) {
            // A name the index holds without a sequence (deleted meanwhile) is not listed.
            match read {
                Ok(Some(stored)) => each(name, Ok(&stored)),
                Ok(None) => {}
                Err(error) => each(name, Err(error)),
            }
        }
        Ok(())
    }

    /// Nothing: a run in this process does not read the engine's storage (a durable run carries
    /// the sequences its `#name` calls reach, and `seq_run` submits it).
    fn source(&self) -> Arc<dyn SequenceSource> {
        Arc::new(NoSequences)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    /// An envelope of `owner`'s, as far as the owner check reads one.
    fn envelope(owner: Option<&str>) -> String {
        serde_json::json!({"format": 1, "owner": owner, "sequence": {}}).to_string()
    }

    #[test]
    fn only_the_owner_or_an_administrator_changes_an_owned_sequence() {
        let alices = envelope(Some("alice"));
        assert_eq!(refused("s", &alices, Some("alice"), false), None);
        assert_eq!(refused("s", &alices, Some("bob"), true), None);
        let not_hers = Some(Some("alice".to_owned()));
        assert_eq!(refused("s", &alices, Some("bob"), false), not_hers);
        // The command line's user owns nothing, administrator or not.
        assert_eq!(refused("s", &alices, None, false), not_hers);
        assert_eq!(refused("s", &alices, None, true), not_hers);
        let ownerless = envelope(None);
        assert_eq!(refused("s", &ownerless, None, false), None);
        assert_eq!(refused("s", &ownerless, Some("bob"), false), Some(None));
    }
}
