"""Drives an MCP server with the official Python SDK (`mcp` on PyPI) for the Rust tests.

Reads a plan as JSON on stdin:
  {"server": {"command": [...]} | {"url": "http://.../mcp", "headers": {...}},
   "mode": "auto" | "legacy",
   "steps": [{"list_tools": true}
             | {"call": NAME, "args": {...}, "timeout": SECONDS?, "progress": true?}
             | {"sleep": SECONDS} | {"alive": MARKER}, ...]}
and prints one JSON object: the negotiated protocol version and, per step, what the
client saw (tools with their annotations, or a result's text, isError and structured content,
or a protocol error's code and message), with each call's wall time in "elapsed". A call
with "timeout" that is not answered in time is abandoned — the SDK sends
`notifications/cancelled` — and recorded as {"timed_out": true}; "progress" records the
progress notifications the call got. {"alive": MARKER} records whether a process whose
command line holds MARKER is running. The Rust side asserts on it.
"""

import asyncio
import json
import os
import sys
import time

import httpx2  # the SDK's HTTP client
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError


def alive(marker):
    """Whether a live (not zombie) process's command line holds `marker`."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmdline and state != "Z":
            return True
    return False


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
            if "sleep" in step:
                await asyncio.sleep(step["sleep"])
                out["steps"].append({})
                continue
            if "alive" in step:
                out["steps"].append({"alive": alive(step["alive"])})
                continue
            progress = []

            async def on_progress(value, total, message, progress=progress):
                progress.append({"progress": value, "total": total, "message": message})

            started = time.monotonic()
            try:
                result = await client.call_tool(
                    step["call"],
                    step.get("args", {}),
                    read_timeout_seconds=step.get("timeout"),
                    progress_callback=on_progress if step.get("progress") else None,
                )
                seen = {
                    "is_error": bool(result.is_error),
                    "text": text_of(result),
                    "structured": result.structured_content,
                }
            except MCPError as e:
                seen = {"protocol_error": e.error.code, "message": e.error.message}
                if "timeout" in step and "timed out" in str(e.error.message).lower():
                    seen = {"timed_out": True, "message": e.error.message}
            except (TimeoutError, asyncio.TimeoutError) as e:
                seen = {"timed_out": True, "message": str(e)}
            seen["elapsed"] = time.monotonic() - started
            if step.get("progress"):
                seen["progress"] = progress
            out["steps"].append(seen)
    return out


def main():
    plan = json.load(sys.stdin)
    print(json.dumps(asyncio.run(run(plan))))


if __name__ == "__main__":
    main()
