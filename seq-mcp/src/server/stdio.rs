//! The ends of `seqc mcp` over stdio besides the protocol: stdin, whose end closes the session,
//! and stderr, where the lines sent to stdout go.

use seq_exec::builtin::OutputSink;
use seq_exec::engine::CancellationToken;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};

/// stdin of `seqc mcp`, which cancels `closed` once it ends or fails: the client closed the
/// session.
pub(super) struct UntilClosed<R> {
    pub(super) inner: R,
    pub(super) closed: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for UntilClosed<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if wanted && buf.filled().len() == before => self.closed.cancel(),
            Poll::Ready(Err(_)) => self.closed.cancel(),
            Poll::Ready(Ok(())) | Poll::Pending => {}
        }
        polled
    }
}

/// Where `output_send__stdout` goes under `seqc mcp`: stdout carries the protocol, so the lines
/// go to stderr, where MCP clients keep a server's log.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stderr;

impl OutputSink for Stderr {
    fn send(&self, text: &str) -> std::io::Result<()> {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        writeln!(
            err,
            "{}",
            seq_syntax::printable::printable(text, seq_syntax::printable::Lines::Kept)
        )?;
        err.flush()
    }
}
