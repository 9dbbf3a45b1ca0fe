//! The worker's endpoint (h2c, as Restate's server calls it) and its registration.

use crate::store::{SeqIndex, SeqStore};
use crate::workflow::SeqRun;
use restate_sdk::prelude::*;
use restate_sdk::service::IntoServiceDefinition;
use std::fmt;
use std::net::SocketAddr;
use tokio::net::{TcpListener, TcpSocket};

/// Listens at `addr` with `SO_REUSEPORT`, so that several workers on one machine can share
/// one address, which the server knows as one deployment: a connection goes to one of them,
/// and when one dies the next connection (the server's retry) reaches another.
pub fn bind(addr: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseport(true)?;
    socket.bind(addr)?;
    socket.listen(1024)
}

/// The worker's endpoint: the `SeqRun` workflow and its `SeqItem` service, and the storage's
/// `SeqStore` and `SeqIndex` objects. The first two have an inactivity timeout of their own
/// ([`SeqRun::inactivity_timeout`]), whatever the server's default. With `identity_keys`
/// (`publickeyv1_…`, the public halves of the Restate servers' request signing keys), only
/// requests signed by one of those servers are served; any other is refused (401).
pub fn endpoint(workflow: SeqRun, identity_keys: &[String]) -> Result<Endpoint, WorkerError> {
    let options = ServiceOptions::new().inactivity_timeout(workflow.inactivity_timeout());
    let items = workflow.items().into_service_definition();
    let mut builder = Endpoint::builder()
        .bind(workflow.into_service_definition().options(options.clone()))
        .bind(items.options(options))
        .bind(SeqStore)
        .bind(SeqIndex);
    for key in identity_keys {
        builder = builder.identity_key(key).map_err(|error| {
            WorkerError(format!("the identity key `{key}` is not one: {error}"))
        })?;
    }
    Ok(builder.build())
}

/// Serves `endpoint` on `listener` until the future is dropped (the SDK's own serving would
/// stop on SIGINT, and only once its connections closed).
pub async fn serve(listener: TcpListener, endpoint: Endpoint) {
    HttpServer::new(endpoint)
        .serve_with_cancel(listener, std::future::pending::<()>())
        .await;
}

/// Why registering a worker failed.
#[derive(Debug)]
pub struct WorkerError(pub String);

impl fmt::Display for WorkerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WorkerError {}

/// Registers the worker at `endpoint` (`http://HOST:PORT`, as the server reaches it) with the
/// admin API at `admin`. Registering again the same endpoint is accepted (`force`).
pub async fn register(admin: &str, endpoint: &str) -> Result<(), WorkerError> {
    let body = serde_json::json!({ "uri": endpoint, "force": true }).to_string();
    let url = format!("{}/deployments", admin.trim_end_matches('/'));
    let response = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|error| WorkerError(format!("cannot reach the admin API at {admin}: {error}")))?;
    let status = response.status();
    if status.is_success() {
        return Ok(());
    }
    let text = response.text().await.unwrap_or_default();
    Err(WorkerError(format!(
        "the admin API at {admin} refused {endpoint}: {status} {text}"
    )))
}
