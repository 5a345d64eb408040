"""Drives an MCP server with the official Python SDK (`mcp` on PyPI) for the Rust tests.

Reads a plan as JSON on stdin:
  {"server": {"command": [...]} | {"url": "http://.../mcp", "headers": {...}},
   "mode": "auto" | "legacy",
   "steps": [{"list_tools": true} | {"call": NAME, "args": {...}}, ...]}
and prints one JSON object: the negotiated protocol version and, per step, what the
client saw (tools with their annotations, or a result's text, isError and structured content,
or a protocol
error's code and message). The Rust side asserts on it.
"""

import asyncio
import json
import sys

import httpx2  # the SDK's HTTP client
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def text_of(result):
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def run(plan):
    server = plan["server"]
    if "command" in server:
        target = StdioServerParameters(command=server["command"][0], args=server["command"][1:])
    else:
        headers = server.get("headers") or {}
        target = streamable_http_client(server["url"], http_client=httpx2.AsyncClient(headers=headers)) if headers else server["url"]
    out = {"steps": []}
    async with Client(target, mode=plan.get("mode", "auto"), raise_exceptions=True, cache=None) as client:
        session = client.session
        out["protocol_version"] = session.protocol_version
        for step in plan["steps"]:
            if step.get("list_tools"):
                listed = await client.list_tools()
                out["steps"].append(
                    {
                        "tools": [
                            {
                                "name": t.name,
                                "description": t.description,
                                "schema": t.input_schema,
                                "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True)
                                if t.annotations
                                else None,
                            }
                            for t in listed.tools
                        ]
                    }
                )
                continue
            try:
                result = await client.call_tool(step["call"], step.get("args", {}))
                out["steps"].append(
                    {
                        "is_error": bool(result.is_error),
                        "text": text_of(result),
                        "structured": result.structured_content,
                    }
                )
            except MCPError as e:
                out["steps"].append({"protocol_error": e.error.code, "message": e.error.message})
    return out


def main():
    plan = json.load(sys.stdin)
    print(json.dumps(asyncio.run(run(plan))))


if __name__ == "__main__":
    main()
