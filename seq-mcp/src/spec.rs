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
#[allow(clippy::unwrap_used, reason = "tests may unwrap")]
mod tests {
    use super::*;

    fn command(spec: &ServerSpec) -> (&str, Vec<&str>) {
        match &spec.transport {
            Transport::Command { program, args, .. } => {
                (program, args.iter().map(String::as_str).collect())
            }
            Transport::Url { .. } => panic!("not a command: {spec:?}"),
        }
    }

    #[test]
    fn a_value_is_a_command_line_a_url_or_either_behind_a_prefix() {
        let plain = ServerSpec::parse("npx -y '@scope/server x' /srv").unwrap();
        assert_eq!(
            command(&plain),
            ("npx", vec!["-y", "@scope/server x", "/srv"])
        );
        assert_eq!(plain.prefix, None);
        assert_eq!(plain.name, "npx -y '@scope/server x' /srv");
        assert_eq!(plain.exposed("read_file"), "read_file");

        let named = ServerSpec::parse("fs=node server.js --root=/a").unwrap();
        assert_eq!(named.prefix.as_deref(), Some("fs"));
        assert_eq!(named.name, "fs");
        assert_eq!(command(&named), ("node", vec!["server.js", "--root=/a"]));
        assert_eq!(named.exposed("read_file"), "fs.read_file");

        let url = ServerSpec::parse("docs=https://example.com/mcp").unwrap();
        assert_eq!(
            url.transport,
            Transport::Url {
                url: "https://example.com/mcp".to_owned(),
                headers: BTreeMap::new(),
                oauth: OAuthSettings::default(),
            }
        );
        assert_eq!(url.target(), "https://example.com/mcp");

        // Not a prefix: a path with `=` after a non-name.
        let odd = ServerSpec::parse("./srv --a=b").unwrap();
        assert_eq!(odd.prefix, None);
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        assert_eq!(
            ServerSpec::parse("  "),
            Err(SpecError::Empty {
                value: "  ".to_owned()
            })
        );
        assert!(matches!(
            ServerSpec::parse("fs="),
            Err(SpecError::Empty { .. })
        ));
        assert!(matches!(
            ServerSpec::parse("node 'unclosed"),
            Err(SpecError::Unsplittable { .. })
        ));
    }

