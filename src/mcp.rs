//! MCP on the command line: `--mcp` / `--mcp-config` for `run` and `check` (servers whose tools
//! are added to the host and the catalog), and `seqc mcp` (the seq tools served over stdio).
//! The logic is in `seq-mcp`; this reads flags and reports.

use crate::files::reason;
use crate::signals::{OnSignal, Runtime};
use crate::status::{Status, trouble, warn};
use crate::stored::DataDirArg;
use clap::Args;
use seq_catalog::ToolDef;
use seq_exec::Caller;
use seq_exec::engine::CancellationToken;
use seq_exec::policy::{Policy, STORE_ADMIN};
use seq_mcp::http::{Access, HttpOptions};
use seq_mcp::policy_file::{PolicyFile, Settings};
use seq_mcp::server::Stderr;
use seq_mcp::token::Tokens;
use seq_mcp::{McpHost, Notice, Options, SeqServer};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// An MCP server whose tools are added (repeatable): a command line such as
    /// 'npx -y @modelcontextprotocol/server-filesystem /srv', or an http(s):// URL speaking
    /// streamable HTTP. 'NAME=...' names the server and offers its tools as `NAME.tool`; a tool
    /// name offered twice (by two servers, or by a server and the embedded host) is an error
    /// unless prefixes tell them apart.
    #[arg(long = "mcp", value_name = "COMMAND|URL")]
    pub servers: Vec<String>,
    /// A JSON file of MCP servers (repeatable): {"mcpServers": {"NAME": {"command", "args",
    /// "env", "cwd", "prefix"} or {"url", "headers", "prefix"}}}.
    #[arg(long = "mcp-config", value_name = "FILE")]
    pub configs: Vec<PathBuf>,
}

impl McpArgs {
    pub fn any(&self) -> bool {
        !self.servers.is_empty() || !self.configs.is_empty()
    }
}

/// When notices are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notices {
    /// At once, on stderr.
    AsTheyCome,
    /// Only kept (a live view owns stderr); the caller prints them with [`report`].
    Kept,
}

/// Starts the servers of `args` beside the embedded host, on the current runtime. With none,
/// an empty host. Problems are reported on stderr and come back as the status to exit with.
pub async fn connect(args: &McpArgs, notices: Notices) -> Result<Arc<McpHost>, Status> {
    if !args.any() {
        return Ok(Arc::new(McpHost::none()));
    }
    let specs = seq_mcp::spec::collect(&args.servers, &args.configs).map_err(trouble)?;
    let mut options = Options::new().beside_builtin();
    if notices == Notices::AsTheyCome {
        options = options.on_notice(Arc::new(|notice: &Notice| warn(notice)));
    }
    McpHost::connect(specs, options)
        .await
        .map(Arc::new)
        .map_err(trouble)
}

/// The tools the servers of `args` offer now: started, listed and stopped (`seqc check`).
pub fn live_definitions(args: &McpArgs) -> Result<Vec<ToolDef>, Status> {
    if !args.any() {
        return Ok(Vec::new());
    }
    // A signal stops the servers started here and ends the check.
    let runtime = Runtime::start(OnSignal::Exit)?;
    runtime.block_on(async {
        let mcp = connect(args, Notices::AsTheyCome).await?;
        let definitions = mcp.definitions();
        mcp.shutdown().await;
        Ok(definitions)
    })
}

/// Prints the notices kept so far, one warning line each.
pub fn report(mcp: &McpHost) {
    for notice in mcp.notices() {
        warn(notice);
    }
}

/// The embedded tools that `seqc mcp` leaves off unless `--enable` names them: a command line
/// reaches everything the user running seqc can, and a file write can change what others run.
pub const GATED: [&str; 2] = ["cmd_run", "files_write"];

