//! A downstream server as a child process, speaking MCP on its stdin and stdout: rmcp's
//! `TokioChildProcess`, but with the server's stdout read through [`crate::bound`], so that an
//! answer past the line bound fails its call at once instead of vanishing.
//!
//! Closing follows the stdio shutdown of the MCP specification, as rmcp's does: stdin closed,
//! then SIGTERM, then SIGKILL, each after [`GRACE`]; a child still running when this is dropped
//! is killed.

use crate::bound::{self, MAX_MESSAGE_BYTES};
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use std::future::Future;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::DuplexStream;
use tokio::process::{Child, ChildStderr, ChildStdin, Command};

/// How long the child has after its stdin is closed, and again after SIGTERM.
pub const GRACE: Duration = Duration::from_secs(3);

pub struct BoundedChild {
    child: Option<Child>,
    transport: AsyncRwTransport<RoleClient, DuplexStream, ChildStdin>,
}

impl BoundedChild {
    /// Starts `command` with its stdin and stdout piped to the transport and its stderr piped
    /// to the caller.
    pub fn spawn(mut command: Command) -> std::io::Result<(BoundedChild, Option<ChildStderr>)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other(
                "the child's stdin or stdout is missing",
            ));
        };
        let stderr = child.stderr.take();
        let read = bound::bounded(stdout, MAX_MESSAGE_BYTES, bound::response_stand_in);
        let transport = AsyncRwTransport::new_client(read, stdin);
        Ok((
            BoundedChild {
                child: Some(child),
                transport,
            },
            stderr,
        ))
    }

    /// The child's process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.child.as_ref()?.id()
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        let Some(child) = self.child.as_mut() else {
            return Ok(());
        };
        self.transport.close().await?;
        if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
            self.child = None;
            return Ok(());
        }
        if let Some(pid) = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            if tokio::time::timeout(GRACE, child.wait()).await.is_ok() {
                self.child = None;
                return Ok(());
            }
        }
        let killed = child.kill().await;
        self.child = None;
        killed
    }
}

impl Transport<RoleClient> for BoundedChild {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.transport.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.shutdown()
    }
}
