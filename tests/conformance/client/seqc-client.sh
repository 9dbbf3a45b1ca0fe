#!/bin/sh
# seqc's own MCP client (`--mcp URL`, `--mcp-config`) as the conformance suite's client under
# test. The suite appends the test server's URL, names the scenario in MCP_CONFORMANCE_SCENARIO
# and gives credentials in MCP_CONFORMANCE_CONTEXT (JSON); SEQC is the binary, SEQC_DATA_DIR its
# data directory and SEQC_OAUTH_TOKENS its token file (set by tests/conformance_client.rs).
set -eu
url="$1"
here=$(dirname "$0")
node="$here/../node_modules/.bin/node"

# A field of the scenario's context, or nothing.
context() {
  "$node" -e 'const c = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || "{}"); process.stdout.write(String(c[process.argv[1]] ?? ""))' "$1"
}

# Signs in as the scenario asks (OAUTH is the config's `oauth` object), then calls test-tool.
# The credentials reach the config through the environment, never the command line.
signed_in_run() {
  config=$(mktemp)
  trap 'rm -f "$config"' EXIT
  printf '{"mcpServers": {"conformance": {"url": "%s", "oauth": %s}}}\n' "$url" "$1" >"$config"
  "$SEQC" run "$here/auth_call.json" --mcp-config "$config"
}

# The suite's authorization server accepts this fixed client ID metadata document.
cimd='"client_metadata_url": "https://conformance-test.local/client-metadata.json"'

case "$MCP_CONFORMANCE_SCENARIO" in
  # Connect, initialize, list the tools, check a sequence against them, close.
  initialize) exec "$SEQC" check --mcp "$url" "$here/tools_call.json" ;;
  # A run whose item calls the server's add_numbers.
  tools_call) exec "$SEQC" run "$here/tools_call.json" --mcp "$url" ;;
  # A call whose SSE stream the server closes: the client must resume it with Last-Event-ID.
  sse-retry) exec "$SEQC" run "$here/sse_retry.json" --mcp "$url" ;;
  # A client registered beforehand: its id and secret from the environment.
  auth/pre-registration)
    CONFORMANCE_CLIENT_ID=$(context client_id) CONFORMANCE_CLIENT_SECRET=$(context client_secret)
    export CONFORMANCE_CLIENT_ID CONFORMANCE_CLIENT_SECRET
    signed_in_run '{"client_id": "${CONFORMANCE_CLIENT_ID}", "client_secret": "${CONFORMANCE_CLIENT_SECRET}"}' ;;
  # A machine client: the client credentials grant, nobody approving.
  auth/client-credentials-basic)
    CONFORMANCE_CLIENT_ID=$(context client_id) CONFORMANCE_CLIENT_SECRET=$(context client_secret)
    export CONFORMANCE_CLIENT_ID CONFORMANCE_CLIENT_SECRET
    signed_in_run '{"grant": "client_credentials", "client_id": "${CONFORMANCE_CLIENT_ID}", "client_secret": "${CONFORMANCE_CLIENT_SECRET}"}' ;;
  # A machine client signing in with its private key (private_key_jwt): the suite's PEM and
  # algorithm, the key from the environment as a user's would be.
  auth/client-credentials-jwt)
    CONFORMANCE_CLIENT_ID=$(context client_id) CONFORMANCE_PRIVATE_KEY=$(context private_key_pem)
    export CONFORMANCE_CLIENT_ID CONFORMANCE_PRIVATE_KEY
    algorithm=$(context signing_algorithm)
    signed_in_run '{"grant": "client_credentials", "client_id": "${CONFORMANCE_CLIENT_ID}", "private_key": "${CONFORMANCE_PRIVATE_KEY}", "signing_algorithm": "'"$algorithm"'"}' ;;
  # Cross-app access: the user's ID token from the suite's identity provider, exchanged there
  # for an ID-JAG that seqc's client at the server's authorization server redeems.
  auth/cross-app-access-complete-flow)
    CONFORMANCE_CLIENT_ID=$(context client_id) CONFORMANCE_CLIENT_SECRET=$(context client_secret)
    CONFORMANCE_IDP_ISSUER=$(context idp_issuer) CONFORMANCE_IDP_TOKEN_ENDPOINT=$(context idp_token_endpoint)
    CONFORMANCE_IDP_CLIENT_ID=$(context idp_client_id) CONFORMANCE_ID_TOKEN=$(context idp_id_token)
    export CONFORMANCE_CLIENT_ID CONFORMANCE_CLIENT_SECRET CONFORMANCE_IDP_ISSUER \
      CONFORMANCE_IDP_TOKEN_ENDPOINT CONFORMANCE_IDP_CLIENT_ID CONFORMANCE_ID_TOKEN
    signed_in_run '{"grant": "enterprise_managed", "client_id": "${CONFORMANCE_CLIENT_ID}", "client_secret": "${CONFORMANCE_CLIENT_SECRET}", "identity_provider": {"issuer": "${CONFORMANCE_IDP_ISSUER}", "token_endpoint": "${CONFORMANCE_IDP_TOKEN_ENDPOINT}", "client_id": "${CONFORMANCE_IDP_CLIENT_ID}", "id_token": "${CONFORMANCE_ID_TOKEN}"}}' ;;
  # The server's resource metadata names another resource: seqc must refuse to sign in, and
  # so fails (the suite allows that exit).
  auth/resource-mismatch) signed_in_run "{$cimd}" ;;
  # Every other sign-in: discovery, registration (dynamic or the metadata document), PKCE.
  auth/*) signed_in_run "{$cimd}" ;;
  *) echo "seqc-client.sh: no scenario $MCP_CONFORMANCE_SCENARIO" >&2; exit 2 ;;
esac