/// What the tools may do, for `seqc mcp` (the client's rights) and `seqc worker` (the upper
/// bound of every run on it): the same options, the same safe default.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Turn on an embedded tool that is off by default: `cmd_run` (a shell command line) or
    /// `files_write` (every file write: `files_write`, `files_delete`, `files_move`) (repeatable). Without it the tool is refused as a denied one is, at every
    /// depth, and not listed as available; `--allow` does not turn it on.
    #[arg(long = "enable", value_name = "TOOL", value_parser = clap::builder::PossibleValuesParser::new(GATED))]
    pub enable: Vec<String>,
    /// Let runs use only the tools matching PATTERN, at every depth: the seq tools it
    /// sees and the tools its sequences reach (repeatable; `*` matches any run of characters).
    #[arg(long = "allow", value_name = "PATTERN")]
    pub allow: Vec<String>,
    /// Refuse the tools matching PATTERN; deny wins over allow (repeatable).
    #[arg(long = "deny", value_name = "PATTERN")]
    pub deny: Vec<String>,
    /// A policy file: {"allow": [...], "deny": [...], "enable": ["cmd_run"], "callers": {"ID":
    /// {"allow": [...], "deny": [...]}}}. `--allow`/`--deny` add to its global layer, `--enable`
    /// to its `enable` list; an `allow` entry spelled exactly `seq_admin` lets a caller replace
    /// and delete sequences that others own.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub data: DataDirArg,
    /// The directory the file tools are confined to, commands run in, and `seq_create`'s `file`
    /// is read from (required; it must not contain the data directory).
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// The calling identity of the MCP client, carried into every tool call at every depth.
    #[arg(long, value_name = "ID", default_value = "mcp")]
    pub caller: String,
    #[command(flatten)]
    pub rights: PolicyArgs,
    #[command(flatten)]
    pub mcp: McpArgs,
    /// Durable mode: keep the sequences in the Restate server whose ingress is at this URL
    /// (such as http://127.0.0.1:8080) instead of the data directory, and run `seq_run` there,
    /// on the `seqc worker`s registered with it. Needs `--restate-admin`.
    #[arg(long, value_name = "INGRESS_URL", requires = "restate_admin")]
    pub restate: Option<String>,
    /// The Restate admin API (such as http://127.0.0.1:9070), where a cancelled `seq_run`
    /// request cancels its durable run.
    #[arg(long = "restate-admin", value_name = "ADMIN_URL", requires = "restate")]
    pub restate_admin: Option<String>,
    #[command(flatten)]
    pub http: HttpArgs,
}

/// `seqc mcp --http`: the service over streamable HTTP.
#[derive(Debug, Args)]
pub struct HttpArgs {
    /// Serve MCP over streamable HTTP at http://ADDR/mcp instead of stdio (such as
    /// 127.0.0.1:8765). Every request then needs `Authorization: Bearer TOKEN`, the token of a
    /// caller in the policy file (`seqc token` makes one); only a loopback address without a
    /// policy file may serve without tokens, everyone then being `--caller`.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,
    /// A `Host` the server answers to besides the loopback names and its own address, such as
    /// the name a reverse proxy forwards (repeatable).
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    pub allow_hosts: Vec<String>,
    /// An `Origin` a browser-based client may send, such as `https://app.example.com:443`
    /// (repeatable); a request whose Origin is another is refused (403).
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allow_origins: Vec<String>,
    /// How long a call whose connection dropped keeps running for its client to come back with
    /// `Last-Event-ID` and get the answer; past it, the call is cancelled. 0 cancels at once.
    #[arg(
        long = "resume-window",
        value_name = "SECONDS",
        default_value_t = seq_mcp::resume::RESUME_WINDOW.as_secs(),
        requires = "http"
    )]
    pub resume_window: u64,
}

/// `seqc token`: a fresh token and its hash.
pub fn token() -> Status {
    match seq_mcp::token::fresh() {
        Ok(token) => {
            println!("{token}");
            println!(
                "\"token_sha256\": \"{}\"",
                seq_mcp::token::sha256_hex(&token)
            );
            Status::Clean
        }
        Err(message) => trouble(message),
    }
}

/// Who may call `--http` at `addr`: the policy file's tokens, or, on a loopback address without a
/// policy file, everyone as `--caller`.
fn http_access(
    args: &ServeArgs,
    settings: &Settings,
    addr: std::net::SocketAddr,
) -> Result<Access, String> {
    let tokens = Tokens::from_settings(settings)?;
    if !tokens.is_empty() {
        return Ok(Access::Tokens(tokens));
    }
    if addr.ip().is_loopback() && args.rights.policy.is_none() {
        return Ok(Access::Open(Caller::new(args.caller.clone())));
    }
    Err(format!(
        "--http {addr} needs callers with tokens: give each caller in the policy file a \
         `token_sha256` (`seqc token` prints one); only a loopback address without a policy \
         file serves without tokens"
    ))
}

