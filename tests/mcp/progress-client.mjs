// The TypeScript SDK's client against a long `seq_run` over `seqc mcp --http`, for
// tests/mcp_http.rs: with a request timeout shorter than the run and `resetTimeoutOnProgress`,
// the progress notifications keep the request alive and the report arrives; without asking for
// progress, the same client gives up.
//
// Usage: node progress-client.mjs URL

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [url] = process.argv.slice(2);
const client = new Client({ name: "seqc-progress-test", version: "1.0.0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));

const sleep = JSON.stringify({ tool: "sleep", args: { ms: 2000 } }) + " ;";
const SLOW = {
  name: "slow",
  groups: [{ name: "wait", parallel: false, tools: sleep + " " + sleep + " " + sleep + " " + sleep }],
};
const seen = {};
const create = await client.request(
  { method: "tools/call", params: { name: "seq_create", arguments: SLOW } },
  CallToolResultSchema,
);
seen.create_error = Boolean(create.isError);

const run = { method: "tools/call", params: { name: "seq_run", arguments: { name: "slow" } } };
let progress = 0;
const result = await client.request(run, CallToolResultSchema, {
  timeout: 3000,
  resetTimeoutOnProgress: true,
  onprogress: () => {
    progress += 1;
  },
});
seen.with_progress = { ok: result.structuredContent?.ok ?? null, notifications: progress };

try {
  await client.request(run, CallToolResultSchema, { timeout: 3000 });
  seen.without_progress = "answered";
} catch (error) {
  seen.without_progress = String(error.message);
}
await client.close();
console.log(JSON.stringify(seen));
