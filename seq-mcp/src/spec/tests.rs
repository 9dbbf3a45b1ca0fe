#![allow(clippy::unwrap_used, reason = "tests may unwrap")]

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