/// The policy of `seqc mcp` and `seqc worker`: the `--policy` file, `--allow`/`--deny` added to
/// its global layer, and every gated tool that neither `--enable` nor the file's `enable` names
/// turned off; with the file's settings beside it (tokens, OAuth, quotas), which a worker does
/// not use.
pub fn serve_policy(args: &PolicyArgs) -> Result<(Policy, Settings), String> {
    let PolicyFile {
        policy: file,
        settings,
    } = match &args.policy {
        Some(path) => read_policy(path)?,
        None => PolicyFile::default(),
    };
    if let Some(unknown) = file
        .enable
        .iter()
        .find(|tool| !GATED.contains(&tool.as_str()))
    {
        return Err(format!(
            "the policy file enables `{unknown}`, which is not off by default: `enable` takes {}",
            GATED.map(|tool| format!("`{tool}`")).join(", ")
        ));
    }
    let enabled = |tool: &str| args.enable.iter().chain(&file.enable).any(|e| e == tool);
    // `files_write` is the one switch of every file write.
    let off: Vec<(&str, &str)> = GATED
        .into_iter()
        .filter(|switch| !enabled(switch))
        .flat_map(|switch| {
            let tools: &[&str] = if switch == seq_catalog::FILES_WRITE {
                &seq_catalog::FILE_WRITES
            } else {
                &[]
            };
            std::iter::once(switch)
                .chain(tools.iter().copied().filter(move |tool| *tool != switch))
                .map(move |tool| (tool, switch))
        })
        .collect();
    let mut policy = args
        .allow
        .iter()
        .fold(file, |policy, pattern| policy.allow(pattern));
    policy = args
        .deny
        .iter()
        .fold(policy, |policy, pattern| policy.deny(pattern));
    let policy = off.into_iter().fold(policy, |policy, (tool, switch)| {
        policy.turn_off(
            tool,
            format!("`--enable {switch}` (or `\"enable\": [\"{switch}\"]` in its policy file)"),
        )
    });
    Ok((policy, settings))
}

/// Refuses a policy with a pattern that matches no tool known here (the embedded and
/// seq tools, and those of the `--mcp` servers now): such a pattern guards nothing, and was
/// meant for a tool it misspells.
pub fn known_patterns(policy: &Policy, mcp: &McpHost) -> Result<(), String> {
    // The built-in catalog holds the embedded tools and the seq tools.
    let builtin = seq_catalog::Catalog::builtin();
    let offered = mcp.definitions();
    let known: Vec<&str> = builtin
        .names()
        .chain(offered.iter().map(|def| def.name.as_str()))
        .collect();
    let unmatched = policy.unmatched(&known);
    if unmatched.is_empty() {
        return Ok(());
    }
    let lines: Vec<String> = unmatched
        .iter()
        .map(|(pattern, nearest)| {
            let near: Vec<String> = nearest.iter().map(|n| format!("`{n}`")).collect();
            if nearest.contains(&STORE_ADMIN) {
                format!(
                    "`{pattern}` matches no tool known here, and the store administrator \
                     permission is granted only spelled out; did you mean {}?",
                    near.join(" or ")
                )
            } else if near.is_empty() {
                format!("`{pattern}` matches no tool known here")
            } else {
                format!(
                    "`{pattern}` matches no tool known here; did you mean {}?",
                    near.join(" or ")
                )
            }
        })
        .collect();
    Err(format!(
        "the policy guards nothing with {}: {}",
        if lines.len() == 1 {
            "this pattern"
        } else {
            "these patterns"
        },
        lines.join("; ")
    ))
}

/// The largest policy file read: callers by the thousand, each with its patterns and token.
const MAX_POLICY_BYTES: usize = 1024 * 1024;

/// The policy file, read as a file someone else may control: a regular file only, not through
/// a link, without blocking (a FIFO is refused, never waited on), refused past
/// [`MAX_POLICY_BYTES`] before it is read.
fn read_policy(path: &Path) -> Result<PolicyFile, String> {
    use seq_check::regular_file::{self, Links, ReadError};
    let shown = path.display();
    let bytes = regular_file::read(path, MAX_POLICY_BYTES, Links::Refuse).map_err(|error| {
        let why = match error {
            ReadError::Io(error) => reason(&error),
            ReadError::TooLarge { size, .. } => format!(
                "it is {size} bytes, more than the {} MiB a policy file may have",
                MAX_POLICY_BYTES >> 20
            ),
            ReadError::NotRegular(_) => error.to_string(),
        };
        format!("cannot read the policy file {shown}: {why}")
    })?;
    std::str::from_utf8(&bytes)
        .map_err(|error| error.to_string())
        .and_then(|text| PolicyFile::parse(text).map_err(|error| error.to_string()))
        .map_err(|error| format!("the policy file {shown} is not a policy: {error}"))
}

/// The root of `seqc mcp`: given, a directory, and apart from the data directory
/// ([`crate::host::separate`]).
fn serve_root(given: Option<&Path>, data: Option<&Path>) -> Result<PathBuf, String> {
    let Some(given) = given else {
        return Err(
            "seqc mcp needs --root DIR: the directory the client's file tools and commands are \
             confined to"
                .to_owned(),
        );
    };
    let root = crate::host::root(Some(given))?;
    let Some(data) = data else {
        return Ok(root);
    };
    crate::host::separate(&root, data)?;
    Ok(root)
}

