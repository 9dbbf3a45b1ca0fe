//! How to reach an MCP server: from a `--mcp` value or from a config file.
//!
//! A `--mcp` value is a command line, split as a shell would (quotes, no expansion), or a URL
//! (`http://`, `https://`) of a server speaking streamable HTTP. `NAME=...` in front names the
//! server and gives its tools the prefix `NAME.` (`fs=npx -y @modelcontextprotocol/server-filesystem
//! /srv` offers `fs.read_file`); without it the tools keep the server's names. `NAME` is letters,
//! digits, `_` and `-`, starting with a letter — so a command that starts with an environment
//! assignment (`FOO=1 server`) reads as a prefix: set environment variables in a config file.
//!
//! A config file is JSON in the common `mcpServers` shape, keyed by server name:
//!
//! ```json
//! {"mcpServers": {
//!   "fs":   {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"],
//!            "env": {"NODE_ENV": "production"}, "prefix": "fs"},
//!   "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ..."}}
//! }}
//! ```
//!
//! A server has either `command` (with optional `args`, `env`, `cwd`) or `url` (with optional
//! `headers`, and `oauth`: how seqc signs in when the server asks, [`OAuthSettings`]); `type`
//! (`stdio`, `http`, `streamable-http`) may say which. `prefix` is optional
//! and, unlike on the command line, separate from the name. Unknown fields are errors.
//!
//! `${VAR}` and `${VAR:-default}` in a `url`, a `headers`, `env` or `oauth` value are the
//! environment's `VAR` (or the default when it is unset or empty), as other MCP clients'
//! config files have them, so that a token is never written into the file:
//! `"headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}`. A variable that is unset, with no
//! default, is an error naming it; `$$` is a `$`.

use crate::authorize::OAuthSettings;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// One MCP server to connect to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSpec {
    /// How reports name the server: its `NAME`, its config key, else its command line or URL.
    pub name: String,
    /// Prepended to every tool name of the server as `PREFIX.tool`.
    pub prefix: Option<String>,
    pub transport: Transport,
}

/// Where the server runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Command {
        program: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    /// A remote server speaking streamable HTTP.
    Url {
        url: String,
        headers: BTreeMap<String, String>,
        /// How seqc signs in when the server asks for OAuth (a config file's `"oauth"`).
        oauth: OAuthSettings,
    },
}

/// Why a `--mcp` value or a config file was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpecError {
    /// Nothing to run.
    Empty { value: String },
    /// Unbalanced quotes or a dangling escape.
    Unsplittable { value: String },
    /// A prefix (or config name used in reports) with characters tool names cannot carry.
    BadPrefix { prefix: String },
    /// The config file could not be read.
    Unreadable { path: PathBuf, reason: String },
    /// The config file is not JSON of the expected shape (serde's message, with its position).
    Invalid { path: PathBuf, reason: String },
    /// A server in a config file with both or neither of `command` and `url`, or a `type` that
    /// contradicts the one given.
    Transport {
        path: PathBuf,
        server: String,
        reason: &'static str,
    },
    /// Two servers under one name (a `--mcp NAME=` and a config key, say).
    DuplicateName { name: String },
    /// A `${VAR}` in a config file whose variable is not set and has no default, or a `${`
    /// without its `}`.
    Variable {
        path: PathBuf,
        server: String,
        problem: String,
    },
    /// An `"oauth"` whose settings do not go together (a secret without a client id, say).
    OAuth {
        path: PathBuf,
        server: String,
        problem: String,
    },
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecError::Empty { value } => write!(f, "--mcp `{value}` names no command or URL"),
            SpecError::Unsplittable { value } => write!(
                f,
                "--mcp `{value}` cannot be split into words (an unclosed quote or a trailing `\\`)"
            ),
            SpecError::BadPrefix { prefix } => write!(
                f,
                "`{prefix}` cannot be a tool prefix: use letters, digits, `_` and `-`, starting with a letter"
            ),
            SpecError::Unreadable { path, reason } => {
                write!(f, "cannot read MCP config {}: {reason}", path.display())
            }
            SpecError::Invalid { path, reason } => {
                write!(f, "{}: invalid MCP config: {reason}", path.display())
            }
            SpecError::Transport {
                path,
                server,
                reason,
            } => write!(
                f,
                "{}: invalid MCP config: server `{server}` {reason}",
                path.display()
            ),
            SpecError::DuplicateName { name } => write!(
                f,
                "two MCP servers are named `{name}`; give each its own name"
            ),
            SpecError::Variable {
                path,
                server,
                problem,
            } => write!(f, "{}: MCP server `{server}`: {problem}", path.display()),
            SpecError::OAuth {
                path,
                server,
                problem,
            } => write!(
                f,
                "{}: MCP server `{server}`: in `oauth`: {problem}",
                path.display()
            ),
        }
    }
}

