// A small MCP server whose tool list changes while it runs, for the tests of seqc's MCP client
// (seq-mcp/tests/): `grow` adds the tool `extra` (the SDK then sends
// notifications/tools/list_changed), `fail` answers with `isError: true`.
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

await server.connect(new StdioServerTransport());
