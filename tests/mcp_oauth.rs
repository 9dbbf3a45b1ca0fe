//! `seqc mcp --http` as an OAuth 2.1 resource server: an issuer of the test's own (its metadata
//! and keys served here, its access tokens signed with a fresh P-256 key) configured in the
//! policy file; tokens are checked for signature, issuer, audience, expiry and algorithm, and
//! their scope names the caller, who then owns what it stores.

#![allow(
    clippy::unwrap_used,
    reason = "a test that cannot set up should stop there"
)]

mod common;
#[path = "common/http.rs"]
mod http;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header, encode};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

const RESOURCE: &str = "https://seq.example.com/mcp";

/// An issuer's signing key, and its public half as a JWK.
struct Key {
    pkcs8: Vec<u8>,
    jwk: Value,
}

fn key(kid: &str) -> Key {
    let pkcs8 =
        EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &SystemRandom::new())
            .unwrap();
    let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref()).unwrap();
    // The uncompressed point: 0x04, x, y.
    let point = pair.public_key().as_ref();
    let jwk = json!({
        "kty": "EC", "crv": "P-256", "kid": kid, "alg": "ES256", "use": "sig",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..65]),
    });
    Key {
        pkcs8: pkcs8.as_ref().to_vec(),
        jwk,
    }
}

/// Serves the issuer's metadata (RFC 8414) and its keys on a port of its own; its URL.
fn issuer(jwks: Value) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let base = url.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            // The headers, up to the empty line.
            loop {
                let mut header = String::new();
                if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
                    break;
                }
            }
            let path = line.split(' ').nth(1).unwrap_or("");
            let (status, body) = match path {
                "/.well-known/oauth-authorization-server" => (
                    "200 OK",
                    json!({"issuer": base, "jwks_uri": format!("{base}/jwks")}).to_string(),
                ),
                "/jwks" => ("200 OK", jwks.to_string()),
                _ => ("404 Not Found", String::new()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

fn token(key: &Key, kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::ES256);
    header.kid = Some(kid.to_owned());
    encode(&header, claims, &EncodingKey::from_ec_der(&key.pkcs8)).unwrap()
}

/// `seqc mcp --http 127.0.0.1:0 ARGS` and the address it serves at.
fn serve(args: &[&str]) -> (Child, String) {
    let (child, url) = http::serve(args);
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_owned();
    (child, addr)
}

/// One HTTP/1.1 exchange: the status, the headers (lowercase names) and the body.
fn request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map_or("", |(_, v)| v.as_str())
}

/// A JSON-RPC message to `/mcp` with `token`; the answer's status, headers and the JSON-RPC
/// result (read from the body, SSE or plain).
fn rpc(
    addr: &str,
    token: &str,
    session: Option<&str>,
    message: &Value,
) -> (u16, Vec<(String, String)>, Value) {
    let bearer = format!("Bearer {token}");
    let mut headers = vec![
        ("authorization", bearer.as_str()),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
        ("mcp-protocol-version", "2025-06-18"),
    ];
    if let Some(session) = session {
        headers.push(("mcp-session-id", session));
    }
    let (status, headers, body) = request(addr, "POST", "/mcp", &headers, &message.to_string());
    let data = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|l| l.starts_with('{'))
        .unwrap_or(body.trim());
    let value = serde_json::from_str(data).unwrap_or(Value::Null);
    (status, headers, value)
}

fn initialize(addr: &str, token: &str) -> (u16, Vec<(String, String)>, Value) {
    rpc(
        addr,
        token,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "oauth-test", "version": "1"}}}),
    )
}