impl std::error::Error for SpecError {}

impl ServerSpec {
    /// Reads one `--mcp` value (module comment).
    pub fn parse(value: &str) -> Result<ServerSpec, SpecError> {
        let trimmed = value.trim();
        let (prefix, target) = match split_prefix(trimmed) {
            Some((prefix, target)) => (Some(prefix.to_owned()), target.trim()),
            None => (None, trimmed),
        };
        if target.is_empty() {
            return Err(SpecError::Empty {
                value: value.to_owned(),
            });
        }
        let transport = if is_url(target) {
            Transport::Url {
                url: target.to_owned(),
                headers: BTreeMap::new(),
                oauth: OAuthSettings::default(),
            }
        } else {
            let mut words = shlex::split(target)
                .ok_or_else(|| SpecError::Unsplittable {
                    value: value.to_owned(),
                })?
                .into_iter();
            let program = words.next().ok_or_else(|| SpecError::Empty {
                value: value.to_owned(),
            })?;
            Transport::Command {
                program,
                args: words.collect(),
                env: BTreeMap::new(),
                cwd: None,
            }
        };
        let mut spec = ServerSpec {
            name: prefix.clone().unwrap_or_default(),
            prefix,
            transport,
        };
        if spec.prefix.is_none() {
            // The command line as seqc will run it (quoted where needed), in every message.
            spec.name = spec.target();
        }
        Ok(spec)
    }

    /// The name a tool of this server is offered under.
    pub fn exposed(&self, tool: &str) -> String {
        match &self.prefix {
            Some(prefix) => format!("{prefix}.{tool}"),
            None => tool.to_owned(),
        }
    }

    /// The command line or URL, for messages.
    pub fn target(&self) -> String {
        match &self.transport {
            Transport::Command { program, args, .. } => {
                let words = std::iter::once(program).chain(args).map(String::as_str);
                shlex::try_join(words).unwrap_or_else(|_| program.clone())
            }
            Transport::Url { url, .. } => url.clone(),
        }
    }
}

/// `NAME=rest` when `NAME` is a valid prefix.
fn split_prefix(value: &str) -> Option<(&str, &str)> {
    let (name, rest) = value.split_once('=')?;
    valid_prefix(name).then_some((name, rest))
}

