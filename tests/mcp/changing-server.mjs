// A small MCP server whose tool list changes while it runs, for the tests of seqc's MCP client
// (seq-mcp/tests/): `grow` adds the tool `extra` (the SDK then sends
// notifications/tools/list_changed), `fail` answers with `isError: true`, `wait` waits and,
// when the client cancels the call (notifications/cancelled, which the SDK turns into an abort
// signal), writes the request's reason into the file `marker`; `big` answers with a text of
// `bytes` bytes; `meta` answers with the request's `_meta` as JSON text.
import { writeFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "changing-server", version: "1.0.0" });

server.registerTool(
  "grow",
  { description: "Adds the tool `extra`.", inputSchema: {} },
  async () => {
    server.registerTool(
      "extra",
      {
        description: "Appeared after `grow`.",
        inputSchema: { word: z.string() },
        annotations: { readOnlyHint: true },
      },
      async ({ word }) => ({ content: [{ type: "text", text: `extra ${word}` }] }),
    );
    return { content: [{ type: "text", text: "grown" }] };
  },
);

server.registerTool(
  "fail",
  { description: "Always fails, as a tool error.", inputSchema: { why: z.string() } },
  async ({ why }) => ({ content: [{ type: "text", text: `failed: ${why}` }], isError: true }),
);

server.registerTool(
  "wait",
  {
    description: "Waits `ms` milliseconds; if cancelled first, writes `cancelled` into `marker`.",
    inputSchema: { ms: z.number(), marker: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ ms, marker }, extra) =>
    new Promise((resolve) => {
      const timer = setTimeout(() => {
        writeFileSync(marker, "finished");
        resolve({ content: [{ type: "text", text: "waited" }] });
      }, ms);
      extra.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        writeFileSync(marker, "cancelled");
        resolve({ content: [{ type: "text", text: "cancelled" }] });
      });
    }),
);

server.registerTool(
  "big",
  { description: "Answers with `bytes` bytes of text.", inputSchema: { bytes: z.number() } },
  async ({ bytes }) => ({ content: [{ type: "text", text: "x".repeat(bytes) }] }),
);

server.registerTool(
  "meta",
  { description: "Answers with the request's `_meta`.", inputSchema: {} },
  async (_args, extra) => ({ content: [{ type: "text", text: JSON.stringify(extra._meta ?? {}) }] }),
);

await server.connect(new StdioServerTransport());
