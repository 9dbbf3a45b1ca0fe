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

/// How many times Restate makes an invocation of `SeqRun` or `SeqItem` whose attempts did not
/// end (their worker died, or none could be reached) before it gives up on it: a step that
/// kills its worker is made this many times, never more.
pub const MAX_ATTEMPTS: u64 = 3;

/// The pause before the second attempt of an item (`SeqItem`); the third waits four times as
/// long. Long enough for a run whose worker died with its item to be waiting again, suspended,
/// when the item's next attempt starts (a run is suspended a second after it starts waiting,
/// [`SeqRun::RUN_INACTIVITY`]), so that the deaths an item causes are not counted as the run's.
const ITEM_RETRY: std::time::Duration = std::time::Duration::from_secs(2);

/// The pause before a run's (`SeqRun`) second attempt; the third waits four times as long.
const RUN_RETRY: std::time::Duration = std::time::Duration::from_millis(500);

/// Options bounding the attempts of an invocation to [`MAX_ATTEMPTS`], the first retry after
/// `first`: past them Restate kills it, and the invocation waiting for it gets the failure.
fn bounded(options: ServiceOptions, first: std::time::Duration) -> ServiceOptions {
    options
        .retry_policy_initial_interval(first)
        .retry_policy_exponentiation_factor(4.0)
        .retry_policy_max_attempts(MAX_ATTEMPTS)
        .retry_policy_kill_on_max_attempts()
}

/// The worker's endpoint: the `SeqRun` workflow and its `SeqItem` service, and the storage's
/// `SeqStore` and `SeqIndex` objects. The first two have inactivity timeouts of their own
/// ([`SeqRun::RUN_INACTIVITY`], [`SeqRun::inactivity_timeout`]), whatever the server's default,
/// and their attempts are bounded ([`MAX_ATTEMPTS`]). With `identity_keys` (`publickeyv1_…`,
/// the public halves of the Restate servers' request signing keys), only requests signed by one
/// of those servers are served; any other is refused (401).
pub fn endpoint(workflow: SeqRun, identity_keys: &[String]) -> Result<Endpoint, WorkerError> {
    let runs = bounded(
        ServiceOptions::new().inactivity_timeout(SeqRun::RUN_INACTIVITY),
        RUN_RETRY,
    );
    let items = bounded(
        ServiceOptions::new().inactivity_timeout(workflow.inactivity_timeout()),
        ITEM_RETRY,
    );
    let item_service = workflow.items().into_service_definition();
    let mut builder = Endpoint::builder()
        .bind(workflow.into_service_definition().options(runs))
        .bind(item_service.options(items))
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
