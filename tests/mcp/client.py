"""A real MCP client (the Python SDK's stdio client) driving `seqc mcp`, for tests/mcp.rs.

Usage: client.py SEQC DATA_DIR ROOT SERVER_COMMAND...

Starts `SEQC mcp --data-dir DATA_DIR --root ROOT --mcp 'fs=SERVER_COMMAND'`, then lists the
tools, creates a broken sequence and a good one, runs the good one, lists the store, and reads
the prompt and the resource that teach the language. Prints
what it saw as one JSON object on stdout; the Rust test asserts on it.
"""

import asyncio
import json
import shlex
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

# A group field misspelt: E0101, at the excerpt `paralell`.
BROKEN = {
    "name": "broken",
    "groups": [
        {
            "name": "read",
            "paralell": True,
            "tools": '{"tool":"fs.read_text_file","args":{"path":"a.txt"}} ;',
        }
    ],
}

# Lists the root and reads two files through the downstream server-filesystem, in parallel.
GOOD = {
    "name": "read-two",
    "description": "Lists a directory and reads two files in it, all at once.",
    "groups": [
        {
            "name": "read",
            "in": {"dir": "string"},
            "out": {"listing": "object", "a": "object", "b": "object"},
            "tools": " ".join(
                json.dumps(item) + " ;"
                for item in [
                    {"tool": "fs.list_directory", "args": {"path": "$args.dir"}, "as": "listing"},
                    {"tool": "fs.read_text_file", "args": {"path": "${args.dir}/a.txt"}, "as": "a"},
                    {"tool": "fs.read_text_file", "args": {"path": "${args.dir}/b.txt"}, "as": "b"},
                ]
            ),
        }
    ],
}


def summary(result):
    return {
        "is_error": bool(result.is_error),
        "structured": result.structured_content,
        "text": [block.text for block in result.content if block.type == "text"],
    }


async def main(seqc, data_dir, root, server):
    params = StdioServerParameters(
        command=seqc,
        args=["mcp", "--data-dir", data_dir, "--root", root, "--mcp", "fs=" + shlex.join(server)],
    )
    seen = {}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            seen["server"] = init.server_info.name
            tools = await session.list_tools()
            seen["tools"] = {
                tool.name: {
                    "read_only": tool.annotations.read_only_hint,
                    "destructive": tool.annotations.destructive_hint,
                    "required": tool.input_schema.get("required", []),
                }
                for tool in tools.tools
            }
            create = next(tool for tool in tools.tools if tool.name == "seq_create")
            seen["create_lists_downstream"] = "`fs.read_text_file`" in create.description
            seen["broken"] = summary(await session.call_tool("seq_create", BROKEN))
            seen["good"] = summary(await session.call_tool("seq_create", GOOD))
            seen["run"] = summary(
                await session.call_tool("seq_run", {"name": "read-two", "args": {"dir": root}})
            )
            seen["list"] = summary(await session.call_tool("seq_list", {}))
            prompts = await session.list_prompts()
            seen["prompts"] = [prompt.name for prompt in prompts.prompts]
            prompt = await session.get_prompt("write_sequence")
            seen["prompt"] = [message.content.text for message in prompt.messages]
            resources = await session.list_resources()
            seen["resources"] = [str(resource.uri) for resource in resources.resources]
            reference = await session.read_resource(resources.resources[0].uri)
            seen["reference"] = reference.contents[0].text
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]))
