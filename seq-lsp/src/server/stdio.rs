//! `seqc lsp`'s transport: stdin read by [`framing`](super::framing), stdout written by lsp-server's
//! [`Message::write`], and lsp-server's [`Connection`] between them and the server, as with its
//! own stdio transport — whose reader ends the session at the first frame that is not a
//! JSON-RPC message. This one answers such a frame and reads on:
//!
//! - a bad header block or a body that is not JSON: no id can be known, so the problem is
//!   logged (`window/logMessage`, and stderr), and the next frame read;
//! - JSON that is not a message: a request's id, when one can be read, gets `-32600` (invalid
//!   request); otherwise the problem is logged.
//!
//! Parameters that do not fit a method (`-32602`) and unknown methods (`-32601`) are the
//! server's to answer: the transport only knows the shape of a message.

use super::framing::{Frame, Framer, clip, find_header};
use crossbeam_channel::{Receiver, Sender};
use lsp_server::{Connection, ErrorCode, Message, Notification, RequestId, Response};
use lsp_types::notification::{Exit, LogMessage, Notification as _};
use lsp_types::{LogMessageParams, MessageType};
use std::io::{self, Read, Write};
use std::thread::JoinHandle;

/// The reading and writing threads; join them once the server has ended.
#[derive(Debug)]
pub struct IoThreads {
    reader: JoinHandle<io::Result<()>>,
    writer: JoinHandle<io::Result<()>>,
}

impl IoThreads {
    /// Waits for both threads. The reader ends after `exit` or at the end of stdin; the writer
    /// once every sender of the connection is gone.
    pub fn join(self) -> io::Result<()> {
        let reader = self.reader.join();
        let writer = self.writer.join();
        for ended in [reader, writer] {
            match ended {
                Ok(result) => result?,
                Err(_) => return Err(io::Error::other("a transport thread panicked")),
            }
        }
        Ok(())
    }
}

/// A connection over stdin and stdout.
pub fn connect() -> io::Result<(Connection, IoThreads)> {
    // Unbounded: the server never waits on a client that is slow to read, so it cannot
    // deadlock with a client that waits for the server to read.
    let (to_client, outgoing) = crossbeam_channel::unbounded::<Message>();
    // Bounded: a client that writes faster than the server takes messages waits for it.
    let (incoming, from_client) = crossbeam_channel::bounded::<Message>(16);
    let replies = to_client.clone();
    let reader = std::thread::Builder::new()
        .name("seqc-lsp-reader".to_owned())
        .spawn(move || read(io::stdin().lock(), &incoming, &replies))?;
    let writer = std::thread::Builder::new()
        .name("seqc-lsp-writer".to_owned())
        .spawn(move || write(&outgoing, io::stdout().lock()))?;
    let connection = Connection {
        sender: to_client,
        receiver: from_client,
    };
    Ok((connection, IoThreads { reader, writer }))
}

/// Frames and decodes `input` until `exit`, its end, or the server's end; problems are answered
/// through `replies`.
pub fn read(
    input: impl Read,
    messages: &Sender<Message>,
    replies: &Sender<Message>,
) -> io::Result<()> {
    let mut framer = Framer::new(input);
    while let Some(frame) = framer.next_frame()? {
        let body = match frame {
            Frame::Body(body) => body,
            Frame::Bad(why) => {
                report(
                    replies,
                    None,
                    ErrorCode::ParseError,
                    format!("skipped input: {why}"),
                );
                continue;
            }
        };
        match decode(&body) {
            Ok(message) => {
                let exit = matches!(&message, Message::Notification(n) if n.method == Exit::METHOD);
                if messages.send(message).is_err() || exit {
                    // The server has ended, or will on `exit`: nothing more to read.
                    return Ok(());
                }
            }
            Err(problem) => {
                // A body cut by a Content-Length that was too long may hold the next frame.
                if let Some(at) = find_header(&body).filter(|&at| at > 0) {
                    framer.put_back(body.get(at..).unwrap_or(&[]));
                }
                report(replies, problem.id, problem.code, problem.message);
            }
        }
    }
    Ok(())
}

