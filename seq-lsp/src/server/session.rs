//! The session's ends, as the protocol orders them: before `initialize` and after `shutdown`.
//! (lsp-server's helpers for both end the session on any message out of order; a client that
//! sends one deserves an error answer, not a dead server.)

use super::ServerError;
use lsp_server::{Connection, ErrorCode, Message, RequestId, Response};
use lsp_types::InitializeParams;
use lsp_types::notification::{Exit, Notification as _};
use lsp_types::request::{Initialize, Request as _};

/// How a session ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `shutdown`, then `exit` (or the client hanging up after `shutdown`): exit status 0.
    Orderly,
    /// `exit` without `shutdown`, or the client hanging up before it: the protocol asks for
    /// exit status 1.
    Abrupt,
}

/// Waits for a well-formed `initialize`. Other requests get `-32002` (server not initialized),
/// an `initialize` with parameters that do not parse gets `-32602` and the wait goes on,
/// notifications are dropped; `exit` or a hang-up ends the wait with `None`.
pub fn initialize(
    connection: &Connection,
) -> Result<Option<(RequestId, InitializeParams)>, ServerError> {
    for message in &connection.receiver {
        match message {
            Message::Request(request) if request.method == Initialize::METHOD => {
                match serde_json::from_value::<InitializeParams>(request.params) {
                    Ok(params) => return Ok(Some((request.id, params))),
                    Err(err) => reply(
                        connection,
                        request.id,
                        ErrorCode::InvalidParams,
                        format!("invalid initialize parameters: {err}"),
                    )?,
                }
            }
            Message::Request(request) => reply(
                connection,
                request.id,
                ErrorCode::ServerNotInitialized,
                format!("`{}` before `initialize`", request.method),
            )?,
            Message::Notification(n) if n.method == Exit::METHOD => return Ok(None),
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
    Ok(None)
}

/// After `shutdown` has been answered: waits for `exit`. Requests get `-32600` (invalid
/// request), as the protocol says; notifications are dropped.
pub fn after_shutdown(connection: &Connection) -> Result<Ending, ServerError> {
    for message in &connection.receiver {
        match message {
            Message::Notification(n) if n.method == Exit::METHOD => return Ok(Ending::Orderly),
            Message::Request(request) => reply(
                connection,
                request.id,
                ErrorCode::InvalidRequest,
                format!("`{}` after `shutdown`", request.method),
            )?,
            Message::Notification(_) | Message::Response(_) => {}
        }
    }
    Ok(Ending::Orderly)
}

pub fn reply(
    connection: &Connection,
    id: RequestId,
    code: ErrorCode,
    message: String,
) -> Result<(), ServerError> {
    connection
        .sender
        .send(Response::new_err(id, code as i32, message).into())?;
    Ok(())
}