#[test]
fn access_tokens_from_the_configured_issuer_name_callers_by_scope() {
    let signing = key("k1");
    let stranger = key("k1");
    let issuer = issuer(json!({"keys": [signing.jwk]}));
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(
        &policy,
        json!({
            "oauth": {"issuer": issuer, "resource": RESOURCE},
            "callers": {"alice": {"scope": "seq.alice"}, "bob": {"scope": "seq.bob"}}
        })
        .to_string(),
    )
    .unwrap();
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    let data = dir.path().join("data");
    let (mut server, addr) = serve(&[
        "--root",
        root.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--policy",
        policy.to_str().unwrap(),
    ]);
    let claims = |scope: &str| {
        json!({"iss": issuer, "aud": RESOURCE, "sub": "u1", "scope": scope,
               "exp": now() + 600, "iat": now()})
    };
    let metadata_url = "https://seq.example.com/.well-known/oauth-protected-resource";

    // The protected resource metadata, and the challenge that names it.
    let (status, _, body) = request(
        &addr,
        "GET",
        "/.well-known/oauth-protected-resource",
        &[],
        "",
    );
    assert_eq!(status, 200);
    let metadata: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(metadata["resource"], RESOURCE);
    assert_eq!(metadata["authorization_servers"], json!([issuer]));
    assert_eq!(
        metadata["scopes_supported"],
        json!(["seq.alice", "seq.bob"])
    );
    let (status, headers, _) = request(&addr, "POST", "/mcp", &[], "{}");
    assert_eq!(status, 401);
    assert!(
        header(&headers, "www-authenticate")
            .contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{headers:?}"
    );

    // Tokens that do not hold: each is 401 invalid_token.
    let refused = [
        (
            "expired",
            token(
                &signing,
                "k1",
                &json!({"iss": issuer, "aud": RESOURCE, "scope": "seq.alice", "exp": now() - 600}),
            ),
        ),
        (
            "not valid yet (`nbf` past the leeway)",
            token(
                &signing,
                "k1",
                &json!({"iss": issuer, "aud": RESOURCE, "scope": "seq.alice",
                        "nbf": now() + 600, "exp": now() + 1200}),
            ),
        ),
        (
            "another audience",
            token(
                &signing,
                "k1",
                &json!({"iss": issuer, "aud": "https://other.example.com/mcp", "scope": "seq.alice", "exp": now() + 600}),
            ),
        ),
        (
            "another issuer",
            token(
                &signing,
                "k1",
                &json!({"iss": "https://evil.example.com", "aud": RESOURCE, "scope": "seq.alice", "exp": now() + 600}),
            ),
        ),
        (
            "signed by another key",
            token(&stranger, "k1", &claims("seq.alice")),
        ),
        (
            "an unknown key",
            token(&stranger, "k2", &claims("seq.alice")),
        ),
        (
            "HMAC with the public key as secret",
            encode(
                &Header::new(Algorithm::HS256),
                &claims("seq.alice"),
                &EncodingKey::from_secret(signing.jwk.to_string().as_bytes()),
            )
            .unwrap(),
        ),
        ("not a JWT", "abc.def".to_owned()),
    ];
    for (why, token) in &refused {
        let (status, headers, _) = initialize(&addr, token);
        assert_eq!(status, 401, "{why}");
        assert!(
            header(&headers, "www-authenticate").contains("error=\"invalid_token\""),
            "{why}: {headers:?}"
        );
    }

    // A valid token whose scopes name no caller, or two: 403 insufficient_scope.
    for scope in ["openid profile", "seq.alice seq.bob"] {
        let (status, headers, _) = initialize(&addr, &token(&signing, "k1", &claims(scope)));
        assert_eq!(status, 403, "{scope}");
        assert!(
            header(&headers, "www-authenticate").contains("error=\"insufficient_scope\""),
            "{headers:?}"
        );
    }

    // Alice's token: she is the caller, and owns what she stores.
    let alice = token(&signing, "k1", &claims("openid seq.alice"));
    let (status, headers, answer) = initialize(&addr, &alice);
    assert_eq!(status, 200, "{answer}");
    let session = header(&headers, "mcp-session-id").to_owned();
    let (status, _, _) = rpc(
        &addr,
        &alice,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    assert_eq!(status, 202);
    let sequence = json!({"name": "hello", "groups": [{"name": "g", "out": {"said": "any"},
        "tools": "{\"tool\": \"echo\", \"args\": {\"value\": 1}, \"as\": \"said\"};"}]});
    let call = |id: u64, name: &str, arguments: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": name, "arguments": arguments}})
    };
    let (status, _, created) = rpc(
        &addr,
        &alice,
        Some(&session),
        &call(2, "seq_create", sequence),
    );
    assert_eq!(status, 200);
    assert_eq!(created["result"]["isError"], json!(false), "{created}");
    let (_, _, listed) = rpc(
        &addr,
        &alice,
        Some(&session),
        &call(3, "seq_list", json!({})),
    );
    let listed = &listed["result"]["structuredContent"]["result"];
    assert_eq!(listed[0]["name"], "hello", "{listed}");
    assert_eq!(listed[0]["owner"], "alice", "{listed}");

    // Bob's token on Alice's session is no way in.
    let bob = token(&signing, "k1", &claims("seq.bob"));
    let (status, _, _) = rpc(&addr, &bob, Some(&session), &call(4, "seq_list", json!({})));
    assert_eq!(status, 404);

    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_policy_whose_oauth_names_no_caller_scope_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(
        &policy,
        json!({"oauth": {"issuer": "https://auth.example.com", "resource": RESOURCE}}).to_string(),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("root")).unwrap();
    let output = common::command()
        .args(["mcp", "--http", "127.0.0.1:0", "--policy"])
        .arg(&policy)
        .arg("--root")
        .arg(dir.path().join("root"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(common::status(&output), 2);
    common::assert_says(common::stderr(&output), "needs callers with a `scope`");
}