/// After a signal, how long the calls being answered get to wind down: a durable run is
/// cancelled through the admin API, which may not know it yet.
const WIND_DOWN: std::time::Duration = std::time::Duration::from_secs(15);

/// `seqc mcp`: serves until the client closes stdin.
/// `traces`: where the runs' spans go, when the environment asks for traces.
pub fn serve(args: &ServeArgs, traces: Option<Arc<seq_trace::Traces>>) -> Status {
    // In durable mode the data directory holds nothing, so the root may contain it.
    let data = args.data.resolve();
    let guarded = args.restate.is_none().then_some(data.as_path());
    let root = match serve_root(args.root.as_deref(), guarded) {
        Ok(root) => root,
        Err(message) => return trouble(message),
    };
    let (policy, settings) = match serve_policy(&args.rights) {
        Ok((policy, settings)) => (Arc::new(policy), settings),
        Err(message) => return trouble(message),
    };
    let http = match args.http.http {
        Some(addr) => match http_access(args, &settings, addr) {
            Ok(access) => Some((addr, access)),
            Err(message) => return trouble(message),
        },
        None => None,
    };
    let runtime = match Runtime::start(OnSignal::Cancel("stopping: the runs are cancelled")) {
        Ok(runtime) => runtime,
        Err(status) => return status,
    };
    let stop = runtime.stop();
    let status = runtime.block_on(async {
        let mcp = match connect(&args.mcp, Notices::AsTheyCome).await {
            Ok(mcp) => mcp,
            Err(status) => return status,
        };
        if let Err(message) = known_patterns(&policy, &mcp) {
            mcp.shutdown().await;
            return trouble(message);
        }
        let caller = Caller::new(args.caller.clone());
        let downstream = Arc::clone(&mcp);
        let server = match (&args.restate, &args.restate_admin) {
            (Some(ingress), Some(admin)) => {
                let storage = match seq_restate::RestateStorage::new(ingress) {
                    Ok(storage) => storage,
                    Err(error) => {
                        return trouble(format_args!("cannot start the runtime: {error}"));
                    }
                };
                let submitter = Arc::new(seq_restate::Submitter::new(ingress, admin));
                SeqServer::assemble_with(
                    storage,
                    root,
                    caller,
                    policy,
                    settings.quotas,
                    downstream,
                    Arc::new(Stderr),
                    crate::jq::runner(),
                )
                .with_remote(submitter)
            }
            // clap requires both or neither.
            (Some(_) | None, _) => SeqServer::assemble_with(
                args.data.storage(),
                root,
                caller,
                policy,
                settings.quotas,
                downstream,
                Arc::new(Stderr),
                crate::jq::runner(),
            ),
        };
        let server = match traces {
            Some(traces) => server.with_recorder(traces),
            None => server,
        };
        // A signal ends every session as the client closing it does: every run is cancelled.
        let runs = server.session_token();
        let answering = server.clone();
        let served = match http {
            Some((addr, access)) => {
                serve_http(server, addr, access, &args.http, stop.clone()).await
            }
            None => tokio::select! {
                served = server.serve_stdio() => served,
                () = stop.cancelled() => {
                    runs.cancel();
                    Ok(())
                }
            },
        };
        if stop.is_cancelled() {
            // The cancelled runs wind down (a durable one is cancelled on its server) before
            // the runtime goes; a second signal does not wait.
            let _ = tokio::time::timeout(WIND_DOWN, answering.calls_ended()).await;
        }
        mcp.shutdown().await;
        match served {
            Ok(()) => Status::Clean,
            Err(error) => trouble(error),
        }
    });
    // Whatever the runs' commands left winding down is killed before seqc exits; after a
    // signal, once the cancelled runs' commands had their grace.
    runtime.finish(status)
}

/// Serves over HTTP until `stop` (a signal).
async fn serve_http(
    server: SeqServer,
    addr: std::net::SocketAddr,
    access: Access,
    args: &HttpArgs,
    stop: CancellationToken,
) -> Result<(), seq_mcp::server::ServeError> {
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|error| {
        seq_mcp::server::ServeError::new(format!("cannot listen on {addr}: {}", reason(&error)))
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    // The origins allowed carry the port actually bound (port 0 picks one).
    let options = HttpOptions::new(access, bound, &args.allow_hosts, &args.allow_origins)
        .with_resume_window(std::time::Duration::from_secs(args.resume_window));
    // The address actually bound (port 0 picks one), for scripts and tests to read.
    eprintln!(
        "seqc mcp: serving MCP at http://{bound}{}",
        seq_mcp::http::PATH
    );
    seq_mcp::http::serve(server, listener, options, stop).await
}
