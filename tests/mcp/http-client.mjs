// A real MCP client (the TypeScript SDK's streamable HTTP client) against `seqc mcp --http`,
// for tests/mcp_http.rs.
//
// Usage: node http-client.mjs URL ALICE_TOKEN BOB_TOKEN ROOT
//
// Alice lists the tools, creates a sequence and runs it; Bob cannot replace it nor see
// Alice's session; no token and a wrong token are 401 with `WWW-Authenticate: Bearer`; an
// `Origin` of another site is 403. Last, Alice starts a run of ROOT/slow.sh (which writes its
// pid to ROOT/pid and sleeps) and ends her session once it has started; the Rust test then
// waits for that process to be gone. Prints what it saw as one JSON object on stdout.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [url, aliceToken, bobToken, root] = process.argv.slice(2);

async function connect(token) {
  const client = new Client({ name: "seqc-http-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return { client, transport };
}

const HELLO = {
  name: "hello",
  description: "Echoes a greeting.",
  groups: [
    {
      name: "greet",
      out: { said: "object" },
      tools: JSON.stringify({ tool: "echo", args: { value: { text: "hi" } }, as: "said" }) + " ;",
    },
  ],
};

// `tools/call` as sent and answered: `Client.callTool` checks a failure's structured content
// against the tool's output schema too, and would throw away the answer under test.
async function call(client, name, args) {
  const result = await client.request(
    { method: "tools/call", params: { name, arguments: args } },
    CallToolResultSchema,
  );
  return { is_error: Boolean(result.isError), structured: result.structuredContent ?? null };
}

async function raw(headers, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      Accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(
      body ?? {
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: "2025-06-18",
          capabilities: {},
          clientInfo: { name: "raw", version: "1" },
        },
      },
    ),
  });
  await response.text();
  return { status: response.status, www_authenticate: response.headers.get("www-authenticate") };
}

const seen = {};
const alice = await connect(aliceToken);
seen.server = alice.client.getServerVersion()?.name;
seen.tools = (await alice.client.listTools()).tools.map((tool) => tool.name);
seen.create = await call(alice.client, "seq_create", HELLO);
seen.run = await call(alice.client, "seq_run", { name: "hello" });

const bob = await connect(bobToken);
seen.bob_replace = await call(bob.client, "seq_create", { ...HELLO, replace: true });
// Bob's token on Alice's session: as if there were no such session.
seen.bob_on_alice_session = await raw(
  { Authorization: `Bearer ${bobToken}`, "Mcp-Session-Id": alice.transport.sessionId },
  { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} },
);

seen.no_token = await raw({});
seen.wrong_token = await raw({ Authorization: "Bearer not-a-token" });
seen.foreign_origin = await raw({
  Authorization: `Bearer ${aliceToken}`,
  Origin: "http://evil.example",
});

const SLOW = {
  name: "slow",
  groups: [{ name: "wait", tools: JSON.stringify({ tool: "cmd_run", args: { argv: ["sh", "slow.sh"] } }) + " ;" }],
};
seen.create_slow = await call(alice.client, "seq_create", SLOW);
// Not awaited: the session ends under it.
alice.client.callTool({ name: "seq_run", arguments: { name: "slow" } }).catch(() => {});
while (!existsSync(join(root, "pid"))) {
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await alice.transport.terminateSession();
await alice.client.close();
await bob.client.close();
console.log(JSON.stringify(seen));
