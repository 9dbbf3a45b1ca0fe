// The TypeScript SDK's `Client.callTool` against `seqc mcp` over stdio, for tests/mcp.rs. That
// method checks every result's structured content against the tool's `outputSchema`, failures
// included, and throws (-32602) on a mismatch: so each call here proves that what seqc answers,
// success or failure, is what its schema says. Also: a run whose slot holds 5 MB answers with the
// value once.
//
// Usage: node schema-client.mjs SEQC ROOT DATA_DIR
// Prints what it saw as one JSON object on stdout.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [seqc, root, data] = process.argv.slice(2);
const client = new Client({ name: "seqc-schema-test", version: "1.0.0" });
await client.connect(
  new StdioClientTransport({
    command: seqc,
    args: ["mcp", "--root", root, "--data-dir", data, "--enable", "cmd_run"],
    stderr: process.env.SCHEMA_CLIENT_STDERR ?? "ignore",
  }),
);
// `callTool` checks results only against the schemas of a listing it has seen.
await client.listTools();

const item = (tool, args, as) => JSON.stringify(as ? { tool, args, as } : { tool, args }) + " ;";
const seen = {};

async function call(name, args) {
  try {
    const result = await client.callTool({ name, arguments: args }, undefined, { timeout: 60000 });
    return {
      is_error: Boolean(result.isError),
      structured: result.structuredContent ?? null,
      text: result.content.map((block) => block.text ?? "").join(""),
      bytes: JSON.stringify(result).length,
    };
  } catch (error) {
    return { thrown: String(error.message), code: error.code ?? null };
  }
}

const brief = (answer) => ({
  is_error: answer.is_error,
  thrown: answer.thrown,
  keys: answer.structured ? Object.keys(answer.structured).sort() : null,
});

// A sequence with errors: refused, its diagnostics structured.
const broken = await call("seq_create", {
  name: "broken",
  groups: [{ name: "g", tools: item("echo", { value: "$out.nope" }) + " " + item("echo", {}, "1bad") }],
});
seen.create_broken = brief(broken);
seen.create_broken.codes = (broken.structured?.diagnostics ?? []).map((d) => d.code);

seen.create_fails = brief(
  await call("seq_create", {
    name: "fails",
    groups: [{ name: "g", tools: item("cmd_run", { command: "echo no >&2; exit 3" }) }],
  }),
);
// A run that fails: its report arrives.
const fails = await call("seq_run", { name: "fails" });
seen.run_fails = brief(fails);
seen.run_fails.report_ok = fails.structured?.report?.ok ?? null;

seen.create_big = brief(
  await call("seq_create", {
    name: "big",
    groups: [
      {
        name: "g",
        out: { big: "string" },
        tools: item("jq", { filter: '"x" * 5000000' }, "big"),
      },
    ],
  }),
);
const big = await call("seq_run", { name: "big" });
seen.run_big = brief(big);
seen.run_big.bytes = big.bytes;
seen.run_big.value_bytes = big.structured?.out?.g?.big?.length ?? null;
seen.run_big.text = big.text;

// Four slots of 5 MB: past the message bound, the largest are left out and listed.
const five = (slot) => item("jq", { filter: '"' + slot + '" * 5000000' }, slot);
seen.create_huge = brief(
  await call("seq_create", {
    name: "huge",
    groups: [
      {
        name: "g",
        out: { a: "string", b: "string", c: "string", d: "string" },
        tools: five("a") + " " + five("b") + " " + five("c") + " " + five("d"),
      },
    ],
  }),
);
const huge = await call("seq_run", { name: "huge" });
seen.run_huge = brief(huge);
seen.run_huge.bytes = huge.bytes;
seen.run_huge.cut = (huge.structured?.cut ?? []).map((c) => c.pointer);
seen.run_huge.kept = Object.values(huge.structured?.out?.g ?? {}).filter((v) => v !== null).length;

seen.run_missing = brief(await call("seq_run", { name: "nothing_here" }));
seen.run_bad_args = brief(await call("seq_run", { name: "big", args: { nope: 1 } }));
seen.call_fails = brief(await call("seq_call", { target: "#fails" }));
seen.call_big = brief(await call("seq_call", { target: "#big" }));
seen.list = brief(await call("seq_list", {}));
seen.delete_missing = brief(await call("seq_delete", { name: "nothing_here" }));
seen.delete = brief(await call("seq_delete", { name: "fails" }));
seen.create_bad_args = brief(await call("seq_create", { name: 3 }));

await client.close();
console.log(JSON.stringify(seen));
