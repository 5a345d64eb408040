"""A small MCP server (official Python SDK, stdio) for mcp_call's failure paths: a tool that
never answers, one that returns an error, one that returns an image, and one that kills the
server."""

import asyncio
import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.types import ImageContent

server = MCPServer("slow")


@server.tool()
async def hang() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "late"


@server.tool()
def fail() -> str:
    """Raises."""
    raise ValueError("the database is locked")


@server.tool()
def picture() -> list:
    """An image and a caption."""
    return [ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"), "a caption"]


@server.tool()
def die() -> str:
    """Exits the process mid-call."""
    print("dying now", file=sys.stderr, flush=True)
    os._exit(7)


if __name__ == "__main__":
    server.run()
