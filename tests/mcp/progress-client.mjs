// The TypeScript SDK's client against a long `seq_run` over `seqc mcp --http`, for
// tests/mcp_http.rs: with a request timeout of 5 s, a quarter of the run's 20 s, and
// `resetTimeoutOnProgress`, the progress notifications keep the request alive and the report
// arrives; without asking for progress, the same client gives up.
//
// Usage: node progress-client.mjs URL

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [url] = process.argv.slice(2);
const client = new Client({ name: "seqc-progress-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

// 20 s in all: four times the request timeout below.
const TIMEOUT_MS = 5000;
const sleep = JSON.stringify({ tool: "sleep", args: { ms: 2000 } }) + " ;";
const SLOW = {
  name: "slow",
  groups: [
    { name: "first", parallel: false, tools: Array(5).fill(sleep).join(" ") },
    { name: "second", parallel: false, tools: Array(5).fill(sleep).join(" ") },
  ],
};
const seen = {};
const create = await client.request(
  { method: "tools/call", params: { name: "seq_create", arguments: SLOW } },
  CallToolResultSchema,
);
seen.create_error = Boolean(create.isError);

const run = { method: "tools/call", params: { name: "seq_run", arguments: { name: "slow" } } };
const messages = [];
const started = Date.now();
const result = await client.request(run, CallToolResultSchema, {
  timeout: TIMEOUT_MS,
  resetTimeoutOnProgress: true,
  onprogress: (progress) => {
    messages.push(progress.message ?? "");
  },
});
seen.with_progress = {
  ok: result.structuredContent?.ok ?? null,
  notifications: messages.length,
  messages,
  elapsed_ms: Date.now() - started,
};

try {
  await client.request(run, CallToolResultSchema, { timeout: TIMEOUT_MS });
  seen.without_progress = "answered";
} catch (error) {
  seen.without_progress = String(error.message);
}
await client.close();
console.log(JSON.stringify(seen));
