//! A call's SSE answer, watched for its event ids so that its stream can be resumed.

use super::reply::Body;
use crate::resume::{Reader, Streams};
use bytes::Bytes;
use futures::Stream;
use http_body_util::BodyStream;
use seq_exec::engine::CancellationToken;
use serde_json::Value;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The body of a call's SSE answer, watched: its first event names the stream, whose reader it
/// is; dropped before its end (the connection went), the stream may be abandoned
/// ([`crate::resume`]).
pub(super) struct Watched {
    pub(super) body: BodyStream<Body>,
    pub(super) streams: Streams,
    pub(super) abandon: CancellationToken,
    pub(super) session: Option<String>,
    /// Whose answer it is, and the id of the request it answers.
    pub(super) caller: String,
    pub(super) answers: Option<Value>,
    pub(super) reader: Option<Reader>,
    pub(super) ended: bool,
}

impl Stream for Watched {
    type Item = Result<hyper::body::Frame<Bytes>, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let polled = Pin::new(&mut self.body).poll_next(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                let data = frame
                    .data_ref()
                    .map(|data| data.as_ref())
                    .unwrap_or_default();
                let mut ids = event_ids(data).peekable();
                if self.reader.is_none()
                    && let Some(event) = ids.peek()
                {
                    let (abandon, session) = (self.abandon.clone(), self.session.clone());
                    let answers = self.answers.take();
                    self.reader =
                        self.streams
                            .watch(event, abandon, session, &self.caller, answers);
                }
                for event in ids {
                    self.streams.sent(event);
                }
            }
            Poll::Ready(None) => {
                self.ended = true;
                if let Some(reader) = &self.reader {
                    reader.delivered();
                }
            }
            Poll::Ready(Some(Err(never))) => match *never {},
            Poll::Pending => {}
        }
        polled
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        // Gone before its first event: no client can come back for it.
        if self.reader.is_none() && !self.ended {
            self.abandon.cancel();
        }
    }
}

/// The `id:`s of the events in `data` (SSE text), in order; only those lines are decoded.
fn event_ids(data: &[u8]) -> impl Iterator<Item = &str> {
    data.split(|&byte| byte == b'\n')
        .filter_map(|line| line.strip_prefix(b"id:"))
        .filter_map(|id| std::str::from_utf8(id).ok())
        .map(str::trim)
        .filter(|id| !id.is_empty())
}
