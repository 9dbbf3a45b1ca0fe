//! MCP on both sides of seqc, with `rmcp`, the official Rust SDK.
//!
//! - Client: [`McpHost`] offers the tools of MCP servers — child processes speaking stdio, or
//!   URLs speaking streamable HTTP ([`spec`]) — as a [`seq_exec::ToolHost`]; [`Combined`] puts it
//!   beside the embedded host. Their live `tools/list` is also a catalog for the checker
//!   ([`McpHost::definitions`]).
//! - Server: [`SeqServer`] serves the six `seq_*` tools to any MCP client over stdio.
//! - [`http`]: the same server over streamable HTTP (`--http`), with bearer tokens
//!   ([`token`]) naming the caller.
//! - [`authorize`]: the OAuth 2.1 client that signs in to remote servers that ask for it.
//! - [`admission`]: the connection and call slots of `--http`, bounded per caller and in all.
//! - [`resume`]: the SSE streams kept for clients that come back with `Last-Event-ID`.
//! - [`progress`]: progress notifications as a run's items and groups finish, and a heartbeat.
//! - [`answer`]: a tool's outcome as an MCP answer, and the output schemas that say so.
//! - [`bound`]: messages past the line bound answered with an error, not dropped.
//! - [`framing`]: every request answered: parse errors, invalid requests and invalid params.
//! - [`convert`]: how definitions, results and failures map between MCP and seqc.

pub mod admission;
pub mod answer;
pub mod authorize;
pub mod bound;
mod child;
mod connection;
pub mod convert;
mod forward;
pub mod framing;
pub mod host;
pub mod http;
pub mod log;
pub mod notice;
pub mod oauth;
pub mod policy_file;
pub mod progress;
pub mod resume;
pub mod server;
pub mod spec;
pub mod teach;
pub mod token;

pub use host::{Combined, McpHost, Options, ServerStatus};
pub use notice::{ConnectError, Notice};
pub use server::SeqServer;
pub use spec::{ServerSpec, SpecError, Transport};
