//! Durable runs of tool sequences on Restate.
//!
//! The interpreter stays in `seq-exec`; this crate only decides how its tool calls happen:
//! - `input`: what a run is given ([`RunInput`]): the checked sequence and the sequences its
//!   `#name` calls may reach, so that a replay never reads a store;
//! - `journal`: [`Journaled`], the engine's `Driver` on a Restate workflow context: every
//!   attempt at a tool call is a child invocation of `SeqItem` (an output send, a journaled
//!   step named `group/index`); a `#name` call is a child `SeqRun`;
//! - `workflow`: the `SeqRun` workflow, keyed by run id, and the `SeqItem` service;
//! - `worker`: the h2c endpoint serving it, with Restate's retries of its invocations bounded
//!   ([`MAX_ATTEMPTS`]), and its registration with the admin API;
//! - `progress`: what a run has finished, recorded in its workflow state as it goes and read
//!   by the workflow's shared handler `finished`;
//! - `submit`: the client side, which submits a run and waits for its report, telling what
//!   finished meanwhile;
//! - `admin`: runs seen from outside, listed and cancelled (their whole tree, killed past a
//!   grace) through the admin API;
//! - `store`: storage in the engine, the `SeqStore` and `SeqIndex` objects and
//!   [`RestateStorage`], their client; `remote`: [`Submitter`], `seq_run` as a durable run.
//!
//! Nothing outside this crate depends on the Restate SDK: another durable engine would be
//! another crate with its own driver over the same interpreter.

mod admin;
mod halting;
mod input;
mod journal;
mod progress;
mod remote;
mod store;
mod submit;
mod worker;
mod workflow;

pub use admin::{AdminError, CANCEL_GRACE, RunRow, Stopped, cancel, runs};
pub use input::{AttemptInput, CalledFrom, RunInput, WorkflowInput};
pub use journal::{ENTRY_LIMIT, Journaled};
pub use progress::Finished;
pub use remote::{Submitter, fresh_id};
pub use store::{
    DeleteAnswer, DeleteRequest, INDEX_KEY, PutAnswer, PutRequest, RestateStorage, SeqIndex,
    SeqStore,
};
pub use submit::{SubmitError, attach, submit, submit_observed};
pub use worker::{MAX_ATTEMPTS, WorkerError, bind, endpoint, register, serve};
pub use workflow::{SeqItem, SeqRun};