fn write(messages: &Receiver<Message>, mut output: impl Write) -> io::Result<()> {
    for message in messages {
        message.write(&mut output)?;
    }
    Ok(())
}

/// Why a body is not a message, and the request's id if one could be read.
#[derive(Debug)]
pub struct Problem {
    pub id: Option<RequestId>,
    pub code: ErrorCode,
    pub message: String,
}

/// A body as a JSON-RPC message.
pub fn decode(body: &[u8]) -> Result<Message, Problem> {
    let value: serde_json::Value = serde_json::from_slice(body).map_err(|err| Problem {
        id: None,
        code: ErrorCode::ParseError,
        message: format!(
            "a message that is not JSON ({err}): {:?}",
            clip(&String::from_utf8_lossy(body))
        ),
    })?;
    let id = value.get("id").filter(|id| !id.is_null()).cloned();
    let method = value.get("method").is_some();
    // Answers carry no request to answer; an answer that is malformed is only logged.
    let answer = !method && (value.get("result").is_some() || value.get("error").is_some());
    let readable_id = id
        .clone()
        .and_then(|id| serde_json::from_value::<RequestId>(id).ok())
        .filter(|_| !answer);
    let invalid = |why: String| Problem {
        id: readable_id.clone(),
        code: ErrorCode::InvalidRequest,
        message: why,
    };
    match serde_json::from_value::<Message>(value) {
        // lsp-server reads a request whose id is not an i32 or a string as a notification.
        Ok(Message::Notification(n)) if id.is_some() => Err(invalid(format!(
            "a request `{}` whose id is neither a string nor a 32-bit integer",
            clip(&n.method)
        ))),
        Ok(message) => Ok(message),
        Err(err) => Err(invalid(format!("not a JSON-RPC message: {err}"))),
    }
}

/// Answers a request whose id is known with an error; logs anything else.
fn report(replies: &Sender<Message>, id: Option<RequestId>, code: ErrorCode, message: String) {
    // Ignored when the writer is gone: then nobody is left to tell.
    let _ = writeln!(io::stderr().lock(), "seqc lsp: {message}");
    let reply: Message = match id {
        Some(id) => Response::new_err(id, code as i32, message).into(),
        None => Notification::new(
            LogMessage::METHOD.to_owned(),
            LogMessageParams {
                typ: MessageType::ERROR,
                message: format!("seqc: {message}"),
            },
        )
        .into(),
    };
    let _ = replies.send(reply);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> Option<(Option<RequestId>, i32)> {
        decode(body.as_bytes()).err().map(|p| (p.id, p.code as i32))
    }

    #[test]
    fn what_is_not_a_message_is_told_apart() {
        let parse = ErrorCode::ParseError as i32;
        let invalid = ErrorCode::InvalidRequest as i32;
        assert_eq!(code("{\"id\": 1,"), Some((None, parse)));
        assert_eq!(code("\u{feff}"), Some((None, parse)));
        assert_eq!(code("[1, 2]"), Some((None, invalid)));
        assert_eq!(
            code("{\"id\": 7, \"method\": 3}"),
            Some((Some(7.into()), invalid))
        );
        assert_eq!(
            code("{\"id\": \"x\"}"),
            Some((Some("x".to_owned().into()), invalid))
        );
        assert_eq!(
            code("{\"id\": 4294967296, \"method\": \"m\"}"),
            Some((None, invalid))
        );
        assert_eq!(
            code("{\"id\": 2, \"result\": 1, \"bogus\": {\"x\"}}"),
            Some((None, parse))
        );
        assert_eq!(code("{\"id\": [2], \"error\": 1}"), Some((None, invalid)));
        assert_eq!(code("{\"jsonrpc\": \"2.0\", \"method\": \"m\"}"), None);
        assert_eq!(
            code("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"m\"}"),
            None
        );
    }
}
