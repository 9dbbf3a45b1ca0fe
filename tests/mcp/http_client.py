"""A real MCP client (the Python SDK's streamable HTTP client) against `seqc mcp --http`, for
tests/mcp_http.rs.

Usage: http_client.py URL TOKEN

With the bearer token, lists the tools, creates a one-item sequence and runs it. Prints what it
saw as one JSON object on stdout; the Rust test asserts on it.
"""

import asyncio
import json
import sys

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

HELLO = {
    "name": "hello-py",
    "groups": [
        {
            "name": "greet",
            "out": {"said": "object"},
            "tools": json.dumps({"tool": "echo", "args": {"value": {"text": "hi"}}, "as": "said"})
            + " ;",
        }
    ],
}


def summary(result):
    return {"is_error": bool(result.is_error), "structured": result.structured_content}


async def main(url, token):
    seen = {}
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                init = await session.initialize()
                seen["server"] = init.server_info.name
                tools = await session.list_tools()
                seen["tools"] = sorted(tool.name for tool in tools.tools)
                seen["create"] = summary(await session.call_tool("seq_create", HELLO))
                seen["run"] = summary(await session.call_tool("seq_run", {"name": "hello-py"}))
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