fn valid_prefix(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn is_url(target: &str) -> bool {
    let lower = target.to_ascii_lowercase();
    (lower.starts_with("http://") || lower.starts_with("https://")) && !target.contains(' ')
}

/// The config file's shape.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ConfigFile {
    mcp_servers: BTreeMap<String, ConfigServer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigServer {
    #[serde(rename = "type")]
    kind: Option<ConfigKind>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    oauth: Option<OAuthSettings>,
    prefix: Option<String>,
}

#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(rename_all = "kebab-case")]
enum ConfigKind {
    Stdio,
    Http,
    StreamableHttp,
}

/// Reads a config file (module comment); servers come in the order of their names.
pub fn load_config(path: &Path) -> Result<Vec<ServerSpec>, SpecError> {
    let text = std::fs::read_to_string(path).map_err(|error| SpecError::Unreadable {
        path: path.to_owned(),
        reason: error.to_string(),
    })?;
    parse_config(path, &text)
}

/// [`load_config`] on text already read; `path` is for messages.
pub fn parse_config(path: &Path, text: &str) -> Result<Vec<ServerSpec>, SpecError> {
    parse_config_with(path, text, &|name| std::env::var(name).ok())
}

/// [`parse_config`] with the environment's variables from `var`.
pub fn parse_config_with(
    path: &Path,
    text: &str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Vec<ServerSpec>, SpecError> {
    let file: ConfigFile = serde_json::from_str(text).map_err(|error| SpecError::Invalid {
        path: path.to_owned(),
        reason: error.to_string(),
    })?;
    file.mcp_servers
        .into_iter()
        .map(|(name, server)| {
            let server = expanded(server, var).map_err(|problem| SpecError::Variable {
                path: path.to_owned(),
                server: name.clone(),
                problem,
            })?;
            config_server(path, name, server)
        })
        .collect()
}

/// `server` with the variables of its `url`, `headers` and `env` values in place.
fn expanded(
    mut server: ConfigServer,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<ConfigServer, String> {
    if let Some(url) = &server.url {
        server.url = Some(expand(url, var).map_err(|p| format!("in `url`: {p}"))?);
    }
    for (name, value) in server.headers.iter_mut() {
        *value = expand(value, var).map_err(|p| format!("in header `{name}`: {p}"))?;
    }
    for (name, value) in server.env.iter_mut() {
        *value = expand(value, var).map_err(|p| format!("in `env` `{name}`: {p}"))?;
    }
    if let Some(oauth) = &mut server.oauth {
        for (name, value) in oauth.texts_mut() {
            *value = expand(value, var).map_err(|p| format!("in `oauth` `{name}`: {p}"))?;
        }
    }
    Ok(server)
}

/// `text` with each `${VAR}` and `${VAR:-default}` replaced (module comment).
fn expand(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix('$') {
            out.push('$');
            rest = tail;
        } else if let Some(inside) = after.strip_prefix('{') {
            let Some(end) = inside.find('}') else {
                return Err("a `${` has no closing `}`".to_owned());
            };
            let (name, default) = match inside[..end].split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (&inside[..end], None),
            };
            let value = var(name).filter(|value| !value.is_empty());
            match (value, default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(format!(
                        "the environment variable `{name}` is not set (write `${{{name}:-DEFAULT}}` for a default)"
                    ));
                }
            }
            rest = &inside[end + 1..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    Ok(out)
}

fn config_server(path: &Path, name: String, server: ConfigServer) -> Result<ServerSpec, SpecError> {
    let refuse = |reason: &'static str| SpecError::Transport {
        path: path.to_owned(),
        server: name.clone(),
        reason,
    };
    if let Some(prefix) = &server.prefix
        && !valid_prefix(prefix)
    {
        return Err(SpecError::BadPrefix {
            prefix: prefix.clone(),
        });
    }
    let transport = match (server.command, server.url, server.kind) {
        (Some(_), Some(_), _) => return Err(refuse("has both `command` and `url`")),
        (None, None, _) => return Err(refuse("needs `command` or `url`")),
        (Some(_), None, Some(ConfigKind::Http | ConfigKind::StreamableHttp)) => {
            return Err(refuse("is of an HTTP `type` but has `command`, not `url`"));
        }
        (None, Some(_), Some(ConfigKind::Stdio)) => {
            return Err(refuse("is of `type` `stdio` but has `url`, not `command`"));
        }
        (Some(program), None, _) => {
            if !server.headers.is_empty() || server.oauth.is_some() {
                return Err(refuse(
                    "has `headers` or `oauth`, which only a `url` server takes",
                ));
            }
            Transport::Command {
                program,
                args: server.args,
                env: server.env,
                cwd: server.cwd,
            }
        }
        (None, Some(url), _) => {
            if !server.args.is_empty() || !server.env.is_empty() || server.cwd.is_some() {
                return Err(refuse(
                    "has `args`, `env` or `cwd`, which only a `command` server takes",
                ));
            }
            if !is_url(&url) {
                return Err(refuse("has a `url` that is not http:// or https://"));
            }
            let mut oauth = server.oauth.unwrap_or_default();
            let folder = path.parent().unwrap_or(Path::new(""));
            if let Some(problem) = oauth
                .problem()
                .or_else(|| crate::authorize::key::load(&mut oauth, folder).err())
            {
                return Err(SpecError::OAuth {
                    path: path.to_owned(),
                    server: name,
                    problem,
                });
            }
            Transport::Url {
                url,
                headers: server.headers,
                oauth,
            }
        }
    };
    Ok(ServerSpec {
        name,
        prefix: server.prefix,
        transport,
    })
}

/// Every server of `values` (`--mcp`) and of the config files, in that order; two servers may
/// not share a name.
pub fn collect(values: &[String], configs: &[PathBuf]) -> Result<Vec<ServerSpec>, SpecError> {
    let mut specs = values
        .iter()
        .map(|value| ServerSpec::parse(value))
        .collect::<Result<Vec<_>, _>>()?;
    for path in configs {
        specs.extend(load_config(path)?);
    }
    let mut seen = std::collections::BTreeSet::new();
    for spec in &specs {
        if !seen.insert(spec.name.as_str()) {
            return Err(SpecError::DuplicateName {
                name: spec.name.clone(),
            });
        }
    }
    Ok(specs)
}

#[cfg(test)]
mod tests;
