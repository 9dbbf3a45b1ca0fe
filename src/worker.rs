//! `seqc worker`: serve durable runs to a Restate server, on the embedded host and the `--mcp`
//! servers' tools.

use crate::mcp::{McpArgs, Notices, PolicyArgs};
use crate::signals::{OnSignal, Runtime};
use crate::status::{Status, trouble};
use clap::Args;
use seq_exec::builtin::BuiltinHost;
use seq_exec::policy::Policy;
use seq_exec::{Authorizer, ToolHost};
use seq_mcp::{Combined, McpHost};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Where to serve the worker's endpoint (h2c), such as 127.0.0.1:9080. Several workers may
    /// listen at one address (`SO_REUSEPORT`): the server sees them as one deployment, and a run
    /// whose worker dies goes on at another.
    #[arg(long, value_name = "ADDR")]
    pub listen: SocketAddr,
    /// Register the worker with the Restate admin API at this URL (such as
    /// http://127.0.0.1:9070) once it listens.
    #[arg(long, value_name = "ADMIN_URL")]
    pub register: Option<String>,
    /// The URL the Restate server reaches the worker at [default: http:// and --listen].
    #[arg(long, value_name = "URL")]
    pub advertise: Option<String>,
    /// The directory the file tools are confined to and commands run in (required: whoever
    /// reaches the Restate ingress may submit runs, so the worker never takes the directory it
    /// happens to be started in).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Serve only requests signed by the Restate server whose request identity public key
    /// this is (`publickeyv1_…`, printed by the server for its `request-identity-private-key-pem-file`);
    /// any other request is refused (repeatable: any of the keys given). Without it the worker
    /// serves whoever reaches its address.
    #[arg(long = "identity-key", value_name = "KEY")]
    pub identity_keys: Vec<String>,
    /// The upper bound of what any run may do on this worker, whoever submits it: the options
    /// of `seqc mcp`, with the same safe default (no `cmd_run`, no `files_write` unless
    /// enabled). Each run is held besides to the policy its submitting server sent with it.
    #[command(flatten)]
    pub rights: PolicyArgs,
    #[command(flatten)]
    pub mcp: McpArgs,
}

/// `traces`: where the runs' spans go, when the environment asks for traces.
pub fn run(args: &WorkerArgs, traces: Option<Arc<seq_trace::Traces>>) -> Status {
    let Some(given) = args.root.as_deref() else {
        return trouble(
            "seqc worker needs --root DIR: the directory the file tools and commands of the runs \
             it serves are confined to",
        );
    };
    let root = match crate::host::root(Some(given)) {
        Ok(root) => root,
        Err(message) => return trouble(message),
    };
    // The worker's own bound: anyone who reaches the Restate ingress can submit a run.
    let policy = match crate::mcp::serve_policy(&args.rights) {
        Ok((policy, _settings)) => Arc::new(policy),
        Err(message) => return trouble(message),
    };
    let runtime = match Runtime::start(OnSignal::Abandon) {
        Ok(runtime) => runtime,
        Err(status) => return status,
    };
    let stop = runtime.stop();
    let status = runtime.block_on(async {
        tokio::select! {
            status = serve(args, &root, policy, traces) => status,
            // The attempts in flight are dropped with the runtime, in `finish`.
            () = stop.cancelled() => Status::Clean,
        }
    });
    runtime.finish(status)
}

/// Connects the `--mcp` servers, listens, registers, and serves until the listener fails.
async fn serve(
    args: &WorkerArgs,
    root: &Path,
    policy: Arc<Policy>,
    traces: Option<Arc<seq_trace::Traces>>,
) -> Status {
    let mcp = match crate::mcp::connect(&args.mcp, Notices::AsTheyCome).await {
        Ok(mcp) => mcp,
        Err(status) => return status,
    };
    let status = serve_with(args, root, policy, &mcp, traces).await;
    mcp.shutdown().await;
    status
}

async fn serve_with(
    args: &WorkerArgs,
    root: &Path,
    policy: Arc<Policy>,
    mcp: &Arc<McpHost>,
    traces: Option<Arc<seq_trace::Traces>>,
) -> Status {
    if let Err(message) = crate::mcp::known_patterns(&policy, mcp) {
        return trouble(message);
    }
    let host: Arc<dyn ToolHost> = Arc::new(Combined::new(vec![
        Arc::new(BuiltinHost::new(root).with_jq(crate::jq::runner())),
        Arc::clone(mcp) as Arc<dyn ToolHost>,
    ]));
    // The worker's own policy bounds every run, rights (`seq_call`, `seq_run`) as tools.
    let mut runs = seq_restate::SeqRun::new(host, Authorizer::new(policy));
    if let Some(traces) = traces {
        runs = runs.with_recorder(traces);
    }
    let endpoint = match seq_restate::endpoint(runs, &args.identity_keys) {
        Ok(endpoint) => endpoint,
        Err(error) => return trouble(error),
    };
    let advertised = args
        .advertise
        .clone()
        .unwrap_or_else(|| format!("http://{}", args.listen));
    let listener = match seq_restate::bind(args.listen) {
        Ok(listener) => listener,
        Err(error) => {
            return trouble(format_args!("cannot listen at {}: {error}", args.listen));
        }
    };
    let serving = tokio::spawn(seq_restate::serve(listener, endpoint));
    if let Some(admin) = &args.register {
        if let Err(error) = seq_restate::register(admin, &advertised).await {
            serving.abort();
            return trouble(error);
        }
        eprintln!("seqc: worker at {advertised} registered with {admin}");
    }
    match serving.await {
        Ok(()) => Status::Clean,
        Err(error) => trouble(format_args!("the worker stopped: {error}")),
    }
}
