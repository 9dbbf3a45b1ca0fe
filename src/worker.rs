//! `seqc worker`: serve durable runs to a Restate server, on the embedded host and the `--mcp`
//! servers' tools.

use crate::mcp::{McpArgs, Notices, PolicyArgs};
use crate::status::{Status, trouble};
use clap::Args;
use seq_exec::ToolHost;
use seq_exec::builtin::BuiltinHost;
use seq_mcp::Combined;
use std::net::SocketAddr;
use std::path::PathBuf;
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
    /// The directory the file tools are confined to and commands run in [default: the current
    /// directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
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
    // As for `seqc run`: orphans of the items' commands come back to the worker.
    let _ = seq_exec::builtin::become_subreaper();
    let root = match crate::host::root(args.root.as_deref()) {
        Ok(root) => root,
        Err(message) => return trouble(message),
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return trouble(format_args!("cannot start the runtime: {error}")),
    };
    // The worker's own bound: anyone who reaches the Restate ingress can submit a run.
    let policy = match crate::mcp::serve_policy(&args.rights) {
        Ok(policy) => Arc::new(policy),
        Err(message) => return trouble(message),
    };
    let mcp = match runtime.block_on(crate::mcp::connect(
        &args.mcp,
        Arc::clone(&policy),
        Notices::AsTheyCome,
    )) {
        Ok(mcp) => mcp,
        Err(status) => return status,
    };
    if let Err(message) = crate::mcp::known_patterns(&policy, &mcp) {
        runtime.block_on(mcp.shutdown());
        return trouble(message);
    }
    let host: Arc<dyn ToolHost> = Arc::new(Combined::new(vec![
        Arc::new(BuiltinHost::new(&root).with_policy(policy)),
        Arc::clone(&mcp) as Arc<dyn ToolHost>,
    ]));
    let endpoint = args
        .advertise
        .clone()
        .unwrap_or_else(|| format!("http://{}", args.listen));
    let status = runtime.block_on(async {
        let listener = match seq_restate::bind(args.listen) {
            Ok(listener) => listener,
            Err(error) => {
                return trouble(format_args!("cannot listen at {}: {error}", args.listen));
            }
        };
        let mut runs = seq_restate::SeqRun::new(host);
        if let Some(traces) = traces {
            runs = runs.with_recorder(traces);
        }
        let serving = tokio::spawn(seq_restate::serve(listener, runs));
        if let Some(admin) = &args.register {
            if let Err(error) = seq_restate::register(admin, &endpoint).await {
                serving.abort();
                return trouble(error);
            }
            eprintln!("seqc: worker at {endpoint} registered with {admin}");
        }
        match serving.await {
            Ok(()) => Status::Clean,
            Err(error) => trouble(format_args!("the worker stopped: {error}")),
        }
    });
    runtime.block_on(mcp.shutdown());
    seq_exec::builtin::kill_all_now();
    status
}
