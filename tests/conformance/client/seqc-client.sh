#!/bin/sh
# seqc's own MCP client (`--mcp URL`) as the conformance suite's client under test. The suite
# appends the test server's URL and names the scenario in MCP_CONFORMANCE_SCENARIO; SEQC is the
# binary and SEQC_DATA_DIR its data directory (set by tests/conformance_client.rs).
set -eu
url="$1"
here=$(dirname "$0")
case "$MCP_CONFORMANCE_SCENARIO" in
  # Connect, initialize, list the tools, check a sequence against them, close.
  initialize) exec "$SEQC" check --mcp "$url" "$here/tools_call.json" ;;
  # A run whose item calls the server's add_numbers.
  tools_call) exec "$SEQC" run "$here/tools_call.json" --mcp "$url" ;;
  # A call whose SSE stream the server closes: the client must resume it with Last-Event-ID.
  sse-retry) exec "$SEQC" run "$here/sse_retry.json" --mcp "$url" ;;
  *) echo "seqc-client.sh: no scenario $MCP_CONFORMANCE_SCENARIO" >&2; exit 2 ;;
esac