    #[test]
    fn config_files_take_command_or_url_servers() {
        let path = Path::new("mcp.json");
        let specs = parse_config(
            path,
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "x"], "env": {"A": "1"}, "prefix": "fs"},
                "docs": {"type": "http", "url": "http://localhost:1/mcp", "headers": {"X-Key": "k"}}
            }}"#,
        )
        .unwrap();
        assert_eq!(specs[0].name, "docs");
        assert_eq!(specs[0].prefix, None);
        assert!(
            matches!(&specs[0].transport, Transport::Url { headers, .. } if headers["X-Key"] == "k")
        );
        assert_eq!(specs[1].exposed("t"), "fs.t");
        assert!(matches!(&specs[1].transport, Transport::Command { env, .. } if env["A"] == "1"));

        for (text, want) in [
            (r#"{"mcpServers": {"a": {}}}"#, "needs `command` or `url`"),
            (
                r#"{"mcpServers": {"a": {"command": "x", "url": "http://h"}}}"#,
                "has both `command` and `url`",
            ),
            (
                r#"{"mcpServers": {"a": {"type": "stdio", "url": "http://h"}}}"#,
                "is of `type` `stdio` but has `url`, not `command`",
            ),
            (
                r#"{"mcpServers": {"a": {"url": "ftp://h"}}}"#,
                "has a `url` that is not http:// or https://",
            ),
        ] {
            match parse_config(path, text) {
                Err(SpecError::Transport { reason, .. }) => assert_eq!(reason, want, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(matches!(
            parse_config(
                path,
                r#"{"mcpServers": {"a": {"command": "x", "argz": []}}}"#
            ),
            Err(SpecError::Invalid { .. })
        ));
        assert!(matches!(
            parse_config(
                path,
                r#"{"mcpServers": {"a": {"command": "x", "prefix": "a.b"}}}"#
            ),
            Err(SpecError::BadPrefix { .. })
        ));
    }

    #[test]
    fn variables_are_expanded_in_urls_headers_and_env_and_a_missing_one_is_named() {
        let env = |name: &str| match name {
            "TOKEN" => Some("s3cret".to_owned()),
            "PORT" => Some("7000".to_owned()),
            "EMPTY" => Some(String::new()),
            _ => None,
        };
        let text = r#"{"mcpServers": {
            "docs": {"url": "http://127.0.0.1:${PORT}/mcp",
                     "headers": {"Authorization": "Bearer ${TOKEN}", "X-Cost": "$$5 ${EMPTY:-none}"}},
            "fs": {"command": "server", "env": {"LEVEL": "${LEVEL:-info}"}}
        }}"#;
        let specs = parse_config_with(Path::new("c.json"), text, &env).unwrap();
        let Transport::Url { url, headers, .. } = &specs[0].transport else {
            panic!("{specs:?}")
        };
        assert_eq!(url, "http://127.0.0.1:7000/mcp");
        assert_eq!(headers["Authorization"], "Bearer s3cret");
        assert_eq!(headers["X-Cost"], "$5 none");
        assert!(
            matches!(&specs[1].transport, Transport::Command { env, .. } if env["LEVEL"] == "info")
        );

        let missing = r#"{"mcpServers": {"docs": {"url": "http://h/mcp",
            "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}}}"#;
        let error = parse_config_with(Path::new("c.json"), missing, &env).unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.json: MCP server `docs`: in header `Authorization`: the environment variable \
             `DOCS_TOKEN` is not set (write `${DOCS_TOKEN:-DEFAULT}` for a default)"
        );
        let open = r#"{"mcpServers": {"docs": {"url": "http://h/${X"}}}"#;
        let error = parse_config_with(Path::new("c.json"), open, &env).unwrap_err();
        assert!(error.to_string().contains("has no closing"), "{error}");
    }

    #[test]
    fn oauth_settings_take_variables_and_only_a_url_server_takes_them() {
        let env = |name: &str| (name == "ID").then(|| "client-7".to_owned());
        let text = r#"{"mcpServers": {"docs": {"url": "http://h/mcp",
            "oauth": {"client_id": "${ID}", "client_secret": "${SECRET:-s}", "scopes": ["a"]}}}}"#;
        let specs = parse_config_with(Path::new("c.json"), text, &env).unwrap();
        let Transport::Url { oauth, .. } = &specs[0].transport else {
            panic!("{specs:?}")
        };
        assert_eq!(oauth.client_id.as_deref(), Some("client-7"));
        assert_eq!(oauth.client_secret.as_deref(), Some("s"));

        let provider = r#"{"mcpServers": {"docs": {"url": "http://h/mcp", "oauth": {
            "grant": "enterprise_managed", "client_id": "c", "identity_provider": {
            "issuer": "https://idp", "token_endpoint": "https://idp/token",
            "client_id": "${ID}", "id_token": "${ID_TOKEN}"}}}}}"#;
        let error = parse_config_with(Path::new("c.json"), provider, &env).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("in `oauth` `identity_provider.id_token`: the environment variable"),
            "{error}"
        );

        let missing = r#"{"mcpServers": {"docs": {"url": "http://h/mcp",
            "oauth": {"client_id": "${NOPE}"}}}}"#;
        let error = parse_config_with(Path::new("c.json"), missing, &env).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("in `oauth` `client_id`: the environment variable `NOPE`"),
            "{error}"
        );

        let alone =
            r#"{"mcpServers": {"docs": {"url": "http://h/mcp", "oauth": {"client_secret": "s"}}}}"#;
        let error = parse_config_with(Path::new("c.json"), alone, &env).unwrap_err();
        assert_eq!(
            error.to_string(),
            "c.json: MCP server `docs`: in `oauth`: `client_secret` needs the `client_id` it belongs to"
        );
        let command = r#"{"mcpServers": {"fs": {"command": "x", "oauth": {}}}}"#;
        assert!(matches!(
            parse_config_with(Path::new("c.json"), command, &env),
            Err(SpecError::Transport { .. })
        ));
    }

    #[test]
    fn a_private_key_is_read_from_beside_the_config_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("c.json");
        let pem = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oauth-keys/p256.pem"),
        )
        .unwrap();
        std::fs::write(dir.path().join("ci.pem"), &pem).unwrap();
        let env = |_: &str| None;
        let text = r#"{"mcpServers": {"ci": {"url": "http://h/mcp", "oauth": {
            "grant": "client_credentials", "client_id": "ci", "private_key": "ci.pem"}}}}"#;
        let specs = parse_config_with(&config, text, &env).unwrap();
        let Transport::Url { oauth, .. } = &specs[0].transport else {
            panic!("{specs:?}")
        };
        assert_eq!(oauth.private_key.as_deref(), Some(pem.as_str()));
        assert_eq!(
            oauth.signing_algorithm,
            Some(crate::authorize::SigningAlgorithm::ES256)
        );

        let wrong = text.replace(r#""ci.pem""#, r#""ci.pem", "signing_algorithm": "RS256""#);
        let error = parse_config_with(&config, &wrong, &env).unwrap_err();
        assert!(
            error
                .to_string()
                .contains("in `oauth`: `private_key` does not sign with `signing_algorithm` RS256"),
            "{error}"
        );
        let code_grant = text.replace(r#""grant": "client_credentials", "#, "");
        let error = parse_config_with(&config, &code_grant, &env).unwrap_err();
        assert!(error.to_string().contains("needs `\"grant\""), "{error}");
    }

    #[test]
    fn two_servers_may_not_share_a_name() {
        let values = ["fs=a".to_owned(), "fs=b".to_owned()];
        assert_eq!(
            collect(&values, &[]),
            Err(SpecError::DuplicateName {
                name: "fs".to_owned()
            })
        );
    }
}
